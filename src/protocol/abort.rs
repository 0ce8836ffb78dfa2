//! Fail-stop job state: running until the first failure, aborting forever after.
//!
//! Protocol: whoever sees a failure first (the launcher on a rank's death, or a rank
//! calling abort) wins a compare-and-swap from `RUNNING` to `RECORDING`, writes the
//! failing rank and reason, and publishes them by storing `ABORTING` with `Release`.
//! A reader that loads `ABORTING` with `Acquire` therefore sees the rank and reason.
//! Losers of the race change nothing: the first failure is the one reported. After
//! publishing, the aborter rings every core's doorbell so that sleepers notice
//! (`Waiter` checks the state before every sleep).

use std::fmt;

use shm_layout::{abort_reason, job_state};

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// The atomic view of `shm_layout::JobWords`.
#[repr(C, align(128))]
pub struct JobControl {
    state: AtomicU32,
    failed_rank: AtomicU32,
    reason: AtomicU32,
    detail: AtomicU32,
    /// Collective heap-allocation cursor (see the window modules).
    pub(crate) alloc_cursor: AtomicU64,
}

#[cfg(not(sccemu_loom))]
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    use shm_layout::JobWords;
    assert!(size_of::<JobControl>() == size_of::<JobWords>());
    assert!(align_of::<JobControl>() == align_of::<JobWords>());
    assert!(offset_of!(JobControl, state) == offset_of!(JobWords, state));
    assert!(offset_of!(JobControl, failed_rank) == offset_of!(JobWords, failed_rank));
    assert!(offset_of!(JobControl, reason) == offset_of!(JobWords, reason));
    assert!(offset_of!(JobControl, detail) == offset_of!(JobWords, detail));
    assert!(offset_of!(JobControl, alloc_cursor) == offset_of!(JobWords, alloc_cursor));
};

/// Why a job is aborting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortCause {
    /// The rank exited with this nonzero status.
    Exited(i32),
    /// The rank was killed by this signal.
    Signaled(i32),
    /// The rank exited with status 0 but never finalized.
    NoFinalize,
    /// The rank called `Core::abort` with this code.
    UserAbort(i32),
    /// The launcher was interrupted by this signal.
    Interrupted(i32),
    /// The rank found the shared state corrupted and stopped the job rather than trust it.
    Corrupted,
    /// Every live rank was blocked waiting for another (the launcher's report says on
    /// what), so the launcher stopped the job.
    Deadlock,
}

impl AbortCause {
    /// The cause as two words (a reason from `shm_layout::abort_reason`, and its
    /// detail), as the segment's header and the messages between nodes carry it.
    pub fn encode(self) -> (u32, u32) {
        match self {
            Self::Exited(c) => (abort_reason::EXITED, c as u32),
            Self::Signaled(s) => (abort_reason::SIGNALED, s as u32),
            Self::NoFinalize => (abort_reason::NO_FINALIZE, 0),
            Self::UserAbort(c) => (abort_reason::USER_ABORT, c as u32),
            Self::Interrupted(s) => (abort_reason::INTERRUPTED, s as u32),
            Self::Corrupted => (abort_reason::CORRUPTED, 0),
            Self::Deadlock => (abort_reason::DEADLOCK, 0),
        }
    }

    /// The cause [`AbortCause::encode`] gave these words; `None` for an unknown reason.
    pub fn decode(reason: u32, detail: u32) -> Option<AbortCause> {
        let d = detail as i32;
        Some(match reason {
            abort_reason::EXITED => Self::Exited(d),
            abort_reason::SIGNALED => Self::Signaled(d),
            abort_reason::NO_FINALIZE => Self::NoFinalize,
            abort_reason::USER_ABORT => Self::UserAbort(d),
            abort_reason::INTERRUPTED => Self::Interrupted(d),
            abort_reason::CORRUPTED => Self::Corrupted,
            abort_reason::DEADLOCK => Self::Deadlock,
            _ => return None,
        })
    }
}

/// The error every blocked or later call returns once the job aborts. It names the
/// rank whose failure caused the abort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobAborted {
    /// The rank whose failure caused the abort; `None` when the job as a whole was
    /// interrupted.
    pub rank: Option<u32>,
    /// Why the job aborted.
    pub cause: AbortCause,
}

impl fmt::Display for JobAborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rank {
            Some(rank) => write!(f, "rank {rank} ")?,
            None => write!(f, "job ")?,
        }
        match self.cause {
            AbortCause::Exited(code) => write!(f, "exited with status {code}"),
            AbortCause::Signaled(sig) => write!(f, "killed by {}", signal_name(sig)),
            AbortCause::NoFinalize => write!(f, "exited without finalizing"),
            AbortCause::UserAbort(code) => write!(f, "called abort({code})"),
            AbortCause::Interrupted(sig) => write!(f, "interrupted by {}", signal_name(sig)),
            AbortCause::Corrupted => write!(f, "found corrupted shared state"),
            AbortCause::Deadlock => write!(f, "deadlocked: every live core was blocked waiting for another"),
        }
    }
}

impl std::error::Error for JobAborted {}

#[cfg(not(sccemu_loom))]
pub(crate) fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map_or_else(|_| format!("signal {sig}"), |s| s.as_str().to_owned())
}

#[cfg(sccemu_loom)]
pub(crate) fn signal_name(sig: i32) -> String {
    format!("signal {sig}")
}

impl JobControl {
    /// A running job's words, for loom models (production views the header instead).
    pub fn new() -> JobControl {
        JobControl {
            state: AtomicU32::new(job_state::RUNNING),
            failed_rank: AtomicU32::new(u32::MAX),
            reason: AtomicU32::new(abort_reason::NONE),
            detail: AtomicU32::new(0),
            alloc_cursor: AtomicU64::new(0),
        }
    }

    /// Records the first failure. Returns false if another failure was recorded first.
    /// The caller then rings every doorbell.
    pub fn begin_abort(&self, rank: Option<u32>, cause: AbortCause) -> bool {
        // Relaxed on success: the fields written next are published by the Release
        // store of ABORTING, not by this CAS.
        if self
            .state
            .compare_exchange(job_state::RUNNING, job_state::RECORDING, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        let (reason, detail) = cause.encode();
        self.failed_rank.store(rank.unwrap_or(u32::MAX), Ordering::Relaxed);
        self.reason.store(reason, Ordering::Relaxed);
        self.detail.store(detail, Ordering::Relaxed);
        self.state.store(job_state::ABORTING, Ordering::Release);
        true
    }

    /// `Err` once the job is aborting, naming the failed rank.
    pub fn check(&self) -> Result<(), JobAborted> {
        // Acquire pairs with the Release in begin_abort: the fields are complete.
        if self.state.load(Ordering::Acquire) != job_state::ABORTING {
            return Ok(());
        }
        let rank = self.failed_rank.load(Ordering::Relaxed);
        let cause =
            AbortCause::decode(self.reason.load(Ordering::Relaxed), self.detail.load(Ordering::Relaxed))
                .unwrap_or(AbortCause::UserAbort(-1));
        Err(JobAborted { rank: (rank != u32::MAX).then_some(rank), cause })
    }
}

impl Default for JobControl {
    fn default() -> Self {
        Self::new()
    }
}
