//! Communicators: sccemu communicators with a message context and a topology.
//!
//! A communicator ([`CommObj`]) pairs an `sccemu::Comm` (its members, in rank order,
//! as world ranks, and the collectives' shared state) with a *context id*: the upper
//! bits of every tag its point-to-point messages carry ([`CommObj::wire_tag`]), so that
//! messages of different communicators never match each other. `MPI_ANY_TAG` receives
//! match on the context bits only (`TagMatch::Masked`).
//!
//! Context ids are chosen collectively: each process keeps a bitmap of the ids its
//! live communicators use; creating a communicator ORs the members' bitmaps together
//! (an allreduce over the parent) and takes the lowest id free everywhere. So no two
//! live communicators that share a process share an id, and a freed id is reused.
//! The upper half of the ids is reserved at `MPI_Init`: communicator `c`'s nonblocking
//! collectives (`crate::ffi::icoll`) use id `c | ICOLL_CONTEXT_BIT`.
//! Siblings of one `MPI_Comm_split` may share an id: they share no process.
//! `MPI_Comm_create_group` chooses its id over the new communicator's members alone
//! (`crate::create_group`, which says why that keeps the ids apart), and its messages
//! travel in a context of their own, [`CREATE_GROUP_CONTEXT`], reserved at `MPI_Init`
//! like the upper half, as is [`INTERCOMM_CONTEXT`], that of `MPI_Intercomm_create`'s
//! leaders. An intercommunicator's id is free on every process of both its groups
//! (`crate::intercomm`), and its own messages use its nonblocking collectives' context
//! with sequence number 0, which its nonblocking collectives skip
//! ([`CommObj::next_icoll_tag`]).
//!
//! `MPI_Comm_idup` (`crate::ffi::icoll::idup`) agrees an id over messages while the
//! program runs on, so a blocking creation may pick the same id meanwhile: it *claims*
//! its candidate, one of the highest ids free ([`high_free`]: far from the blocking
//! creations' lowest), on every member ([`claim_context`], which fails if the id is in
//! use there by then) and tries again with fresh bitmaps if any member's claim failed; its
//! handle is reserved at the call ([`reserve`]) and filled at completion
//! ([`adopt_reserved`]).
//!
//! An intercommunicator (`crate::intercomm`) is a `CommObj` too: `members` and the
//! sccemu communicator are its local group's, so that the local group's collectives
//! run on it unchanged, while point-to-point ranks name its remote group: every rank
//! translation of a message (`world_rank`, `rank_of_world`, the fast paths) reads
//! [`CommObj::peers`], which is `members` again for an intracommunicator. Calls that
//! take intracommunicators only look the handle up with [`lookup_intra`].
//!
//! The collectives' state is not `Sync`, so it sits in a `Serial` per communicator: a
//! mutex under `MPI_THREAD_MULTIPLE`, and nothing below it (where no two threads call
//! MPI at once). MPI forbids two threads from running collectives on one communicator
//! at once, so the mutex is never contended by a correct program, and point-to-point
//! calls (which need only the immutable fields) never take it.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

use sccemu::sync::{AtomicU32, Ordering};
use sccemu::{Comm, Op};

use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::registry::{Registry, Serial, SerialRef};
use crate::state::mpi;
use crate::topology::Topology;

mod claims;
pub use claims::{adopt_reserved, claim_context, high_free, release_context, reserve, unreserve};

/// `MPI_COMM_NULL`: the communicator table's base.
pub const COMM_NULL: c_int = 0x4400_0000;
/// `MPI_COMM_WORLD`.
pub const WORLD: c_int = COMM_NULL | 1;
/// `MPI_COMM_SELF`.
pub const SELF: c_int = COMM_NULL | 2;

/// Bits of a wire tag that carry the user's tag (`SCCEMU_MPI_TAG_UB` is the largest).
pub const TAG_BITS: u32 = 19;
/// The largest user tag.
pub const TAG_UB: c_int = (1 << TAG_BITS) - 1;
/// Where the context id starts in a wire tag.
const CONTEXT_SHIFT: u32 = TAG_BITS;
/// Context ids fit the wire tag's upper bits.
const CONTEXTS: usize = 1 << (32 - CONTEXT_SHIFT);
/// The context bit of nonblocking collectives' messages (`crate::ffi::icoll`): communicator
/// contexts stay below it (the upper half is reserved at `MPI_Init`), and communicator
/// `c`'s nonblocking collectives use context `c | ICOLL_CONTEXT_BIT`, which no user
/// message or blocking collective can carry.
const ICOLL_CONTEXT_BIT: u32 = (CONTEXTS as u32) >> 1;
/// Bits of a nonblocking collective's wire tag below its sequence number: the phase.
pub const ICOLL_PHASE_BITS: u32 = 6;
/// The context of `MPI_Comm_create_group`'s own messages (`crate::create_group`): the
/// highest below the nonblocking collectives' half, marked in use in every process at
/// `MPI_Init`, so that no communicator gets it and no user message carries it.
pub const CREATE_GROUP_CONTEXT: u32 = ICOLL_CONTEXT_BIT - 1;
/// The context of `MPI_Intercomm_create`'s leader-to-leader messages
/// (`crate::intercomm`), reserved at `MPI_Init` as [`CREATE_GROUP_CONTEXT`] is.
pub const INTERCOMM_CONTEXT: u32 = CREATE_GROUP_CONTEXT - 1;
/// Words of a process's context bitmap.
pub const CONTEXT_WORDS: usize = CONTEXTS / 64;
/// A process's context bitmap: bit `c` set while one of its communicators uses id `c`.
pub type ContextBits = [u64; CONTEXT_WORDS];

/// One communicator.
pub struct CommObj {
    /// The context id in the upper bits of its wire tags.
    pub context: u32,
    /// This process's rank in it.
    pub rank: u32,
    /// World ranks of the members (an intercommunicator's local group), by rank.
    pub members: Vec<u32>,
    /// World ranks of the processes that point-to-point ranks name, by rank: the
    /// members, or an intercommunicator's remote group. A copy of `members` for an
    /// intracommunicator, so that the hot paths translate a rank without asking which
    /// kind of communicator they have.
    pub peers: Vec<u32>,
    /// The inverse of `peers`: the rank there of each world rank up to the largest
    /// peer's (`u32::MAX` for others), so that a receive names its source in O(1).
    ranks_of_world: Vec<u32>,
    /// Whether an intercommunicator (`peers` then is the remote group).
    inter: bool,
    /// Cartesian or graph topology, if it has one.
    pub topology: Topology,
    coll: Serial<Comm<'static>>,
    /// Nonblocking collectives started on it: every member starts them in the same
    /// order (MPI's rule), so the count names one operation alike everywhere.
    icoll_started: AtomicU32,
    /// `MPI_Comm_set_name`'s name (this process's; MPI does not share it).
    name: Mutex<String>,
    /// The hints the program gave it (`MPI_Comm_set_info`, `MPI_Comm_dup_with_info`, or
    /// its parent's at `MPI_Comm_dup`), for `MPI_Comm_get_info`; sccemu tunes nothing
    /// by them.
    hints: Mutex<crate::info::Pairs>,
}

impl CommObj {
    /// Its name (empty until named; the predefined ones have theirs).
    pub fn name(&self) -> String {
        self.name.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Names it, for this process.
    pub fn set_name(&self, name: String) {
        *self.name.lock().unwrap_or_else(|p| p.into_inner()) = name;
    }

    /// Its hints (see the field).
    pub fn hints(&self) -> crate::info::Pairs {
        self.hints.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Sets the hints in `pairs`, keeping the others.
    pub fn set_hints(&self, pairs: crate::info::Pairs) {
        let mut hints = self.hints.lock().unwrap_or_else(|p| p.into_inner());
        for (key, value) in pairs {
            match hints.iter_mut().find(|(k, _)| *k == key) {
                Some(hint) => hint.1 = value,
                None => hints.push((key, value)),
            }
        }
    }

    /// Members (of the local group, for an intercommunicator).
    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// Whether an intercommunicator.
    #[inline]
    pub fn is_inter(&self) -> bool {
        self.inter
    }

    /// An intercommunicator's remote group (world ranks, by rank); `None` for an
    /// intracommunicator.
    pub fn remote(&self) -> Option<&[u32]> {
        self.inter.then_some(&self.peers[..])
    }

    /// The wire tag of an intercommunicator's own messages of `phase` (its
    /// collectives', `crate::intercomm`'s): its context with the nonblocking
    /// collectives' bit and sequence number 0, which its nonblocking collectives skip
    /// ([`CommObj::next_icoll_tag`]), so no user message or other operation carries it.
    pub fn inter_tag(&self, phase: u32) -> u32 {
        debug_assert!(self.inter && phase < 1 << CONTEXT_SHIFT);
        (self.context | ICOLL_CONTEXT_BIT) << CONTEXT_SHIFT | phase
    }

    /// The collectives' state.
    #[inline]
    pub fn coll(&self) -> SerialRef<'_, Comm<'static>> {
        self.coll.read()
    }

    /// The wire tag of user tag `tag` (checked: `0..=TAG_UB`).
    pub fn wire_tag(&self, tag: c_int) -> MpiResult<u32> {
        if !(0..=TAG_UB).contains(&tag) {
            return fail(class::TAG, format!("tag {tag} is outside 0..={TAG_UB}"));
        }
        Ok(self.context << CONTEXT_SHIFT | tag as u32)
    }

    /// What a receive with user tag `tag` (or `MPI_ANY_TAG`, -1) accepts: messages of
    /// this context.
    pub fn tag_match(&self, tag: c_int) -> MpiResult<sccemu::TagMatch> {
        if tag == -1 {
            let mask = !((1u32 << CONTEXT_SHIFT) - 1);
            return Ok(sccemu::TagMatch::Masked { tag: self.context << CONTEXT_SHIFT, mask });
        }
        Ok(sccemu::TagMatch::Tag(self.wire_tag(tag)?))
    }

    /// The user tag of a wire tag.
    pub fn user_tag(wire: u32) -> c_int {
        (wire & ((1 << TAG_BITS) - 1)) as c_int
    }

    /// Checks a peer rank (of the remote group, for an intercommunicator) and gives its
    /// world rank.
    pub fn world_rank(&self, rank: c_int) -> MpiResult<u32> {
        match usize::try_from(rank).ok().and_then(|r| self.peers.get(r)) {
            Some(&w) => Ok(w),
            None => {
                let group = if self.inter { "remote group" } else { "communicator" };
                fail(class::RANK, format!("rank {rank} is not in a {group} of {}", self.peers.len()))
            }
        }
    }

    /// The peer rank (in the remote group, for an intercommunicator) of world rank
    /// `world`, if a peer: a received message's source.
    #[inline]
    pub fn rank_of_world(&self, world: u32) -> Option<u32> {
        self.ranks_of_world.get(world as usize).copied().filter(|&r| r != u32::MAX)
    }

    /// The wire tag base of the next nonblocking collective on this communicator: its
    /// own context, then its sequence number (modulo 2^13) above
    /// [`ICOLL_PHASE_BITS`] bits that the collective's protocol fills in. An
    /// intercommunicator's numbers skip 0, whose tags its blocking collectives use
    /// ([`CommObj::inter_tag`]: phases below 2^6), so they run 1 to 2^13 - 1 and wrap.
    pub fn next_icoll_tag(&self) -> u32 {
        // Relaxed: MPI forbids concurrent collectives on one communicator, so the
        // count is only ever advanced by one thread at a time.
        let seq = self.icoll_started.fetch_add(1, Ordering::Relaxed);
        let seq_bits = CONTEXT_SHIFT - ICOLL_PHASE_BITS;
        let seq = if self.inter { 1 + seq % ((1 << seq_bits) - 1) } else { seq };
        (self.context | ICOLL_CONTEXT_BIT) << CONTEXT_SHIFT
            | (seq & ((1 << seq_bits) - 1)) << ICOLL_PHASE_BITS
    }

    /// The wire tag of a user tag already checked to be in `0..=TAG_UB`.
    #[inline(always)]
    pub fn wire_tag_of_valid(&self, tag: c_int) -> u32 {
        self.context << CONTEXT_SHIFT | tag as u32
    }
}

/// Every live communicator, by handle.
static COMMS: Registry<CommObj, COMM_NULL> = Registry::new();

/// Context ids in use by this process's live communicators.
static CONTEXT_BITS: Mutex<ContextBits> = Mutex::new([0; CONTEXT_WORDS]);

fn contexts() -> MutexGuard<'static, ContextBits> {
    CONTEXT_BITS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The ids this process's live communicators use now (and the reserved ones).
pub fn context_bits() -> ContextBits {
    *contexts()
}

/// The wire tag of `MPI_Comm_create_group`'s messages for user tag `tag` (checked by
/// the caller to be in `0..=TAG_UB`).
pub fn create_group_tag(tag: c_int) -> u32 {
    CREATE_GROUP_CONTEXT << CONTEXT_SHIFT | tag as u32
}

fn register(obj: CommObj) -> MpiResult<c_int> {
    let context = obj.context;
    let handle = COMMS.insert(obj).ok_or_else(|| MpiError::new(class::INTERN, "too many communicators"))?;
    contexts()[context as usize / 64] |= 1 << (context % 64);
    Ok(handle)
}

/// The `MPI_Intercomm_create` leaders' wire tag for user tag `tag` (checked by the
/// caller to be in `0..=TAG_UB`).
pub fn intercomm_tag(tag: c_int) -> u32 {
    INTERCOMM_CONTEXT << CONTEXT_SHIFT | tag as u32
}

/// Builds `MPI_COMM_WORLD` (context 0) and `MPI_COMM_SELF` (context 1) at `MPI_Init`.
pub fn init_predefined(core: &'static sccemu::Core) -> MpiResult<()> {
    let world = Comm::world(core).map_err(coll_error)?;
    let me = core.rank();
    let single = world.split(Some(me), 0).map_err(coll_error)?.expect("every rank has a colour");
    let (world, single) = (obj(0, world, None), obj(1, single, None));
    world.set_name("MPI_COMM_WORLD".into());
    single.set_name("MPI_COMM_SELF".into());
    let world = register(world)?;
    let single = register(single)?;
    debug_assert_eq!((world, single), (WORLD, SELF));
    // The upper half is the nonblocking collectives' (`ICOLL_CONTEXT_BIT`), and the two
    // ids below it `MPI_Comm_create_group`'s and `MPI_Intercomm_create`'s.
    let mut bits = contexts();
    for context in INTERCOMM_CONTEXT..CONTEXTS as u32 {
        bits[context as usize / 64] |= 1 << (context % 64);
    }
    Ok(())
}

/// The object of communicator `comm` with id `context`; an intercommunicator if
/// `remote` (its remote group, `comm` being the local group's).
fn obj(context: u32, comm: Comm<'static>, remote: Option<Vec<u32>>) -> CommObj {
    let members = comm.members().to_vec();
    let inter = remote.is_some();
    let peers = remote.unwrap_or_else(|| members.clone());
    let mut ranks_of_world = vec![u32::MAX; peers.iter().max().map_or(0, |&m| m as usize + 1)];
    for (rank, &world) in peers.iter().enumerate() {
        ranks_of_world[world as usize] = rank as u32;
    }
    CommObj {
        context,
        rank: comm.rank(),
        members,
        peers,
        ranks_of_world,
        inter,
        topology: Topology::None,
        coll: Serial::new(comm),
        icoll_started: AtomicU32::new(0),
        name: Mutex::new(String::new()),
        hints: Mutex::new(Vec::new()),
    }
}

/// The communicator `handle` names, if live: the fast paths' lookup.
#[inline(always)]
pub fn get(handle: c_int) -> Option<&'static CommObj> {
    COMMS.get(handle)
}

/// The communicator `handle` names.
#[inline]
pub fn lookup(handle: c_int) -> MpiResult<&'static CommObj> {
    match COMMS.get(handle) {
        Some(c) => Ok(c),
        None if handle == COMM_NULL => fail(class::COMM, "MPI_COMM_NULL is not a communicator"),
        None => fail(class::COMM, format!("{handle:#x} is not a communicator handle")),
    }
}

/// The intracommunicator `handle` names: for the calls that MPI (or this library)
/// does not define on intercommunicators, which refuse one with `MPI_ERR_COMM`.
#[inline]
pub fn lookup_intra(handle: c_int) -> MpiResult<&'static CommObj> {
    let c = lookup(handle)?;
    if c.inter {
        return fail(
            class::COMM,
            format!(
                "{handle:#x} is an intercommunicator: this call takes an intracommunicator (on \
                 intercommunicators point-to-point, MPI_Comm_split, MPI_Comm_create, \
                 MPI_Comm_idup, the blocking collectives but the scans and the neighbourhood \
                 ones, and the nonblocking collectives but the scans and the neighbourhood ones \
                 work)"
            ),
        );
    }
    Ok(c)
}

/// Maps an sccemu collective error to an MPI error.
pub fn coll_error(e: sccemu::CollError) -> MpiError {
    use sccemu::CollError as E;
    let class = match &e {
        E::RankOutOfRange { .. } => class::RANK,
        E::Mismatch { .. } => class::NOT_SAME,
        E::Op(_) => class::OP,
        E::Released => class::COMM,
        _ => class::OTHER,
    };
    MpiError::new(class, e.to_string())
}

/// Collective over `parent`: a context id free on every member.
fn agree_context(parent: &CommObj) -> MpiResult<u32> {
    let mine = *contexts();
    let mut all = [0u64; CONTEXT_WORDS];
    parent.coll().allreduce(&mine, &mut all, Op::BitOr).map_err(coll_error)?;
    lowest_free(&all)
}

/// The lowest id clear in `bits` (the OR of the new communicator's members' bitmaps).
pub fn lowest_free(bits: &ContextBits) -> MpiResult<u32> {
    for (w, word) in bits.iter().enumerate() {
        if *word != u64::MAX {
            return Ok((w * 64) as u32 + word.trailing_ones());
        }
    }
    fail(class::INTERN, format!("all {INTERCOMM_CONTEXT} communicator context ids are in use"))
}

/// Registers the communicator `comm`, whose members chose id `context` together: its
/// handle. The id is marked in use here until the communicator is freed.
pub fn adopt(context: u32, comm: Comm<'static>) -> MpiResult<c_int> {
    register(obj(context, comm, None))
}

/// Registers an intercommunicator whose local group is `local` and remote group
/// `remote` (world ranks, by rank), with the id both groups chose together
/// (`crate::intercomm`): its handle.
pub fn adopt_inter(context: u32, local: Comm<'static>, remote: Vec<u32>) -> MpiResult<c_int> {
    register(obj(context, local, Some(remote)))
}

/// Collective over `parent`: the communicator of the members with this `color`
/// (`None`: MPI_UNDEFINED, which joins none), ordered by `key`.
pub fn split(
    parent: &CommObj,
    color: Option<u32>,
    key: c_int,
    topology: Topology,
) -> MpiResult<Option<c_int>> {
    let context = agree_context(parent)?;
    let Some(child) = parent.coll().split(color, key).map_err(coll_error)? else { return Ok(None) };
    let mut obj = obj(context, child, None);
    obj.topology = topology;
    register(obj).map(Some)
}

/// Frees a user communicator. MPI makes this collective, but nothing here needs the
/// other members: the sccemu communicator's shared memory returns to the heap when
/// its last member releases it (`sccemu::Comm::release`, the drop count). It is
/// released here, not dropped: the registry keeps the retired object for threads that
/// may still hold it, and never drops it.
pub fn free(handle: c_int) -> MpiResult<()> {
    lookup(handle)?;
    if handle == WORLD || handle == SELF {
        return fail(class::COMM, "a predefined communicator cannot be freed");
    }
    let Some(obj) = COMMS.remove(handle) else {
        return fail(class::COMM, "the communicator was freed meanwhile");
    };
    obj.coll().release();
    contexts()[obj.context as usize / 64] &= !(1 << (obj.context % 64));
    crate::errhandler::forget(handle);
    Ok(())
}

/// The world rank of this process.
pub fn my_world_rank() -> MpiResult<u32> {
    Ok(mpi()?.core.rank())
}
