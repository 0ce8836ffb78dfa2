//! Epoch discipline: which targets this core may access right now, and the active-
//! target synchronization calls (fence, post-start-complete-wait) on a window.
//!
//! [`Epochs`] is process-local bookkeeping (no shared state): an RMA call to target t
//! is allowed while a fence epoch is open, or t is in the open PSCW access group, or t
//! is locked (or lock_all is open). Everything else is a typed error, as are the sync
//! calls that do not match (complete without start, wait without post, unlock without
//! lock, fence inside a PSCW or lock epoch). The shared protocols live in `fence`,
//! `pscw` and `rwlock`.

use crate::protocol::group::Group;
use crate::protocol::rwlock::{Exclusive, LockKind};

/// A lock this core holds on one target.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// Shared or exclusive.
    pub kind: LockKind,
    /// The generation of the guard that holds it.
    pub generation: u64,
    /// An exclusive hold's state, for its unlock.
    pub exclusive: Option<Exclusive>,
}

/// One core's open epochs on one window.
#[derive(Debug)]
pub struct Epochs {
    /// A fence opened an epoch (no NOSUCCEED).
    pub fence_open: bool,
    /// RMA was issued since the last fence (for the NOPRECEDE check).
    pub ops_since_fence: bool,
    /// Whether a PSCW access epoch is open.
    pub access_open: bool,
    /// The targets of the open (or last) access epoch; kept between epochs so that
    /// starting one reuses its allocation.
    pub access: Group,
    /// Whether a PSCW exposure epoch is open.
    pub exposure_open: bool,
    /// The origins of the open (or last) exposure epoch, kept like `access`.
    pub exposure: Group,
    /// Posts made to each origin (the completions expected from it in total).
    pub posted: Vec<u32>,
    /// Posts consumed from each target (PSCW matching).
    pub consumed: Vec<u32>,
    /// Per-target lock, with the generation of the guard that holds it.
    pub locks: Vec<Option<Held>>,
    /// Targets locked now (by `lock`, not counting lock_all).
    pub locked: usize,
    /// The open lock_all epoch's guard generation.
    pub lock_all: Option<u64>,
    /// The last guard generation handed out.
    pub generation: u64,
    /// Fences on the window so far (their parity keys the fence's virtual-time stamps).
    pub fences: u64,
}

impl Epochs {
    /// No epoch open, for a window of `n` cores.
    pub fn new(n: usize) -> Epochs {
        Epochs {
            fence_open: false,
            ops_since_fence: false,
            access_open: false,
            access: Group::empty(),
            exposure_open: false,
            exposure: Group::empty(),
            posted: vec![0; n],
            consumed: vec![0; n],
            locks: vec![None; n],
            locked: 0,
            lock_all: None,
            generation: 0,
            fences: 0,
        }
    }

    /// Whether RMA to `target` is allowed now.
    #[inline(always)]
    pub fn may_access(&self, target: u32) -> bool {
        self.fence_open || self.passive(target) || (self.access_open && self.access.contains(target))
    }

    /// Whether `target` is in a passive-target (lock) epoch.
    #[inline]
    pub fn passive(&self, target: u32) -> bool {
        self.lock_all.is_some() || self.locks[target as usize].is_some()
    }

    /// Whether a lock, lock_all or PSCW epoch is open (a fence may not run then).
    pub fn passive_or_pscw_open(&self) -> bool {
        self.locked > 0 || self.lock_all.is_some() || self.access_open || self.exposure_open
    }

    /// A fresh generation for a guard about to open an epoch.
    pub fn next_generation(&mut self) -> u64 {
        self.generation += 1;
        self.generation
    }
}

mod api {
    use crate::protocol::agree::Fingerprint;
    use crate::protocol::fence::{self, Assert};
    use crate::protocol::group::Group;
    use crate::segment::view::Plain;
    use crate::rma::error::{RmaError, SyncError};
    use crate::rma::remote::wire::Kind;
    use crate::rma::window::Window;
    use crate::timing::{self, Category};

    impl<T: Plain> Window<'_, T> {
        /// Checks that RMA to `target` is allowed.
        #[inline]
        pub(crate) fn check_access(&self, target: u32) -> Result<(), RmaError> {
            self.check_rank(target)?;
            if !self.epochs.borrow().may_access(target) {
                return Err(RmaError::NoEpoch { rank: target });
            }
            Ok(())
        }

        /// Records that RMA was issued; called once every check of the call passed. A
        /// refused call did nothing, so it must not make a later `fence(NOPRECEDE)` fail
        /// on this core alone while the others wait in the fence.
        #[inline]
        pub(crate) fn issued(&self) {
            self.epochs.borrow_mut().ops_since_fence = true;
        }

        fn sync_rank(&self, rank: u32) -> Result<(), SyncError> {
            let size = self.size();
            if rank >= size {
                return Err(SyncError::RankOutOfRange { rank, size });
            }
            Ok(())
        }

        fn check_group(&self, group: &Group) -> Result<(), SyncError> {
            group.max().map_or(Ok(()), |r| self.sync_rank(r))
        }

        /// Collective fence (`MPI_Win_fence` without asserts): ends the previous fence
        /// epoch and opens the next. One barrier (see `fence`); in checking mode, one
        /// more before it, in which the members compare the window and the asserts
        /// ([`SyncError::Mismatch`] on every member if they differ).
        pub fn fence(&self) -> Result<(), SyncError> {
            self.fence_with(Assert::NONE)
        }

        /// [`Window::fence`] with asserts (`NOPRECEDE`, `NOSUCCEED`, `NOSTORE`,
        /// `NOPUT`); `NOSUCCEED` closes the fence epoch instead of opening one.
        pub fn fence_with(&self, asserts: Assert) -> Result<(), SyncError> {
            {
                let e = self.epochs.borrow();
                if e.passive_or_pscw_open() {
                    return Err(SyncError::OtherEpochOpen);
                }
                fence::check_asserts(asserts, e.ops_since_fence).map_err(SyncError::Assert)?;
            }
            // Checking mode: the same window, and the asserts MPI wants of all or none
            // (NOSTORE and NOPUT are local). After the local checks, as before: a core
            // refused here and calling again meets the others in this comparison.
            let collective = [Assert::NOPRECEDE, Assert::NOSUCCEED].map(|a| u64::from(asserts.contains(a)));
            let fingerprint = Fingerprint::new("window fence").field("window", self.id());
            self.agree(&fingerprint.field("asserts", collective[0] | collective[1] << 1))??;
            self.acc_quiesce()?;
            let op = timing::call(Category::Sync, "fence");
            let parity = (self.epochs.borrow().fences % 2) as u32;
            self.fence_arrive(&op, parity);
            if self.spans_nodes() {
                // The members' own barrier: a window's team need not be the job.
                self.remote_sync_all()?;
                self.fence_meet_across(&op)?;
            } else {
                self.window_ctl().fence.fence(self.size(), &self.ctx.waiter(), self.bell(0))?;
                self.fence_leave(&op, parity);
            }
            let mut e = self.epochs.borrow_mut();
            e.fence_open = fence::opens_epoch(asserts);
            e.ops_since_fence = false;
            e.fences += 1;
            Ok(())
        }

        /// Opens an exposure epoch for the origins in `group` (`MPI_Win_post`). Never
        /// blocks.
        pub fn post(&self, group: &Group) -> Result<(), SyncError> {
            self.post_with(group, Assert::NONE)
        }

        /// [`Window::post`] with asserts. With `NOCHECK`, the origins must start with
        /// `NOCHECK` too (no handshake is made).
        pub fn post_with(&self, group: &Group, asserts: Assert) -> Result<(), SyncError> {
            self.check_group(group)?;
            let mut e = self.epochs.borrow_mut();
            if e.exposure_open {
                return Err(SyncError::ExposureEpochOpen);
            }
            let me = self.rank();
            let op = timing::call(Category::Sync, "post");
            for origin in group.iter() {
                let posted = &mut e.posted[origin as usize];
                *posted = posted.wrapping_add(1);
                if !asserts.contains(Assert::NOCHECK) {
                    self.posted(&op, origin)?;
                    match self.remote_to(origin) {
                        Some(_) => self.remote_pscw(Kind::Post, origin, me, origin)?,
                        None => self.pscw_pair(origin, me).post(self.bell(origin)),
                    }
                }
            }
            e.exposure.clone_from(group);
            e.exposure_open = true;
            Ok(())
        }

        /// Opens an access epoch to the targets in `group` (`MPI_Win_start`): waits
        /// until each has posted.
        pub fn start(&self, group: &Group) -> Result<(), SyncError> {
            self.start_with(group, Assert::NONE)
        }

        /// [`Window::start`] with asserts: `NOCHECK` skips the wait, the user
        /// guaranteeing that the targets already posted (with `NOCHECK` too).
        pub fn start_with(&self, group: &Group, asserts: Assert) -> Result<(), SyncError> {
            self.check_group(group)?;
            let mut e = self.epochs.borrow_mut();
            if e.access_open {
                return Err(SyncError::AccessEpochOpen);
            }
            let me = self.rank();
            if !asserts.contains(Assert::NOCHECK) {
                let op = timing::call(Category::Sync, "start");
                let bell = self.bell(me);
                for target in group.iter() {
                    let consumed = e.consumed[target as usize];
                    self.pscw_pair(me, target).wait_post(consumed, &self.ctx.waiter(), bell)?;
                    self.post_seen(&op, target);
                    e.consumed[target as usize] = consumed.wrapping_add(1);
                }
            }
            e.access.clone_from(group);
            e.access_open = true;
            Ok(())
        }

        /// Ends the access epoch (`MPI_Win_complete`): all its RMA is complete at the
        /// targets, which learn so through the pairs' completion counts.
        pub fn complete(&self) -> Result<(), SyncError> {
            if !self.epochs.borrow().access_open {
                return Err(SyncError::NoAccessEpoch);
            }
            self.acc_quiesce()?;
            let mut e = self.epochs.borrow_mut();
            e.access_open = false;
            let me = self.rank();
            let op = timing::call(Category::Sync, "complete");
            for target in e.access.iter() {
                self.completed_at(&op, target)?;
                match self.remote_to(target) {
                    Some(_) => self.remote_pscw(Kind::Complete, me, target, target)?,
                    None => self.pscw_pair(me, target).complete(self.bell(target)),
                }
            }
            Ok(())
        }

        /// Ends the exposure epoch (`MPI_Win_wait`): waits until every origin of the
        /// post group has completed.
        pub fn wait(&self) -> Result<(), SyncError> {
            let mut e = self.epochs.borrow_mut();
            if !e.exposure_open {
                return Err(SyncError::NoExposureEpoch);
            }
            let op = timing::call(Category::Sync, "wait");
            let bell = self.bell(self.rank());
            let done = || self.all_completed(&e).then_some(());
            self.ctx.waiter().wait_until(bell, done)?;
            self.completions_seen(&op, e.exposure.iter());
            e.exposure_open = false;
            Ok(())
        }

        /// Non-blocking [`Window::wait`] (`MPI_Win_test`): `true`, and the exposure
        /// epoch is closed, once every origin has completed.
        pub fn test(&self) -> Result<bool, SyncError> {
            let mut e = self.epochs.borrow_mut();
            if !e.exposure_open {
                return Err(SyncError::NoExposureEpoch);
            }
            self.ctx.check_job()?;
            let op = timing::call(Category::Sync, "test");
            let done = self.all_completed(&e);
            if done {
                self.completions_seen(&op, e.exposure.iter());
            }
            e.exposure_open &= !done;
            Ok(done)
        }

        /// Whether every origin of the open exposure epoch has completed it.
        fn all_completed(&self, e: &super::Epochs) -> bool {
            let me = self.rank();
            e.exposure.iter().all(|o| self.pscw_pair(o, me).completed(e.posted[o as usize]))
        }

        /// Memory barrier between local and RMA accesses to this core's part
        /// (`MPI_Win_sync`).
        pub fn sync(&self) {
            crate::sync::fence(crate::sync::Ordering::SeqCst);
        }

        /// Whether RMA to `target` is allowed now (an open fence, PSCW or lock epoch).
        pub fn in_epoch(&self, target: u32) -> bool {
            target < self.size() && self.epochs.borrow().may_access(target)
        }
    }
}
