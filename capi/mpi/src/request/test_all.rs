//! `MPI_Testall`: completes every request if every one is complete, else none; and
//! `MPI_Test` ([`test`]), which is `MPI_Testall` of its one handle.
//!
//! Protocol, under one hold of the request table: every handle is checked first (an
//! invalid one fails the call before any test); then the handles' operations are
//! tested in place, the point-to-point ones in one round of sccemu's engine, the
//! others after it ([`super::in_place`]); if every one is finished then, each is
//! completed in index order (removed, its wait returning what it holds, its handle
//! replaced by what completion leaves: `MPI_REQUEST_NULL`, or a persistent request's
//! own, inactive), and a null handle or an inactive persistent request counts as
//! complete with the empty status.
//!
//! Invariant: a call that does not complete all changes no handle. MPI forbids
//! un-completing a request; one complete already just stays in the table as a
//! finished request (`Op::Done`, `Op::Failed`, or a point-to-point one whose test
//! saw it complete) under the handle the program holds, so the call that completes
//! it (this one again, a wait, ...) reports it then, as it would have been reported
//! now. An operation that failed is complete too: its error goes to `report` when all
//! complete.
//!
//! Nothing is allocated per call: the handles are looked up again in each pass
//! instead of kept in a list (a lookup is an index into the table).

use std::ffi::c_int;

use super::in_place::{complete_in, op_in, round_pass, settle};
use super::{Status, check_all_in, requests};
use crate::error::MpiResult;
use crate::state::mpi;

/// `MPI_Testall`: whether every one of `handles` is complete (null and inactive
/// persistent ones are); if so each is completed, its index's result handed to
/// `report` (whose error ends the call) and its handle replaced; if not, no handle
/// changes. An invalid handle fails the call before any test. Module docs.
pub fn test_all(
    handles: &mut [c_int],
    mut report: impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<bool> {
    let core = mpi()?.core;
    let mut r = requests();
    let r = &mut *r;
    check_all_in(r, handles)?;
    let pass = round_pass(r, core, handles, usize::MAX)?;
    // Every operation is settled, even after one still open: a nonblocking collective
    // advances only when tested, and the program may poll only this call.
    let mut all = true;
    for &h in handles.iter() {
        if let Some(op) = op_in(r, h)? {
            all &= settle(op, pass.tested);
        }
    }
    if !all {
        return Ok(false);
    }
    for (i, h) in handles.iter_mut().enumerate() {
        report(i, complete_in(r, h))?;
    }
    Ok(true)
}

/// `MPI_Test` of `*handle`: tested in place under one hold of the table, as
/// [`test_all`] tests its handles, by the settling pass alone. One request's own test
/// holds sccemu's engine once, as a round would: making a round for it cost more
/// (callgrind, an idle poll of one `MPI_Irecv`: 1 082 instructions with the round pass,
/// 855 without; `docs/bench/2026-11-27-mpitest/`), so none is made.
/// `Some(status)` once complete, and the handle becomes what completion leaves (also
/// when the operation failed: its error is returned and the request is gone); `None`,
/// and the handle unchanged, while not. The null handle and an inactive persistent
/// request give the empty status; an invalid handle fails the call before any test,
/// the handle unchanged.
pub fn test(handle: &mut c_int) -> MpiResult<Option<Status>> {
    let mut r = requests();
    let r = &mut *r;
    let finished = match op_in(r, *handle)? {
        Some(op) => settle(op, false),
        None => true,
    };
    if !finished {
        return Ok(None);
    }
    complete_in(r, handle).map(Some)
}
