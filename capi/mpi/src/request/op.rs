//! A request's operation as the request table holds it.
//!
//! The point-to-point kinds that programs start most (`MPI_Isend` and `MPI_Irecv`,
//! also through persistent requests) and the results kept for a later completion call
//! are variants of their own: a kept result by value (a standard send that completed
//! at its start is one already, `ffi::pending::send_op`), a send still in flight and a
//! receive in boxes that their thread reuses (`ffi::recv_pool`), so that none of them
//! allocates and the slot stays small (an `Op` is moved into the table and out of it,
//! and every byte of it is copied each time: 24 bytes, where holding sccemu's 120-byte
//! request by value cost about 30 instructions a move); every other kind of operation
//! (nonblocking collectives, generalized requests, ...) is a [`Pending`] trait object.
//!
//! Invariant: [`Op::is_finished`] holds only where [`Op::wait`] neither blocks nor
//! locks sccemu's engine, so the calls that complete many requests (`request::wait_all`,
//! and `request::in_place`'s completion for `MPI_Testall` and the `*any`/`*some` calls)
//! may complete such an operation under the request table's lock.

use crate::error::{MpiError, MpiResult};
use crate::ffi::pending::{PendingRecv, PendingSend};

use super::{Pending, Status};

/// An operation in flight, or the kept result of one.
pub enum Op {
    /// A standard-mode send not complete at its start: only sccemu's request is kept
    /// (the data was copied out, or is the user's buffer that MPI leaves to the
    /// library until completion).
    Send(Box<PendingSend>),
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
            Op::Send(r) => r.test(),
            Op::Recv(r) => r.test(),
            Op::Done(s) => Ok(Some(*s)),
            Op::Failed(e) => Err(e.clone()),
            Op::Other(op) => op.test(),
        }
    }

    /// Blocks until the operation completes.
    pub fn wait(self) -> MpiResult<Status> {
        match self {
            Op::Send(r) => r.wait(),
            Op::Recv(r) => r.wait(),
            Op::Done(s) => Ok(s),
            Op::Failed(e) => Err(e),
            Op::Other(op) => op.wait(),
        }
    }

    /// Disposes of an operation whose test completed it, its result kept elsewhere (as
    /// `Op::Done` or `Op::Failed`): a point-to-point one's box goes back to this
    /// thread's pool (`ffi::recv_pool`) instead of being freed, as its wait would give it.
    pub fn retire(self) {
        match self {
            Op::Send(s) => s.retire(),
            Op::Recv(r) => r.retire(),
            Op::Done(_) | Op::Failed(_) | Op::Other(_) => {}
        }
    }

    /// Whether the operation is a point-to-point send or receive: one that a test
    /// round of sccemu's engine tests ([`Op::test_in`]).
    pub fn is_point_to_point(&self) -> bool {
        matches!(self, Op::Send(_) | Op::Recv(_))
    }

    /// Tests a point-to-point operation in `round` (`sccemu::TestRound`), without
    /// blocking: one complete now is [`Op::is_finished`] afterwards; one that failed
    /// keeps its error for its wait. Other kinds are left to their own tests.
    pub fn test_in(&mut self, round: &mut sccemu::TestRound<'_>) {
        let request = match self {
            Op::Send(s) => s.request.as_mut(),
            Op::Recv(r) => r.request.as_mut(),
            Op::Done(_) | Op::Failed(_) | Op::Other(_) => None,
        };
        if let Some(request) = request {
            round.test(request).ok();
        }
    }

    /// Whether a point-to-point operation's last test found it failed (a round's test
    /// keeps the error in sccemu's request): complete, yet not [`Op::is_finished`], since
    /// the test that reports the error (and a failed receive's drop, which puts its
    /// message back) locks sccemu's engine; so it is tested by itself after the round.
    pub fn has_failed(&self) -> bool {
        let request = match self {
            Op::Send(s) => s.request.as_ref(),
            Op::Recv(r) => r.request.as_ref(),
            Op::Done(_) | Op::Failed(_) | Op::Other(_) => None,
        };
        request.is_some_and(|r| r.is_complete() && !r.is_settled())
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
    /// whose message left or was copied at its start, a receive whose message was
    /// there whole at its start, and a kept result. Not a receive that failed (its
    /// drop locks the engine to put its message back), nor an operation of another
    /// kind (its wait may do anything).
    pub fn is_finished(&self) -> bool {
        match self {
            Op::Send(r) => r.is_finished(),
            Op::Recv(r) => r.is_finished(),
            Op::Done(_) | Op::Failed(_) => true,
            Op::Other(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Op;

    #[test]
    fn an_op_stays_small() {
        // Every move of an `Op` copies all of it (module docs).
        assert!(std::mem::size_of::<Op>() <= 24, "{} bytes", std::mem::size_of::<Op>());
    }
}
