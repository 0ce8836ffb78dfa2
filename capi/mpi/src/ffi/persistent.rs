//! Persistent point-to-point requests: `MPI_Send_init`, `MPI_Ssend_init`,
//! `MPI_Bsend_init`, `MPI_Rsend_init`, `MPI_Recv_init`, `MPI_Start` and `MPI_Startall`.
//!
//! An init call checks its arguments as the non-blocking call would (communicator,
//! datatype, buffer, rank, tag) and keeps them; each `MPI_Start` then makes that call
//! (`MPI_Isend`, `MPI_Issend`, `MPI_Ibsend` or `MPI_Irecv`), so a send reads its buffer
//! when started, as the standard says, and a buffered one takes its room in the
//! attached buffer then. The request table (`crate::request`) holds the running operation and
//! completes it; the request keeps its datatype alive should the program free it.

use std::ffi::{c_int, c_void};

use crate::datatype;
use crate::error::MpiResult;
use crate::ffi::modes::ibsend;
use crate::ffi::p2p::{Message, irecv, isend, issend, message};
use crate::ffi::{Scope, WORLD, c, entry};
use crate::p2p::{self, PROC_NULL};
use crate::request::{self, Op, Start};

/// The nonblocking send a persistent send request makes at each start.
type SendMode = fn(&Message<'_>, c_int, c_int) -> MpiResult<Op>;

#[allow(clippy::too_many_arguments)] // MPI_Send_init's, plus the call's name and mode
fn send_init(
    name: &'static str,
    mode: SendMode,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry(name, Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let comm_obj = message(buf, count, &map, comm)?.comm();
        comm_obj.wire_tag(tag)?;
        if dest != PROC_NULL {
            comm_obj.world_rank(dest)?;
        }
        let buf = buf as usize;
        let start: Start =
            Box::new(move || mode(&message(buf as *const c_void, count, &map, comm)?, dest, tag));
        c!(out(request, request::insert_persistent(start), "request"))
    })
}

/// `MPI_Send_init`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` whenever the request is started, until
/// that operation completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Send_init")]
pub unsafe extern "C" fn MPI_Send_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    send_init("MPI_Send_init", isend, buf, count, datatype, dest, tag, comm, request)
}

/// `MPI_Rsend_init`: a ready send is a standard send here (as `MPI_Rsend`).
///
/// # Safety
/// As [`MPI_Send_init`].
#[unsafe(export_name = "PMPI_Rsend_init")]
pub unsafe extern "C" fn MPI_Rsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    send_init("MPI_Rsend_init", isend, buf, count, datatype, dest, tag, comm, request)
}

/// `MPI_Ssend_init`: each start is an `MPI_Issend`.
///
/// # Safety
/// As [`MPI_Send_init`].
#[unsafe(export_name = "PMPI_Ssend_init")]
pub unsafe extern "C" fn MPI_Ssend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    send_init("MPI_Ssend_init", issend, buf, count, datatype, dest, tag, comm, request)
}

/// `MPI_Bsend_init`: each start is an `MPI_Ibsend`, so it fails with `MPI_ERR_BUFFER`
/// when the attached buffer lacks room then.
///
/// # Safety
/// As [`MPI_Send_init`].
#[unsafe(export_name = "PMPI_Bsend_init")]
pub unsafe extern "C" fn MPI_Bsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    send_init("MPI_Bsend_init", ibsend, buf, count, datatype, dest, tag, comm, request)
}

/// `MPI_Recv_init`.
///
/// # Safety
/// `buf` has room for `count` elements of `datatype`, untouched while a started
/// receive runs; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Recv_init")]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Recv_init", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let m = message(buf, count, &map, comm)?;
        p2p::tag_match(m.comm(), tag)?;
        p2p::source(m.comm(), source)?;
        let buf = buf as usize;
        let start: Start =
            Box::new(move || irecv(&message(buf as *const c_void, count, &map, comm)?, &map, source, tag));
        c!(out(request, request::insert_persistent(start), "request"))
    })
}

/// `MPI_Start`.
///
/// # Safety
/// `request` points to a persistent request's `MPI_Request`.
#[unsafe(export_name = "PMPI_Start")]
pub unsafe extern "C" fn MPI_Start(request: *mut c_int) -> c_int {
    entry("MPI_Start", WORLD, || request::start(c!(read(request, "request"))?))
}

/// `MPI_Startall`: starts each in order, stopping at the first that fails.
///
/// # Safety
/// `array_of_requests` holds `count` persistent requests.
#[unsafe(export_name = "PMPI_Startall")]
pub unsafe extern "C" fn MPI_Startall(count: c_int, array_of_requests: *mut c_int) -> c_int {
    entry("MPI_Startall", WORLD, || {
        let handles = c!(array(array_of_requests.cast_const(), count, "array_of_requests"))?;
        handles.iter().try_for_each(|&h| request::start(h))
    })
}
