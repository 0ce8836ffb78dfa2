//! The `*any` and `*some` completions (`MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`,
//! `MPI_Testsome`): polls that complete up to a limit of the requests complete now.
//!
//! Protocol of one poll, under one hold of the request table ([`super::in_place`]):
//! the round pass tests the open point-to-point operations in index order in one
//! round of sccemu's engine, until as many are finished as the call may complete
//! (one for `*any`); then, up to that index, the settling pass tests the rest in
//! place and completes each finished one in index order, up to the limit. So `*any`
//! completes the complete request of the lowest index among those tested. A null
//! handle and an inactive persistent request are skipped; if every handle is such, the
//! poll says so (`None`: the calls' `MPI_UNDEFINED`). The waits poll again each time
//! this core's doorbell rings, until one completes.
//!
//! Invariants: a request not completed keeps its handle, and its operation stays in
//! the table (complete or not, tested where it is); a completed one's handle becomes
//! what completion leaves (a persistent request keeps its own, inactive). An operation
//! that failed is complete: its error goes to `report` like a status.

use std::ffi::c_int;

use super::in_place::{complete_in, op_in, round_pass, settle};
use super::{Status, check_all_in, requests};
use crate::error::{MpiError, MpiResult, class};
use crate::state::mpi;

/// Completes up to `limit` of `handles` that are complete now, in index order, handing
/// each index's result to `report` (whose error ends the call): how many, or `None`
/// if no handle has an operation. An invalid handle fails the call before any test.
pub fn test_some(
    handles: &mut [c_int],
    limit: usize,
    mut report: impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<Option<usize>> {
    poll(mpi()?.core, handles, true, limit, &mut report)
}

/// As [`test_some`], but blocks until at least one completes (unless none has an
/// operation: `None`).
pub fn wait_some(
    handles: &mut [c_int],
    limit: usize,
    mut report: impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<Option<usize>> {
    let core = mpi()?.core;
    // Handles are checked once: a later poll finds them as the first left them.
    let mut check = true;
    let found = core.wait_on(core.rank(), || {
        match poll(core, handles, std::mem::take(&mut check), limit, &mut report) {
            Ok(Some(0)) => None,
            done => Some(done),
        }
    });
    found.map_err(|e| MpiError::new(class::OTHER, e.to_string()))?
}

/// One poll (module docs); `check`: check every handle first.
fn poll(
    core: &sccemu::Core,
    handles: &mut [c_int],
    check: bool,
    limit: usize,
    report: &mut impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<Option<usize>> {
    let mut r = requests();
    let r = &mut *r;
    if check {
        check_all_in(r, handles)?;
    }
    let pass = round_pass(r, core, handles, limit)?;
    if !pass.live {
        return Ok(None);
    }
    let mut done = 0;
    for (i, h) in handles[..pass.upto].iter_mut().enumerate() {
        let Some(op) = op_in(r, *h)? else { continue };
        if settle(op, pass.tested) {
            report(i, complete_in(r, h))?;
            done += 1;
            if done == limit {
                break;
            }
        }
    }
    Ok(Some(done))
}
