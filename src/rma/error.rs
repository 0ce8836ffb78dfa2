//! The window modules' typed errors, one enum per kind of call. An error means the call
//! did nothing (no copy, no atomic, no synchronization) and the job goes on.

use std::fmt;

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::Disagreement;
use crate::protocol::fence::AssertError;
use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::atomic::op::OpError;

/// Why a window could not be allocated or freed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// The heap or the MPB has no room (every member gets the same error).
    Alloc(AllocError),
    /// `rank`'s part (or the window up to and including it) does not fit a byte
    /// count; every member gets the same error.
    TooLarge {
        /// The lowest rank whose part overflows.
        rank: u32,
    },
    /// MPB placement, but some core's part is larger than an MPB.
    TooBigForMpb {
        /// The lowest rank whose part is too big.
        rank: u32,
        /// Bytes of that part.
        bytes: usize,
        /// Bytes of one MPB.
        mpb_bytes: usize,
    },
    /// Element types must have a size.
    ZeroSizedElement,
    /// `rank`'s memory for a window over existing memory is not in the shared heap
    /// (the lowest such rank); every member gets the same error.
    OutsideHeap {
        /// The lowest rank whose memory is outside the heap.
        rank: u32,
    },
    /// Freeing a window while an epoch (lock, PSCW) is still open on `rank` (the
    /// lowest such); every member gets the same error and the window is leaked.
    EpochOpen {
        /// The lowest rank with an epoch open.
        rank: u32,
    },
    /// The owner-computes agent thread could not be started.
    AgentStart,
    /// MPB placement for a window over a communicator, but the job has reserved no MPB
    /// window pool (`CoreContext::reserve_mpb_pool`); every member gets the same error.
    NoMpbPool,
    /// Checking mode: the cores passed different arguments to this collective window
    /// call (or are not in the same call); every member gets this error, nothing was
    /// allocated or freed, and the job goes on. Without checking mode such a program is
    /// erroneous.
    Mismatch {
        /// What differs: `"call"`, `"element size"`, `"element type"`, `"placement"`,
        /// `"accumulate strategy"`, `"accumulate granularity"`, or `"window"` (freeing
        /// different windows).
        what: &'static str,
        /// The ranks whose value differs from the one most cores passed (on a tie, the
        /// lowest such rank's value).
        ranks: Vec<u32>,
    },
    /// A window whose members span nodes cannot be made so yet: what is missing.
    AcrossNodes {
        /// What the window asked for.
        what: &'static str,
    },
    /// The job aborted (some core died) during the collective call.
    Aborted(JobAborted),
}

/// Why a put, get or ARMW was refused. Ranks are the window's (team ranks: a job-wide
/// window's are the cores', a communicator's window's the communicator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RmaError {
    /// The target is not one of the window's ranks.
    RankOutOfRange {
        /// The target rank.
        rank: u32,
        /// Ranks in the window.
        size: u32,
    },
    /// Elements `index..index + len` run past the target's part of `part_len` elements.
    OutOfBounds {
        /// The target rank.
        rank: u32,
        /// First element accessed.
        index: usize,
        /// Elements accessed.
        len: usize,
        /// Elements in the target's part.
        part_len: usize,
    },
    /// The element at this byte offset is not aligned for a `width`-byte atomic.
    Misaligned {
        /// The target rank.
        rank: u32,
        /// Offset of the element in the target's part, in bytes.
        byte_offset: usize,
        /// Bytes of the atomic.
        width: usize,
    },
    /// No epoch (fence, PSCW access or lock) gives access to `rank`.
    NoEpoch {
        /// The target rank.
        rank: u32,
    },
    /// Request-based operations need a passive-target (lock) epoch on `rank`.
    NotPassive {
        /// The target rank.
        rank: u32,
    },
    /// The origin buffer holds `found` elements where the operation moves `expected`.
    LengthMismatch {
        /// Elements the operation moves.
        expected: usize,
        /// Elements the origin buffer holds.
        found: usize,
    },
    /// The reduction op is not defined on the element type (a bitwise op on a float).
    Op(OpError),
    /// Direct load/store access to the part of a rank on another node, which this node
    /// does not map (RMA calls reach it).
    OnOtherNode {
        /// The target rank.
        rank: u32,
    },
    /// The job aborted (some core died) while an ARMW waited for its element's
    /// atomicity domain (a stripe lock, or this core's owner-computes requests).
    Aborted(JobAborted),
}

impl From<JobAborted> for RmaError {
    fn from(e: JobAborted) -> Self {
        RmaError::Aborted(e)
    }
}

/// Why a synchronization call was refused (nothing was synchronized), or failed.
/// Ranks are the window's (team ranks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncError {
    /// The target (or a member of a PSCW group) is not one of the window's ranks.
    RankOutOfRange {
        /// The target rank.
        rank: u32,
        /// Ranks in the window.
        size: u32,
    },
    /// Unlock or flush of a target this core has not locked.
    NotLocked {
        /// The target rank.
        rank: u32,
    },
    /// Locking a target this core already locked (or while lock_all is open).
    AlreadyLocked {
        /// The target rank.
        rank: u32,
    },
    /// lock_all while already in lock_all, or while some target is locked.
    LockAllConflict,
    /// unlock_all or flush_all without lock_all.
    NotLockedAll,
    /// A window whose members span nodes does not offer this call yet.
    AcrossNodes {
        /// The call.
        call: &'static str,
    },
    /// `start` while an access epoch is open.
    AccessEpochOpen,
    /// `complete` without `start`.
    NoAccessEpoch,
    /// `post` while an exposure epoch is open.
    ExposureEpochOpen,
    /// `wait`/`test` without `post`.
    NoExposureEpoch,
    /// A fence while a PSCW or lock epoch is open on this core.
    OtherEpochOpen,
    /// Asserts that do not hold, or do not apply.
    Assert(AssertError),
    /// The job aborted (some core died) while the call waited.
    Aborted(JobAborted),
    /// Checking mode: the cores are fencing different windows (or are not all in a
    /// fence), or disagree on an assert that MPI requires of all or none (`NOPRECEDE`,
    /// `NOSUCCEED`); every member gets this error, nothing was synchronized, and the job
    /// goes on. Without checking mode such a program is erroneous.
    Mismatch {
        /// What differs: `"call"`, `"window"` or `"asserts"`.
        what: &'static str,
        /// The ranks whose value differs from the one most cores passed (on a tie, the
        /// lowest such rank's value).
        ranks: Vec<u32>,
    },
}

impl From<JobAborted> for SyncError {
    fn from(e: JobAborted) -> Self {
        SyncError::Aborted(e)
    }
}

impl From<Disagreement> for SyncError {
    fn from(d: Disagreement) -> Self {
        SyncError::Mismatch { what: d.what, ranks: d.ranks }
    }
}

impl From<JobAborted> for WindowError {
    fn from(e: JobAborted) -> Self {
        WindowError::Aborted(e)
    }
}

impl From<Disagreement> for WindowError {
    fn from(d: Disagreement) -> Self {
        WindowError::Mismatch { what: d.what, ranks: d.ranks }
    }
}

impl From<AllocError> for WindowError {
    fn from(e: AllocError) -> Self {
        WindowError::Alloc(e)
    }
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Alloc(e) => write!(f, "window allocation failed: {e}"),
            Self::TooLarge { rank } => write!(f, "rank {rank}'s part of the window overflows a byte count"),
            Self::TooBigForMpb { rank, bytes, mpb_bytes } => {
                write!(f, "rank {rank}'s part ({bytes} bytes) does not fit a {mpb_bytes}-byte MPB")
            }
            Self::ZeroSizedElement => write!(f, "window elements must not be zero-sized"),
            Self::AcrossNodes { what } => write!(f, "a window across nodes cannot have {what} yet"),
            Self::OutsideHeap { rank } => write!(f, "rank {rank}'s window memory is not in the shared heap"),
            Self::EpochOpen { rank } => {
                write!(f, "cannot free a window while rank {rank} has a lock or PSCW epoch open on it")
            }
            Self::AgentStart => write!(f, "could not start the owner-computes agent thread"),
            Self::NoMpbPool => write!(
                f,
                "MPB placement for a window over a communicator needs the job's MPB window pool (reserve_mpb_pool)"
            ),
            Self::Mismatch { what, ranks } => {
                write!(f, "checking mode: ranks {ranks:?} disagree with the others on the window's {what}")
            }
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for RmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not a rank of this window of {size} ranks")
            }
            Self::OutOfBounds { rank, index, len, part_len } => write!(
                f,
                "elements {index}..{index}+{len} run past rank {rank}'s part of {part_len} elements"
            ),
            Self::Misaligned { rank, byte_offset, width } => {
                write!(f, "byte {byte_offset} of rank {rank}'s part is not aligned for a {width}-byte atomic")
            }
            Self::NoEpoch { rank } => write!(f, "no fence, PSCW or lock epoch gives access to rank {rank}"),
            Self::NotPassive { rank } => {
                write!(f, "request-based RMA needs a lock epoch on rank {rank}")
            }
            Self::LengthMismatch { expected, found } => {
                write!(f, "the buffer holds {found} elements, the operation moves {expected}")
            }
            Self::Op(e) => e.fmt(f),
            Self::OnOtherNode { rank } => {
                write!(f, "rank {rank} runs on another node: its part is reached by RMA, not loads and stores")
            }
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not a rank of this window of {size} ranks")
            }
            Self::NotLocked { rank } => write!(f, "rank {rank} is not locked by this core"),
            Self::AlreadyLocked { rank } => write!(f, "rank {rank} is already locked by this core"),
            Self::LockAllConflict => write!(f, "lock_all conflicts with an open lock epoch"),
            Self::NotLockedAll => write!(f, "no lock_all epoch is open"),
            Self::AcrossNodes { call } => write!(f, "{call} on a window across nodes is not offered yet"),
            Self::AccessEpochOpen => write!(f, "an access epoch (start) is already open"),
            Self::NoAccessEpoch => write!(f, "complete without start"),
            Self::ExposureEpochOpen => write!(f, "an exposure epoch (post) is already open"),
            Self::NoExposureEpoch => write!(f, "wait or test without post"),
            Self::OtherEpochOpen => write!(f, "fence while a PSCW or lock epoch is open"),
            Self::Assert(a) => write!(f, "bad assert: {a:?}"),
            Self::Aborted(e) => e.fmt(f),
            Self::Mismatch { what, ranks } => {
                write!(f, "checking mode: ranks {ranks:?} disagree with the others on the fence's {what}")
            }
        }
    }
}

impl std::error::Error for WindowError {}
impl std::error::Error for RmaError {}
impl std::error::Error for SyncError {}
