//! Why a two-sided call failed: [`SendError`], [`RecvError`] (requests wrap them in
//! [`RequestError`](crate::p2p::RequestError)). A send fails before anything leaves
//! unless the channel turned out corrupted or the job aborted while it waited; a
//! receive that fails leaves its message queued in its place.

use std::fmt;

use crate::p2p::channel::ChannelUnavailable;
use crate::p2p::endpoint::Status;
use crate::p2p::progress::Fail;
use crate::protocol::abort::JobAborted;
use crate::protocol::ring::frag::CorruptError;

/// Why a send failed. Nothing was sent unless the error is `Corrupt` or `Aborted`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The destination is not a core of the job.
    RankOutOfRange {
        /// The destination.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// Messages are limited to `u32::MAX` bytes.
    TooLarge {
        /// Bytes of the message.
        len: usize,
        /// The largest message, in bytes.
        max: usize,
    },
    /// The tag is one of the library's own (`p2p::endpoint::RESERVED_TAGS` and up).
    ReservedTag {
        /// The tag given.
        tag: u32,
    },
    /// The job has no two-sided channel.
    Unavailable(ChannelUnavailable),
    /// This core's own channel turned out corrupted while the send waited.
    Corrupt(CorruptError),
    /// The job aborted (some core died) while the send waited; part of the message may
    /// have left.
    Aborted(JobAborted),
}

/// Why a receive or probe failed. The job stays usable after `RankOutOfRange` and
/// `Truncated`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecvError {
    /// The source is not a core of the job.
    RankOutOfRange {
        /// The requested source.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// The matched message is longer than the buffer; it was not received and stays
    /// first in line for the next matching receive.
    Truncated {
        /// The matched message (its `len` is the length needed).
        status: Status,
        /// Bytes of the buffer.
        capacity: usize,
    },
    /// The receive or probe named one of the library's own tags
    /// (`p2p::endpoint::RESERVED_TAGS` and up), which only the library receives.
    ReservedTag {
        /// The tag given.
        tag: u32,
    },
    /// The job has no two-sided channel.
    Unavailable(ChannelUnavailable),
    /// This core's own channel turned out corrupted while the receive waited.
    Corrupt(CorruptError),
    /// The job aborted (some core died) while the receive waited.
    Aborted(JobAborted),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "send to rank {rank}: not a core of this {size}-core job")
            }
            Self::TooLarge { len, max } => write!(f, "message of {len} bytes exceeds {max}"),
            Self::ReservedTag { tag } => write!(f, "tag {tag:#x} is reserved for the library's own messages"),
            Self::Unavailable(e) => e.fmt(f),
            Self::Corrupt(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "receive from rank {rank}: not a core of this {size}-core job")
            }
            Self::Truncated { status, capacity } => write!(
                f,
                "message of {} bytes from rank {} (tag {}) does not fit a {capacity}-byte buffer; it is still queued",
                status.len, status.source, status.tag
            ),
            Self::ReservedTag { tag } => write!(f, "tag {tag:#x} is reserved for the library's own messages"),
            Self::Unavailable(e) => e.fmt(f),
            Self::Corrupt(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SendError {}
impl std::error::Error for RecvError {}

impl From<Fail> for SendError {
    fn from(f: Fail) -> Self {
        match f {
            Fail::Corrupt(e) => SendError::Corrupt(e),
            Fail::Aborted(e) => SendError::Aborted(e),
        }
    }
}

impl From<Fail> for RecvError {
    fn from(f: Fail) -> Self {
        match f {
            Fail::Corrupt(e) => RecvError::Corrupt(e),
            Fail::Aborted(e) => RecvError::Aborted(e),
        }
    }
}

impl From<JobAborted> for SendError {
    fn from(e: JobAborted) -> Self {
        SendError::Aborted(e)
    }
}

impl From<JobAborted> for RecvError {
    fn from(e: JobAborted) -> Self {
        RecvError::Aborted(e)
    }
}

impl From<CorruptError> for RecvError {
    fn from(e: CorruptError) -> Self {
        RecvError::Corrupt(e)
    }
}
