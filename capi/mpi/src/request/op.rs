//! A request's operation as the request table holds it.
//!
//! The point-to-point kinds that programs start most (`MPI_Isend` and `MPI_Irecv`,
//! also through persistent requests) and the results kept for a later completion call
//! are variants of their own: a send's sccemu request and a kept result are held by
//! value in the table's slot, so that they allocate nothing; a receive, larger, is
//! boxed, so that the slot stays the size of a send's request (an `Op` is moved into
//! the table and out of it, and every byte of it is copied each time); every other
//! kind of operation (nonblocking collectives, generalized requests, ...) is a
//! [`Pending`] trait object.
//!
//! Invariant: [`Op::is_finished`] holds only where [`Op::wait`] neither blocks nor
//! locks sccemu's engine, so `request::wait_all` may complete such an operation
//! under the request table's lock.

use crate::error::{MpiError, MpiResult};
use crate::ffi::pending::PendingRecv;
use crate::p2p::request_error;

use super::{Pending, Status};

/// An operation in flight, or the kept result of one.
pub enum Op {
    /// A standard-mode send: only sccemu's request is kept (the data left, was copied
    /// out, or is the user's buffer that MPI leaves to the library until completion).
    Send(sccemu::Request<'static>),
    /// A receive of the point-to-point calls.
    Recv(Box<PendingRecv>),
    /// An operation complete already (at its start, or kept by `MPI_Testall`,
    /// `MPI_Request_get_status`, `MPI_Cancel`, ...).
    Done(Status),
    /// An operation that failed while it was tested in place: its completion reports why.
    Failed(MpiError),
    /// Any other kind of operation.
    Other(Box<dyn Pending>),
}

impl From<Box<dyn Pending>> for Op {
    fn from(op: Box<dyn Pending>) -> Op {
        Op::Other(op)
    }
}

impl Op {
    /// Drives the operation without blocking; `Some(status)` once it is complete.
    pub fn test(&mut self) -> MpiResult<Option<Status>> {
        match self {
            Op::Send(r) => Ok(r.test().map_err(request_error)?.map(|_| Status::EMPTY)),
            Op::Recv(r) => r.test(),
            Op::Done(s) => Ok(Some(*s)),
            Op::Failed(e) => Err(e.clone()),
            Op::Other(op) => op.test(),
        }
    }

    /// Blocks until the operation completes.
    pub fn wait(self) -> MpiResult<Status> {
        match self {
            Op::Send(r) => r.wait().map(|_| Status::EMPTY).map_err(request_error),
            Op::Recv(r) => r.wait(),
            Op::Done(s) => Ok(s),
            Op::Failed(e) => Err(e),
            Op::Other(op) => op.wait(),
        }
    }

    /// Withdraws the operation, which has not completed (`MPI_Cancel`); whether it was.
    pub fn cancel(&mut self) -> bool {
        match self {
            Op::Recv(r) => r.cancel(),
            Op::Other(op) => op.cancel(),
            // A send has left or been copied; the others are complete.
            Op::Send(_) | Op::Done(_) | Op::Failed(_) => false,
        }
    }

    /// Whether the operation is known complete, so that [`Op::wait`] returns its
    /// result at once without sccemu's engine (module docs): a standard-mode send
    /// whose message left or was copied at its start, and a kept result. Never a
    /// receive (a test that sees one complete removes it or keeps its result as
    /// [`Op::Done`], and a failed one's drop locks the engine to put its message
    /// back) nor an operation of another kind (its wait may do anything).
    pub fn is_finished(&self) -> bool {
        match self {
            // A standard send's request, complete or failed, holds nothing that its
            // drop returns to the engine (`sccemu::Request`'s drop), and its wait then
            // returns what it recorded.
            Op::Send(r) => r.is_complete(),
            Op::Done(_) | Op::Failed(_) => true,
            Op::Recv(_) | Op::Other(_) => false,
        }
    }
}
