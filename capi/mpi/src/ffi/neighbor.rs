//! Neighbourhood collectives on a communicator's topology: `MPI_Neighbor_allgather`,
//! `MPI_Neighbor_allgatherv`, `MPI_Neighbor_alltoall`, `MPI_Neighbor_alltoallv` and
//! `MPI_Neighbor_alltoallw`, and the checks of their arguments, which their
//! nonblocking forms (`super::icoll::neighbor`) share.
//!
//! The neighbours are the topology's, in MPI's order (`crate::topology::neighbors`).
//! Each call's arguments are checked and turned into a [`Plan`] (blocks packed, one
//! target per source) by one of the starters below, which starts the exchange of
//! `super::icoll::neighbor`; a blocking call then waits for it. So the blocking and
//! the nonblocking forms run one protocol, and share the communicator's sequence of
//! nonblocking-collective numbers (every member calls collectives in the same order),
//! which keeps their messages apart from user messages and from each other.

use std::ffi::{c_int, c_void};

use crate::comm;
use crate::datatype::{self, TypeRef};
use crate::error::MpiResult;
use crate::ffi::buffer::Buffer;
use crate::ffi::coll::{buffer, count};
use crate::ffi::icoll::neighbor::{self as hood, Plan, neighbors};
use crate::ffi::pending::UserBuffer;
use crate::ffi::vcoll::{WSide, layout, vbuf};
use crate::ffi::{Scope, entry};
use crate::request::Pending;
use crate::topology::Neighbors;

/// Per-block counts and displacements, in elements.
type Layout = (Vec<usize>, Vec<usize>);

/// Blocks of `count` elements, block `i` from element `i * count`, for `n` neighbours.
fn uniform(n: usize, per: c_int) -> MpiResult<Layout> {
    let per = count(per)?;
    Ok((vec![per; n], (0..n).map(|i| i * per).collect()))
}

/// `b` (of `map`) kept for the operation's completion; `None` if empty.
fn target(b: Buffer<'_>, map: &TypeRef) -> Option<UserBuffer> {
    // `buffer` checked that the element count fits a C int.
    let count = c_int::try_from(b.count()).unwrap_or(c_int::MAX);
    (count > 0).then(|| UserBuffer { base: b.base() as usize, count, map: map.clone() })
}

/// A buffer argument: its address, and, per block, counts and displacements in
/// elements of one type.
type VSide<'a> = (*const c_void, &'a Layout, c_int);

/// The packed blocks of `side`, one per element of its layout.
fn packed((p, lay, datatype): VSide<'_>) -> MpiResult<Vec<Vec<u8>>> {
    let map = datatype::committed(datatype)?;
    let v = vbuf(p, lay, &map)?;
    (0..lay.0.len()).map(|j| Ok(v.block(j)?.bytes()?.into_owned())).collect()
}

/// The targets of `side`, one per element of its layout.
fn targets((p, lay, datatype): VSide<'_>) -> MpiResult<Vec<Option<UserBuffer>>> {
    let map = datatype::committed(datatype)?;
    let v = vbuf(p, lay, &map)?;
    (0..lay.0.len()).map(|k| Ok(target(v.block(k)?, &map))).collect()
}

/// Starts the exchange on `comm`: `receives` and `sends` give the targets and the
/// blocks from the neighbours (receive side first: its errors come first, as in the
/// other collectives).
fn begin(
    comm: c_int,
    receives: impl FnOnce(&Neighbors) -> MpiResult<Vec<Option<UserBuffer>>>,
    sends: impl FnOnce(&Neighbors) -> MpiResult<Vec<Vec<u8>>>,
) -> MpiResult<Box<dyn Pending>> {
    let c = comm::lookup_intra(comm)?;
    let neighbors = neighbors(c)?;
    let targets = receives(&neighbors)?;
    let blocks = sends(&neighbors)?;
    hood::start(c, Plan { neighbors, blocks, targets })
}

/// The same `count` elements of `datatype` at `p` to every destination.
fn same(n: &Neighbors, (p, k, datatype): (*const c_void, c_int, c_int)) -> MpiResult<Vec<Vec<u8>>> {
    let map = datatype::committed(datatype)?;
    let data = buffer(p, count(k)?, &map)?.bytes()?.into_owned();
    Ok(vec![data; n.destinations.len()])
}

/// Starts `MPI_(I)neighbor_allgather` (`send`: buffer, count, type; `recv`: buffer,
/// count per source, type).
pub(super) fn allgather(
    send: (*const c_void, c_int, c_int),
    (recvbuf, recvcount, recvtype): (*const c_void, c_int, c_int),
    comm: c_int,
) -> MpiResult<Box<dyn Pending>> {
    begin(comm, |n| targets((recvbuf, &uniform(n.sources.len(), recvcount)?, recvtype)), |n| same(n, send))
}

/// Starts `MPI_(I)neighbor_allgatherv` (`recv`: buffer, counts, displacements, type).
///
/// # Safety
/// `recvcounts` and `displs` hold one int per source.
pub(super) unsafe fn allgatherv(
    send: (*const c_void, c_int, c_int),
    (recvbuf, recvcounts, displs, recvtype): VArgs,
    comm: c_int,
) -> MpiResult<Box<dyn Pending>> {
    begin(
        comm,
        // SAFETY: this function's contract.
        |n| targets((recvbuf, &unsafe { layout(recvcounts, displs, n.sources.len() as u32) }?, recvtype)),
        |n| same(n, send),
    )
}

/// Starts `MPI_(I)neighbor_alltoall` (each side: buffer, count per block, type).
pub(super) fn alltoall(
    (sendbuf, sendcount, sendtype): (*const c_void, c_int, c_int),
    (recvbuf, recvcount, recvtype): (*const c_void, c_int, c_int),
    comm: c_int,
) -> MpiResult<Box<dyn Pending>> {
    begin(
        comm,
        |n| targets((recvbuf, &uniform(n.sources.len(), recvcount)?, recvtype)),
        |n| packed((sendbuf, &uniform(n.destinations.len(), sendcount)?, sendtype)),
    )
}

/// One side of an alltoallv: buffer, counts, displacements, type.
pub(super) type VArgs = (*const c_void, *const c_int, *const c_int, c_int);

/// Starts `MPI_(I)neighbor_alltoallv`.
///
/// # Safety
/// The send arrays hold one int per destination, the receive arrays one per source.
pub(super) unsafe fn alltoallv(
    (sendbuf, sendcounts, sdispls, sendtype): VArgs,
    (recvbuf, recvcounts, rdispls, recvtype): VArgs,
    comm: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let receives = |n: &Neighbors| {
        // SAFETY: this function's contract.
        let lay = unsafe { layout(recvcounts, rdispls, n.sources.len() as u32) }?;
        targets((recvbuf, &lay, recvtype))
    };
    let sends = |n: &Neighbors| {
        // SAFETY: this function's contract.
        let lay = unsafe { layout(sendcounts, sdispls, n.destinations.len() as u32) }?;
        packed((sendbuf, &lay, sendtype))
    };
    begin(comm, receives, sends)
}

/// One side of an alltoallw: buffer, counts, byte displacements, types.
pub(super) type WArgs = (*const c_void, *const c_int, *const isize, *const c_int);

/// Starts `MPI_(I)neighbor_alltoallw`.
///
/// # Safety
/// The send arrays hold one element per destination, the receive arrays one per
/// source.
pub(super) unsafe fn alltoallw(
    (sendbuf, sendcounts, sdispls, sendtypes): WArgs,
    (recvbuf, recvcounts, rdispls, recvtypes): WArgs,
    comm: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let receives = |n: &Neighbors| {
        // SAFETY: this function's contract.
        w_targets(&unsafe {
            WSide::with_aint(recvbuf, recvcounts, rdispls, recvtypes, n.sources.len() as u32)
        }?)
    };
    let sends = |n: &Neighbors| {
        let len = n.destinations.len() as u32;
        // SAFETY: this function's contract.
        w_blocks(&unsafe { WSide::with_aint(sendbuf, sendcounts, sdispls, sendtypes, len) }?)
    };
    begin(comm, receives, sends)
}

/// The targets of an alltoallw's receive side, one per block.
pub(super) fn w_targets(side: &WSide) -> MpiResult<Vec<Option<UserBuffer>>> {
    (0..side.maps.len())
        .map(|k| match &side.maps[k] {
            Some(map) => Ok(target(side.block(k)?, map)),
            None => Ok(None),
        })
        .collect()
}

/// The packed blocks of an alltoallw's send side, one per block.
pub(super) fn w_blocks(side: &WSide) -> MpiResult<Vec<Vec<u8>>> {
    (0..side.maps.len()).map(|j| Ok(side.block(j)?.bytes()?.into_owned())).collect()
}

/// Runs a neighbourhood collective to its end.
fn finish(op: MpiResult<Box<dyn Pending>>) -> MpiResult<()> {
    op?.wait().map(drop)
}

/// `MPI_Neighbor_allgather`: the same block to every destination; block `k` of
/// `recvbuf` from source `k`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype`; `recvbuf` has room for one
/// block of `recvcount` elements of `recvtype` per source.
#[unsafe(export_name = "PMPI_Neighbor_allgather")]
pub unsafe extern "C" fn MPI_Neighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Neighbor_allgather", Scope::Comm(comm), || {
        finish(allgather((sendbuf, sendcount, sendtype), (recvbuf, recvcount, recvtype), comm))
    })
}

/// `MPI_Neighbor_allgatherv`: as [`MPI_Neighbor_allgather`], block `k` being
/// `recvcounts[k]` elements at element `displs[k]`.
///
/// # Safety
/// As [`MPI_Neighbor_allgather`]; `recvcounts` and `displs` hold one int per source.
#[unsafe(export_name = "PMPI_Neighbor_allgatherv")]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Neighbor_allgatherv", Scope::Comm(comm), || {
        let recv = (recvbuf.cast_const(), recvcounts, displs, recvtype);
        // SAFETY: this call's contract.
        finish(unsafe { allgatherv((sendbuf, sendcount, sendtype), recv, comm) })
    })
}

/// `MPI_Neighbor_alltoall`: block `j` of `sendbuf` to destination `j`, block `k` of
/// `recvbuf` from source `k`.
///
/// # Safety
/// `sendbuf` holds a block of `sendcount` elements of `sendtype` per destination;
/// `recvbuf` has room for a block of `recvcount` elements of `recvtype` per source.
#[unsafe(export_name = "PMPI_Neighbor_alltoall")]
pub unsafe extern "C" fn MPI_Neighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Neighbor_alltoall", Scope::Comm(comm), || {
        finish(alltoall((sendbuf, sendcount, sendtype), (recvbuf, recvcount, recvtype), comm))
    })
}

/// `MPI_Neighbor_alltoallv`: as [`MPI_Neighbor_alltoall`], with per-neighbour counts
/// and displacements (in elements) on both sides.
///
/// # Safety
/// As [`MPI_Neighbor_alltoall`]; `sendcounts` and `sdispls` hold one int per
/// destination, `recvcounts` and `rdispls` one per source.
#[unsafe(export_name = "PMPI_Neighbor_alltoallv")]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Neighbor_alltoallv", Scope::Comm(comm), || {
        let (send, recv) =
            ((sendbuf, sendcounts, sdispls, sendtype), (recvbuf.cast_const(), recvcounts, rdispls, recvtype));
        // SAFETY: this call's contract.
        finish(unsafe { alltoallv(send, recv, comm) })
    })
}

/// `MPI_Neighbor_alltoallw`: as [`MPI_Neighbor_alltoallv`], with a datatype per block
/// on each side and displacements in bytes (`MPI_Aint`, which may be negative).
///
/// # Safety
/// The send arrays hold one element per destination, the receive arrays one per
/// source; `sendbuf` holds every block they describe, and `recvbuf` has room for every
/// block they describe.
#[unsafe(export_name = "PMPI_Neighbor_alltoallw")]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const isize,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const isize,
    recvtypes: *const c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Neighbor_alltoallw", Scope::Comm(comm), || {
        let (send, recv) = (
            (sendbuf, sendcounts, sdispls, sendtypes),
            (recvbuf.cast_const(), recvcounts, rdispls, recvtypes),
        );
        // SAFETY: this call's contract.
        finish(unsafe { alltoallw(send, recv, comm) })
    })
}
