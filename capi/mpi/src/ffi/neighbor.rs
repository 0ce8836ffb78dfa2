//! Neighbourhood collectives on a communicator's topology: `MPI_Neighbor_allgather`,
//! `MPI_Neighbor_allgatherv`, `MPI_Neighbor_alltoall` and `MPI_Neighbor_alltoallv`.
//!
//! The neighbours, in MPI's order (`Neighbors`): on a Cartesian grid, for each
//! dimension the source then the destination of a shift by +1 (`MPI_PROC_NULL` off a
//! non-periodic edge: no block goes or comes there, and its receive block is left
//! alone); on a distributed graph, the sources and the destinations as declared.
//!
//! Protocol: every member posts a receive per source into memory of its own, sends
//! block `j` to destination `j`, then waits for all of them and unpacks each block.
//! The messages travel in the communicator's nonblocking-collective context under a
//! sequence number of their own (every member calls collectives in the same order), so
//! they never meet user messages or other collectives. On a grid, a block sent toward
//! destination `j` travels with phase `j`, and a receive for source `k` expects the
//! opposite direction's phase, `k ^ 1`: so a neighbour that is both the source and the
//! destination of a dimension (a periodic dimension of 1 or 2) still delivers each
//! block to its place. On a graph, blocks between one pair are matched in the order
//! the lists give them, by the channels' order. A block of another length than its
//! receive block is `MPI_ERR_TRUNCATE`.

use std::ffi::{c_int, c_void};

use sccemu::{Source, TagMatch};

use crate::comm::{self, CommObj, ICOLL_PHASE_BITS};
use crate::datatype;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::coll::{buffer, count};
use crate::ffi::vcoll::{layout, vbuf};
use crate::ffi::{Scope, entry};
use crate::p2p::{recv_error, request_error, send_error};
use crate::state::mpi;
use crate::topology::{self, Topology};
use crate::vcoll::VBuf;

/// A member's neighbours, as world ranks (`None`: `MPI_PROC_NULL`), in MPI's order.
struct Neighbors {
    sources: Vec<Option<u32>>,
    destinations: Vec<Option<u32>>,
    /// On a grid (phases tell the directions apart, module docs).
    grid: bool,
}

fn neighbors(c: &CommObj) -> MpiResult<Neighbors> {
    let world = |r: i32| c.members[r as usize];
    match &c.topology {
        Topology::Cart { dims, periods } => {
            if 2 * dims.len() > 1 << ICOLL_PHASE_BITS {
                return fail(class::TOPOLOGY, format!("{} dimensions are too many here", dims.len()));
            }
            let (mut sources, mut destinations) = (Vec::new(), Vec::new());
            for d in 0..dims.len() {
                let (s, t) = topology::shift(dims, periods, c.rank as i32, d, 1);
                for n in [s, t] {
                    sources.push(n.map(world));
                    destinations.push(n.map(world));
                }
            }
            Ok(Neighbors { sources, destinations, grid: true })
        }
        Topology::DistGraph { sources, destinations, .. } => Ok(Neighbors {
            sources: sources.iter().map(|&r| Some(world(r))).collect(),
            destinations: destinations.iter().map(|&r| Some(world(r))).collect(),
            grid: false,
        }),
        Topology::None => fail(class::TOPOLOGY, "the communicator has no topology"),
    }
}

/// Sends `blocks(j)` to each destination `j` and receives each source `k`'s block into
/// `recv`'s block `k` (module docs).
fn exchange(
    c: &CommObj,
    n: &Neighbors,
    blocks: impl Fn(usize) -> MpiResult<Vec<u8>>,
    recv: &VBuf<'_, '_>,
) -> MpiResult<()> {
    let core = mpi()?.core;
    let base = c.next_icoll_tag();
    let phase = |k: usize| if n.grid { k as u32 } else { 0 };
    // No memory for an `MPI_PROC_NULL` source: nothing comes from it.
    let mut staging: Vec<Vec<u8>> = (0..n.sources.len())
        .map(|k| match n.sources[k] {
            Some(_) => Ok(vec![0u8; recv.block(k)?.data_len()?]),
            None => Ok(Vec::new()),
        })
        .collect::<MpiResult<_>>()?;
    let mut receives = Vec::new();
    for ((k, src), into) in n.sources.iter().enumerate().zip(staging.iter_mut()) {
        if let Some(src) = *src {
            let expect = TagMatch::Tag(base | phase(if n.grid { k ^ 1 } else { k }));
            let len = into.len();
            receives.push((len, core.irecv(Source::Rank(src), expect, into).map_err(recv_error)?));
        }
    }
    let mut sends = Vec::new();
    for (j, dest) in n.destinations.iter().enumerate() {
        if let Some(dest) = *dest {
            sends.push(core.isend(dest, base | phase(j), &blocks(j)?).map_err(send_error)?);
        }
    }
    let mut first = Ok(());
    for (len, r) in receives {
        let got = r.wait().map_err(request_error).and_then(|s| match s.len == len {
            true => Ok(()),
            false => {
                Err(MpiError::new(class::TRUNCATE, format!("a block of {} bytes for one of {len}", s.len)))
            }
        });
        first = first.and(got);
    }
    for s in sends {
        first = first.and(s.wait().map(drop).map_err(request_error));
    }
    first?;
    for (k, data) in staging.iter().enumerate().filter(|(k, _)| n.sources[*k].is_some()) {
        recv.block(k)?.unpack(data)?;
    }
    Ok(())
}

/// Per-block counts and displacements, in elements.
type Layout = (Vec<usize>, Vec<usize>);

/// Blocks of `count` elements, block `i` from element `i * count`, for `n` neighbours.
fn uniform(n: usize, per: c_int) -> MpiResult<Layout> {
    let per = count(per)?;
    Ok((vec![per; n], (0..n).map(|i| i * per).collect()))
}

/// What a neighbourhood call sends.
enum Sends {
    /// The same `count` elements to every destination (the allgathers).
    Same(usize),
    /// Block `j` to destination `j` (the alltoalls).
    Blocks(Layout),
}

/// The calls' common body: `sends` and `receives` give the blocks of each side from the
/// neighbours' counts.
fn run(
    comm: c_int,
    (sendbuf, sendtype, sends): (*const c_void, c_int, impl FnOnce(&Neighbors) -> MpiResult<Sends>),
    (recvbuf, recvtype, receives): (*const c_void, c_int, impl FnOnce(&Neighbors) -> MpiResult<Layout>),
) -> MpiResult<()> {
    let c = comm::lookup_intra(comm)?;
    let n = neighbors(c)?;
    let (smap, rmap) = (datatype::committed(sendtype)?, datatype::committed(recvtype)?);
    let rlay = receives(&n)?;
    let recv = vbuf(recvbuf, &rlay, &rmap)?;
    match sends(&n)? {
        Sends::Same(k) => {
            let data = buffer(sendbuf, k, &smap)?.bytes()?.into_owned();
            exchange(c, &n, |_| Ok(data.clone()), &recv)
        }
        Sends::Blocks(slay) => {
            let send = vbuf(sendbuf, &slay, &smap)?;
            exchange(c, &n, |j| Ok(send.block(j)?.bytes()?.into_owned()), &recv)
        }
    }
}

/// `MPI_Neighbor_allgather`: the same block to every destination; block `k` of
/// `recvbuf` from source `k`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype`; `recvbuf` has room for one
/// block of `recvcount` elements of `recvtype` per source.
#[unsafe(no_mangle)]
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
        let sends = |_: &Neighbors| Ok(Sends::Same(count(sendcount)?));
        let receives = |n: &Neighbors| uniform(n.sources.len(), recvcount);
        run(comm, (sendbuf, sendtype, sends), (recvbuf, recvtype, receives))
    })
}

/// `MPI_Neighbor_allgatherv`: as [`MPI_Neighbor_allgather`], block `k` being
/// `recvcounts[k]` elements at element `displs[k]`.
///
/// # Safety
/// As [`MPI_Neighbor_allgather`]; `recvcounts` and `displs` hold one int per source.
#[unsafe(no_mangle)]
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
        let sends = |_: &Neighbors| Ok(Sends::Same(count(sendcount)?));
        // SAFETY: this call's contract.
        let receives = |n: &Neighbors| unsafe { layout(recvcounts, displs, n.sources.len() as u32) };
        run(comm, (sendbuf, sendtype, sends), (recvbuf, recvtype, receives))
    })
}

/// `MPI_Neighbor_alltoall`: block `j` of `sendbuf` to destination `j`, block `k` of
/// `recvbuf` from source `k`.
///
/// # Safety
/// `sendbuf` holds a block of `sendcount` elements of `sendtype` per destination;
/// `recvbuf` has room for a block of `recvcount` elements of `recvtype` per source.
#[unsafe(no_mangle)]
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
        let sends = |n: &Neighbors| uniform(n.destinations.len(), sendcount).map(Sends::Blocks);
        let receives = |n: &Neighbors| uniform(n.sources.len(), recvcount);
        run(comm, (sendbuf, sendtype, sends), (recvbuf, recvtype, receives))
    })
}

/// `MPI_Neighbor_alltoallv`: as [`MPI_Neighbor_alltoall`], with per-neighbour counts
/// and displacements (in elements) on both sides.
///
/// # Safety
/// As [`MPI_Neighbor_alltoall`]; `sendcounts` and `sdispls` hold one int per
/// destination, `recvcounts` and `rdispls` one per source.
#[unsafe(no_mangle)]
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
        let sends = |n: &Neighbors| {
            // SAFETY: this call's contract.
            unsafe { layout(sendcounts, sdispls, n.destinations.len() as u32) }.map(Sends::Blocks)
        };
        // SAFETY: this call's contract.
        let receives = |n: &Neighbors| unsafe { layout(recvcounts, rdispls, n.sources.len() as u32) };
        run(comm, (sendbuf, sendtype, sends), (recvbuf, recvtype, receives))
    })
}
