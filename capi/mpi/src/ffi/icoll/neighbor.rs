//! The neighbourhood collectives' exchange, on the engine of [`super::machine`]: the
//! protocol of `MPI_Neighbor_*` (which start it and wait, `ffi::neighbor`) and of
//! `MPI_Ineighbor_allgather(v)` and `MPI_Ineighbor_alltoall(v,w)` (here, which check
//! their arguments as the blocking calls do, with the same code, and hand the
//! request out). Like every nonblocking collective, the operation advances in the
//! program's tests and waits, and in the waits of other requests.
//!
//! A call is, at every member, a [`Plan`]: its neighbours in MPI's order
//! (`crate::topology::neighbors`), one packed block per destination and one target per
//! source, all checked and packed before the operation takes its sequence number.
//!
//! Protocol: every member posts a receive per source (exactly its target's length),
//! then sends block `j` to destination `j`; once every block is in, each is unpacked
//! into its target. `MPI_PROC_NULL` neighbours (off the edge of a non-periodic grid)
//! get nothing and send nothing: their target is left alone. On a grid, a block sent
//! toward destination `j` travels in phase `j`, and the receive for source `k` expects
//! the opposite direction's phase, `k ^ 1`: so a neighbour that is both the source and
//! the destination of a dimension (a periodic dimension of 1 or 2) still delivers each
//! block to its place. On a graph every block travels in phase 0, and several blocks
//! between one pair (a repeated edge) are matched in the order the lists give them,
//! by the channels' order.
//!
//! Invariants: a block of another length than its target is `MPI_ERR_TRUNCATE`, found
//! once every block is in (so no message of the operation is left unreceived), and
//! then nothing is delivered; the sends all leave before the operation completes
//! (the engine's rule).

use std::ffi::{c_int, c_void};

use crate::comm::{CommObj, ICOLL_PHASE_BITS};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::neighbor as calls;
use crate::ffi::pending::UserBuffer;
use crate::ffi::{Scope, entry};
use crate::request::Pending;
use crate::topology::{self, Neighbors};

use super::machine::{Incoming, Protocol, Wire, start as start_on};
use super::started;

/// One member's part of a neighbourhood collective, as its call's arguments give it.
pub struct Plan {
    /// Its neighbours.
    pub neighbors: Neighbors,
    /// Per destination, its packed block (not looked at for `MPI_PROC_NULL`).
    pub blocks: Vec<Vec<u8>>,
    /// Per source, where its block lands (`None`: an empty block, nothing to land).
    pub targets: Vec<Option<UserBuffer>>,
}

/// The neighbours of this member of `c`: `MPI_ERR_TOPOLOGY` without a topology, or on
/// a grid of more directions than the phases tell apart.
pub fn neighbors(c: &CommObj) -> MpiResult<Neighbors> {
    let n = topology::neighbors(&c.topology, c.rank as i32)
        .ok_or_else(|| MpiError::new(class::TOPOLOGY, "the communicator has no topology"))?;
    if n.grid && n.destinations.len() > 1 << ICOLL_PHASE_BITS {
        return fail(class::TOPOLOGY, format!("{} grid directions are too many here", n.destinations.len()));
    }
    Ok(n)
}

/// The exchange in flight at this member.
struct Hood {
    /// Per source, its posted receive (`None`: `MPI_PROC_NULL`).
    incoming: Vec<Option<Incoming>>,
    targets: Vec<Option<UserBuffer>>,
    /// The first receive that failed, reported once every other is in.
    failed: Option<MpiError>,
}

impl Hood {
    fn start(w: &mut Wire, plan: Plan) -> MpiResult<Hood> {
        let Plan { neighbors: n, blocks, targets } = plan;
        let phase = |k: usize| if n.grid { k as u32 } else { 0 };
        let mut incoming = Vec::with_capacity(n.sources.len());
        for (k, (source, target)) in n.sources.iter().zip(&targets).enumerate() {
            incoming.push(match *source {
                Some(from) => {
                    let len = match target {
                        Some(t) => t.buffer()?.data_len()?,
                        None => 0,
                    };
                    Some(w.post(from as u32, phase(if n.grid { k ^ 1 } else { k }), len)?)
                }
                None => None,
            });
        }
        for (j, (dest, block)) in n.destinations.iter().zip(&blocks).enumerate() {
            if let Some(to) = *dest {
                w.send(to as u32, phase(j), block)?;
            }
        }
        Ok(Hood { incoming, targets, failed: None })
    }
}

impl Protocol for Hood {
    fn advance(&mut self, _: &mut Wire) -> MpiResult<bool> {
        let mut waiting = false;
        for i in self.incoming.iter_mut().flatten() {
            match i.arrived() {
                Ok(done) => waiting |= !done,
                Err(e) => {
                    self.failed.get_or_insert(e);
                }
            }
        }
        if waiting {
            return Ok(false);
        }
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        for (i, t) in self.incoming.iter().zip(&self.targets) {
            if let (Some(i), Some(t)) = (i, t) {
                t.unpack(&i.buf)?;
            }
        }
        Ok(true)
    }
}

/// Starts `plan` on `c` (module docs).
pub fn start(c: &CommObj, plan: Plan) -> MpiResult<Box<dyn Pending>> {
    start_on(c, |w| Hood::start(w, plan))
}

/// `MPI_Ineighbor_allgather`.
///
/// # Safety
/// As `MPI_Neighbor_allgather`; `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ineighbor_allgather")]
pub unsafe extern "C" fn MPI_Ineighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ineighbor_allgather", Scope::Comm(comm), || {
        started(request, || {
            calls::allgather(
                (sendbuf, sendcount, sendtype),
                (recvbuf.cast_const(), recvcount, recvtype),
                comm,
            )
        })
    })
}

/// `MPI_Ineighbor_allgatherv`.
///
/// # Safety
/// As `MPI_Neighbor_allgatherv`; `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ineighbor_allgatherv")]
pub unsafe extern "C" fn MPI_Ineighbor_allgatherv(
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
    entry("MPI_Ineighbor_allgatherv", Scope::Comm(comm), || {
        let recv = (recvbuf.cast_const(), recvcounts, displs, recvtype);
        // SAFETY: this call's contract.
        started(request, || unsafe { calls::allgatherv((sendbuf, sendcount, sendtype), recv, comm) })
    })
}

/// `MPI_Ineighbor_alltoall`.
///
/// # Safety
/// As `MPI_Neighbor_alltoall`; `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ineighbor_alltoall")]
pub unsafe extern "C" fn MPI_Ineighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ineighbor_alltoall", Scope::Comm(comm), || {
        started(request, || {
            calls::alltoall((sendbuf, sendcount, sendtype), (recvbuf.cast_const(), recvcount, recvtype), comm)
        })
    })
}

/// `MPI_Ineighbor_alltoallv`.
///
/// # Safety
/// As `MPI_Neighbor_alltoallv`; `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ineighbor_alltoallv")]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallv(
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
    entry("MPI_Ineighbor_alltoallv", Scope::Comm(comm), || {
        let (send, recv) =
            ((sendbuf, sendcounts, sdispls, sendtype), (recvbuf.cast_const(), recvcounts, rdispls, recvtype));
        // SAFETY: this call's contract.
        started(request, || unsafe { calls::alltoallv(send, recv, comm) })
    })
}

/// `MPI_Ineighbor_alltoallw`.
///
/// # Safety
/// As `MPI_Neighbor_alltoallw`; `recvbuf` is left to the library until the request
/// completes; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ineighbor_alltoallw")]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const isize,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const isize,
    recvtypes: *const c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ineighbor_alltoallw", Scope::Comm(comm), || {
        let (send, recv) = (
            (sendbuf, sendcounts, sdispls, sendtypes),
            (recvbuf.cast_const(), recvcounts, rdispls, recvtypes),
        );
        // SAFETY: this call's contract.
        started(request, || unsafe { calls::alltoallw(send, recv, comm) })
    })
}
