//! The graph topology of MPI-1 (`MPI_Graph_create`, `MPI_Graphdims_get`,
//! `MPI_Graph_get`, `MPI_Graph_neighbors_count`, `MPI_Graph_neighbors`,
//! `MPI_Graph_map`): every member gives the whole graph, the same everywhere, as
//! `index` and `edges` arrays (`crate::topology::check_graph` says what they must
//! hold). The neighbourhood collectives run on it too (`super::neighbor`).
//!
//! As with grids, ranks are never reordered (`reorder` may be ignored): node `i` is
//! rank `i` of the parent, and the parent's ranks from `nnodes` on get
//! `MPI_COMM_NULL`. Error classes: `nnodes` negative or above the parent's size, or an
//! `index` that decreases, `MPI_ERR_ARG`; an edge to no node, or a query about a rank
//! that is no node, `MPI_ERR_RANK`; a query on a communicator without a graph,
//! `MPI_ERR_TOPOLOGY`. Every check happens before the collective part of
//! `MPI_Graph_create`, so a call refused on every member leaves the parent usable.
//! The query calls copy as many entries as the caller's arrays hold.

use std::ffi::c_int;

use crate::comm::{self, CommObj};
use crate::error::{MpiResult, class, fail};
use crate::ffi::comm::{UNDEFINED, new_comm};
use crate::ffi::{Scope, c, entry};
use crate::topology::{self, Topology};

/// The graph `nnodes`, `index` and `edges` give, checked against `c`.
///
/// # Safety
/// `index` holds `nnodes` ints, and `edges` as many as `index`'s last.
unsafe fn graph_of(
    c: &CommObj,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    if nnodes < 0 || nnodes as usize > c.members.len() {
        return fail(class::ARG, format!("{nnodes} nodes in a communicator of {}", c.members.len()));
    }
    let index = c!(array(index, nnodes, "index"))?.to_vec();
    // A negative last entry reads no edges; `check_graph` then refuses the index.
    let nedges = index.last().copied().unwrap_or(0).max(0);
    let edges = c!(array(edges, nedges, "edges"))?.to_vec();
    topology::check_graph(&index, &edges)?;
    Ok((index, edges))
}

/// `MPI_Graph_create`: ranks keep their order; ranks from `nnodes` on get
/// `MPI_COMM_NULL`.
///
/// # Safety
/// `index` holds `nnodes` ints, and `edges` as many as `index`'s last; `comm_graph`
/// points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Graph_create")]
pub unsafe extern "C" fn MPI_Graph_create(
    comm_old: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut c_int,
) -> c_int {
    entry("MPI_Graph_create", Scope::Comm(comm_old), || {
        let c = comm::lookup_intra(comm_old)?;
        // SAFETY: this call's contract.
        let (index, edges) = unsafe { graph_of(c, nnodes, index, edges) }?;
        if comm_graph.is_null() {
            return fail(class::ARG, "comm_graph is a null pointer");
        }
        let inside = (c.rank as usize) < index.len();
        let h = comm::split(c, inside.then_some(0), c.rank as c_int, Topology::Graph { index, edges })?;
        new_comm(comm_old, h, comm_graph)
    })
}

/// `MPI_Graph_map`: the rank this process would have in `MPI_Graph_create`'s graph
/// (its own), `MPI_UNDEFINED` from `nnodes` on.
///
/// # Safety
/// As [`MPI_Graph_create`]; `newrank` points to an int.
#[unsafe(export_name = "PMPI_Graph_map")]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    entry("MPI_Graph_map", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        // SAFETY: this call's contract.
        unsafe { graph_of(c, nnodes, index, edges) }?;
        let rank = if (c.rank as c_int) < nnodes { c.rank as c_int } else { UNDEFINED };
        c!(out(newrank, rank, "newrank"))
    })
}

/// `comm`'s graph: `MPI_ERR_TOPOLOGY` if it has none.
fn graph(comm: c_int) -> MpiResult<(&'static [i32], &'static [i32])> {
    match &comm::lookup_intra(comm)?.topology {
        Topology::Graph { index, edges } => Ok((index, edges)),
        _ => fail(class::TOPOLOGY, "the communicator has no graph topology"),
    }
}

/// Copies `from` into the C array `to` of `max` entries, as much as fits.
///
/// # Safety
/// `to` holds `max` ints.
unsafe fn copy_out(to: *mut c_int, max: c_int, from: &[i32], what: &str) -> MpiResult<()> {
    let n = usize::try_from(max)
        .map_err(|_| crate::error::MpiError::new(class::ARG, format!("{what}: {max}")))?;
    let n = n.min(from.len());
    c!(array_mut(to, n, what))?.copy_from_slice(&from[..n]);
    Ok(())
}

/// `MPI_Graphdims_get`.
///
/// # Safety
/// `nnodes` and `nedges` point to ints.
#[unsafe(export_name = "PMPI_Graphdims_get")]
pub unsafe extern "C" fn MPI_Graphdims_get(comm: c_int, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
    entry("MPI_Graphdims_get", Scope::Comm(comm), || {
        let (index, edges) = graph(comm)?;
        c!(out(nnodes, index.len() as c_int, "nnodes"))?;
        c!(out(nedges, edges.len() as c_int, "nedges"))
    })
}

/// `MPI_Graph_get`: the graph's `index` and `edges`, as many entries as fit.
///
/// # Safety
/// `index` holds `maxindex` ints, `edges` `maxedges`.
#[unsafe(export_name = "PMPI_Graph_get")]
pub unsafe extern "C" fn MPI_Graph_get(
    comm: c_int,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    entry("MPI_Graph_get", Scope::Comm(comm), || {
        let (i, e) = graph(comm)?;
        // SAFETY: this call's contract.
        unsafe { copy_out(index, maxindex, i, "index") }?;
        // SAFETY: this call's contract.
        unsafe { copy_out(edges, maxedges, e, "edges") }
    })
}

/// The neighbours of `rank` in `comm`'s graph: `MPI_ERR_RANK` if it is no node.
fn neighbors_of(comm: c_int, rank: c_int) -> MpiResult<&'static [i32]> {
    let (index, edges) = graph(comm)?;
    match usize::try_from(rank).ok().filter(|&r| r < index.len()) {
        Some(node) => Ok(topology::graph_neighbors(index, edges, node)),
        None => fail(class::RANK, format!("rank {rank} is not one of {} nodes", index.len())),
    }
}

/// `MPI_Graph_neighbors_count`.
///
/// # Safety
/// `nneighbors` points to an int.
#[unsafe(export_name = "PMPI_Graph_neighbors_count")]
pub unsafe extern "C" fn MPI_Graph_neighbors_count(
    comm: c_int,
    rank: c_int,
    nneighbors: *mut c_int,
) -> c_int {
    entry("MPI_Graph_neighbors_count", Scope::Comm(comm), || {
        c!(out(nneighbors, neighbors_of(comm, rank)?.len() as c_int, "nneighbors"))
    })
}

/// `MPI_Graph_neighbors`: `rank`'s neighbours in the order of `edges`, repeated edges
/// and self-loops included, as many as fit.
///
/// # Safety
/// `neighbors` holds `maxneighbors` ints.
#[unsafe(export_name = "PMPI_Graph_neighbors")]
pub unsafe extern "C" fn MPI_Graph_neighbors(
    comm: c_int,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    entry("MPI_Graph_neighbors", Scope::Comm(comm), || {
        let list = neighbors_of(comm, rank)?;
        // SAFETY: this call's contract.
        unsafe { copy_out(neighbors, maxneighbors, list, "neighbors") }
    })
}
