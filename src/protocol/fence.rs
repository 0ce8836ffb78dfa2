//! Fence: collective active-target synchronization (`MPI_Win_fence`).
//!
//! Protocol: a fence is exactly one barrier over the window's own barrier words
//! ([`crate::protocol::barrier::BarrierState`], which lives in the window's control block and
//! whose home is rank 0). Since RMA here completes when the call returns (put and
//! get are copies, ARMW are atomics), everything a core did before its fence is
//! ordered before the barrier's `AcqRel` arrival, and everything after the barrier's
//! `Acquire` release follows it: every RMA of the closing epoch happens-before every
//! access of the next one. So a fence costs one barrier, never more.
//!
//! Asserts are honoured only where that is safe on shared memory:
//! - `NOPRECEDE`: no RMA from this core closes here. It is checked (issuing RMA in the
//!   epoch and then asserting it is an error), but the barrier stays: other cores'
//!   local stores must still be ordered before our next accesses.
//! - `NOSUCCEED`: no RMA follows; the fence closes the fence epoch, and RMA issued
//!   before the next fence is an epoch error.
//! - `NOSTORE`, `NOPUT`: hints about local stores and incoming puts. Nothing here
//!   could skip work for them (no caches to flush, no buffers to drain), so they are
//!   accepted and ignored.

use crate::protocol::abort::JobAborted;
use crate::protocol::barrier::BarrierState;
use crate::protocol::waiter::{Doorbell, Waiter};

/// Assertions for fence and PSCW calls, as MPI's `MPI_MODE_*`. Combine with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Assert(u32);

impl Assert {
    /// No assertion.
    pub const NONE: Assert = Assert(0);
    /// PSCW: the matching post/start already happened (both sides assert it).
    pub const NOCHECK: Assert = Assert(1);
    /// The local window was not updated by local stores since the last sync.
    pub const NOSTORE: Assert = Assert(2);
    /// The local window will not be updated by put or accumulate until the next sync.
    pub const NOPUT: Assert = Assert(4);
    /// Fence: no RMA from this core completes at this fence.
    pub const NOPRECEDE: Assert = Assert(8);
    /// Fence: no RMA from this core follows until the next fence.
    pub const NOSUCCEED: Assert = Assert(16);

    /// Whether every assertion of `other` is in `self`.
    pub fn contains(self, other: Assert) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Assert {
    type Output = Assert;
    fn bitor(self, rhs: Assert) -> Assert {
        Assert(self.0 | rhs.0)
    }
}

/// Why a fence's asserts were refused (nothing was synchronized).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssertError {
    /// NOPRECEDE, but this core issued RMA since the last fence.
    PrecedingOps,
    /// NOCHECK is meaningless for a fence.
    NoCheckOnFence,
}

/// Validates a fence's asserts against whether RMA was issued in the closing epoch.
pub fn check_asserts(asserts: Assert, issued_ops: bool) -> Result<(), AssertError> {
    if asserts.contains(Assert::NOCHECK) {
        return Err(AssertError::NoCheckOnFence);
    }
    if asserts.contains(Assert::NOPRECEDE) && issued_ops {
        return Err(AssertError::PrecedingOps);
    }
    Ok(())
}

/// Whether RMA may be issued after a fence with these asserts.
pub fn opens_epoch(asserts: Assert) -> bool {
    !asserts.contains(Assert::NOSUCCEED)
}

/// A window's fence words (in the window's control block).
#[repr(C)]
#[derive(Default)]
pub struct FenceState {
    barrier: BarrierState,
}

impl FenceState {
    /// Fence words of a window that has seen no fence.
    pub fn new() -> FenceState {
        FenceState::default()
    }

    /// The synchronization of a fence (module docs): one barrier of `parties`, whose
    /// waiters sleep on `home` (the window's home core's doorbell).
    pub fn fence(&self, parties: u32, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        self.barrier.wait(parties, waiter, home)
    }
}
