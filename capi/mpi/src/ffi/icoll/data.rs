//! The equal-block data calls: `MPI_Igather` and `MPI_Iallgather` (to a root and
//! back, [`super::tree`]), `MPI_Iscatter` and `MPI_Ialltoall` (blocks exchanged
//! directly, [`super::spread`]).
//!
//! As in the blocking calls (`ffi::coll`), blocks of a root's or every member's buffer
//! lie one after another, so the packed form of a whole buffer is its blocks in rank
//! order, and one pack at the start or unpack at completion serves; a block's send and
//! receive types may differ as long as their signatures match (each block received
//! must be exactly as long as expected). Arguments significant at the root only are
//! not looked at elsewhere. An intercommunicator goes to [`super::inter_args`].

use std::ffi::{c_int, c_void};

use crate::coll::{block_of, root_of, same_block};
use crate::comm::{self, CommObj};
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::coll::{buffer, count, in_place, missing};
use crate::ffi::pending::UserBuffer;
use crate::ffi::{Scope, entry};

use super::spread::{self, Delivery, Exchange};
use super::{inter_args, keep, kept, started, tree};

/// The checked arguments of a gather: this rank's packed block and, if the result is
/// significant here, where it goes (`size * recvcount` elements of `recvtype`).
fn gather_input(
    c: &CommObj,
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
    Ok((mine, Some(keep(recvbuf, r, map))))
}

/// `MPI_Igather`.
///
/// # Safety
/// As `MPI_Gather`; at the root `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Igather")]
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
            if c.is_inter() {
                let recv = (recvbuf.cast_const(), recvcount, recvtype);
                return inter_args::gather(c, (sendbuf, sendcount, sendtype), recv, root);
            }
            let root = root_of(c, root)?;
            let send = (sendbuf, sendcount, sendtype);
            let (mine, target) = gather_input(c, send, (recvbuf, recvcount, recvtype), c.rank == root)?;
            tree::collect(c, Some(root), mine, None, target)
        })
    })
}

/// `MPI_Iallgather`.
///
/// # Safety
/// As `MPI_Allgather`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iallgather")]
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
            if c.is_inter() {
                return inter_args::allgather(c, send, (recvbuf.cast_const(), recvcount, recvtype));
            }
            let (mine, target) = gather_input(c, send, (recvbuf, recvcount, recvtype), true)?;
            tree::collect(c, None, mine, None, target)
        })
    })
}

/// `MPI_Iscatter`: the root sends block `r` to each rank `r` directly.
///
/// # Safety
/// As `MPI_Scatter`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Iscatter")]
pub unsafe extern "C" fn MPI_Iscatter(
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
    entry("MPI_Iscatter", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let recv = (recvbuf.cast_const(), recvcount, recvtype);
                return inter_args::scatter(c, (sendbuf, sendcount, sendtype), recv, root);
            }
            let root = root_of(c, root)?;
            let (me, n, at_root) = (c.rank as usize, c.size() as usize, c.rank == root);
            // In place at the root, it keeps its block where it is.
            let recv = match (in_place(recvbuf), at_root) {
                (false, _) => Some(kept(recvbuf, count(recvcount)?, &datatype::committed(recvtype)?)?),
                (true, true) => None,
                (true, false) => {
                    return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Iscatter");
                }
            };
            let len = match &recv {
                Some(r) => r.buffer()?.data_len()?,
                None => 0,
            };
            let mut x = Exchange::new(n, true);
            if at_root {
                if in_place(sendbuf) {
                    return Err(missing());
                }
                let smap = datatype::committed(sendtype)?;
                let all = buffer(sendbuf, count(sendcount)? * n, &smap)?;
                if recv.is_some() {
                    same_block(len, &all, n as u32)?;
                }
                x.equal_blocks(all.bytes()?.into_owned());
                if recv.is_none() {
                    x.to[me] = None;
                }
            } else {
                x.from[root as usize] = Some(len);
            }
            if let Some(target) = recv {
                let mut spans = vec![None; n];
                spans[root as usize] = Some((0, target.count as usize));
                x.delivery = Delivery::Place { target, spans };
            }
            spread::exchange(c, x)
        })
    })
}

/// `MPI_Ialltoall`: every rank sends its block `r` to each rank `r` directly.
///
/// # Safety
/// As `MPI_Alltoall`; `recvbuf` is left to the library until the request completes;
/// `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ialltoall")]
pub unsafe extern "C" fn MPI_Ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ialltoall", Scope::Comm(comm), || {
        started(request, || {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                let recv = (recvbuf.cast_const(), recvcount, recvtype);
                return inter_args::alltoall(c, (sendbuf, sendcount, sendtype), recv);
            }
            let n = c.size() as usize;
            if in_place(recvbuf) {
                return Err(missing());
            }
            let rmap = datatype::committed(recvtype)?;
            let per = count(recvcount)?;
            let recv = buffer(recvbuf, per * n, &rmap)?;
            // In place, the blocks to send are the receive buffer's, as it is now.
            let out = if in_place(sendbuf) {
                recv.bytes()?.into_owned()
            } else {
                let smap = datatype::committed(sendtype)?;
                buffer(sendbuf, count(sendcount)? * n, &smap)?.bytes()?.into_owned()
            };
            let total = recv.data_len()?;
            if out.len() != total {
                return fail(class::TRUNCATE, format!("{} bytes to send, {total} to receive", out.len()));
            }
            let mut x = Exchange::new(n, true);
            x.from = vec![Some(total / n); n];
            x.equal_blocks(out);
            let spans = (0..n).map(|r| Some((r * per, per))).collect();
            x.delivery = Delivery::Place { target: keep(recvbuf, &recv, &rmap), spans };
            spread::exchange(c, x)
        })
    })
}
