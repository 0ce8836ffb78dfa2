//! Generalized requests (MPI-3.1 section 12.2): operations the program runs itself and
//! completes with `MPI_Grequest_complete`, waited for and tested like any request;
//! `MPI_Status_set_elements(_x)` and `MPI_Status_set_cancelled`, with which its
//! `query_fn` fills the status.
//!
//! Protocol: `MPI_Grequest_start` puts a `Generalized` in the request table and keeps
//! its shared `Progress` under the handle in `STARTED`, where
//! `MPI_Grequest_complete` finds it: it sets `done` (Release) and rings this core's
//! doorbell, which a wait sleeps on (`CoreContext::wait_on`), so no wait spins. A test
//! or wait that finds `done` (Acquire: what the completing thread wrote before, which
//! `query_fn` may read, is visible) calls `query_fn` for the status, then `free_fn`, and
//! forgets the handle, whose request the table then frees; `MPI_Request_free` before
//! that leaves it to the detached requests, which call both once it is done, as MPI
//! asks. `MPI_Cancel` calls `cancel_fn` with `complete` false and leaves the request
//! waiting for `MPI_Grequest_complete`; of one that was complete already, the cancel
//! completes it (`query_fn`, `free_fn`) without calling `cancel_fn`.
//!
//! A callback's error code is the completion's error: a class of the library's own is
//! kept; any other (a class the program added) is reported as `MPI_ERR_OTHER`, naming
//! the code.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

use sccemu::sync::{AtomicU32, Ordering};

use crate::datatype::{self, TypeMap};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::p2p::MpiStatus;
use crate::ffi::{WORLD, c, entry};
use crate::request::{self, Pending, Status};
use crate::state::mpi;

/// `MPI_Grequest_query_function`.
pub type QueryFunction = unsafe extern "C" fn(*mut c_void, *mut MpiStatus) -> c_int;
/// `MPI_Grequest_free_function`.
pub type FreeFunction = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub type CancelFunction = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// What `MPI_Grequest_complete` and the request share.
struct Progress {
    /// 1 once `MPI_Grequest_complete` was called.
    done: AtomicU32,
}

/// The started generalized requests not yet completed by a wait or test, by handle.
static STARTED: Mutex<Option<HashMap<c_int, Arc<Progress>>>> = Mutex::new(None);

fn started() -> MutexGuard<'static, Option<HashMap<c_int, Arc<Progress>>>> {
    STARTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A generalized request in the table.
struct Generalized {
    progress: Arc<Progress>,
    query: QueryFunction,
    free: FreeFunction,
    cancel: CancelFunction,
    extra_state: usize,
}

// SAFETY: `extra_state` is the program's pointer, handed back to its own callbacks on
// whichever thread completes the request, as MPI allows.
unsafe impl Send for Generalized {}

/// The error of a callback's return code, if not `MPI_SUCCESS`.
fn callback_error(name: &str, code: c_int) -> MpiResult<()> {
    match crate::error::class_of(code) {
        Some(class::SUCCESS) => Ok(()),
        Some(c) if c < class::CLASSES => fail(c, format!("the program's {name} returned this error")),
        _ => fail(class::OTHER, format!("the program's {name} returned error code {code}")),
    }
}

impl Generalized {
    /// The operation is done: its status from `query_fn`, then `free_fn`.
    fn finish(&mut self) -> MpiResult<Status> {
        if let Some(m) = started().as_mut() {
            m.retain(|_, p| !Arc::ptr_eq(p, &self.progress));
        }
        let mut s = MpiStatus { source: -1, tag: -1, ..MpiStatus::default() };
        let extra = self.extra_state as *mut c_void;
        // SAFETY: the program's callbacks with its own `extra_state` and a status to
        // fill, as `MPI_Grequest_start` was given them.
        let queried = callback_error("query_fn", unsafe { (self.query)(extra, &mut s) });
        // SAFETY: as above; MPI calls `free_fn` once, after `query_fn`.
        let freed = callback_error("free_fn", unsafe { (self.free)(extra) });
        queried.and(freed)?;
        Ok(Status {
            source: s.source,
            tag: s.tag,
            bytes: s.count.max(0) as usize,
            cancelled: s.cancelled != 0,
        })
    }
}

impl Pending for Generalized {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        // Acquire: pairs with `MPI_Grequest_complete`'s Release (module docs).
        if self.progress.done.load(Ordering::Acquire) == 0 {
            return Ok(None);
        }
        self.finish().map(Some)
    }

    fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let core = mpi()?.core;
        // Acquire, as in `test`.
        core.wait_on(core.rank(), || (self.progress.done.load(Ordering::Acquire) != 0).then_some(()))
            .map_err(|e| MpiError::new(class::OTHER, e.to_string()))?;
        self.finish()
    }

    fn cancel(&mut self) -> bool {
        // SAFETY: the program's cancel callback with its own `extra_state`; the
        // operation is not complete (`request::cancel` tested it first).
        let _ = unsafe { (self.cancel)(self.extra_state as *mut c_void, 0) };
        // The request still waits for `MPI_Grequest_complete`.
        false
    }
}

/// `MPI_Grequest_start`.
///
/// # Safety
/// The functions are the program's callbacks of the C types `mpi.h` declares;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Grequest_start")]
pub unsafe extern "C" fn MPI_Grequest_start(
    query_fn: Option<QueryFunction>,
    free_fn: Option<FreeFunction>,
    cancel_fn: Option<CancelFunction>,
    extra_state: *mut c_void,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Grequest_start", WORLD, || {
        let (Some(query), Some(free), Some(cancel)) = (query_fn, free_fn, cancel_fn) else {
            return fail(class::ARG, "query_fn, free_fn and cancel_fn must all be given");
        };
        if request.is_null() {
            return fail(class::ARG, "request is a null pointer");
        }
        let progress = Arc::new(Progress { done: AtomicU32::new(0) });
        let extra_state = extra_state as usize;
        let op = Generalized { progress: Arc::clone(&progress), query, free, cancel, extra_state };
        // Nobody completes it before the program has its handle.
        let handle = request::insert(Box::new(op));
        started().get_or_insert_with(HashMap::new).insert(handle, progress);
        c!(out(request, handle, "request"))
    })
}

/// `MPI_Grequest_complete`: the operation of generalized request `request` is done.
#[unsafe(export_name = "PMPI_Grequest_complete")]
pub extern "C" fn MPI_Grequest_complete(request: c_int) -> c_int {
    entry("MPI_Grequest_complete", WORLD, || {
        let progress = started().as_ref().and_then(|m| m.get(&request).cloned());
        let Some(progress) = progress else {
            return fail(class::REQUEST, format!("{request:#x} is not a generalized request in progress"));
        };
        // Release: what this thread did for the operation happens-before the test or
        // wait that sees it done (module docs).
        progress.done.store(1, Ordering::Release);
        let core = mpi()?.core;
        core.ring(core.rank());
        Ok(())
    })
}

/// Bytes of the first `count` basic elements of `map`'s data: the inverse of
/// `datatype::elements_in`; `None` past a signature too long to keep.
fn bytes_of_elements(map: &TypeMap, count: usize) -> Option<usize> {
    if map.elements == 0 {
        return (count == 0).then_some(0);
    }
    let (whole, mut rest) = (count / map.elements, count % map.elements);
    let mut bytes = whole * map.size;
    for &(prim, n) in map.signature.as_ref()? {
        if rest == 0 {
            break;
        }
        let take = rest.min(n);
        bytes += take * prim.size();
        rest -= take;
    }
    Some(bytes)
}

/// Sets `status`'s received size to `count` basic elements of `datatype`.
///
/// # Safety
/// `status` points to an `MPI_Status`.
unsafe fn set_elements(status: *mut MpiStatus, datatype: c_int, count: i64) -> MpiResult<()> {
    let map = datatype::lookup(datatype)?;
    let count = usize::try_from(count).map_err(|_| MpiError::new(class::COUNT, format!("count {count}")))?;
    let bytes = bytes_of_elements(&map, count).ok_or_else(|| {
        MpiError::new(class::TYPE, "the datatype's signature is too long to count elements in")
    })?;
    let mut s = c!(status_of(status))?;
    s.count = i64::try_from(bytes).map_err(|_| MpiError::new(class::COUNT, "count too large"))?;
    c!(out(status, s, "status"))
}

/// `MPI_Status_set_elements`.
///
/// # Safety
/// `status` points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_Status_set_elements")]
pub unsafe extern "C" fn MPI_Status_set_elements(
    status: *mut MpiStatus,
    datatype: c_int,
    count: c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Status_set_elements", WORLD, || unsafe { set_elements(status, datatype, count.into()) })
}

/// `MPI_Status_set_elements_x`.
///
/// # Safety
/// `status` points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_Status_set_elements_x")]
pub unsafe extern "C" fn MPI_Status_set_elements_x(
    status: *mut MpiStatus,
    datatype: c_int,
    count: i64,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Status_set_elements_x", WORLD, || unsafe { set_elements(status, datatype, count) })
}

/// `MPI_Status_set_cancelled`.
///
/// # Safety
/// `status` points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_Status_set_cancelled")]
pub unsafe extern "C" fn MPI_Status_set_cancelled(status: *mut MpiStatus, flag: c_int) -> c_int {
    entry("MPI_Status_set_cancelled", WORLD, || {
        let mut s = c!(status_of(status))?;
        s.cancelled = c_int::from(flag != 0);
        c!(out(status, s, "status"))
    })
}
