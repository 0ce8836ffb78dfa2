//! Communicators: ordered groups of cores that run collectives together.
//!
//! [`Comm::world`] holds every core; [`Comm::split`] partitions a communicator by colour
//! and orders each part by key, as `MPI_Comm_split` and `RCCE_comm_split` do;
//! [`Comm::from_grant`] builds one that only its members take part in building (`subset`,
//! for `MPI_Comm_create_group`). Ranks translate between communicators through world
//! ranks.
//!
//! Each communicator owns one *area* in the shared heap, allocated by its leader (comm
//! rank 0) and learned by the others through the parent's collectives:
//! - a [`BarrierState`], whose sleepers use the leader's barrier bell
//!   (`CoreSlot::barrier_bell`), not its doorbell: every message to the leader rings
//!   that, and woke every member waiting in the barrier (47 MPI ranks streaming 8 B
//!   isends into their leader: one futex wake per message and 6-11 µs per message,
//!   against 0.21 µs on the barrier bell);
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
//! Dropping, after [`Comm::free`] or without it, or [`Comm::release`] (for holders that
//! never drop, such as the MPI library's retired handles): each member adds one to the
//! area's drop count (AcqRel), once, and the member that brings it to the communicator's size returns the
//! area and the staging to the heap. Every member has then dropped it, so nobody touches that
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
//! publishes a new one. It starts with 4 KiB halves, and grows to full halves
//! (`Comm::half_payload`, at most a sixteenth of the heap in all) only at the second
//! round of a call that moves more, once the members agreed on the sizes; so a
//! communicator whose collectives are all small keeps a small staging (at 48 members,
//! 20 live communicators with full staging took the whole default heap).
//!
//! Packed headers and side-by-side halves: a member reads every header in a call's first
//! round, and the shared allgather every member's block. With a header atop each half
//! that touched a page per member, in each of n processes: one 8-byte allgather of 1024
//! members took 3.3 s. Now 4096 packed headers take 16 pages, and the allgather packs
//! its blocks into the parity's array (`collectives::Round::packed`) when members share
//! CPUs.
//!
//! Across nodes there is no shared heap: a communicator of a job that spans nodes has
//! no area and no staging, only a link to the message layer and a context id, and every
//! collective, `split` and `free` runs over two-sided messages (`coll::over_p2p`). The
//! world picks that once at creation and its splits inherit it; each collective entry
//! point takes the message path first thing when the communicator has a link.
//!
//! The area's layout, the leader's allocations and the return of it all to the heap are
//! `memory`; communicators that a subset of the cores builds alone are `subset`; windows
//! over a communicator's members (`Comm::window`: the leader
//! allocates the control block, then the window runs on its own) are `window`; the error
//! type is `error`.

use std::cell::{Cell, RefCell};

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::{Disagreement, Fingerprint, MEMBER_BYTES, agree};
use crate::protocol::alloc::heap::{decode_result, encode_result};
use crate::protocol::barrier::BarrierState;
use crate::protocol::payload::Payload;
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;

use crate::coll::over_p2p::{Group, Link};

mod error;
mod memory;
mod subset;
mod window;

pub use error::CollError;
pub use subset::Grant;
use memory::{area_bytes, checks_at};

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
    /// In checking mode, once it has a window: its hold on the check area its windows
    /// share (`window`), given up when it goes.
    window_checks: RefCell<Option<crate::rma::team_checks::CheckHold<'c>>>,
    /// Whether this member has counted itself out ([`Comm::release`], or the drop).
    released: Cell<bool>,
    /// Across nodes: the link its collectives use instead of `area` (module docs).
    messages: Option<Link<'c>>,
}

impl<'c> Comm<'c> {
    /// Collective over the job: the communicator of every core.
    pub fn world(ctx: &'c CoreContext) -> Result<Comm<'c>, CollError> {
        ctx.agree_world(&Fingerprint::new("comm world"))??;
        let members: Vec<u32> = (0..ctx.size()).collect();
        if ctx.spans_nodes() {
            return Ok(Comm::over(ctx, members, ctx.rank(), Link::world(ctx)?));
        }
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
            window_checks: RefCell::new(None),
            released: Cell::new(false),
            messages: None,
        }
    }

    /// A communicator over messages (module docs): no area.
    fn over(ctx: &'c CoreContext, members: Vec<u32>, rank: u32, link: Link<'c>) -> Comm<'c> {
        let nowhere = HeapRegion { offset: 0, len: 0 };
        let mut comm = Comm::new(ctx, members, rank, nowhere);
        comm.messages = Some(link);
        comm
    }

    /// Its members as the message algorithms see them, if it runs over messages.
    pub(crate) fn over_messages(&self) -> Option<Group<'_, 'c>> {
        self.messages.as_ref().map(|link| link.group(&self.members, self.rank))
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

    /// The doorbell of member `rank`'s core.
    pub(crate) fn bell(&self, rank: u32) -> &'c crate::protocol::waiter::Doorbell {
        &self.ctx.segment().slot(self.members[rank as usize]).bell
    }

    /// Counts a meeting; returns how many came before it.
    pub(crate) fn next_meeting(&self) -> u64 {
        let n = self.meetings.get();
        self.meetings.set(n + 1);
        n
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
        if let Some(group) = self.over_messages() {
            return group.barrier();
        }
        let _call = Comm::timed_call("barrier");
        self.barrier_unchecked()
    }

    /// The communicator's barrier, without the checking-mode agreement: for the
    /// collectives' own synchronisation, after their entry point checked.
    pub(crate) fn barrier_unchecked(&self) -> Result<(), CollError> {
        self.check_live()?;
        Ok(self.wait_barrier()?)
    }

    /// `Released` once this member released the communicator ([`Comm::release`]).
    fn check_live(&self) -> Result<(), CollError> {
        if self.released.get() { Err(CollError::Released) } else { Ok(()) }
    }

    fn wait_barrier(&self) -> Result<(), JobAborted> {
        let state: &BarrierState = self.area_word(0);
        let meeting = self.meeting_arrive();
        let home = &self.ctx.segment().slot(self.members[0]).barrier_bell;
        state.wait(self.size(), &self.ctx.waiter(), home)?;
        self.meeting_leave(meeting);
        Ok(())
    }

    /// In checking mode, compares `fingerprint` across the members (`protocol::agree`,
    /// on the area's checking slots, with the communicator's barrier) and returns
    /// [`CollError::Mismatch`] on every member if they disagree; nothing otherwise.
    /// Every collective entry point calls it first.
    pub(crate) fn agree(&self, fingerprint: Fingerprint) -> Result<(), CollError> {
        // Every collective call begins here (or at the barrier), so this is where a
        // released communicator refuses it.
        self.check_live()?;
        Ok(self.compare(&fingerprint)??)
    }

    /// [`Comm::agree`], its outcomes apart: for callers with error types of their own.
    pub(crate) fn compare(&self, fingerprint: &Fingerprint) -> Result<Result<(), Disagreement>, JobAborted> {
        // Checking mode does not cross nodes (`over_p2p`).
        if !self.ctx.checking() || self.messages.is_some() {
            return Ok(Ok(()));
        }
        let seq = self.checks.get() + 1;
        self.checks.set(seq);
        let n = self.members.len();
        let slots = self.ctx.heap_bytes(self.area).slice(checks_at(n), n * MEMBER_BYTES);
        agree(&slots, self.size(), self.rank, seq, fingerprint, || self.wait_barrier())
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
        if let (Some(link), Some(parent)) = (&self.messages, self.over_messages()) {
            let context = parent.new_context(my_group.is_some())?;
            let Some(group) = my_group else { return Ok(None) };
            let members: Vec<u32> = group.iter().map(|&(_, r)| self.members[r as usize]).collect();
            let rank = group.iter().position(|&(_, r)| r == self.rank).expect("member of own group") as u32;
            return Ok(Some(Comm::over(self.ctx, members, rank, link.child(context))));
        }
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

    /// Collective: releases the communicator's shared memory. After a barrier, each
    /// member counts itself out as a dropped one does, and the last returns the memory:
    /// the leader alone could return it while a member slower to leave the barrier
    /// still reads the barrier's word in it.
    pub fn free(self) -> Result<(), CollError> {
        self.agree(Fingerprint::new("comm free"))?;
        // Over messages there is no memory to wait for: the drop gives the context id
        // back, and every message of the last call was received (`over_p2p`).
        if self.messages.is_none() {
            self.barrier_unchecked()?;
        }
        Ok(())
    }
}
