//! Fast paths of `MPI_Send`, `MPI_Recv`, `MPI_Isend` and `MPI_Irecv` for contiguous
//! predefined data, as [`super::fast`] does for the one-sided calls: the cheap checks
//! inline (constant datatype table, lock-free communicator lookup, tag and rank
//! ranges), `None` for anything else so that the general path checks and reports it,
//! and otherwise the very calls the general path makes (`Core::send`,
//! `crate::p2p::recv`, `Core::isend`, `Core::irecv`), whose results are returned as
//! they are.
//!
//! Ranks translate through `CommObj::peers`, the remote group of an intercommunicator
//! and the members of an intracommunicator alike, so neither kind costs a test here.

use std::borrow::Cow;
use std::ffi::{c_int, c_void};

use sccemu::{Source, TagMatch};

use crate::comm::{self, CommObj, TAG_UB};
use crate::datatype;
use crate::error::MpiResult;
use crate::ffi::p2p::{MpiStatus, write_status};
use crate::ffi::pending::{send_op, start_isend};
use crate::ffi::recv_pool;
use crate::p2p::{self, ANY_SOURCE, recv_error, send_error};
use crate::request::{self, Op};
use crate::state;

/// The communicator and the byte count of `count` elements of contiguous predefined
/// type `dt`.
#[inline(always)]
fn message(comm: c_int, count: c_int, dt: c_int) -> Option<(&'static CommObj, usize)> {
    let c = comm::get(comm)?;
    // A C int count times at most 16 bytes cannot overflow a usize.
    Some((c, usize::try_from(count).ok()? * datatype::contiguous_size(dt)?))
}

/// A send's checked arguments: the destination's sccemu rank, the wire tag and the data.
///
/// # Safety
/// `buf` holds `count` elements of `dt` for `'b`.
#[inline(always)]
unsafe fn send_args<'b>(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<(u32, u32, &'b [u8])> {
    let (c, bytes) = message(comm, count, dt)?;
    if !(0..=TAG_UB).contains(&tag) {
        return None;
    }
    let to = *c.peers.get(usize::try_from(dest).ok()?)?;
    let data: &[u8] = match bytes {
        0 => &[],
        _ if buf.is_null() => return None,
        // SAFETY: `buf` holds `bytes` bytes for `'b` (this function's contract; non-null).
        _ => unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), bytes) },
    };
    Some((to, c.wire_tag_of_valid(tag), data))
}

/// `MPI_Send`'s fast path (standard mode).
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the entry point's contract).
#[inline(always)]
pub unsafe fn send(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<MpiResult<()>> {
    // SAFETY: the data is read only during the call.
    let (to, wire, data) = unsafe { send_args(buf, count, dt, dest, tag, comm) }?;
    let core = state::mpi().ok()?.core;
    Some(core.send(to, wire, data).map_err(send_error))
}

/// `MPI_Isend`'s fast path: a large message is read in place by its receiver, a
/// smaller one copied out where it does not leave at once (`start_isend`); the new
/// request's handle. The request goes into the table here, not in the entry point,
/// so that it is moved once, not once per wrapper (`Option`, `Result`) on the way.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the entry point's contract).
#[inline(always)]
pub unsafe fn isend(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<MpiResult<c_int>> {
    // SAFETY: MPI leaves the buffer to the library until the send completes, which is as
    // long as `start_isend` needs it (what it does not hand over is copied).
    let (to, wire, data) = unsafe { send_args(buf, count, dt, dest, tag, comm) }?;
    let core = state::mpi().ok()?.core;
    // SAFETY: `data` is the send buffer of this `MPI_Isend` (as above).
    Some(match unsafe { start_isend(core, to, wire, Cow::Borrowed(data)) } {
        Ok(request) => Ok(request::insert_op(send_op(request))),
        Err(e) => Err(send_error(e)),
    })
}

/// A receive's checked arguments: the communicator, what it matches and the buffer.
///
/// # Safety
/// `buf` has room for `count` elements of `dt` that nothing else accesses for `'b`.
#[inline(always)]
unsafe fn recv_args<'b>(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<(&'static CommObj, Source, TagMatch, &'b mut [u8])> {
    let (c, bytes) = message(comm, count, dt)?;
    // What `CommObj::tag_match` gives, for the tags it accepts.
    let matching = match tag {
        -1 => c.tag_match(-1).ok()?,
        0..=TAG_UB => TagMatch::Tag(c.wire_tag_of_valid(tag)),
        _ => return None,
    };
    let src = match source {
        ANY_SOURCE => Source::Any,
        r => Source::Rank(*c.peers.get(usize::try_from(r).ok()?)?),
    };
    let into: &mut [u8] = match bytes {
        0 => &mut [],
        _ if buf.is_null() => return None,
        // SAFETY: `buf` has room for `bytes` bytes that nothing else accesses for `'b`
        // (this function's contract; non-null).
        _ => unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), bytes) },
    };
    Some((c, src, matching, into))
}

/// `MPI_Recv`'s fast path.
///
/// # Safety
/// `buf` has room for `count` elements of `dt`; `status` is an `MPI_Status` or
/// `MPI_STATUS_IGNORE` (the entry point's contract).
#[inline(always)]
pub unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut MpiStatus,
) -> Option<MpiResult<()>> {
    // SAFETY: the buffer is written only during the call.
    let (c, src, matching, into) = unsafe { recv_args(buf, count, dt, source, tag, comm) }?;
    // SAFETY: `status` is an `MPI_Status` or ignored (this function's contract).
    Some(p2p::recv(c, src, matching, into).and_then(|s| unsafe { write_status(status, s, 0) }))
}

/// `MPI_Irecv`'s fast path: receives straight into the user's buffer, as the general
/// path does for contiguous data; the new request's handle (as [`isend`]'s).
///
/// # Safety
/// `buf` has room for `count` elements of `dt` and is not touched until the request
/// completes (the entry point's contract).
#[inline(always)]
pub unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<MpiResult<c_int>> {
    // SAFETY: MPI leaves the buffer to the library until the request completes, and the
    // request that borrows it lives in the `PendingRecv` that completes it.
    let (c, src, matching, into) = unsafe { recv_args::<'static>(buf, count, dt, source, tag, comm) }?;
    let core = state::mpi().ok()?.core;
    let direct = (into.as_mut_ptr() as usize, into.len());
    Some(match core.irecv(src, matching, into) {
        Ok(request) => Ok(request::insert_op(Op::Recv(recv_pool::boxed_direct(request, c, direct)))),
        Err(e) => Err(recv_error(e)),
    })
}
