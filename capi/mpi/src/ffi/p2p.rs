//! Point-to-point calls (request completion is in [`super::requests`]).

use std::ffi::{c_int, c_void};

use crate::comm::{self, CommObj};
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::pending::{PendingRecv, PendingSsend, UserBuffer, send_op, start_isend};
use crate::ffi::{Scope, c, entry, fast, fast_p2p, recv_pool};
use crate::p2p::{self, recv_error, send_error};
use crate::request::{self, Op, Status};
use crate::state::mpi;

/// `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`.
pub(super) const STATUS_IGNORE: usize = 1;

/// `MPI_Status` as `mpi.h` lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MpiStatus {
    /// `MPI_SOURCE`.
    pub source: c_int,
    /// `MPI_TAG`.
    pub tag: c_int,
    /// `MPI_ERROR`.
    pub error: c_int,
    /// Whether the operation was cancelled.
    pub cancelled: c_int,
    /// Bytes received.
    pub count: i64,
}

/// Writes `status` unless `p` is `MPI_STATUS_IGNORE` (or null).
///
/// # Safety
/// `p` is null, `MPI_STATUS_IGNORE`, or points to a writable `MPI_Status`.
pub unsafe fn write_status(p: *mut MpiStatus, status: Status, error: c_int) -> MpiResult<()> {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return Ok(());
    }
    let s = MpiStatus {
        source: status.source,
        tag: status.tag,
        error,
        cancelled: status.cancelled as c_int,
        count: status.bytes as i64,
    };
    c!(out(p, s, "status"))
}

/// # Safety
/// `p` is null, `MPI_STATUS_IGNORE`, or points to a readable `MPI_Status`.
pub unsafe fn status_of(p: *const MpiStatus) -> MpiResult<MpiStatus> {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return fail(class::ARG, "a status is needed here, not MPI_STATUS_IGNORE");
    }
    c!(read(p, "status"))
}

pub(super) struct Message<'m> {
    comm: &'static CommObj,
    buf: Buffer<'m>,
}

impl Message<'_> {
    pub(super) fn comm(&self) -> &'static CommObj {
        self.comm
    }

    /// The message's bytes, packed if its datatype is not contiguous.
    pub(super) fn bytes(&self) -> MpiResult<std::borrow::Cow<'_, [u8]>> {
        self.buf.bytes()
    }
}

pub(super) fn message(
    buf: *const c_void,
    count: c_int,
    map: &datatype::TypeMap,
    comm: c_int,
) -> MpiResult<Message<'_>> {
    let comm = comm::lookup(comm)?;
    Ok(Message { comm, buf: c!(user_buffer(buf, count, map))? })
}

#[allow(clippy::too_many_arguments)] // MPI_Send's, plus the call's name and mode
#[inline(always)]
fn send_call(
    name: &'static str,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    sync: bool,
) -> c_int {
    entry(name, Scope::Comm(comm), || {
        if !sync {
            // SAFETY: the calling entry point's contract, which is the fast path's.
            if let Some(done) = unsafe { fast_p2p::send(buf, count, datatype, dest, tag, comm) } {
                return done;
            }
        }
        fast::general(|| {
            let map = datatype::committed(datatype)?;
            let m = message(buf, count, &map, comm)?;
            p2p::send(m.comm, dest, tag, &m.buf.bytes()?, sync)
        })
    })
}

/// `MPI_Send`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[unsafe(export_name = "PMPI_Send")]
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_call("MPI_Send", buf, count, datatype, dest, tag, comm, false)
}

/// `MPI_Rsend`: a standard send (a matching receive is posted, so it is as good).
///
/// # Safety
/// As [`MPI_Send`].
#[unsafe(export_name = "PMPI_Rsend")]
pub unsafe extern "C" fn MPI_Rsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_call("MPI_Rsend", buf, count, datatype, dest, tag, comm, false)
}

/// `MPI_Ssend`: returns once the matching receive has started.
///
/// # Safety
/// As [`MPI_Send`].
#[unsafe(export_name = "PMPI_Ssend")]
pub unsafe extern "C" fn MPI_Ssend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    send_call("MPI_Ssend", buf, count, datatype, dest, tag, comm, true)
}

fn recv_into(m: &Message<'_>, source: c_int, tag: c_int) -> MpiResult<Status> {
    let match_tag = p2p::tag_match(m.comm, tag)?;
    let Some(src) = p2p::source(m.comm, source)? else { return Ok(Status::EMPTY) };
    match m.buf.contiguous_mut()? {
        Some(slice) => p2p::recv(m.comm, src, match_tag, slice),
        None => {
            let mut tmp = vec![0u8; m.buf.data_len()?];
            let result = p2p::recv(m.comm, src, match_tag, &mut tmp);
            // A truncated message still delivers what fits.
            m.buf.unpack(&tmp[..result.as_ref().map_or(tmp.len(), |s| s.bytes)])?;
            result
        }
    }
}

/// `MPI_Recv`.
///
/// # Safety
/// `buf` has room for `count` elements of `datatype`; `status` is an `MPI_Status` or
/// `MPI_STATUS_IGNORE`.
#[unsafe(export_name = "PMPI_Recv")]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Recv", Scope::Comm(comm), || {
        // SAFETY: this call's contract, which is the fast path's.
        if let Some(done) = unsafe { fast_p2p::recv(buf, count, datatype, source, tag, comm, status) } {
            return done;
        }
        fast::general(|| {
            let map = datatype::committed(datatype)?;
            let m = message(buf, count, &map, comm)?;
            let s = recv_into(&m, source, tag)?;
            c!(write_status(status, s, 0))
        })
    })
}

pub(super) fn isend(m: &Message<'_>, dest: c_int, tag: c_int) -> MpiResult<Op> {
    let wire = m.comm.wire_tag(tag)?;
    if dest == p2p::PROC_NULL {
        return Ok(Op::Done(Status::EMPTY));
    }
    let to = m.comm.world_rank(dest)?;
    let core = mpi()?.core;
    // SAFETY: the buffer is the send buffer of this non-blocking send (`isend`'s
    // callers), which MPI leaves to the library until it completes.
    let request = unsafe { start_isend(core, to, wire, m.buf.bytes()?) }.map_err(send_error)?;
    Ok(send_op(request))
}

pub(super) fn irecv(m: &Message<'_>, map: &datatype::TypeRef, source: c_int, tag: c_int) -> MpiResult<Op> {
    let match_tag = p2p::tag_match(m.comm, tag)?;
    let Some(src) = p2p::source(m.comm, source)? else { return Ok(Op::Done(Status::EMPTY)) };
    let core = mpi()?.core;
    let len = m.buf.data_len()?;
    let mut pending = PendingRecv { request: None, staging: None, comm: m.comm, direct: None };
    let target: &'static mut [u8] = match m.buf.contiguous_mut()? {
        Some(slice) => {
            pending.direct = Some((slice.as_mut_ptr() as usize, slice.len()));
            slice
        }
        None => {
            let user =
                UserBuffer { base: m.buf.base() as usize, count: m.buf.count() as c_int, map: map.clone() };
            let (staging, _) = pending.staging.insert((vec![0u8; len], user));
            // SAFETY: the vector's heap buffer is owned by `pending`, never resized,
            // and outlives the request that borrows it (declared first, so dropped
            // first); nothing else touches it until the request completes.
            unsafe { std::slice::from_raw_parts_mut(staging.as_mut_ptr(), len) }
        }
    };
    pending.request = Some(core.irecv(src, match_tag, target).map_err(recv_error)?);
    Ok(Op::Recv(recv_pool::boxed(pending)))
}

/// `MPI_Isend`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Isend")]
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Isend", Scope::Comm(comm), || {
        // SAFETY: this call's contract, which is the fast path's.
        let handle = match unsafe { fast_p2p::isend(buf, count, datatype, dest, tag, comm) } {
            Some(handle) => handle?,
            None => fast::general(|| {
                let map = datatype::committed(datatype)?;
                Ok(request::insert_op(isend(&message(buf, count, &map, comm)?, dest, tag)?))
            })?,
        };
        c!(out(request, handle, "request"))
    })
}

/// `MPI_Issend`: completes once the matching receive has started.
///
/// # Safety
/// As [`MPI_Isend`].
#[unsafe(export_name = "PMPI_Issend")]
pub unsafe extern "C" fn MPI_Issend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Issend", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let op = issend(&message(buf, count, &map, comm)?, dest, tag)?;
        c!(out(request, request::insert_op(op), "request"))
    })
}

/// Starts sccemu's synchronous send, as `MPI_Ssend` uses.
pub(super) fn issend(m: &Message<'_>, dest: c_int, tag: c_int) -> MpiResult<Op> {
    let wire = m.comm.wire_tag(tag)?;
    if dest == p2p::PROC_NULL {
        return Ok(Op::Done(Status::EMPTY));
    }
    let to = m.comm.world_rank(dest)?;
    let request = mpi()?.core.issend(to, wire, &m.buf.bytes()?).map_err(send_error)?;
    Ok(Op::Other(Box::new(PendingSsend { request })))
}

/// `MPI_Irecv`.
///
/// # Safety
/// `buf` has room for `count` elements of `datatype` and is not touched until the
/// request completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Irecv")]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Irecv", Scope::Comm(comm), || {
        // SAFETY: this call's contract, which is the fast path's.
        let handle = match unsafe { fast_p2p::irecv(buf, count, datatype, source, tag, comm) } {
            Some(handle) => handle?,
            None => fast::general(|| {
                let map = datatype::committed(datatype)?;
                Ok(request::insert_op(irecv(&message(buf, count, &map, comm)?, &map, source, tag)?))
            })?,
        };
        c!(out(request, handle, "request"))
    })
}

/// `MPI_Sendrecv`.
///
/// # Safety
/// As [`MPI_Send`] and [`MPI_Recv`]; the buffers do not overlap.
#[unsafe(export_name = "PMPI_Sendrecv")]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    source: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Sendrecv", Scope::Comm(comm), || {
        let (smap, rmap) = (datatype::committed(sendtype)?, datatype::committed(recvtype)?);
        let (sm, rm) = (message(sendbuf, sendcount, &smap, comm)?, message(recvbuf, recvcount, &rmap, comm)?);
        let send = isend(&sm, dest, sendtag)?;
        let s = recv_into(&rm, source, recvtag);
        let sent = send.wait();
        let s = s?;
        sent?;
        c!(write_status(status, s, 0))
    })
}

/// `MPI_Sendrecv_replace`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[unsafe(export_name = "PMPI_Sendrecv_replace")]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Sendrecv_replace", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let m = message(buf, count, &map, comm)?;
        // The outgoing data is copied out by the send's start, so the buffer is free.
        let send = isend(&m, dest, sendtag)?;
        let s = recv_into(&m, source, recvtag);
        let sent = send.wait();
        let s = s?;
        sent?;
        c!(write_status(status, s, 0))
    })
}

/// `MPI_Probe`.
///
/// # Safety
/// `status` is an `MPI_Status` or `MPI_STATUS_IGNORE`.
#[unsafe(export_name = "PMPI_Probe")]
pub unsafe extern "C" fn MPI_Probe(source: c_int, tag: c_int, comm: c_int, status: *mut MpiStatus) -> c_int {
    entry("MPI_Probe", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let t = p2p::tag_match(c, tag)?;
        let Some(src) = p2p::source(c, source)? else { return c!(write_status(status, Status::EMPTY, 0)) };
        let s = mpi()?.core.probe(src, t).map_err(recv_error)?;
        c!(write_status(status, p2p::received(c, s), 0))
    })
}

/// `MPI_Iprobe`.
///
/// # Safety
/// `flag` points to an int; `status` is an `MPI_Status` or `MPI_STATUS_IGNORE`.
#[unsafe(export_name = "PMPI_Iprobe")]
pub unsafe extern "C" fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    entry("MPI_Iprobe", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let t = p2p::tag_match(c, tag)?;
        let Some(src) = p2p::source(c, source)? else {
            c!(out(flag, 1, "flag"))?;
            return c!(write_status(status, Status::EMPTY, 0));
        };
        match mpi()?.core.iprobe(src, t).map_err(recv_error)? {
            Some(s) => {
                c!(out(flag, 1, "flag"))?;
                c!(write_status(status, p2p::received(c, s), 0))
            }
            None => c!(out(flag, 0, "flag")),
        }
    })
}
