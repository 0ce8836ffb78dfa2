//! A window's team: the cores it spans, and the collective steps of its life.
//!
//! Every window spans a *team*: its members as world ranks, in the order of the
//! communicator it was made over, and this core's index among them. Everything the
//! window API takes or reports (targets, PSCW groups, lock targets, the ranks in its
//! errors) is a team rank, and so is every index into the window's shared state
//! (parts, control block, stamps, accumulate block). Only where a per-core resource of
//! the chip is involved does the window translate a team rank to a world rank
//! ([`Team::world`]): a core's doorbell (to wake it or sleep on it), its MPB (MPB
//! placement), and its place on the mesh (virtual-time costs). The hot paths (put, get,
//! ARMW, lock, flush) index per-team-rank tables built at creation, so a window over a
//! communicator costs them nothing more than a job-wide one.
//!
//! Two kinds of team, which differ only in their collective steps:
//! - a *job-wide* window ([`Window::create`]: every core, in world order) uses the
//!   job's: the world barrier, the symmetric allocators (heap and MPB), job-wide
//!   checking-mode agreement, and orphan reclaim for a window dropped without free
//!   (`segment::reclaim`);
//! - a window over a communicator (`coll::Comm::window`) cannot: the other cores make
//!   none of its calls. Its communicator's leader allocates the control block (zeroed)
//!   and publishes it through the communicator; from then on the block is the team's
//!   meeting place. Its barrier is the window's fence barrier ([`Window::team_barrier`]:
//!   every collective call of the window is made by every member in the same order, so
//!   the one barrier serves creation, fences, agreement and free alike); the leader
//!   (team rank 0) allocates data and accumulate blocks from the heap (or the MPB
//!   window pool, `segment::mpb_pool`) and publishes each result in a [`TeamCtl`]
//!   word of the allocation's parity before a barrier (Relaxed store and load: the
//!   barrier's Release/Acquire orders them; a word is rewritten two allocations later,
//!   after a barrier every member passes only after reading it); checking-mode
//!   agreement runs on a check area that all the windows of the communicator share
//!   (`team_checks`), so that members in calls on different windows are told so.
//!
//! Release of a window over a communicator. `free`, after its vote (`window`): every
//! member stops its owner-computes agent and passes the members' barrier, so nobody
//! touches the data or the accumulate block any more; the leader returns them (and
//! unlists the window) and all pass the barrier again, so that when `free` returns on
//! any member the memory is back, as after a job-wide window's free. Only the control
//! block, whose barrier that was, is left: each member then counts itself out of its
//! `left` count (`protocol::last_out`), and the last returns it, after every member's
//! last access to the block (its barrier waits included). A member that drops the
//! window (or whose `free` was refused) stops its agent and adds one to the same count
//! at once; then the last member to do so returns everything (data, accumulate block,
//! control block, window-table entry): nobody waits for a member that drops.

use std::cell::Cell;

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::{Disagreement, Fingerprint};
use crate::protocol::last_out;
use crate::protocol::alloc::heap::{decode_result, encode_result};
use crate::protocol::waiter::Doorbell;
use crate::rma::control::TeamCtl;
use crate::rma::error::WindowError;
use crate::rma::team_checks::CheckHold;
use crate::rma::window::{Data, Window};
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::{Plain, atomics_at};
use crate::sync::Ordering;

/// The cores a window spans (module docs).
pub(crate) struct Team<'c> {
    /// World rank of each member, by team rank.
    members: Vec<u32>,
    /// This core's team rank.
    me: u32,
    /// Made by the job-wide constructor: the job's collective steps (module docs).
    job: bool,
    /// Leader allocations published so far (their parity picks the word).
    allocs: Cell<u64>,
    /// A window over a communicator in checking mode: its hold on the communicator's
    /// check area (`team_checks`).
    checks: Option<CheckHold<'c>>,
}

impl<'c> Team<'c> {
    /// Every core of the job, in world order, for a job-wide window.
    pub(crate) fn job(rank: u32, size: u32) -> Team<'c> {
        Team { members: (0..size).collect(), me: rank, job: true, allocs: Cell::new(0), checks: None }
    }

    /// The members `members` (world ranks, by team rank), this core being team rank
    /// `me`; `checks` in checking mode.
    pub(crate) fn new(members: Vec<u32>, me: u32, checks: Option<CheckHold<'c>>) -> Team<'c> {
        debug_assert!((me as usize) < members.len());
        Team { members, me, job: false, allocs: Cell::new(0), checks }
    }

    /// Members.
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// This core's team rank.
    #[inline]
    pub(crate) fn me(&self) -> u32 {
        self.me
    }

    /// The world rank of team rank `rank` (checked by the caller).
    #[inline]
    pub(crate) fn world(&self, rank: u32) -> u32 {
        self.members[rank as usize]
    }

    /// Whether this is a job-wide window's team.
    #[inline]
    pub(crate) fn is_job(&self) -> bool {
        self.job
    }

    /// World ranks, by team rank.
    pub(crate) fn members(&self) -> &[u32] {
        &self.members
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// This core's rank in the window (its team rank: its rank in the communicator the
    /// window was made over; its world rank for a job-wide window).
    #[inline]
    pub fn rank(&self) -> u32 {
        self.team.me()
    }

    /// Ranks in the window.
    #[inline]
    pub fn size(&self) -> u32 {
        self.team.size()
    }

    /// The world rank of each of the window's ranks, in rank order.
    pub fn members(&self) -> &[u32] {
        self.team.members()
    }

    /// The doorbell of the core that plays team rank `rank` (checked by the caller).
    #[inline]
    pub(crate) fn bell(&self, rank: u32) -> &'c Doorbell {
        &self.ctx.segment().slot(self.team.world(rank)).bell
    }

    pub(crate) fn team_ctl(&self) -> &'c TeamCtl {
        atomics_at(self.ctx.segment().bytes(self.meta_abs), self.ctl.team)
    }

    /// The barrier of the window's members: the job's, or the window's own fence
    /// barrier (module docs).
    pub(crate) fn team_barrier(&self) -> Result<(), JobAborted> {
        if self.team.is_job() {
            return self.ctx.barrier();
        }
        self.window_ctl().fence.fence(self.size(), &self.ctx.waiter(), self.bell(0))
    }

    /// In checking mode, compares `fingerprint` across the members (module docs);
    /// `Ok(Ok(()))` at once otherwise. Every member calls it at the same point.
    pub(crate) fn agree(&self, fingerprint: &Fingerprint) -> Result<Result<(), Disagreement>, JobAborted> {
        if self.team.is_job() {
            return self.ctx.agree_world(fingerprint);
        }
        match &self.team.checks {
            Some(checks) => checks.agree(fingerprint),
            None => Ok(Ok(())),
        }
    }

    /// Collective: a heap block of `bytes` for the window, the same on every member:
    /// the job's symmetric allocation, or the leader's, published (module docs).
    pub(crate) fn alloc_heap(&self, bytes: usize) -> Result<HeapRegion, WindowError> {
        if self.team.is_job() {
            return Ok(self.ctx.heap_alloc(bytes)?);
        }
        self.publish(bytes, || self.ctx.heap_alloc_local(bytes))
    }

    /// Collective: `bytes` at the same offset of every member's MPB, as the window's
    /// data and the MPB offset of its parts: the job's symmetric allocation, or a range
    /// of the MPB window pool, allocated by the leader and published (module docs).
    pub(crate) fn alloc_mpb(&self, bytes: usize) -> Result<(Data, usize), WindowError> {
        if self.team.is_job() {
            let region = self.ctx.mpb_alloc(bytes)?;
            return Ok((Data::Mpb(region), region.offset));
        }
        // Reserved by a job-wide call that every member made before this one: the
        // same answer everywhere.
        let pool = self.ctx.mpb_pool().ok_or(WindowError::NoMpbPool)?;
        let region = self.publish(bytes, || self.ctx.pool_alloc(pool, bytes))?;
        Ok((Data::Pool(region), pool.base() + region.offset))
    }

    /// The leader runs `alloc`, stores its result in the word of this allocation's
    /// parity, and the members' barrier carries it to all, who decode it.
    fn publish(
        &self,
        bytes: usize,
        alloc: impl FnOnce() -> Result<HeapRegion, crate::protocol::alloc::freelist::AllocError>,
    ) -> Result<HeapRegion, WindowError> {
        let call = self.team.allocs.get() + 1;
        self.team.allocs.set(call);
        let word = &self.team_ctl().published[(call % 2) as usize];
        if self.rank() == 0 {
            // Relaxed: the barrier below publishes it.
            word.store(encode_result(&alloc()), Ordering::Relaxed);
        }
        self.team_barrier()?;
        Ok(decode_result(word.load(Ordering::Relaxed), bytes)?)
    }

    /// Records the window-table entry the leader claimed, for whoever releases last.
    pub(crate) fn record_entry(&self, entry: Option<usize>) {
        if let Some(entry) = entry {
            // Relaxed: published by the barrier that ends creation.
            self.team_ctl().entry.store(entry as u64 + 1, Ordering::Relaxed);
        }
    }

    /// The end of `free` on a window over a communicator, once the members' vote
    /// allowed it (module docs): the leader returns the data and the accumulate block
    /// between two barriers, then every member leaves the control block.
    pub(crate) fn free_team(&self) -> Result<(), WindowError> {
        let block = self.acc_take();
        self.team_barrier()?;
        let returned = if self.rank() == 0 { self.return_memory(self.table_entry, block) } else { Ok(()) };
        // A failed barrier means the job is aborting: the block then stays, as the rest
        // of a job's memory does (no member could tell whether the leader returned it).
        self.team_barrier()?;
        self.leave(None, false);
        returned
    }

    /// Releases this member's hold on a window over a communicator (module docs): the
    /// member that releases last returns the control block and, with `everything`, the
    /// rest of the window's memory, `acc_block` (the accumulate block, if any)
    /// included. This member's owner-computes agent must have stopped.
    pub(crate) fn leave(&self, acc_block: Option<HeapRegion>, everything: bool) {
        debug_assert!(!self.team.is_job());
        // Every member's accesses to the window's memory happen before the return below.
        if !last_out::count_out(&self.team_ctl().left, self.size()) {
            return;
        }
        if everything {
            // Relaxed: written before the creation's last barrier, which every member
            // passed.
            let entry = self.team_ctl().entry.load(Ordering::Relaxed);
            // Failures mean the job is aborting, when nothing needs the memory.
            let _ = self.return_memory(entry.checked_sub(1).map(|e| e as usize), acc_block);
        }
        let _ = self.ctx.heap_free_local(self.meta);
    }

    /// Returns the window's data and `acc_block` to their allocators, and unlists
    /// `entry`.
    fn return_memory(&self, entry: Option<usize>, acc_block: Option<HeapRegion>) -> Result<(), WindowError> {
        if let Some(entry) = entry {
            crate::segment::wintable::unregister(self.ctx.segment(), entry);
        }
        match self.data {
            Data::None => {}
            Data::Heap(r) => self.ctx.heap_free_local(r)?,
            Data::Pool(r) => self.ctx.pool_free(r)?,
            // Symmetric MPB data is a job-wide window's only.
            Data::Mpb(_) => {}
        }
        if let Some(block) = acc_block {
            self.ctx.heap_free_local(block)?;
        }
        Ok(())
    }

    /// Gives up a window whose creation failed on every member alike (or whose job
    /// aborted): returns the control block, and `e`.
    pub(crate) fn abandon(&self, e: WindowError) -> WindowError {
        if self.team.is_job() {
            let _ = self.ctx.heap_free(self.meta);
        } else {
            self.leave(None, true);
        }
        e
    }
}
