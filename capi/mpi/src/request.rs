//! Requests: operations in flight, by handle, whatever started them.
//!
//! Each kind of non-blocking operation (a send, a receive, an `MPI_Rput`, ...)
//! implements [`Pending`]; the table holds them as trait objects. Completion
//! ([`wait`], [`test`](fn@test), and the `*all`/`*any`/`*some` forms) removes a request and
//! gives its [`Status`]. Waiting for one of several requests blocks on this core's
//! doorbell, which every peer rings when it delivers, takes or frees something of this
//! core's, and whose waiter drives the core's pending operations meanwhile; so no
//! wait busy-polls.
//!
//! `MPI_Request_free` detaches a request: it stays in a list that later waits and
//! `MPI_Finalize` drive to completion, as MPI requires of a freed send.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

use crate::error::{MpiError, MpiResult, class, fail};
use crate::handles::Table;
use crate::state::mpi;

/// `MPI_REQUEST_NULL`: the request table's base.
pub const REQUEST_NULL: c_int = 0x4c00_0000;

/// What a completed operation reports (`MPI_Status` without its error field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The source rank in the communicator (`MPI_PROC_NULL` when none).
    pub source: c_int,
    /// The user tag (`MPI_ANY_TAG` when none).
    pub tag: c_int,
    /// Bytes received.
    pub bytes: usize,
    /// Whether the operation was cancelled.
    pub cancelled: bool,
}

impl Status {
    /// The status of an operation without a message (a send, `MPI_PROC_NULL`, RMA).
    pub const EMPTY: Status = Status { source: -1, tag: -1, bytes: 0, cancelled: false };
}

/// A non-blocking operation in flight.
pub trait Pending: Send {
    /// Drives the operation without blocking; `Some(status)` once it is complete.
    fn test(&mut self) -> MpiResult<Option<Status>>;

    /// Blocks until the operation completes.
    fn wait(self: Box<Self>) -> MpiResult<Status>;
}

/// An operation that completed when it started.
pub struct Done(pub Status);

impl Pending for Done {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        Ok(Some(self.0))
    }

    fn wait(self: Box<Self>) -> MpiResult<Status> {
        Ok(self.0)
    }
}

struct Requests {
    table: Table<Box<dyn Pending>>,
    detached: Vec<Box<dyn Pending>>,
}

static REQUESTS: Mutex<Requests> =
    Mutex::new(Requests { table: Table::new(REQUEST_NULL), detached: Vec::new() });

fn requests() -> MutexGuard<'static, Requests> {
    REQUESTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A handle for `op`.
pub fn insert(op: Box<dyn Pending>) -> c_int {
    requests().table.insert(op)
}

fn take(handle: c_int) -> MpiResult<Box<dyn Pending>> {
    take_from(&mut requests(), handle)
}

fn take_from(r: &mut Requests, handle: c_int) -> MpiResult<Box<dyn Pending>> {
    r.table
        .remove(handle)
        .ok_or_else(|| MpiError::new(class::REQUEST, format!("{handle:#x} is not an active request")))
}

fn put_back(handle: c_int, op: Box<dyn Pending>) {
    let mut r = requests();
    let again = r.table.insert(op);
    // The index just freed is the first reused, so the handle stays the same.
    debug_assert_eq!(again, handle);
}

/// Blocks until `handle` completes (`MPI_REQUEST_NULL` gives the empty status).
pub fn wait(handle: c_int) -> MpiResult<Status> {
    if handle == REQUEST_NULL {
        return Ok(Status::EMPTY);
    }
    // One hold of the table for the request and the detached ones to drive first.
    let (op, detached) = {
        let mut r = requests();
        (take_from(&mut r, handle)?, std::mem::take(&mut r.detached))
    };
    drive_detached(detached)?;
    op.wait()
}

/// Tests `handle`: `Some(status)` (and the request is gone) once complete.
pub fn test(handle: c_int) -> MpiResult<Option<Status>> {
    if handle == REQUEST_NULL {
        return Ok(Some(Status::EMPTY));
    }
    let mut op = take(handle)?;
    // Outside the table's lock: another thread may complete other requests meanwhile.
    match op.test() {
        Ok(Some(status)) => Ok(Some(status)),
        Ok(None) => {
            put_back(handle, op);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Checks that every handle is null or an active request, without changing any.
pub fn check_all(handles: &[c_int]) -> MpiResult<()> {
    let r = requests();
    for &h in handles {
        if h != REQUEST_NULL && r.table.get(h).is_none() {
            return fail(class::REQUEST, format!("{h:#x} is not an active request"));
        }
    }
    Ok(())
}

/// Blocks until one of `handles` that is not null completes: its index and status;
/// `None` if all are null.
pub fn wait_any(handles: &[c_int]) -> MpiResult<Option<(usize, Status)>> {
    check_all(handles)?;
    if handles.iter().all(|&h| h == REQUEST_NULL) {
        return Ok(None);
    }
    let core = mpi()?.core;
    let mut failure = None;
    let found = core.wait_on(core.rank(), || {
        for (i, &h) in handles.iter().enumerate().filter(|(_, h)| **h != REQUEST_NULL) {
            match test(h) {
                Ok(Some(status)) => return Some(Some((i, status))),
                Ok(None) => {}
                Err(e) => {
                    failure = Some(e);
                    return Some(None);
                }
            }
        }
        None
    });
    let found = found.map_err(|e| MpiError::new(class::OTHER, e.to_string()))?;
    match (found, failure) {
        (_, Some(e)) => Err(e),
        (found, None) => Ok(found),
    }
}

/// Detaches `handle` (`MPI_Request_free`): it completes in the background.
pub fn detach(handle: c_int) -> MpiResult<()> {
    let op = take(handle)?;
    requests().detached.push(op);
    Ok(())
}

/// Completes whatever detached requests can complete now; at `MPI_Finalize`, all.
pub fn finish_detached() -> MpiResult<()> {
    let detached = std::mem::take(&mut requests().detached);
    drive_detached(detached)
}

/// Tests each of `detached`, putting back those not complete.
fn drive_detached(detached: Vec<Box<dyn Pending>>) -> MpiResult<()> {
    if detached.is_empty() {
        return Ok(());
    }
    let mut still = Vec::new();
    for mut op in detached {
        if op.test()?.is_none() {
            still.push(op);
        }
    }
    requests().detached.extend(still);
    Ok(())
}

/// Waits for every detached request (at `MPI_Finalize`).
pub fn wait_detached() -> MpiResult<()> {
    let detached = std::mem::take(&mut requests().detached);
    for op in detached {
        op.wait()?;
    }
    Ok(())
}
