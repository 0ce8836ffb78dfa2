//! Why a collective or communicator call failed: one error for every collective, so
//! that the conversions from the protocols' errors (abort, allocation, op, checking-mode
//! disagreement) live in one place.

use std::fmt;

use crate::p2p::RequestError;
use crate::protocol::abort::JobAborted;
use crate::protocol::agree::Disagreement;
use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::atomic::op::OpError;

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
    /// A communicator's member list leaves out the calling core (`Comm::from_grant`).
    NotAMember {
        /// The calling core's world rank.
        rank: u32,
    },
    /// A communicator's member list names one core twice (`Comm::from_grant`).
    DuplicateMember {
        /// The world rank named twice.
        rank: u32,
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
    /// A collective's messages failed (communicators that span nodes run over messages:
    /// `coll::over_p2p`): the channel is missing or corrupted, or a block exceeds a
    /// message's size limit. A job abort is [`CollError::Aborted`] instead.
    Messages(RequestError),
    /// Every context id of communicators over messages (4095) is in use on some member
    /// of the new communicator.
    NoContext,
    /// The communicator was released ([`crate::coll::Comm::release`]): its memory may be
    /// another's now, and nothing can be called on it.
    Released,
}

impl fmt::Display for CollError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not in this {size}-member communicator")
            }
            Self::NotAMember { rank } => write!(f, "core {rank} is not among the communicator's members"),
            Self::DuplicateMember { rank } => write!(f, "core {rank} is named twice among the members"),
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
            Self::Messages(e) => write!(f, "a collective's message failed: {e}"),
            Self::NoContext => write!(f, "every context id of communicators across nodes is in use on some member"),
            Self::Released => write!(f, "the communicator was released; nothing can be called on it"),
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
