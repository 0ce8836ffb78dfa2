//! Passive-target epochs on a window: lock/unlock, lock_all/unlock_all, flushes, and
//! the RAII guards that make an open lock epoch impossible to forget.
//!
//! The shared protocols are in `rwlock` (ticket reader-writer lock per target, two
//! atomics an uncontended epoch) and `lock_all` (O(1) lock_all, with the registrations
//! that exclusive lockers keep between epochs). Locks are taken eagerly, so locking one's own part takes effect at
//! once. RMA completes when its call returns (copies and atomics on mapped memory), so
//! `flush*` only order: a SeqCst fence, after which the RMA is visible to any core
//! that synchronizes with this one. Each guard remembers the generation of the epoch
//! it opened, so a guard whose epoch was already closed by `Window::unlock` does not
//! close a later one when it drops.

use std::ops::Deref;

use shm_layout::Region;

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::lock_all::AllLock;
use crate::protocol::rwlock::{LockKind, TicketRwLock};
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::rma::control::{CtlLayout, TargetCtl, WindowCtl, lines};
use crate::rma::epoch::Held;
use crate::rma::error::SyncError;
use crate::rma::remote::wire::Kind;
use crate::rma::team::Team;
use crate::rma::window::Window;
use crate::segment::CoreContext;
use crate::segment::view::{Plain, atomics_at};
use crate::sync::{Ordering, fence, fence_after_rmw};
use crate::timing::{self, Category};

/// The shared words of a window's lock epochs, looked up once at creation: an epoch
/// then costs its atomics and little else (the uncontended exclusive epoch is two
/// atomics, about 10 ns here, against 12 ns for the whole of Open MPI's).
/// (Read by the entry points for bindings too, `quick`.)
pub(crate) struct LockViews<'c> {
    /// The window's lock_all word.
    pub(super) all: &'c AllLock,
    /// Its home doorbell (team rank 0's).
    pub(super) home: &'c Doorbell,
    /// Each target's ticket lock and doorbell, by team rank.
    pub(super) targets: Vec<(&'c TicketRwLock, &'c Doorbell)>,
    /// This core's waiter: fixed once the core has attached (its policy, CPU and
    /// background work), which it has before it can create a window.
    pub(super) waiter: Waiter<'c>,
    /// This core's CPU where handoffs need it ([`Waiter::handoff_cpu`]).
    pub(super) handoff_cpu: Option<u16>,
}

impl<'c> LockViews<'c> {
    /// The views of the control block at `meta` (laid out as `ctl`) of a window over
    /// `team`: each target's doorbell is its core's (its world rank's).
    pub(crate) fn new(ctx: &'c CoreContext, team: &Team<'_>, meta: Region, ctl: &CtlLayout) -> LockViews<'c> {
        let bytes = ctx.segment().bytes(meta);
        let window: &'c WindowCtl = atomics_at(bytes, 0);
        let bell = |t: u32| -> &'c Doorbell { &ctx.segment().slot(team.world(t)).bell };
        let targets = (0..team.size())
            .map(|t| {
                let target: &'c TargetCtl = atomics_at(bytes, ctl.targets + t as usize * lines(size_of::<TargetCtl>()));
                (&*target.lock, bell(t))
            })
            .collect();
        let waiter = ctx.waiter();
        let handoff_cpu = ctx.handoff_cpu();
        LockViews { all: &window.all, home: bell(0), targets, waiter, handoff_cpu }
    }
}

/// An open lock epoch on one target; derefs to the window for RMA. Dropping it
/// unlocks (errors are then ignored: use [`LockEpoch::unlock`] to see them).
pub struct LockEpoch<'w, 'c, T: Plain> {
    win: &'w Window<'c, T>,
    target: u32,
    generation: u64,
}

/// An open lock_all epoch; derefs to the window for RMA. Dropping it unlocks all.
pub struct LockAllEpoch<'w, 'c, T: Plain> {
    win: &'w Window<'c, T>,
    generation: u64,
}

impl<'c, T: Plain> Deref for LockEpoch<'_, 'c, T> {
    type Target = Window<'c, T>;
    fn deref(&self) -> &Window<'c, T> {
        self.win
    }
}

impl<'c, T: Plain> Deref for LockAllEpoch<'_, 'c, T> {
    type Target = Window<'c, T>;
    fn deref(&self) -> &Window<'c, T> {
        self.win
    }
}

impl<T: Plain> LockEpoch<'_, '_, T> {
    /// The rank whose part this epoch locks.
    pub fn target(&self) -> u32 {
        self.target
    }

    /// Closes the epoch (`MPI_Win_unlock`): all its RMA is complete at the target.
    #[inline(always)]
    pub fn unlock(self) -> Result<(), SyncError> {
        let result = self.win.unlock_generation(self.target, Some(self.generation));
        std::mem::forget(self);
        result
    }
}

impl<T: Plain> Drop for LockEpoch<'_, '_, T> {
    fn drop(&mut self) {
        let _ = self.win.unlock_generation(self.target, Some(self.generation));
    }
}

impl<T: Plain> LockAllEpoch<'_, '_, T> {
    /// Closes the epoch (`MPI_Win_unlock_all`).
    pub fn unlock_all(self) -> Result<(), SyncError> {
        let result = self.win.unlock_all_generation(Some(self.generation));
        std::mem::forget(self);
        result
    }
}

impl<T: Plain> Drop for LockAllEpoch<'_, '_, T> {
    fn drop(&mut self) {
        let _ = self.win.unlock_all_generation(Some(self.generation));
    }
}

impl<'c, T: Plain> Window<'c, T> {
    #[inline]
    fn check_lock_rank(&self, rank: u32) -> Result<(), SyncError> {
        let size = self.size();
        if rank >= size {
            return Err(SyncError::RankOutOfRange { rank, size });
        }
        Ok(())
    }

    /// `target`'s ticket lock and doorbell, or the error for a rank out of range.
    #[inline]
    fn target_lock(&self, target: u32) -> Result<(&'c TicketRwLock, &'c Doorbell), SyncError> {
        match self.lock_views.targets.get(target as usize) {
            Some(&views) => Ok(views),
            None => Err(SyncError::RankOutOfRange { rank: target, size: self.size() }),
        }
    }

    /// The error of a failed lock wait. A lock found corrupted (`rank: None`, see
    /// `rwlock`) stops the job here, as this core's finding (fail-stop).
    pub(super) fn fail_stop(&self, e: JobAborted) -> SyncError {
        if e.cause != AbortCause::Corrupted || e.rank.is_some() {
            return e.into();
        }
        let mine = JobAborted { rank: Some(self.ctx.rank()), cause: AbortCause::Corrupted };
        self.ctx.segment().abort(mine.rank, mine.cause);
        // The first failure recorded, or ours while another core is still recording its own.
        self.ctx.check_job().err().unwrap_or(mine).into()
    }

    /// Opens a passive-target epoch on `target` (`MPI_Win_lock`), waiting for the lock.
    /// Always inlined, as is the guard's unlock: a guard returned through memory inside
    /// a `Result` was copied out of it with one 16-byte load over two 8-byte stores,
    /// which cannot forward, and that stall tripled the uncontended epoch (23 ns
    /// against 7.7 without the guard).
    #[inline(always)]
    pub fn lock(&self, kind: LockKind, target: u32) -> Result<LockEpoch<'_, 'c, T>, SyncError> {
        let generation = self.open_lock(kind, target)?;
        Ok(LockEpoch { win: self, target, generation })
    }

    /// [`Window::lock`] without a guard: the epoch stays open until [`Window::unlock`]
    /// (for bindings whose callers unlock by rank, as MPI's do).
    #[inline]
    pub fn lock_unguarded(&self, kind: LockKind, target: u32) -> Result<(), SyncError> {
        self.open_lock(kind, target).map(drop)
    }

    /// The lock epoch's opening; returns its generation. Off virtual time, no timing
    /// state is live across it (see `timing::in_call`): an `Option<Op>` carried
    /// through the lock cost a tenth of the uncontended epoch.
    #[inline(always)]
    fn open_lock(&self, kind: LockKind, target: u32) -> Result<u64, SyncError> {
        if timing::clock().is_none() {
            return self.open_lock_with(kind, target, || None);
        }
        self.open_lock_timed(kind, target)
    }

    #[cold]
    #[inline(never)]
    fn open_lock_timed(&self, kind: LockKind, target: u32) -> Result<u64, SyncError> {
        self.open_lock_with(kind, target, || timing::call(Category::Lock, "lock"))
    }

    /// `open_lock` with `call` starting the timed operation (once the epoch is known
    /// to be allowed).
    #[inline(always)]
    fn open_lock_with(
        &self,
        kind: LockKind,
        target: u32,
        call: impl FnOnce() -> Option<timing::Op<'static>>,
    ) -> Result<u64, SyncError> {
        let (lock, bell) = self.target_lock(target)?;
        // Held through the wait: nothing that a wait drives (two-sided progress) touches
        // a window's epochs.
        let mut e = self.epochs.borrow_mut();
        if e.lock_all.is_some() || e.locks[target as usize].is_some() {
            return Err(SyncError::AlreadyLocked { rank: target });
        }
        let op = call();
        let views = &self.lock_views;
        let waiter = &views.waiter;
        let locked = match kind {
            _ if self.remote_to(target).is_some() => self.remote_lock(target, kind).map(|()| None),
            LockKind::Shared => lock.lock_shared(waiter, bell).map(|()| None),
            LockKind::Exclusive => lock.lock_exclusive(target, waiter, bell, views.all, views.home).map(Some),
        };
        let exclusive = locked.map_err(|e| self.fail_stop(e))?;
        self.lock_held(&op, kind, target).map_err(|e| self.fail_stop(e))?;
        let generation = e.next_generation();
        e.locks[target as usize] = Some(Held { kind, generation, exclusive });
        e.locked += 1;
        Ok(generation)
    }

    /// Closes the lock epoch on `target` (`MPI_Win_unlock`) opened by [`Window::lock`]
    /// (whose guard then does nothing when dropped). Unlocking a target this core has
    /// not locked is an error.
    #[inline]
    pub fn unlock(&self, target: u32) -> Result<(), SyncError> {
        self.unlock_generation(target, None)
    }

    #[inline]
    fn unlock_generation(&self, target: u32, generation: Option<u64>) -> Result<(), SyncError> {
        if timing::clock().is_none() {
            return self.unlock_with(target, generation, || None);
        }
        self.unlock_timed(target, generation)
    }

    #[cold]
    #[inline(never)]
    fn unlock_timed(&self, target: u32, generation: Option<u64>) -> Result<(), SyncError> {
        self.unlock_with(target, generation, || timing::call(Category::Lock, "unlock"))
    }

    /// `unlock_generation` with `call` starting the timed operation, as `open_lock_with`.
    #[inline(always)]
    fn unlock_with(
        &self,
        target: u32,
        generation: Option<u64>,
        call: impl FnOnce() -> Option<timing::Op<'static>>,
    ) -> Result<(), SyncError> {
        let (lock, bell) = self.target_lock(target)?;
        let held = {
            let mut e = self.epochs.borrow_mut();
            match e.locks[target as usize] {
                Some(held) if generation.is_none_or(|want| want == held.generation) => {
                    e.locks[target as usize] = None;
                    e.locked -= 1;
                    held
                }
                _ => return Err(SyncError::NotLocked { rank: target }),
            }
        };
        let op = call();
        // Completes this core's pending accumulates (owner-computes) before releasing.
        let quiesced = self.acc_quiesce();
        self.unlocking(&op, held.kind, target)?;
        let views = &self.lock_views;
        match held.exclusive {
            _ if self.remote_to(target).is_some() => self.remote_unlock(target)?,
            None => lock.unlock_shared(bell),
            Some(hold) => lock.unlock_exclusive(hold, bell, views.all, views.home, views.handoff_cpu),
        }
        quiesced?;
        Ok(())
    }

    /// Opens a shared passive-target epoch on every target at once (`MPI_Win_lock_all`):
    /// O(1) atomics, whatever the job size (one, unless exclusive lockers left
    /// registrations to revoke: at most a fixed number, see `lock_all`).
    pub fn lock_all(&self) -> Result<LockAllEpoch<'_, 'c, T>, SyncError> {
        if self.epochs.borrow().lock_all.is_some() || self.epochs.borrow().locked > 0 {
            return Err(SyncError::LockAllConflict);
        }
        let op = timing::call(Category::Lock, "lock_all");
        let entered = match &self.remote {
            None => self.lock_all_here(),
            Some(remote) => remote.leaders.iter().try_for_each(|&leader| match remote.is_local(leader) {
                true => self.lock_all_here(),
                false => self.remote_all(Kind::LockAll, leader),
            }),
        };
        entered.map_err(|e| self.fail_stop(e))?;
        self.lock_all_held(&op).map_err(|e| self.fail_stop(e))?;
        let mut e = self.epochs.borrow_mut();
        let generation = e.next_generation();
        e.lock_all = Some(generation);
        Ok(LockAllEpoch { win: self, generation })
    }

    /// Closes the lock_all epoch (`MPI_Win_unlock_all`).
    pub fn unlock_all(&self) -> Result<(), SyncError> {
        self.unlock_all_generation(None)
    }

    fn unlock_all_generation(&self, generation: Option<u64>) -> Result<(), SyncError> {
        {
            let mut e = self.epochs.borrow_mut();
            match e.lock_all {
                Some(g) if generation.is_none_or(|want| want == g) => e.lock_all = None,
                _ => return Err(SyncError::NotLockedAll),
            }
        }
        let op = timing::call(Category::Lock, "unlock_all");
        let quiesced = self.acc_quiesce();
        self.unlocking_all(&op)?;
        match &self.remote {
            None => self.lock_views.all.unlock_all(self.lock_views.home),
            Some(remote) => {
                // Every target's RMA completes before anyone's lock_all word is left.
                self.remote_sync_all()?;
                for &leader in &remote.leaders {
                    match remote.is_local(leader) {
                        true => self.lock_views.all.unlock_all(self.lock_views.home),
                        false => self.remote_all(Kind::UnlockAll, leader)?,
                    }
                }
            }
        }
        quiesced?;
        Ok(())
    }

    /// Enters this node's lock_all word.
    pub(super) fn lock_all_here(&self) -> Result<(), JobAborted> {
        let views = &self.lock_views;
        // A target's lock words and doorbell, for the revocation of its registration.
        let targets = |t: u32| views.targets.get(t as usize).copied();
        views.all.lock_all(&views.waiter, views.home, targets)
    }

    /// Completes all RMA to `target` at the target (`MPI_Win_flush`).
    #[inline(always)]
    pub fn flush(&self, target: u32) -> Result<(), SyncError> {
        self.check_lock_rank(target)?;
        if !self.epochs.borrow().passive(target) {
            return Err(SyncError::NotLocked { rank: target });
        }
        timing::in_call(Category::Sync, "flush", #[inline(always)] || {
            self.acc_quiesce()?;
            if self.remote.is_some() {
                self.remote_sync(target)?;
            }
            self.complete_stores();
            Ok(())
        })
    }

    /// The memory side of every flush: a SeqCst fence, so that the RMA before it is
    /// ordered before anything after it and any core that synchronizes with a later
    /// access of ours sees it (module docs). When no plain store (put, atomic store) was
    /// issued since the last flush, everything since was loads or locked RMWs, and
    /// `fence_after_rmw` gives the same ordering (on x86, without an mfence).
    #[inline]
    pub(super) fn complete_stores(&self) {
        if self.pending_stores.replace(false) {
            fence(Ordering::SeqCst);
        } else {
            fence_after_rmw();
        }
    }

    /// Completes all RMA at every target (`MPI_Win_flush_all`).
    pub fn flush_all(&self) -> Result<(), SyncError> {
        let e = self.epochs.borrow();
        if e.lock_all.is_none() && e.locked == 0 {
            return Err(SyncError::NotLockedAll);
        }
        drop(e);
        self.acc_quiesce()?;
        self.remote_sync_all()?;
        self.complete_stores();
        Ok(())
    }

    /// Completes all RMA to `target` at the origin (`MPI_Win_flush_local`): origin
    /// buffers may be reused. They already may (RMA copies before returning).
    pub fn flush_local(&self, target: u32) -> Result<(), SyncError> {
        self.check_lock_rank(target)?;
        if !self.epochs.borrow().passive(target) {
            return Err(SyncError::NotLocked { rank: target });
        }
        Ok(())
    }

    /// `MPI_Win_flush_local_all`.
    pub fn flush_local_all(&self) -> Result<(), SyncError> {
        let e = self.epochs.borrow();
        if e.lock_all.is_none() && e.locked == 0 {
            return Err(SyncError::NotLockedAll);
        }
        Ok(())
    }
}
