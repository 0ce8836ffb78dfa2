//! Nonblocking collective calls: arguments checked as the blocking calls check them
//! (`ffi::coll`, `ffi::vcoll`, `ffi::userop`), data packed at the start, then a
//! protocol on the engine of [`machine`] runs the operation (in `ffi` because its
//! requests hold the user's buffers, as the point-to-point ones do).
//!
//! Entry points: here `MPI_Ibarrier`, `MPI_Ibcast` and the reductions (`MPI_Ireduce`,
//! `MPI_Iallreduce`, `MPI_Ireduce_scatter_block`, `MPI_Ireduce_scatter`, `MPI_Iscan`,
//! `MPI_Iexscan`);
//! [`data`] the equal-block data calls (`MPI_Igather`, `MPI_Iallgather`,
//! `MPI_Iscatter`, `MPI_Ialltoall`); [`vdata`] their v-forms (`MPI_Igatherv`,
//! `MPI_Iscatterv`, `MPI_Iallgatherv`, `MPI_Ialltoallv`, `MPI_Ialltoallw`); [`neighbor`] the
//! neighbourhood collectives (`MPI_Ineighbor_*`, and the blocking ones' protocol too);
//! [`idup`] `MPI_Comm_idup`. On an intercommunicator, `MPI_Ibarrier`, `MPI_Ibcast`,
//! `MPI_Ireduce`, `MPI_Iallreduce`, `MPI_Igather`, `MPI_Iallgather`, `MPI_Iscatter`,
//! `MPI_Ialltoall`, `MPI_Ireduce_scatter_block` and `MPI_Ireduce_scatter` take their arguments by MPI's intercommunicator rules
//! ([`inter_args`]) and run [`inter`]'s protocol, and `MPI_Igatherv`, `MPI_Iscatterv`,
//! `MPI_Iallgatherv`, `MPI_Ialltoallv` and `MPI_Ialltoallw` a direct exchange with the
//! remote group ([`inter_v`]); the scans refuse one with `MPI_ERR_COMM`
//! (`comm::lookup_intra`), as MPI defines none there.
//! Protocols, by mechanism:
//! [`tree`] (barrier, broadcast tree, to a root and back), [`spread`] (blocks exchanged
//! directly), [`chain`] (prefix reductions).
//!
//! Every check happens before the operation takes its communicator's sequence number,
//! so a call refused on every member leaves the members' numbers in step. The input is
//! packed when the call starts (MPI forbids changing it before completion anyway); the
//! result is unpacked into the user's buffer when the request completes. User ops are
//! folded in rank order, as the blocking reductions fold them.

pub mod chain;
pub mod data;
pub mod idup;
pub mod inter;
pub mod inter_args;
pub mod inter_v;
pub mod machine;
pub mod neighbor;
pub mod spread;
pub mod tree;
pub mod vdata;

use std::ffi::{c_int, c_void};

use crate::coll::root_of;
use crate::comm;
use crate::datatype::{self, TypeRef};
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::pending::UserBuffer;
use crate::ffi::userop::owned_combiner;
use crate::ffi::{Scope, c, entry};
use crate::request::{self, Pending};

use self::spread::{Delivery, Exchange};

/// Checks the request pointer first (a started operation must reach the caller), then
/// starts the operation and hands its handle out (the nonblocking file calls' too).
pub(crate) fn started(
    request: *mut c_int,
    start: impl FnOnce() -> MpiResult<Box<dyn Pending>>,
) -> MpiResult<()> {
    if request.is_null() {
        return fail(class::ARG, "request is a null pointer");
    }
    let op = start()?;
    c!(out(request, request::insert(op), "request"))
}

/// The user's buffer `b` (at `p`, of `map`), already checked, kept for the operation's
/// completion.
fn keep(p: *const c_void, b: &Buffer<'_>, map: &TypeRef) -> UserBuffer {
    // `buffer` checked that the element count fits a C int.
    let count = c_int::try_from(b.count()).unwrap_or(c_int::MAX);
    UserBuffer { base: p as usize, count, map: map.clone() }
}

/// `n` elements of `map` at `p`, checked as `buffer` checks them, kept for the
/// operation's completion.
fn kept(p: *const c_void, n: usize, map: &TypeRef) -> MpiResult<UserBuffer> {
    Ok(keep(p, &buffer(p, n, map)?, map))
}

/// `MPI_Ibarrier`.
///
/// # Safety
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ibarrier")]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, request: *mut c_int) -> c_int {
    entry("MPI_Ibarrier", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                return inter_args::barrier(c);
            }
            tree::barrier(c)
        })
    })
}

/// `MPI_Ibcast`.
///
/// # Safety
/// `buffer` holds `count` elements of `datatype`, left to the library until the
/// request completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ibcast")]
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
            if c.is_inter() {
                return inter_args::bcast(c, buffer_, count_, datatype, root);
            }
            let map = datatype::committed(datatype)?;
            let root = root_of(c, root)?;
            let buf = buffer(buffer_, count(count_)?, &map)?;
            let len = buf.data_len()?;
            if c.rank == root {
                let data = buf.bytes()?.into_owned();
                return tree::bcast(c, root, len, Some(data), None);
            }
            let target = UserBuffer { base: buffer_ as usize, count: count_, map: map.clone() };
            tree::bcast(c, root, len, None, Some(target))
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
#[unsafe(export_name = "PMPI_Ireduce")]
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
            if c.is_inter() {
                return inter_args::reduce(c, (sendbuf, recvbuf), count, (datatype, op), root);
            }
            let root = root_of(c, root)?;
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let (mine, target) = reduction_input((sendbuf, recvbuf), count, &map, c.rank == root)?;
            tree::collect(c, Some(root), mine, Some(combine), target)
        })
    })
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE`); `recvbuf` has
/// room for as many, left to the library until the request completes; `request`
/// points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iallreduce")]
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
            if c.is_inter() {
                return inter_args::allreduce(c, (sendbuf, recvbuf), count, (datatype, op));
            }
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let (mine, target) = reduction_input((sendbuf, recvbuf), count, &map, true)?;
            tree::collect(c, None, mine, Some(combine), target)
        })
    })
}

/// `MPI_Ireduce_scatter_block`: a direct exchange ([`spread`]) brings rank `i` block
/// `i` of every input, which it folds in rank order.
///
/// # Safety
/// `sendbuf` holds `size * recvcount` elements of `datatype` (or is `MPI_IN_PLACE`,
/// the input then being in `recvbuf`); `recvbuf` has room for `recvcount`, and is left
/// to the library until the request completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ireduce_scatter_block")]
pub unsafe extern "C" fn MPI_Ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ireduce_scatter_block", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let n = c.size() as usize;
            if c.is_inter() {
                let counts = vec![count(recvcount)?; n];
                return inter_args::reduce_scatter(c, (sendbuf, recvbuf), &counts, (datatype, op));
            }
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let per = count(recvcount)?;
            let recv = buffer(recvbuf, per, &map)?;
            // In place, the input is n times the receive count, from the same address.
            let input = if in_place(sendbuf) {
                recv.widened(n)?.bytes()?.into_owned()
            } else {
                buffer(sendbuf, per * n, &map)?.bytes()?.into_owned()
            };
            let block = recv.data_len()?;
            if input.len() != block * n {
                return fail(
                    class::TRUNCATE,
                    format!("{} bytes reduced into {n} blocks of {block}", input.len()),
                );
            }
            let mut x = Exchange::new(n, true);
            x.from = vec![Some(block); n];
            x.equal_blocks(input);
            x.delivery = Delivery::Fold { target: keep(recvbuf, &recv, &map), combine };
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Ireduce_scatter`: as [`MPI_Ireduce_scatter_block`], rank `i`'s block being
/// `recvcounts[i]` elements long.
///
/// # Safety
/// `recvcounts` holds one count per rank; `sendbuf` holds their sum of elements of
/// `datatype` (or is `MPI_IN_PLACE`, the input then being in `recvbuf`); `recvbuf` has
/// room for this rank's count (for the sum, in place), and is left to the library until
/// the request completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ireduce_scatter")]
pub unsafe extern "C" fn MPI_Ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ireduce_scatter", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            let n = c.size() as usize;
            let counts = c!(array(recvcounts, c.size() as c_int, "recvcounts"))?
                .iter()
                .map(|&k| count(k))
                .collect::<MpiResult<Vec<usize>>>()?;
            if c.is_inter() {
                return inter_args::reduce_scatter(c, (sendbuf, recvbuf), &counts, (datatype, op));
            }
            let map = datatype::committed(datatype)?;
            let combine = owned_combiner(op, map.clone(), datatype)?;
            let total: usize = counts.iter().sum();
            let recv = buffer(recvbuf, counts[c.rank as usize], &map)?;
            let input = if in_place(sendbuf) {
                buffer(recvbuf, total, &map)?.bytes()?.into_owned()
            } else {
                buffer(sendbuf, total, &map)?.bytes()?.into_owned()
            };
            let element = input.len().checked_div(total).unwrap_or(0);
            let mut x = Exchange::new(n, true);
            x.from = vec![Some(recv.data_len()?); n];
            let mut at = 0;
            for (r, &k) in counts.iter().enumerate() {
                x.to[r] = Some(at..at + k * element);
                at += k * element;
            }
            x.data = input;
            x.delivery = Delivery::Fold { target: keep(recvbuf, &recv, &map), combine };
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Iscan` (`exclusive: false`) and `MPI_Iexscan` (`true`), on [`chain`].
fn prefix(
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    exclusive: bool,
) -> MpiResult<Box<dyn Pending>> {
    let c = comm::lookup_intra(comm)?;
    let map = datatype::committed(datatype)?;
    let combine = owned_combiner(op, map.clone(), datatype)?;
    let (mine, target) = reduction_input((sendbuf, recvbuf), n, &map, true)?;
    // Exscan leaves rank 0's receive buffer untouched.
    let target = target.filter(|_| !exclusive || c.rank != 0);
    chain::scan(c, mine, combine, exclusive, target)
}

/// `MPI_Iscan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE`); `recvbuf` has
/// room for as many, left to the library until the request completes; `request`
/// points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iscan")]
pub unsafe extern "C" fn MPI_Iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iscan", Scope::Comm(comm), || {
        started(request, || prefix((sendbuf, recvbuf), count, datatype, op, comm, false))
    })
}

/// `MPI_Iexscan`: rank 0's `recvbuf` is left untouched.
///
/// # Safety
/// As [`MPI_Iscan`].
#[unsafe(export_name = "PMPI_Iexscan")]
pub unsafe extern "C" fn MPI_Iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iexscan", Scope::Comm(comm), || {
        started(request, || prefix((sendbuf, recvbuf), count, datatype, op, comm, true))
    })
}
