//! `MPI_Waitall`'s completion of many requests, with as few holds of the request
//! table as it can.
//!
//! Protocol: one hold of the table checks every handle (an invalid one fails the call
//! before any changes) and completes the null handles and the operations complete
//! already ([`Op::is_finished`]: a send that left at its start, a receive whose
//! message was there whole at its start, a kept result). The
//! rest are then waited for one by one in index order, as [`super::wait`] does, each
//! taken out of the table only while it is waited for, so that the others stay there
//! for [`super::drive_all`] meanwhile (a nonblocking collective advances only when
//! tested, and such a wait may be what drives it).
//!
//! Taking a run of point-to-point requests out under one hold instead of one hold
//! each did not pay (callgrind, `stream.c` and `step.c` of
//! `docs/bench/2026-11-27-mpip2p/`): the stack array they were moved into, and the
//! moves, cost what the holds saved.

use std::ffi::c_int;

use super::{REQUEST_NULL, Status, check_all_in, drive_detached, is_persistent, requests, wait, wait_one};
use crate::error::MpiResult;

use super::Op;

/// `MPI_Waitall`: completes every one of `handles` (null, inactive persistent ones
/// included), handing each index's result to `report` and replacing each handle by
/// what completion leaves ([`super::after_completion`]); `report`'s error ends the call.
/// Successes go to `report` only if `report_ok` (the caller wants statuses): with
/// `MPI_STATUSES_IGNORE` a success has nothing to report, and the call per request
/// cost about 28 instructions. An invalid handle fails the call before any changes
/// ([`super::check_all`]). The order of holds and waits: module docs.
pub fn wait_all(
    handles: &mut [c_int],
    report_ok: bool,
    mut report: impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<()> {
    let mut give = |i, result: MpiResult<Status>| match result {
        Ok(_) if !report_ok => Ok(()),
        result => report(i, result),
    };
    let detached = {
        let mut r = requests();
        check_all_in(&r, handles)?;
        for (i, h) in handles.iter_mut().enumerate() {
            if *h == REQUEST_NULL {
                give(i, Ok(Status::NO_REQUEST))?;
                continue;
            }
            // A persistent request's completion also deactivates it: `wait`'s.
            if is_persistent(*h) {
                continue;
            }
            let Some(op) = r.table.remove_if(*h, Op::is_finished) else { continue };
            *h = REQUEST_NULL;
            // Under the table's lock: a finished operation's wait returns what it holds.
            give(i, op.wait())?;
        }
        std::mem::take(&mut r.detached)
    };
    if !detached.is_empty() {
        drive_detached(detached)?;
    }
    // Those completed above (and the null ones) are null now; a persistent request's
    // handle stays, and is waited for here.
    for (i, h) in handles.iter_mut().enumerate() {
        match *h {
            REQUEST_NULL => continue,
            p if is_persistent(p) => give(i, wait(p))?,
            one => {
                *h = REQUEST_NULL;
                give(i, wait_one(one))?;
            }
        }
    }
    Ok(())
}
