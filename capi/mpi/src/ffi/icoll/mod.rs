//! Nonblocking collective calls (`MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`,
//! `MPI_Iallreduce`, `MPI_Igather`, `MPI_Iallgather`): arguments checked as the
//! blocking calls check them (`ffi::coll`), data packed at the start, then `machine`
//! runs the protocol (in `ffi` because its requests hold the user's buffers, as the
//! point-to-point ones do).
//!
//! Every check happens before the operation takes its communicator's sequence number,
//! so a call refused on every member leaves the members' numbers in step. The input is
//! packed when the call starts (MPI forbids changing it before completion anyway); the
//! result is unpacked into the user's buffer when the request completes.

pub mod machine;

use std::ffi::{c_int, c_void};

use crate::coll::{block_of, root_of, same_block};
use crate::comm;
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::pending::UserBuffer;
use crate::ffi::userop::owned_combiner;
use crate::ffi::{Scope, c, entry};
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
    entry("MPI_Ibarrier", Scope::Comm(comm), || started(request, || machine::barrier(comm::lookup(comm)?)))
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
                return machine::bcast(c, root, len, Some(data), None);
            }
            let target = UserBuffer { base: buffer_ as usize, count: count_, map: map.clone() };
            machine::bcast(c, root, len, None, Some(target))
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
) -> MpiResult<(Vec<u8>, Option<UserBuffer>)> {
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
    Ok((mine, Some(UserBuffer { base: recvbuf as usize, count: n, map: map.clone() })))
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
            machine::collect(c, Some(root), mine, Some(combine), target)
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
            machine::collect(c, None, mine, Some(combine), target)
        })
    })
}

/// The checked arguments of a gather: this rank's packed block and, if the result is
/// significant here, where it goes (`size * recvcount` elements of `recvtype`).
fn gather_input(
    c: &crate::comm::CommObj,
    (sendbuf, sendcount, sendtype): (*const c_void, c_int, c_int),
    (recvbuf, recvcount, recvtype): (*mut c_void, c_int, c_int),
    result_here: bool,
) -> MpiResult<(Vec<u8>, Option<UserBuffer>)> {
    let rmap = if result_here { Some(datatype::committed(recvtype)?) } else { None };
    let recv = match &rmap {
        Some(m) => Some(buffer(recvbuf, count(recvcount)? * c.size() as usize, m)?),
        None => None,
    };
    let mine = match (in_place(sendbuf), &recv) {
        (true, Some(r)) => block_of(r, c.rank, c.size())?,
        (true, None) => return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Igather"),
        (false, _) => {
            let smap = datatype::committed(sendtype)?;
            buffer(sendbuf, count(sendcount)?, &smap)?.bytes()?.into_owned()
        }
    };
    let (Some(r), Some(map)) = (&recv, &rmap) else { return Ok((mine, None)) };
    same_block(mine.len(), r, c.size())?;
    // `buffer` checked that the element count fits a C int.
    let elems = c_int::try_from(r.count()).unwrap_or(c_int::MAX);
    Ok((mine, Some(UserBuffer { base: recvbuf as usize, count: elems, map: map.clone() })))
}

/// `MPI_Igather`.
///
/// # Safety
/// As `MPI_Gather`; at the root `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Igather", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let root = root_of(c, root)?;
            let send = (sendbuf, sendcount, sendtype);
            let (mine, target) = gather_input(c, send, (recvbuf, recvcount, recvtype), c.rank == root)?;
            machine::collect(c, Some(root), mine, None, target)
        })
    })
}

/// `MPI_Iallgather`.
///
/// # Safety
/// As `MPI_Allgather`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iallgather", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let send = (sendbuf, sendcount, sendtype);
            let (mine, target) = gather_input(c, send, (recvbuf, recvcount, recvtype), true)?;
            machine::collect(c, None, mine, None, target)
        })
    })
}
