//! The v-forms: `MPI_Igatherv`, `MPI_Iscatterv`, `MPI_Iallgatherv` and
//! `MPI_Ialltoallv`, each a direct exchange of per-rank blocks ([`super::spread`]);
//! and `MPI_Ialltoallw`, whose blocks each have a type of their own: the exchange of
//! the neighbourhood collectives ([`super::neighbor`]) over every rank.
//!
//! Counts and displacements are checked as the blocking v-calls check them
//! (`ffi::vcoll`: a negative count is `MPI_ERR_COUNT`, a negative displacement
//! `MPI_ERR_ARG`; a buffer spans the blocks with data, so an empty block's
//! displacement is never used) and copied when the call starts, so the caller's arrays
//! are free again at once. As in the blocking calls, a block received may be shorter
//! than its receive count (a longer one is `MPI_ERR_TRUNCATE`), and arguments
//! significant at the root only are not looked at elsewhere. Unlike them, a call whose
//! arguments are refused on some members only does not warn the others (no member
//! takes part in an operation its call refused; the others' operation then cannot
//! complete, as with any mismatched nonblocking collective). On an intercommunicator
//! they go to [`super::inter_v`].

use std::ffi::{c_int, c_void};

use crate::coll::root_of;
use crate::comm;
use crate::datatype::{self, TypeRef};
use crate::error::{MpiResult, class, fail};
use crate::ffi::coll::{in_place, missing};
use crate::ffi::neighbor::{w_blocks, w_targets};
use crate::ffi::vcoll::{WSide, layout, map_of, plain, vbuf};
use crate::ffi::{Scope, entry};
use crate::topology::Neighbors;
use crate::vcoll::VBuf;

use super::neighbor::{self, Plan};
use super::spread::{self, Delivery, Exchange};
use super::{inter_v, keep, started};

/// Per rank, the bytes of its block of `v`: what may come from it.
pub(super) fn room(v: &VBuf<'_, '_>) -> MpiResult<Vec<Option<usize>>> {
    (0..v.counts.len()).map(|r| v.block(r)?.data_len().map(Some)).collect()
}

/// The v-buffer `v` at `p`, of `map`, kept for the operation's completion, each rank's
/// block to its span (`skip`: this rank's own, left where it is, in place).
pub(super) fn delivery(p: *const c_void, v: &VBuf<'_, '_>, map: &TypeRef, skip: Option<usize>) -> Delivery {
    let mut spans: Vec<_> = v.counts.iter().zip(v.displs).map(|(&k, &d)| Some((d, k))).collect();
    if let Some(me) = skip {
        spans[me] = None;
    }
    Delivery::Place { target: keep(p, &v.buf, map), spans }
}

/// `MPI_Igatherv`: each rank sends its block to the root directly.
///
/// # Safety
/// As `MPI_Gatherv`; at the root `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Igatherv")]
pub unsafe extern "C" fn MPI_Igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Igatherv", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let recv = (recvbuf.cast_const(), recvcounts, displs, recvtype);
                // SAFETY: this call's contract, the arrays of the remote group's size.
                return unsafe { inter_v::gatherv(c, (sendbuf, sendcount, sendtype), recv, root) };
            }
            let root = root_of(c, root)?;
            let (me, n, at_root) = (c.rank as usize, c.size() as usize, c.rank == root);
            if in_place(sendbuf) && !at_root {
                return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Igatherv");
            }
            let smap = map_of(sendbuf, sendtype)?;
            let send = plain(sendbuf, sendcount, smap.as_ref())?;
            let mut x = Exchange::new(n, false);
            if let Some(s) = send {
                x.push(root as usize, &s.bytes()?);
            }
            if !at_root {
                return spread::exchange(c, x);
            }
            let rmap = datatype::committed(recvtype)?;
            // SAFETY: at the root, this call's contract: `recvcounts` and `displs` hold
            // `size` ints.
            let lay = unsafe { layout(recvcounts, displs, c.size()) }?;
            let recv = vbuf(recvbuf, &lay, &rmap)?;
            x.from = room(&recv)?;
            x.delivery = delivery(recvbuf, &recv, &rmap, send.is_none().then_some(me));
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Iscatterv`: the root sends block `r` to each rank `r` directly.
///
/// # Safety
/// As `MPI_Scatterv`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iscatterv")]
pub unsafe extern "C" fn MPI_Iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iscatterv", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let (send, recv) =
                    ((sendbuf, sendcounts, displs, sendtype), (recvbuf.cast_const(), recvcount, recvtype));
                // SAFETY: this call's contract, the arrays of the remote group's size.
                return unsafe { inter_v::scatterv(c, send, recv, root) };
            }
            let root = root_of(c, root)?;
            let (me, n, at_root) = (c.rank as usize, c.size() as usize, c.rank == root);
            if in_place(recvbuf) && !at_root {
                return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Iscatterv");
            }
            // In place at the root, it keeps its block where it is.
            let rmap = map_of(recvbuf, recvtype)?;
            let recv = plain(recvbuf, recvcount, rmap.as_ref())?;
            let mut x = Exchange::new(n, false);
            if at_root {
                let smap = datatype::committed(sendtype)?;
                // SAFETY: at the root, this call's contract: `sendcounts` and `displs`
                // hold `size` ints.
                let lay = unsafe { layout(sendcounts, displs, c.size()) }?;
                let send = vbuf(sendbuf, &lay, &smap)?;
                for r in (0..n).filter(|&r| r != me || recv.is_some()) {
                    x.push(r, &send.block(r)?.bytes()?);
                }
            }
            if let (Some(r), Some(map)) = (&recv, &rmap) {
                x.from[root as usize] = Some(r.data_len()?);
                let mut spans = vec![None; n];
                spans[root as usize] = Some((0, r.count()));
                x.delivery = Delivery::Place { target: keep(recvbuf, r, map), spans };
            }
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Iallgatherv`: each rank sends its block to every other directly.
///
/// # Safety
/// As `MPI_Allgatherv`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iallgatherv")]
pub unsafe extern "C" fn MPI_Iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Iallgatherv", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let recv = (recvbuf.cast_const(), recvcounts, displs, recvtype);
                // SAFETY: this call's contract, the arrays of the remote group's size.
                return unsafe { inter_v::allgatherv(c, (sendbuf, sendcount, sendtype), recv) };
            }
            let (me, n) = (c.rank as usize, c.size() as usize);
            let smap = map_of(sendbuf, sendtype)?;
            let send = plain(sendbuf, sendcount, smap.as_ref())?;
            let rmap = datatype::committed(recvtype)?;
            // SAFETY: this call's contract: `recvcounts` and `displs` hold `size` ints.
            let lay = unsafe { layout(recvcounts, displs, c.size()) }?;
            let recv = vbuf(recvbuf, &lay, &rmap)?;
            // In place, this rank's block is in the receive buffer already.
            let mine = match &send {
                Some(s) => s.bytes()?.into_owned(),
                None => recv.block(me)?.bytes()?.into_owned(),
            };
            let mut x = Exchange::new(n, false);
            x.data = mine;
            x.to = vec![Some(0..x.data.len()); n];
            if send.is_none() {
                x.to[me] = None;
            }
            x.from = room(&recv)?;
            x.delivery = delivery(recvbuf, &recv, &rmap, send.is_none().then_some(me));
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Ialltoallv`: every rank sends its block `r` to each rank `r` directly.
///
/// # Safety
/// As `MPI_Alltoallv`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ialltoallv")]
pub unsafe extern "C" fn MPI_Ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ialltoallv", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let (send, recv) = (
                    (sendbuf, sendcounts, sdispls, sendtype),
                    (recvbuf.cast_const(), recvcounts, rdispls, recvtype),
                );
                // SAFETY: this call's contract, the arrays of the remote group's size.
                return unsafe { inter_v::alltoallv(c, send, recv) };
            }
            let n = c.size() as usize;
            if in_place(recvbuf) {
                return Err(missing());
            }
            let smap = map_of(sendbuf, sendtype)?;
            // In place, the send counts, displacements and type are ignored.
            let slay = match smap {
                // SAFETY: this call's contract: `sendcounts` and `sdispls` hold `size` ints.
                Some(_) => unsafe { layout(sendcounts, sdispls, c.size()) }?,
                None => Default::default(),
            };
            let send = smap.as_ref().map(|m| vbuf(sendbuf, &slay, m)).transpose()?;
            let rmap = datatype::committed(recvtype)?;
            // SAFETY: this call's contract: `recvcounts` and `rdispls` hold `size` ints.
            let rlay = unsafe { layout(recvcounts, rdispls, c.size()) }?;
            let recv = vbuf(recvbuf, &rlay, &rmap)?;
            // In place, the blocks to send are the receive buffer's, as it is now.
            let from = send.as_ref().unwrap_or(&recv);
            let mut x = Exchange::new(n, false);
            for r in 0..n {
                x.push(r, &from.block(r)?.bytes()?);
            }
            x.from = room(&recv)?;
            x.delivery = delivery(recvbuf, &recv, &rmap, None);
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Ialltoallw`: as [`MPI_Ialltoallv`], with a type per block and displacements in
/// bytes; each block must be exactly its receive block's length (MPI asks for equal
/// type signatures). In place, the blocks sent are the receive buffer's as it is now.
///
/// # Safety
/// As `MPI_Alltoallw`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ialltoallw")]
pub unsafe extern "C" fn MPI_Ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ialltoallw", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let send = (sendbuf, sendcounts, sdispls, sendtypes);
                let recv = (recvbuf.cast_const(), recvcounts, rdispls, recvtypes);
                // SAFETY: this call's contract, the arrays of the remote group's size.
                return unsafe { inter_v::alltoallw(c, send, recv) };
            }
            let n = c.size();
            // SAFETY: this call's contract.
            let recv = unsafe { WSide::new(recvbuf, recvcounts, rdispls, recvtypes, n) }?;
            let send = match in_place(sendbuf) {
                true => None,
                // SAFETY: this call's contract.
                false => Some(unsafe { WSide::new(sendbuf, sendcounts, sdispls, sendtypes, n) }?),
            };
            let (targets, blocks) = (w_targets(&recv)?, w_blocks(send.as_ref().unwrap_or(&recv))?);
            let everyone: Vec<Option<i32>> = (0..n as i32).map(Some).collect();
            let neighbors = Neighbors { sources: everyone.clone(), destinations: everyone, grid: false };
            neighbor::start(c, Plan { neighbors, blocks, targets })
        })
    })
}
