//! `MPI_Waitall`'s completion of many requests, with as few holds of the request
//! table and of sccemu's engine as it can.
//!
//! Protocol: rounds, each under one hold of the table and, once it meets a
//! point-to-point operation still open, one of the engine (`sccemu::TestRound`: each
//! request tested as `MPI_Test` would, without a lock of its own). A round completes the
//! operations that are complete now ([`Op::is_finished`], after the engine's test for
//! the point-to-point ones). The first round checks every handle first (an invalid one
//! fails the call before any changes) and looks at all of them; then the first handle
//! still open is waited for alone, as [`super::wait`] does (taken out of the table only
//! while it is waited for, so that the others stay there for [`super::drive_all`]
//! meanwhile: a nonblocking collective advances only when tested, and such a wait may
//! be what drives it), and the next round goes on from there, in index order, up to the
//! next handle still open. So each handle is tested at most twice in rounds, and a
//! window of messages streaming in costs about one round per wait that blocked.
//!
//! Taking a run of point-to-point requests out under one hold instead of one hold
//! each did not pay (callgrind, `stream.c` and `step.c` of
//! `docs/bench/2026-11-27-mpip2p/`): the stack array they were moved into, and the
//! moves, cost what the holds saved.

use std::ffi::c_int;

use super::{REQUEST_NULL, Status, check_all_in, drive_detached, is_persistent, requests, wait, wait_one};
use crate::error::MpiResult;
use crate::state::mpi;

/// `MPI_Waitall`: completes every one of `handles` (null, inactive persistent ones
/// included), handing each index's result to `report` and replacing each handle by
/// what completion leaves ([`super::after_completion`]); `report`'s error ends the call.
/// Successes go to `report` only if `report_ok` (the caller wants statuses): with
/// `MPI_STATUSES_IGNORE` a success has nothing to report, and the call per request
/// cost about 28 instructions. An invalid handle fails the call before any changes
/// ([`super::check_all`]). The order of rounds and waits: module docs.
pub fn wait_all(
    handles: &mut [c_int],
    report_ok: bool,
    mut report: impl FnMut(usize, MpiResult<Status>) -> MpiResult<()>,
) -> MpiResult<()> {
    let mut give = |i, result: MpiResult<Status>| match result {
        Ok(_) if !report_ok => Ok(()),
        result => report(i, result),
    };
    let core = mpi()?.core;
    // Handles before `from` are complete; the first round looks at all of them.
    let (mut from, mut first) = (0, true);
    while from < handles.len() {
        let detached = {
            let mut r = requests();
            if first {
                check_all_in(&r, handles)?;
            }
            let mut round = None;
            for (i, h) in handles.iter_mut().enumerate().skip(from) {
                if *h == REQUEST_NULL {
                    // Null from the start, or completed by an earlier round.
                    if first {
                        give(i, Ok(Status::NO_REQUEST))?;
                    }
                    continue;
                }
                // A persistent request's completion also deactivates it: `wait`'s.
                let finished = if is_persistent(*h) {
                    None
                } else {
                    r.table.remove_if(*h, |op| {
                        if op.is_finished() || !op.is_point_to_point() {
                            return op.is_finished();
                        }
                        // None in virtual time: each wait tests and is charged as before.
                        let round =
                            round.get_or_insert_with(|| core.test_round().ok().filter(|r| r.is_held()));
                        let Some(round) = round else {
                            return false;
                        };
                        op.test_in(round);
                        op.is_finished()
                    })
                };
                match finished {
                    // Under the table's lock and the round's hold: a finished
                    // operation's wait returns what it holds, and locks nothing.
                    Some(op) => {
                        *h = REQUEST_NULL;
                        give(i, op.wait())?;
                    }
                    None if first => {}
                    None => break,
                }
            }
            // The round ends here, before the table's hold (declared after it).
            std::mem::take(&mut r.detached)
        };
        if !detached.is_empty() {
            drive_detached(detached)?;
        }
        first = false;
        // The first handle still open; a persistent one's handle stays when done.
        let Some(i) = (from..handles.len()).find(|&i| handles[i] != REQUEST_NULL) else { break };
        match handles[i] {
            p if is_persistent(p) => give(i, wait(p))?,
            one => {
                handles[i] = REQUEST_NULL;
                give(i, wait_one(one))?;
            }
        }
        from = i + 1;
    }
    Ok(())
}
