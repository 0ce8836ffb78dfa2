//! Why an accumulate was refused or failed: one error for the whole family, so that a
//! caller handles a bad argument, an op that does not fit the type and a job abort
//! alike, whatever strategy the window has.

use std::fmt;

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::op::OpError;
use crate::rma::error::RmaError;

/// Why an accumulate was refused (nothing was done), or failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AccError {
    /// Bad rank, range, alignment, length or no epoch.
    Rma(RmaError),
    /// The op does not apply to the element type.
    Op(OpError),
    /// The job aborted (some core died) while the call waited for a stripe lock or the
    /// owner's agent.
    Aborted(JobAborted),
    /// Under the `Atomic` strategy, an element wider than the CPU's atomics (16 bytes)
    /// has no lock-free update: such windows need a strategy with locks.
    NotLockFree {
        /// The element type's name.
        type_name: &'static str,
    },
}

impl From<RmaError> for AccError {
    fn from(e: RmaError) -> Self {
        AccError::Rma(e)
    }
}

impl From<OpError> for AccError {
    fn from(e: OpError) -> Self {
        AccError::Op(e)
    }
}

impl From<JobAborted> for AccError {
    fn from(e: JobAborted) -> Self {
        AccError::Aborted(e)
    }
}

impl fmt::Display for AccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rma(e) => e.fmt(f),
            Self::Op(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
            Self::NotLockFree { type_name } => write!(
                f,
                "{type_name} is wider than the CPU's atomics: accumulate it on a window with the caller- or \
                 owner-computes strategy"
            ),
        }
    }
}

impl std::error::Error for AccError {}
