//! Matched probes: `MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv` and `MPI_Imrecv`, over
//! sccemu's (`sccemu::Matched`): a probed message is out of reach of every other
//! receive, of any thread, until the matched receive that names it.
//!
//! An `MPI_Message` names a probed message held in this process's message table until
//! its matched receive takes it (the handle then becomes `MPI_MESSAGE_NULL`).
//! `MPI_MESSAGE_NO_PROC` is what probing `MPI_PROC_NULL` gives; receiving it completes
//! at once with `MPI_PROC_NULL`'s status. A matched receive takes the whole message into
//! memory of its own and then unpacks what fits the user's buffer: a message longer
//! than the buffer is consumed all the same, the buffer keeps what fits, and the
//! receive reports `MPI_ERR_TRUNCATE`, as a receive does.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::comm::{self, CommObj};
use crate::datatype;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::p2p::MpiStatus;
use crate::ffi::pending::UserBuffer;
use crate::ffi::{Scope, WORLD, c, entry};
use crate::handles::Table;
use crate::p2p::{self, recv_error, request_error};
use crate::request::{self, Pending, Status};
use crate::state::mpi;

/// `MPI_MESSAGE_NULL`: the message table's base.
pub const MESSAGE_NULL: c_int = 0x6800_0000;
/// `MPI_MESSAGE_NO_PROC`.
pub const MESSAGE_NO_PROC: c_int = MESSAGE_NULL | 1;

/// A probed message and the communicator it was probed on (with its handle, whose
/// error handler the matched receive's errors go to).
struct Probed {
    matched: sccemu::Matched<'static>,
    comm: &'static CommObj,
    comm_handle: c_int,
}

/// Probed messages by handle; `MPI_MESSAGE_NO_PROC`'s slot is empty.
static MESSAGES: Mutex<Table<Option<Probed>>> = Mutex::new(Table::new(MESSAGE_NULL));

fn messages() -> MutexGuard<'static, Table<Option<Probed>>> {
    let mut t = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
    if !t.is_predefined(MESSAGE_NO_PROC) {
        t.predefine(None);
    }
    t
}

/// Hands out a probe's result: its message handle and status.
///
/// # Safety
/// `message` points to an `MPI_Message`; `status` is an `MPI_Status` or ignored.
unsafe fn hand_out(
    (comm, comm_handle): (&'static CommObj, c_int),
    probed: Option<sccemu::Matched<'static>>,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> MpiResult<()> {
    let (handle, st) = match probed {
        None => (MESSAGE_NO_PROC, Status::EMPTY),
        Some(matched) => {
            let st = p2p::received(comm, matched.status());
            (messages().insert(Some(Probed { matched, comm, comm_handle })), st)
        }
    };
    c!(out(message, handle, "message"))?;
    c!(write_status(status, st, 0))
}

/// `MPI_Mprobe`: waits for a matching message and takes it out of matching.
///
/// # Safety
/// `message` points to an `MPI_Message`; `status` is an `MPI_Status` or ignored.
#[unsafe(export_name = "PMPI_Mprobe")]
pub unsafe extern "C" fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: c_int,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Mprobe", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let t = p2p::tag_match(c, tag)?;
        if message.is_null() {
            return fail(class::ARG, "message is a null pointer");
        }
        let probed = match p2p::source(c, source)? {
            Some(src) => Some(mpi()?.core.mprobe(src, t).map_err(recv_error)?),
            None => None,
        };
        // SAFETY: this call's contract.
        unsafe { hand_out((c, comm), probed, message, status) }
    })
}

/// `MPI_Improbe`: [`MPI_Mprobe`] if a matching message is here; `flag` says.
///
/// # Safety
/// As [`MPI_Mprobe`]; `flag` points to an int.
#[unsafe(export_name = "PMPI_Improbe")]
pub unsafe extern "C" fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Improbe", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let t = p2p::tag_match(c, tag)?;
        if message.is_null() || flag.is_null() {
            return fail(class::ARG, "flag or message is a null pointer");
        }
        let probed = match p2p::source(c, source)? {
            Some(src) => match mpi()?.core.improbe(src, t).map_err(recv_error)? {
                Some(m) => Some(m),
                None => return c!(out(flag, 0, "flag")),
            },
            None => None,
        };
        c!(out(flag, 1, "flag"))?;
        // SAFETY: this call's contract.
        unsafe { hand_out((c, comm), probed, message, status) }
    })
}

/// A matched receive in flight: the whole message into `staging`, unpacked into the
/// user's buffer at completion.
struct PendingMrecv {
    // Field order matters: the request borrows `staging`'s heap buffer and must drop
    // first.
    request: Option<sccemu::Request<'static>>,
    staging: Vec<u8>,
    comm: &'static CommObj,
    user: UserBuffer,
}

// SAFETY: the raw address is the user's receive buffer, which MPI hands to the library
// until completion, from whichever thread completes it.
unsafe impl Send for PendingMrecv {}

impl PendingMrecv {
    fn finish(&mut self, s: sccemu::Status) -> MpiResult<Status> {
        self.request = None;
        let status = p2p::received(self.comm, s);
        let room = self.user.buffer()?.data_len()?;
        self.user.unpack(&self.staging[..s.len.min(room)])?;
        if s.len > room {
            return Err(MpiError::new(
                class::TRUNCATE,
                format!("a message of {} bytes from rank {} into a buffer of {room}", s.len, status.source),
            ));
        }
        Ok(status)
    }
}

impl Pending for PendingMrecv {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        let Some(request) = &mut self.request else { return Ok(Some(Status::EMPTY)) };
        match request.test().map_err(request_error)? {
            Some(s) => self.finish(s).map(Some),
            None => Ok(None),
        }
    }

    fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let Some(request) = self.request.take() else { return Ok(Status::EMPTY) };
        let s = request.wait().map_err(request_error)?;
        self.finish(s)
    }
}

/// Starts the matched receive of `*message` into `count` elements of `datatype` at
/// `buf`, and sets `*message` to `MPI_MESSAGE_NULL`.
///
/// # Safety
/// `message` points to an `MPI_Message`; `buf` has room for `count` elements of
/// `datatype`, left to the library until the receive completes.
unsafe fn start(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    message: *mut c_int,
) -> MpiResult<Box<dyn Pending>> {
    let handle = c!(read(message, "message"))?;
    let map = datatype::committed(datatype)?;
    let user = c!(user_buffer(buf, count, &map))?;
    let user = UserBuffer { base: user.base() as usize, count: user.count() as c_int, map: map.clone() };
    let probed = {
        let mut t = messages();
        let Some(slot) = t.get_mut(handle) else {
            return fail(class::REQUEST, format!("{handle:#x} is not a probed message (MPI_Message)"));
        };
        let probed = slot.take();
        if handle != MESSAGE_NO_PROC {
            t.remove(handle);
        }
        probed
    };
    c!(out(message, MESSAGE_NULL, "message"))?;
    let Some(Probed { matched, comm, .. }) = probed else {
        return Ok(Box::new(request::Done(Status::EMPTY)));
    };
    let len = matched.status().len;
    let mut pending = PendingMrecv { request: None, staging: vec![0u8; len], comm, user };
    // SAFETY: the vector's heap buffer is owned by `pending`, never resized, and
    // outlives the request that borrows it (declared first, so dropped first); nothing
    // else touches it until the request completes.
    let target: &'static mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(pending.staging.as_mut_ptr(), len) };
    pending.request = Some(matched.irecv(target));
    Ok(Box::new(pending))
}

/// The error handler of a matched receive: its message's communicator's.
///
/// # Safety
/// `message` is null or points to an `MPI_Message`.
unsafe fn scope_of(message: *const c_int) -> Scope {
    // SAFETY: this function's contract.
    let handle = unsafe { message.as_ref() }.copied();
    let comm = handle.and_then(|h| messages().get(h).and_then(|p| p.as_ref().map(|p| p.comm_handle)));
    comm.map_or(WORLD, Scope::Comm)
}

/// `MPI_Mrecv`: receives the probed message `*message`.
///
/// # Safety
/// `buf` has room for `count` elements of `datatype`; `message` points to an
/// `MPI_Message`; `status` is an `MPI_Status` or ignored.
#[unsafe(export_name = "PMPI_Mrecv")]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Mrecv", unsafe { scope_of(message) }, || {
        // SAFETY: this call's contract.
        let s = unsafe { start(buf, count, datatype, message) }?.wait()?;
        c!(write_status(status, s, 0))
    })
}

/// `MPI_Imrecv`: [`MPI_Mrecv`] in the background.
///
/// # Safety
/// As [`MPI_Mrecv`], the buffer left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Imrecv")]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    message: *mut c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Imrecv", unsafe { scope_of(message) }, || {
        if request.is_null() {
            return fail(class::ARG, "request is a null pointer");
        }
        // SAFETY: this call's contract.
        let op = unsafe { start(buf, count, datatype, message) }?;
        c!(out(request, request::insert(op), "request"))
    })
}
