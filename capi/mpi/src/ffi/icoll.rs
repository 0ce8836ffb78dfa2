//! Nonblocking collective calls: arguments checked as the blocking calls check them
//! (`ffi::coll`), data packed at the start, then `crate::icoll` runs the protocol.
//!
//! Every check happens before the operation takes its communicator's sequence number,
//! so a call refused on every member leaves the members' numbers in step. The input is
//! packed when the call starts (MPI forbids changing it before completion anyway); the
//! result is unpacked into the user's buffer when the request completes.

use std::ffi::{c_int, c_void};

use crate::coll::root_of;
use crate::comm;
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::userop::owned_combiner;
use crate::ffi::{Scope, c, entry};
use crate::icoll::{self, Target};
use crate::request::{self, Pending};

/// Checks the request pointer first (a started operation must reach the caller), then
/// starts the operation and hands its handle out.
fn started(request: *mut c_int, start: impl FnOnce() -> MpiResult<Box<dyn Pending>>) -> MpiResult<()> {
    if request.is_null() {
        return fail(class::ARG, "request is a null pointer");
    }
    let op = start()?;
    c!(out(request, request::insert(op), "request"))
}

/// `MPI_Ibarrier`.
///
/// # Safety
/// `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, request: *mut c_int) -> c_int {
    entry("MPI_Ibarrier", Scope::Comm(comm), || started(request, || icoll::barrier(comm::lookup(comm)?)))
}

/// `MPI_Ibcast`.
///
/// # Safety
/// `buffer` holds `count` elements of `datatype`, left to the library until the
/// request completes; `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Ibcast(
    buffer_: *mut c_void,
    count_: c_int,
    datatype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ibcast", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let map = datatype::committed(datatype)?;
            let root = root_of(c, root)?;
            let buf = buffer(buffer_, count(count_)?, &map)?;
            let len = buf.data_len()?;
            if c.rank == root {
                let data = buf.bytes()?.into_owned();
                return icoll::bcast(c, root, len, Some(data), None);
            }
            let target = Target { base: buffer_ as usize, count: count_, map: map.clone() };
            icoll::bcast(c, root, len, None, Some(target))
        })
    })
}

/// The checked arguments of a reduction: this rank's packed input and, if significant
/// here, where the result goes.
fn reduction_input(
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    map: &datatype::TypeRef,
    result_here: bool,
) -> MpiResult<(Vec<u8>, Option<Target>)> {
    let elems = count(n)?;
    let mine = if in_place(sendbuf) {
        if !result_here {
            return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Ireduce");
        }
        buffer(recvbuf, elems, map)?.bytes()?.into_owned()
    } else {
        buffer(sendbuf, elems, map)?.bytes()?.into_owned()
    };
    if !result_here {
        return Ok((mine, None));
    }
    let out = buffer(recvbuf, elems, map)?.data_len()?;
    if out != mine.len() {
        return fail(class::TRUNCATE, format!("{} bytes reduced into {out}", mine.len()));
    }
    Ok((mine, Some(Target { base: recvbuf as usize, count: n, map: map.clone() })))
}

/// `MPI_Ireduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE` at the root);
/// at the root `recvbuf` has room for as many, left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ireduce", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let root = root_of(c, root)?;
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let (mine, target) = reduction_input((sendbuf, recvbuf), count, &map, c.rank == root)?;
            icoll::reduce(c, Some(root), mine, combine, target)
        })
    })
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE`); `recvbuf` has
/// room for as many, left to the library until the request completes; `request`
/// points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iallreduce", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let (mine, target) = reduction_input((sendbuf, recvbuf), count, &map, true)?;
            icoll::reduce(c, None, mine, combine, target)
        })
    })
}
