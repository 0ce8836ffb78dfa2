//! Communicators: ordered groups of cores that run collectives together.
//!
//! [`Comm::world`] holds every core; [`Comm::split`] partitions a communicator by colour
//! and orders each part by key, as `MPI_Comm_split` and `RCCE_comm_split` do. Ranks
//! translate between communicators through world ranks.
//!
//! Each communicator owns one *area* in the shared heap, allocated by its leader (comm
//! rank 0) and learned by the others through the parent's collectives:
//! - a [`BarrierState`], whose sleepers use the leader's doorbell;
//! - two publication words for the leader's later allocations (by call parity), and the
//!   count of members that dropped the communicator without `free`;
//! - per member, a line holding its rendezvous flag (see `coll`);
//! - per member, a line of checking-mode slots: in checking mode every collective
//!   first compares its arguments across the members there (`Comm::agree`, the
//!   protocol of `protocol::agree`, with the communicator's barrier).
//!
//! The area is O(size). The put-based allgathers' *step flags* (per member, a line-aligned
//! run of `size` flags that peers raise to the call's sequence number: O(size²), 64 MiB
//! at 4096 members) are a block of their own, allocated and zeroed by the leader at the
//! first call that needs them, as staging grows (`Comm::ensure_step_flags`).
//!
//! Dropping without [`Comm::free`]: each member adds one to the area's drop count
//! (AcqRel), and the member that brings it to the communicator's size returns the area
//! and the staging to the heap. Every member has then dropped it, so nobody touches that
//! memory again; the AcqRel increments form one release sequence, so every member's
//! last access to the area or staging happens before the last member's return of it.
//! Nothing needs a collective call, so a dropped communicator costs nothing later.
//!
//! Collectives also need *staging*, in one heap block used alternately by call parity:
//! per parity, a table of the members' round headers (16 bytes each, packed; used when
//! members share CPUs, else each header heads its member's half), then an array of one
//! half of `capacity` bytes per member. Staging of one parity is
//! rewritten two calls later; every collective ends after a barrier or after receiving
//! from every member, so by then every reader of it has finished with it (see `coll`).
//! Staging grows collectively: a barrier, then the leader frees the old block and
//! publishes a new one.
//!
//! Packed headers and side-by-side halves: a member reads every header in a call's first
//! round, and the shared allgather every member's block. With a header atop each half
//! that touched a page per member, in each of n processes: one 8-byte allgather of 1024
//! members took 3.3 s. Now 4096 packed headers take 16 pages, and the allgather packs
//! its blocks into the parity's array (`collectives::Round::packed`) when members share
//! CPUs.

use std::cell::{Cell, RefCell};
use std::fmt;

use crate::coll::collectives::headers_bytes;
use crate::protocol::abort::JobAborted;
use crate::protocol::agree::{Disagreement, Fingerprint, MEMBER_BYTES, agree};
use crate::protocol::barrier::BarrierState;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::CoreContext;
use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::alloc::heap::{decode_result, encode_result};
use crate::protocol::atomic::op::OpError;
use crate::protocol::payload::Payload;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::segment::view::{AtomicsOnly, atomics_at};

const LINE: usize = shm_layout::LINE;
/// Offset of the publication words in an area, after the barrier.
const PUBLISH_AT: usize = size_of::<BarrierState>().next_multiple_of(LINE);
/// Offset of the drop count, after the two publication words.
const DROPPED_AT: usize = PUBLISH_AT + 16;
/// Offset of the members' rendezvous flags, a line each.
const RENDEZVOUS_AT: usize = PUBLISH_AT + LINE;
const _: () = assert!(MEMBER_BYTES % LINE == 0);


/// Why a collective or communicator call failed. Nothing was sent.
#[derive(Clone, Debug, PartialEq)]
pub enum CollError {
    /// A root or peer rank outside `0..size`.
    RankOutOfRange {
        /// The rank given.
        rank: u32,
        /// Members of the communicator.
        size: u32,
    },
    /// A buffer has the wrong number of elements.
    SizeMismatch {
        /// Elements the call needs.
        expected: usize,
        /// Elements the buffer holds.
        found: usize,
    },
    /// Member `rank` passed a different size or invalid arguments to this collective.
    Disagreement {
        /// The lowest member that disagrees.
        rank: u32,
    },
    /// Checking mode: the members passed different arguments to this collective (or
    /// are not in the same collective call); every member gets this error and the
    /// communicator stays usable. Without checking mode such a program is erroneous.
    Mismatch {
        /// What differs: `"call"`, `"root"`, `"op"`, `"count"`, `"counts"`, `"element
        /// size"`, `"element type"`, `"allgather algorithm"`.
        what: &'static str,
        /// The members (ranks in this communicator) whose value differs from the one
        /// most members passed (on a tie, the lowest such rank's value).
        ranks: Vec<u32>,
    },
    /// The reduction op does not apply to the element type.
    Op(OpError),
    /// Allocating a communicator's area or staging from the heap failed.
    Alloc(AllocError),
    /// The job aborted (some core died) while the call waited.
    Aborted(JobAborted),
}

impl fmt::Display for CollError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not in this {size}-member communicator")
            }
            Self::SizeMismatch { expected, found } => {
                write!(f, "buffer holds {found} elements, expected {expected}")
            }
            Self::Disagreement { rank } => {
                write!(f, "member {rank} passed a different size or invalid arguments to this collective")
            }
            Self::Mismatch { what, ranks } => {
                write!(f, "checking mode: members {ranks:?} disagree with the others on the {what}")
            }
            Self::Op(e) => e.fmt(f),
            Self::Alloc(e) => write!(f, "no shared memory for the collective: {e}"),
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CollError {}

impl From<JobAborted> for CollError {
    fn from(e: JobAborted) -> Self {
        CollError::Aborted(e)
    }
}

impl From<AllocError> for CollError {
    fn from(e: AllocError) -> Self {
        match e {
            AllocError::Aborted(a) => CollError::Aborted(a),
            other => CollError::Alloc(other),
        }
    }
}

impl From<OpError> for CollError {
    fn from(e: OpError) -> Self {
        CollError::Op(e)
    }
}

impl From<Disagreement> for CollError {
    fn from(d: Disagreement) -> Self {
        CollError::Mismatch { what: d.what, ranks: d.ranks }
    }
}

/// Bytes of the area of a communicator with `size` members.
fn area_bytes(size: usize) -> usize {
    checks_at(size) + size * MEMBER_BYTES
}

/// Offset of the checking-mode slots in the area.
fn checks_at(size: usize) -> usize {
    RENDEZVOUS_AT + size * LINE
}

/// Bytes of one member's row of step flags.
fn flags_stride(size: usize) -> usize {
    (size * 4).div_ceil(LINE) * LINE
}


/// A communicator, used by one thread of its core.
///
/// Every collective (and `split`, `free`, `barrier`) must be called by every member,
/// in the same order, with the arguments MPI would require to match: the same root,
/// op, element type and counts (per the call), and the same allgather algorithm. A
/// program that breaks this is erroneous, as in MPI: without checking mode it may hang
/// or give different results on different members. In checking mode
/// ([`CoreContext::checking`]) each call first compares those arguments across the
/// members and returns [`CollError::Mismatch`] on every member, naming the members that
/// disagree; the communicator stays usable.
///
/// A communicator dropped without [`Comm::free`] does not leak: the last member to drop
/// it returns its memory to the heap.
///
/// # Examples
///
/// Collectives over the world and over a split into even and odd ranks:
///
/// ```
/// use sccemu::{Comm, Core, Job, Op};
///
/// fn collectives(core: &Core, _: ()) -> Result<(u64, u64, Vec<u32>), Box<dyn std::error::Error>> {
///     let world = Comm::world(core)?; // collective; `core.world()` is the same
///     let mut sum = [0u64];
///     world.allreduce(&[u64::from(core.rank())], &mut sum, Op::Sum)?;
///
///     let mut from_root = [0u32; 2];
///     if world.rank() == 1 {
///         from_root = [7, 8];
///     }
///     world.bcast(1, &mut from_root)?;
///
///     let half = world.split(Some(core.rank() % 2), 0)?.expect("every core has a colour");
///     let mut max = [0u64];
///     half.allreduce(&[u64::from(core.rank())], &mut max, Op::Max)?;
///     let mut ranks = vec![0u32; half.size() as usize];
///     half.allgather(&[core.rank()], &mut ranks, sccemu::Allgather::Auto)?;
///     half.free()?;
///     world.free()?;
///     assert_eq!(from_root, [7, 8]);
///     Ok((sum[0], max[0], ranks))
/// }
///
/// fn main() {
///     sccemu::job::init();
///     let got = Job::new(5).run(&(), collectives).unwrap();
///     assert!(got.iter().all(|(sum, _, _)| *sum == 10));
///     assert_eq!(got[0].1, 4); // even ranks 0, 2, 4
///     assert_eq!(got[1].2, vec![1, 3]); // odd ranks
/// }
/// ```
pub struct Comm<'c> {
    ctx: &'c CoreContext,
    /// World rank of each member, in comm-rank order.
    members: Vec<u32>,
    rank: u32,
    area: HeapRegion,
    /// Collective calls made so far (the sequence number peers write into flags).
    calls: Cell<u32>,
    /// Leader allocations made so far (the parity of the publication word).
    allocs: Cell<u64>,
    /// Staging block and its per-half capacity, if any.
    staging: RefCell<Option<(HeapRegion, usize)>>,
    /// The put-based allgathers' step flags, once one ran (module docs).
    steps: Cell<Option<HeapRegion>>,
    /// Checking-mode argument checks made so far (their sequence numbers).
    checks: Cell<u64>,
    /// Meetings (barriers and rendezvous) so far: their parity keys virtual-time stamps.
    meetings: Cell<u64>,
    /// Set once `free` returns the memory (else the drop counts this member out).
    released: Cell<bool>,
}

impl<'c> Comm<'c> {
    /// Collective over the job: the communicator of every core.
    pub fn world(ctx: &'c CoreContext) -> Result<Comm<'c>, CollError> {
        ctx.agree_world(&Fingerprint::new("comm world"))??;
        let members: Vec<u32> = (0..ctx.size()).collect();
        let area = ctx.heap_alloc(area_bytes(members.len()))?;
        if ctx.rank() == 0 {
            ctx.heap_bytes(area).zero(0, area.len);
        }
        ctx.barrier()?;
        Ok(Comm::new(ctx, members, ctx.rank(), area))
    }

    fn new(ctx: &'c CoreContext, members: Vec<u32>, rank: u32, area: HeapRegion) -> Comm<'c> {
        Comm {
            ctx,
            members,
            rank,
            area,
            calls: Cell::new(0),
            allocs: Cell::new(0),
            staging: RefCell::new(None),
            steps: Cell::new(None),
            checks: Cell::new(0),
            meetings: Cell::new(0),
            released: Cell::new(false),
        }
    }

    /// The context of the core this communicator lives on.
    pub fn context(&self) -> &'c CoreContext {
        self.ctx
    }

    /// This core's rank in the communicator.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Members of the communicator.
    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// World rank of member `rank`.
    pub fn world_rank(&self, rank: u32) -> Result<u32, CollError> {
        self.members.get(rank as usize).copied().ok_or(CollError::RankOutOfRange { rank, size: self.size() })
    }

    /// The rank in `other` of this communicator's member `rank`, if it is a member there.
    pub fn translate(&self, rank: u32, other: &Comm<'_>) -> Result<Option<u32>, CollError> {
        let world = self.world_rank(rank)?;
        Ok(other.members.iter().position(|&w| w == world).map(|r| r as u32))
    }

    /// World rank of every member, in communicator rank order.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    pub(crate) fn check_rank(&self, rank: u32) -> Result<(), CollError> {
        self.world_rank(rank).map(|_| ())
    }

    /// The protocol word at `offset` of the area.
    fn area_word<T: AtomicsOnly>(&self, offset: usize) -> &'c T {
        atomics_at(self.ctx.heap_bytes(self.area), offset)
    }

    /// The doorbell of member `rank`'s core.
    pub(crate) fn bell(&self, rank: u32) -> &'c crate::protocol::waiter::Doorbell {
        &self.ctx.segment().slot(self.members[rank as usize]).bell
    }

    /// The flag that member `rank` raises itself for the rendezvous of a round (`coll`).
    pub(crate) fn rendezvous_flag(&self, rank: u32) -> &'c AtomicU32 {
        self.area_word(RENDEZVOUS_AT + rank as usize * LINE)
    }

    /// Member `rank`'s arrival stamp of meetings of `parity`, in virtual time: in its
    /// rendezvous flag's line (see `timed`).
    pub(crate) fn meeting_stamp(&self, rank: u32, parity: usize) -> Option<&'c AtomicU64> {
        crate::timing::clock()?;
        Some(self.area_word(RENDEZVOUS_AT + rank as usize * LINE + 8 + 8 * parity))
    }

    /// Counts a meeting; returns how many came before it.
    pub(crate) fn next_meeting(&self) -> u64 {
        let n = self.meetings.get();
        self.meetings.set(n + 1);
        n
    }

    /// Collective: makes sure the step flags exist (module docs). Every member calls it
    /// before a put-based allgather, which every member runs alike.
    pub(crate) fn ensure_step_flags(&self) -> Result<(), CollError> {
        if self.steps.get().is_none() {
            let n = self.members.len();
            self.steps.set(Some(self.leader_alloc(n * flags_stride(n), true)?));
        }
        Ok(())
    }

    /// Step flag `index` of member `rank` (see `allgather`). Panics unless
    /// [`Comm::ensure_step_flags`] ran and `index` is below the size.
    pub(crate) fn flag(&self, rank: u32, index: usize) -> &'c AtomicU32 {
        let n = self.members.len();
        assert!(index < n);
        let steps = self.steps.get().expect("step flags allocated before a put-based allgather");
        atomics_at(self.ctx.heap_bytes(steps), rank as usize * flags_stride(n) + index * 4)
    }

    /// Starts a collective call: its sequence number (never 0, so fresh flags never match).
    pub(crate) fn next_call(&self) -> u32 {
        let call = self.calls.get().wrapping_add(1).max(1);
        self.calls.set(call);
        call
    }

    /// Waits until every member has entered the barrier.
    pub fn barrier(&self) -> Result<(), CollError> {
        self.agree(Fingerprint::new("barrier"))?;
        let _call = Comm::timed_call("barrier");
        self.barrier_unchecked()
    }

    /// The communicator's barrier, without the checking-mode agreement: for the
    /// collectives' own synchronisation, after their entry point checked.
    pub(crate) fn barrier_unchecked(&self) -> Result<(), CollError> {
        Ok(self.wait_barrier()?)
    }

    fn wait_barrier(&self) -> Result<(), JobAborted> {
        let state: &BarrierState = self.area_word(0);
        let meeting = self.meeting_arrive();
        state.wait(self.size(), &self.ctx.waiter(), self.bell(0))?;
        self.meeting_leave(meeting);
        Ok(())
    }

    /// In checking mode, compares `fingerprint` across the members (`protocol::agree`,
    /// on the area's checking slots, with the communicator's barrier) and returns
    /// [`CollError::Mismatch`] on every member if they disagree; nothing otherwise.
    /// Every collective entry point calls it first.
    pub(crate) fn agree(&self, fingerprint: Fingerprint) -> Result<(), CollError> {
        if !self.ctx.checking() {
            return Ok(());
        }
        let seq = self.checks.get() + 1;
        self.checks.set(seq);
        let n = self.members.len();
        let slots = self.ctx.heap_bytes(self.area).slice(checks_at(n), n * MEMBER_BYTES);
        Ok(agree(&slots, self.size(), self.rank, seq, &fingerprint, || self.wait_barrier())??)
    }

    /// Collective: the leader allocates `bytes` from the heap (and zeroes them if
    /// `zero`); every member learns it.
    fn leader_alloc(&self, bytes: usize, zero: bool) -> Result<HeapRegion, CollError> {
        let call = self.allocs.get() + 1;
        self.allocs.set(call);
        let word: &AtomicU64 = self.area_word(PUBLISH_AT + (call % 2) as usize * 8);
        if self.rank == 0 {
            let region = self.ctx.heap_alloc_local(bytes);
            if let (Ok(region), true) = (&region, zero) {
                self.ctx.heap_bytes(*region).zero(0, region.len);
            }
            // Relaxed: the barrier below publishes it, and the zeroes before it.
            word.store(encode_result(&region), Ordering::Relaxed);
        }
        self.barrier_unchecked()?;
        Ok(decode_result(word.load(Ordering::Relaxed), bytes)?)
    }

    /// Staging of at least `bytes` per half and member; grows collectively.
    pub(crate) fn staging(&self, bytes: usize) -> Result<(HeapRegion, usize), CollError> {
        let current = *self.staging.borrow();
        if let Some((region, capacity)) = current.filter(|&(_, c)| c >= bytes) {
            return Ok((region, capacity));
        }
        let capacity = bytes.max(4096).next_power_of_two();
        // Everyone has finished with the old block before the leader frees it.
        self.barrier_unchecked()?;
        if let Some((old, _)) = current {
            if self.rank == 0 {
                self.ctx.heap_free_local(old)?;
            }
            *self.staging.borrow_mut() = None;
        }
        let n = self.members.len();
        let region = self.leader_alloc(2 * (headers_bytes(n) + capacity * n), false)?;
        *self.staging.borrow_mut() = Some((region, capacity));
        Ok((region, capacity))
    }

    /// Collective: splits this communicator. Members with the same `color` form a new
    /// communicator, ordered by `key` then by rank here; `None` (MPI_UNDEFINED) joins
    /// none and gets `None`.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm<'c>>, CollError> {
        const UNDEFINED: u64 = u64::MAX;
        self.agree(Fingerprint::new("comm split"))?;
        let mine = [color.map_or(UNDEFINED, u64::from), key as i64 as u64];
        let mut all = vec![0u64; 2 * self.members.len()];
        self.allgather(&mine, &mut all, crate::coll::allgather::Allgather::Shared)?;
        let mut groups: std::collections::BTreeMap<u64, Vec<(i64, u32)>> = Default::default();
        for (rank, pair) in all.chunks_exact(2).enumerate() {
            if pair[0] != UNDEFINED {
                groups.entry(pair[0]).or_default().push((pair[1] as i64, rank as u32));
            }
        }
        for members in groups.values_mut() {
            members.sort_unstable();
        }
        // Each new leader allocates and zeroes its communicator's area, then everyone
        // learns every leader's offset (the allgather orders the zeroing before use).
        let my_group = color.and_then(|c| groups.get(&u64::from(c)));
        let leads = my_group.is_some_and(|m| m[0].1 == self.rank);
        let word = match my_group.filter(|_| leads) {
            Some(m) => {
                let area = self.ctx.heap_alloc_local(area_bytes(m.len()));
                if let Ok(area) = area {
                    self.ctx.heap_bytes(area).zero(0, area.len);
                }
                encode_result(&area)
            }
            // Only a leader's word is read.
            None => 0,
        };
        let mut words = vec![0u64; self.members.len()];
        self.allgather(&[word], &mut words, crate::coll::allgather::Allgather::Shared)?;
        let Some(group) = my_group else { return Ok(None) };
        // The leader's own result, error included (how much was free), on every member.
        let area = decode_result(words[group[0].1 as usize], area_bytes(group.len()))?;
        let members: Vec<u32> = group.iter().map(|&(_, r)| self.members[r as usize]).collect();
        let rank = group.iter().position(|&(_, r)| r == self.rank).expect("member of own group") as u32;
        Ok(Some(Comm::new(self.ctx, members, rank, area)))
    }

    /// Collective: releases the communicator's shared memory.
    pub fn free(self) -> Result<(), CollError> {
        self.agree(Fingerprint::new("comm free"))?;
        self.barrier_unchecked()?;
        self.released.set(true);
        if self.rank == 0 {
            self.return_memory()?;
        }
        Ok(())
    }

    /// Returns the staging, the step flags and the area to the heap.
    fn return_memory(&self) -> Result<(), CollError> {
        let staging = self.staging.borrow().map(|(region, _)| region);
        for region in [staging, self.steps.get(), Some(self.area)].into_iter().flatten() {
            self.ctx.heap_free_local(region)?;
        }
        Ok(())
    }
}

/// Dropped without [`Comm::free`]: the last member to drop the communicator returns its
/// memory (module docs).
impl Drop for Comm<'_> {
    fn drop(&mut self) {
        if self.released.get() {
            return;
        }
        let dropped: &AtomicU32 = self.area_word(DROPPED_AT);
        // AcqRel: Release orders this member's accesses to the area and staging before
        // its increment; the last member's Acquire sees every earlier increment's
        // Release (one release sequence), so all accesses happen before the return.
        if dropped.fetch_add(1, Ordering::AcqRel) + 1 == self.size() {
            // Fails only if the job is aborting, when nothing needs the memory.
            let _ = self.return_memory();
        }
    }
}
