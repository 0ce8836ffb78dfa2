//! The passes that `MPI_Testall` ([`super::test_all`], and through it `MPI_Test`) and
//! the `*any` and `*some` calls ([`super::wait_some`], [`super::test_some`]) make over
//! their handles, all under one hold of the request table, testing each operation
//! where it is (`MPI_Cancel`, [`super::cancel`], tests and withdraws in place too).
//!
//! Protocol: first the round pass ([`round_pass`]): the point-to-point operations
//! still open are tested in one `sccemu::TestRound` (one hold of the engine for all
//! their tests; made only once an open one is met, so a pass over finished ones locks
//! nothing). Once the round is over, the settling pass ([`settle`]) tests by itself,
//! in place, each operation that the round could not: one of another kind
//! (`Op::Other`: a nonblocking collective advances only when tested), a point-to-point
//! one that the round found failed (reporting its error, and a failed receive's drop,
//! take the engine), and every point-to-point one when no round tested them (in
//! virtual time, where a round tests nothing and each test is a charged call, or when
//! the engine is unavailable, which that test then reports). What completes there
//! stays in the table as a finished request (`Op::Done`, `Op::Failed`), as
//! [`super::drive_all`] keeps it. Last, completion ([`complete_in`]) removes a
//! finished operation and returns its result.
//!
//! Invariants:
//! - operations are tested in place: a call that does not complete a request changes
//!   no handle, and no other thread finds a handle missing meanwhile;
//! - under the round nothing uses the engine but `Op::test_in` (anything else there
//!   panics, `sccemu::TestRound`);
//! - an operation is completed only when [`Op::is_finished`] holds, so its wait,
//!   under the table's hold, returns what it holds and locks nothing;
//! - nothing here takes the table's lock ([`super::requests`], not reentrant): the
//!   caller holds it and passes it in. An operation's own test and its completion run
//!   under it too, as in `drive_all`: a generalized request's `query_fn` and `free_fn`
//!   among them: a request function they call fails with `MPI_ERR_OTHER` instead of
//!   waiting for the lock their own thread holds (`super::lock`).

use std::ffi::c_int;

use super::lock::in_callbacks;
use super::{Op, REQUEST_NULL, Requests, Status, is_persistent, not_active, not_persistent};
use crate::error::MpiResult;

/// The operation `handle` stands for in `r`: its own, or an active persistent
/// request's; `None` for the null handle and an inactive persistent request; an error
/// for a handle that names nothing.
pub(super) fn op_in(r: &mut Requests, handle: c_int) -> MpiResult<Option<&mut Op>> {
    let Some(active) = r.active(handle)? else { return Ok(None) };
    r.table.get_mut(active).map(Some).ok_or_else(|| not_active(active))
}

/// What a [`round_pass`] found.
pub(super) struct RoundPass {
    /// How many handles it looked at (those after were not).
    pub upto: usize,
    /// Whether the point-to-point operations it met were tested (or finished already):
    /// false when the round tested nothing (module docs).
    pub tested: bool,
    /// Whether any handle it looked at has an operation.
    pub live: bool,
}

/// The round pass (module docs) over `handles`, in index order, until `limit` of
/// their operations are finished (`usize::MAX`: all of them).
pub(super) fn round_pass(
    r: &mut Requests,
    core: &sccemu::Core,
    handles: &[c_int],
    limit: usize,
) -> MpiResult<RoundPass> {
    // `Some(None)`: a round was wanted, but it tests nothing.
    let mut round = None;
    let (mut finished, mut live) = (0, false);
    let mut upto = handles.len();
    for (i, &h) in handles.iter().enumerate() {
        let Some(op) = op_in(r, h)? else { continue };
        live = true;
        if op.is_point_to_point() && !op.is_finished() {
            let round = round.get_or_insert_with(|| core.test_round().ok().filter(|round| round.is_held()));
            if let Some(round) = round {
                op.test_in(round);
            }
        }
        // Counted only where there is a limit (`MPI_Testall` has none).
        if limit != usize::MAX && op.is_finished() {
            finished += 1;
            if finished == limit {
                upto = i + 1;
                break;
            }
        }
    }
    // The round ends here, before any other test.
    Ok(RoundPass { upto, tested: !matches!(round, Some(None)), live })
}

/// The settling pass's test of `op` (module docs), once the round is over (`tested`:
/// [`RoundPass::tested`]): whether `op` is finished now. An error stays in the table
/// (`Op::Failed`) for the operation's completion to report.
pub(super) fn settle(op: &mut Op, tested: bool) -> bool {
    if op.is_finished() {
        return true;
    }
    // Open as the round's test saw it just now: testing it again would only repeat it.
    if tested && op.is_point_to_point() && !op.has_failed() {
        return false;
    }
    test_in_place(op).ok();
    op.is_finished()
}

/// Tests `op` where it is in the table; what completes stays there as a finished
/// request (`Op::Done`, `Op::Failed`) for the call that completes it, and the
/// operation it replaces is retired (`Op::retire`: a point-to-point one's box is kept
/// for the thread's next request; freeing it and allocating the next cost about 100
/// instructions a request, `docs/bench/2026-11-27-mpitest/`).
pub(super) fn test_in_place(op: &mut Op) -> MpiResult<Option<Status>> {
    // Another kind may run the program's callbacks, here under the table's lock.
    let tested = if matches!(op, Op::Other(_)) { in_callbacks(|| op.test()) } else { op.test() };
    let (kept, result) = match tested {
        Ok(Some(status)) => (Op::Done(status), Ok(Some(status))),
        Ok(None) => return Ok(None),
        Err(e) => (Op::Failed(e.clone()), Err(e)),
    };
    std::mem::replace(op, kept).retire();
    result
}

/// Completes `*handle`, whose operation is finished ([`settle`]) or which has none
/// (the empty status): removes the operation and returns its result; the handle
/// becomes what completion leaves (a persistent request keeps its own, inactive).
pub(super) fn complete_in(r: &mut Requests, handle: &mut c_int) -> MpiResult<Status> {
    let active = match *handle {
        REQUEST_NULL => return Ok(Status::NO_REQUEST),
        h if is_persistent(h) => {
            let p = r.persistent.get_mut(h).ok_or_else(|| not_persistent(h))?;
            let Some(active) = p.active.take() else { return Ok(Status::NO_REQUEST) };
            active
        }
        _ => std::mem::replace(handle, REQUEST_NULL),
    };
    let op = r.table.remove(active).ok_or_else(|| not_active(active))?;
    debug_assert!(op.is_finished(), "completed under the table's hold, unfinished");
    op.wait()
}
