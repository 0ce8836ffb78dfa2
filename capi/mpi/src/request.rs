//! Requests: operations in flight, by handle, whatever started them.
//!
//! The table holds each operation as an [`Op`]: a point-to-point send and a kept
//! result by value, so that they allocate nothing of their own, a receive in a box of
//! its own, and every other kind of non-blocking operation (an `MPI_Rput`, a
//! nonblocking collective, ...) as a [`Pending`] trait object. Completion
//! ([`wait`], [`test`](fn@test), and the `*all`/`*any`/`*some` forms) removes a request and
//! gives its [`Status`]. Waiting for one of several requests blocks on this core's
//! doorbell, which every peer rings when it delivers, takes or frees something of this
//! core's, and whose waiter drives the core's pending operations meanwhile; so no
//! wait busy-polls.
//!
//! The calls that complete many requests test them under one hold of the table and,
//! for the point-to-point ones, one test round of sccemu's engine (`sccemu::TestRound`):
//! `MPI_Waitall` in rounds ([`wait_all`]), `MPI_Testall` and the `*any`/`*some` calls
//! in place in the table ([`test_all`], [`test_some`], [`wait_some`]; the passes:
//! `in_place`), so that a request they do not complete keeps its handle. `MPI_Test` is
//! `MPI_Testall` of one handle ([`test`](fn@test)), and `MPI_Cancel` ([`cancel`]) tests
//! and withdraws in place the same way: neither takes an operation out of the table.
//!
//! `MPI_Request_free` detaches a request: it stays in a list that later waits and
//! `MPI_Finalize` drive to completion, as MPI requires of a freed send.
//!
//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init`) have handles of their own
//! kind. Each keeps how to start its operation; `MPI_Start` starts it as an ordinary
//! request, which the persistent one holds while active. Completion resolves a
//! persistent handle to that request and leaves the persistent one inactive, its
//! handle still valid ([`after_completion`]); an inactive one completes at once with
//! the empty status, and the `*any`/`*some` forms skip it like a null handle.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

use crate::error::{MpiError, MpiResult, class, fail};
use crate::handles::Table;

mod in_place;
mod lock;
mod op;
mod some;
mod test_all;
mod wait_all;

use in_place::{op_in, test_in_place};
pub use lock::Reentered;
pub use op::Op;
pub use some::{test_some, wait_some};
pub use test_all::{test, test_all};
pub use wait_all::wait_all;

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

    /// The standard's empty status, of a null or inactive request: `MPI_ANY_SOURCE`,
    /// `MPI_ANY_TAG`, nothing received.
    pub const NO_REQUEST: Status = Status { source: crate::p2p::ANY_SOURCE, ..Status::EMPTY };
}

/// A non-blocking operation in flight.
pub trait Pending: Send {
    /// Drives the operation without blocking; `Some(status)` once it is complete.
    fn test(&mut self) -> MpiResult<Option<Status>>;

    /// Blocks until the operation completes.
    fn wait(self: Box<Self>) -> MpiResult<Status>;

    /// Withdraws the operation, which has not completed (`MPI_Cancel`); whether it was
    /// (a send has left or been copied, and cannot be).
    fn cancel(&mut self) -> bool {
        false
    }
}

/// An operation that completed when it started, where a [`Pending`] is called for (a
/// call that may also start one); the table's own form is [`Op::Done`].
pub struct Done(pub Status);

impl Pending for Done {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        Ok(Some(self.0))
    }

    fn wait(self: Box<Self>) -> MpiResult<Status> {
        Ok(self.0)
    }
}

/// The null handle of the persistent requests' kind (never handed out).
const PERSISTENT_NULL: c_int = 0x4d00_0000;

/// Starts a persistent request's operation.
pub type Start = Box<dyn FnMut() -> MpiResult<Op> + Send>;

/// A persistent request: how to start it, and the request of its running operation.
struct Persistent {
    /// `None` while `MPI_Start` runs it, outside the table's lock.
    start: Option<Start>,
    active: Option<c_int>,
}

struct Requests {
    table: Table<Op>,
    detached: Vec<Op>,
    persistent: Table<Persistent>,
}

impl Requests {
    /// The operation handle `handle` stands for: its own, or an active persistent
    /// request's; `None` for the null handle and an inactive persistent request.
    #[inline]
    fn active(&self, handle: c_int) -> MpiResult<Option<c_int>> {
        match handle {
            REQUEST_NULL => Ok(None),
            h if is_persistent(h) => Ok(self.persistent.get(h).ok_or_else(|| not_persistent(h))?.active),
            h => Ok(Some(h)),
        }
    }
}

static REQUESTS: Mutex<Requests> = Mutex::new(Requests {
    table: Table::new(REQUEST_NULL),
    detached: Vec::new(),
    persistent: Table::new(PERSISTENT_NULL),
});

// Always inline: every request call takes the lock, and the call's frame cost more
// than the lock's fast path.
#[inline(always)]
fn requests() -> MutexGuard<'static, Requests> {
    lock::lock(&REQUESTS)
}

/// A handle for `op`.
pub fn insert(op: Box<dyn Pending>) -> c_int {
    insert_op(Op::Other(op))
}

/// A handle for `op`, held by value. Inline: the fast paths of `MPI_Isend` and
/// `MPI_Irecv` then build the `Op` where the table's insert reads it, and save a frame.
#[inline(always)]
pub fn insert_op(op: Op) -> c_int {
    requests().table.insert(op)
}

/// A new inactive persistent request that `start` starts.
pub fn insert_persistent(start: Start) -> c_int {
    requests().persistent.insert(Persistent { start: Some(start), active: None })
}

fn is_persistent(handle: c_int) -> bool {
    crate::handles::is_kind(handle, PERSISTENT_NULL)
}

fn not_persistent(handle: c_int) -> MpiError {
    MpiError::new(class::REQUEST, format!("{handle:#x} is not a persistent request"))
}

/// `MPI_Start`: starts the inactive persistent request `handle`.
pub fn start(handle: c_int) -> MpiResult<()> {
    let mut start = {
        let mut r = requests();
        let p = r.persistent.get_mut(handle).ok_or_else(|| not_persistent(handle))?;
        match (p.active, p.start.take()) {
            (None, Some(start)) => start,
            (_, start) => {
                p.start = start;
                return fail(class::REQUEST, format!("the persistent request {handle:#x} is active already"));
            }
        }
    };
    // Outside the table's lock: starting may move data.
    let started = start();
    let mut r = requests();
    let (active, result) = match started {
        Ok(op) => (Some(r.table.insert(op)), Ok(())),
        Err(e) => (None, Err(e)),
    };
    if let Some(p) = r.persistent.get_mut(handle) {
        (p.start, p.active) = (Some(start), active);
    }
    result
}

/// The request `handle` stands for now: itself, or a persistent request's running
/// operation; `None` for the null handle and an inactive persistent request.
fn resolve(handle: c_int) -> MpiResult<Option<c_int>> {
    // Only a persistent request's needs the table.
    if !is_persistent(handle) {
        return Ok((handle != REQUEST_NULL).then_some(handle));
    }
    requests().active(handle)
}

/// Marks persistent request `handle` inactive once its operation completed.
fn deactivate(handle: c_int) {
    if let Some(p) = requests().persistent.get_mut(handle) {
        p.active = None;
    }
}

/// What a request handle becomes once its operation completed: a persistent request
/// keeps its handle, any other becomes `MPI_REQUEST_NULL`.
pub fn after_completion(handle: c_int) -> c_int {
    if is_persistent(handle) { handle } else { REQUEST_NULL }
}

fn take(handle: c_int) -> MpiResult<Op> {
    requests().table.remove(handle).ok_or_else(|| not_active(handle))
}

/// The error of a handle that names no active request, out of line: the hot paths
/// that may return it carry no formatting code.
#[cold]
#[inline(never)]
fn not_active(handle: c_int) -> MpiError {
    MpiError::new(class::REQUEST, format!("{handle:#x} is not an active request"))
}

/// Blocks until `handle` completes (`MPI_REQUEST_NULL` and an inactive persistent
/// request give the empty status).
pub fn wait(handle: c_int) -> MpiResult<Status> {
    if is_persistent(handle) {
        let Some(active) = resolve(handle)? else { return Ok(Status::NO_REQUEST) };
        let done = wait_one(active);
        deactivate(handle);
        return done;
    }
    wait_one(handle)
}

// Inline: `wait_all` calls it once per request it waits for, and its frame cost about
// 18 instructions a call.
#[inline]
fn wait_one(handle: c_int) -> MpiResult<Status> {
    if handle == REQUEST_NULL {
        return Ok(Status::NO_REQUEST);
    }
    // One hold of the table for the request and the detached ones to drive first;
    // the list is moved out only when it holds some (most waits have none).
    let (op, detached) = {
        let mut r = requests();
        let Some(op) = r.table.remove(handle) else { return Err(not_active(handle)) };
        let detached = (!r.detached.is_empty()).then(|| std::mem::take(&mut r.detached));
        (op, detached)
    };
    if let Some(detached) = detached {
        drive_detached(detached)?;
    }
    op.wait()
}

/// Tests every request in the table once, keeping what completes as a finished request
/// under its handle: the progress that waits which depend on peers make, since a
/// nonblocking collective advances only when its request is tested. So a process
/// blocked in a synchronous send, or in the wait of one nonblocking collective, still
/// takes its part in the others its peers wait on.
///
/// Each is tested in place, under the table's lock, so that no other thread finds a
/// handle missing meanwhile; no operation's test touches the table.
pub fn drive_all() {
    let mut r = requests();
    for h in r.table.handles() {
        let Some(op) = r.table.get_mut(h) else { continue };
        // An error stays in the table, for the request's completion to report.
        test_in_place(op).ok();
    }
}

/// Tests `handle` in place (`MPI_Request_get_status`): `Some(status)` once complete,
/// and the request stays, holding its result for the wait or test that completes it.
/// The null handle and an inactive persistent request give the empty status.
pub fn peek(handle: c_int) -> MpiResult<Option<Status>> {
    let Some(active) = resolve(handle)? else { return Ok(Some(Status::NO_REQUEST)) };
    let mut r = requests();
    let op = r.table.get_mut(active).ok_or_else(|| not_active(handle))?;
    // In place under the table's lock, as `drive_all` tests.
    test_in_place(op)
}

/// Checks that every handle is null, an active request or a persistent one, without
/// changing any.
pub fn check_all(handles: &[c_int]) -> MpiResult<()> {
    check_all_in(&requests(), handles)
}

fn check_all_in(r: &Requests, handles: &[c_int]) -> MpiResult<()> {
    for &h in handles {
        if is_persistent(h) && r.persistent.get(h).is_some() {
            continue;
        }
        if h != REQUEST_NULL && r.table.get(h).is_none() {
            return Err(not_active(h));
        }
    }
    Ok(())
}

/// `MPI_Cancel`: withdraws `handle`'s operation if it has not completed and can be (a
/// receive not yet matched, or matched but not finished, whose message goes back to
/// the queue). The request still needs its completion call, whose status then says
/// whether it was cancelled.
///
/// In place under the table's hold, as `MPI_Test` tests (`in_place`): an operation
/// complete already keeps its result (`Op::Done`, `Op::Failed`, by its test in place),
/// a withdrawn one becomes the cancelled status; its handle never changes.
pub fn cancel(handle: c_int) -> MpiResult<()> {
    let mut r = requests();
    let Some(op) = op_in(&mut r, handle)? else {
        return Err(not_active(handle));
    };
    // An error stays in the table (`Op::Failed`), for the completion to report.
    if matches!(test_in_place(op), Ok(None)) && lock::in_callbacks(|| op.cancel()) {
        *op = Op::Done(Status { cancelled: true, ..Status::EMPTY });
    }
    Ok(())
}

/// Detaches `handle` (`MPI_Request_free`): it completes in the background. A
/// persistent request is freed, and its running operation, if any, detached.
pub fn detach(handle: c_int) -> MpiResult<()> {
    if is_persistent(handle) {
        let freed = requests().persistent.remove(handle).ok_or_else(|| not_persistent(handle))?;
        return freed.active.map_or(Ok(()), detach);
    }
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
fn drive_detached(detached: Vec<Op>) -> MpiResult<()> {
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
