//! Distributed graph topologies: `MPI_Dist_graph_create_adjacent` (each process gives
//! its own neighbours), `MPI_Dist_graph_create` (each gives any edges; the exchange
//! that sorts them out is `crate::distgraph`'s) and their queries,
//! `MPI_Dist_graph_neighbors_count` and `MPI_Dist_graph_neighbors`.
//!
//! Ranks keep their order (`reorder` may be ignored). Ranks that name no member are
//! `MPI_ERR_RANK`; a negative count, degree or weight, or `MPI_WEIGHTS_EMPTY` beside
//! edges, `MPI_ERR_ARG`. `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY` are the addresses
//! 2 and 3 (`mpi.h`).

use std::ffi::c_int;

use crate::comm;
use crate::distgraph::{self, Edge, WeightsGiven};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::comm::new_comm;
use crate::ffi::{Scope, c, entry};
use crate::topology::Topology;

/// `MPI_UNWEIGHTED`'s address.
const UNWEIGHTED: usize = 2;
/// `MPI_WEIGHTS_EMPTY`'s address.
const WEIGHTS_EMPTY: usize = 3;

fn weights(p: *const c_int, n: c_int, what: &str) -> MpiResult<Option<Vec<i32>>> {
    if matches!(p as usize, UNWEIGHTED | WEIGHTS_EMPTY) || (n == 0 && p.is_null()) {
        return Ok(None);
    }
    c!(array(p, n, what)).map(|w| Some(w.to_vec()))
}

/// `MPI_Dist_graph_create_adjacent`: ranks keep their order.
///
/// # Safety
/// The arrays hold `indegree` and `outdegree` ints (or are `MPI_UNWEIGHTED`);
/// `comm_dist_graph` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Dist_graph_create_adjacent")]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm_old: c_int,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    entry("MPI_Dist_graph_create_adjacent", Scope::Comm(comm_old), || {
        let c = comm::lookup_intra(comm_old)?;
        crate::info::pairs(info)?;
        let srcs = c!(array(sources, indegree, "sources"))?.to_vec();
        let dsts = c!(array(destinations, outdegree, "destinations"))?.to_vec();
        for &r in srcs.iter().chain(&dsts) {
            c.world_rank(r)?;
        }
        let (sw, dw) = (
            weights(sourceweights, indegree, "sourceweights")?,
            weights(destweights, outdegree, "destweights")?,
        );
        let weighted = sw.is_some() || dw.is_some();
        let topology = Topology::DistGraph {
            source_weights: sw.unwrap_or_else(|| vec![1; srcs.len()]),
            destination_weights: dw.unwrap_or_else(|| vec![1; dsts.len()]),
            sources: srcs,
            destinations: dsts,
            weighted,
        };
        let h = comm::split(c, Some(0), c.rank as c_int, topology)?;
        new_comm(comm_old, h, comm_dist_graph)
    })
}

/// What `MPI_Dist_graph_create`'s caller gave: its edges, ranks checked, and what it
/// said of weights (`crate::distgraph`).
///
/// # Safety
/// `sources` and `degrees` hold `n` ints; `destinations` and `weights` (unless
/// `MPI_UNWEIGHTED` or `MPI_WEIGHTS_EMPTY`) as many as `degrees` add up to.
unsafe fn edges_given(
    c: &comm::CommObj,
    n: c_int,
    (sources, degrees, destinations, weights): (*const c_int, *const c_int, *const c_int, *const c_int),
) -> MpiResult<(Vec<Edge>, WeightsGiven)> {
    if n < 0 {
        return fail(class::ARG, format!("{n} source nodes"));
    }
    let srcs = c!(array(sources, n, "sources"))?;
    let degrees = c!(array(degrees, n, "degrees"))?;
    let mut total = 0usize;
    for &d in degrees {
        let d =
            usize::try_from(d).map_err(|_| MpiError::new(class::ARG, format!("degree {d} is negative")))?;
        total += d;
    }
    let total = c_int::try_from(total).map_err(|_| MpiError::new(class::ARG, "too many edges"))?;
    let dsts = c!(array(destinations, total, "destinations"))?;
    let (given, w) = match weights as usize {
        UNWEIGHTED => (WeightsGiven::No, None),
        WEIGHTS_EMPTY if total == 0 => (WeightsGiven::Yes, None),
        WEIGHTS_EMPTY => return fail(class::ARG, format!("MPI_WEIGHTS_EMPTY for {total} edges")),
        0 if total == 0 => (WeightsGiven::Neither, None),
        _ => (WeightsGiven::Yes, Some(c!(array(weights, total, "weights"))?)),
    };
    if let Some(bad) = w.and_then(|w| w.iter().find(|&&x| x < 0)) {
        return fail(class::ARG, format!("weight {bad} is negative"));
    }
    let mut edges = Vec::with_capacity(total as usize);
    let mut next = 0;
    for (&s, &d) in srcs.iter().zip(degrees) {
        c.world_rank(s)?;
        for &t in &dsts[next..next + d as usize] {
            c.world_rank(t)?;
            let weight = w.map_or(1, |w| w[edges.len()]);
            edges.push(Edge { source: s, destination: t, weight });
        }
        next += d as usize;
    }
    Ok((edges, given))
}

/// `MPI_Dist_graph_create`: each process gives any edges, `degrees[i]` of them out of
/// `sources[i]`; the members then exchange them so that each learns its own in- and
/// out-lists, ordered by the rank that gave an edge, then by its place there
/// (`crate::distgraph`). Ranks keep their order. An argument error on any member fails
/// the call on all of them.
///
/// # Safety
/// `sources` and `degrees` hold `n` ints; `destinations` and `weights` (unless
/// `MPI_UNWEIGHTED` or `MPI_WEIGHTS_EMPTY`) as many as `degrees` add up to;
/// `comm_dist_graph` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Dist_graph_create")]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm_old: c_int,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights: *const c_int,
    info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    entry("MPI_Dist_graph_create", Scope::Comm(comm_old), || {
        let c = comm::lookup_intra(comm_old)?;
        let mine = crate::info::pairs(info).and_then(|_| {
            if comm_dist_graph.is_null() {
                return fail(class::ARG, "comm_dist_graph is a null pointer");
            }
            // SAFETY: this call's contract.
            unsafe { edges_given(c, n, (sources, degrees, destinations, weights)) }
        });
        let topology = distgraph::create(c, mine)?;
        let h = comm::split(c, Some(0), c.rank as c_int, topology)?;
        new_comm(comm_old, h, comm_dist_graph)
    })
}

fn graph(comm: c_int) -> MpiResult<Topology> {
    match comm::lookup_intra(comm)?.topology.clone() {
        t @ Topology::DistGraph { .. } => Ok(t),
        _ => fail(class::TOPOLOGY, "the communicator has no distributed graph topology"),
    }
}

/// `MPI_Dist_graph_neighbors_count`.
///
/// # Safety
/// All three point to ints.
#[unsafe(export_name = "PMPI_Dist_graph_neighbors_count")]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: c_int,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    entry("MPI_Dist_graph_neighbors_count", Scope::Comm(comm), || {
        let Topology::DistGraph { sources, destinations, weighted: w, .. } = graph(comm)? else {
            unreachable!()
        };
        c!(out(indegree, sources.len() as c_int, "indegree"))?;
        c!(out(outdegree, destinations.len() as c_int, "outdegree"))?;
        c!(out(weighted, w as c_int, "weighted"))
    })
}

/// `MPI_Dist_graph_neighbors`.
///
/// # Safety
/// The arrays hold `maxindegree` and `maxoutdegree` ints (weights may be
/// `MPI_UNWEIGHTED`).
#[unsafe(export_name = "PMPI_Dist_graph_neighbors")]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: c_int,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    entry("MPI_Dist_graph_neighbors", Scope::Comm(comm), || {
        let Topology::DistGraph {
            sources: s,
            source_weights: sw,
            destinations: d,
            destination_weights: dw,
            ..
        } = graph(comm)?
        else {
            unreachable!()
        };
        if (maxindegree as usize) < s.len()
            || (maxoutdegree as usize) < d.len()
            || maxindegree < 0
            || maxoutdegree < 0
        {
            return fail(
                class::ARG,
                format!(
                    "room for {maxindegree} and {maxoutdegree} neighbours, not {} and {}",
                    s.len(),
                    d.len()
                ),
            );
        }
        let copy = |p: *mut c_int, v: &[i32], what: &str| -> MpiResult<()> {
            if matches!(p as usize, UNWEIGHTED | WEIGHTS_EMPTY) {
                return Ok(());
            }
            c!(array_mut(p, v.len(), what))?.copy_from_slice(v);
            Ok(())
        };
        copy(sources, &s, "sources")?;
        copy(sourceweights, &sw, "sourceweights")?;
        copy(destinations, &d, "destinations")?;
        copy(destweights, &dw, "destweights")
    })
}
