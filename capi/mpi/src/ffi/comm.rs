//! Communicators, groups and topologies.

use std::ffi::c_int;

use crate::comm::{self, COMM_NULL};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::{Scope, WORLD, c, entry};
use crate::group::{self, GROUP_EMPTY};
use crate::topology::{self, Topology};

/// `MPI_UNDEFINED`.
pub const UNDEFINED: c_int = -32766;

/// `MPI_Comm_rank`.
///
/// # Safety
/// `rank` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int {
    entry("MPI_Comm_rank", Scope::Comm(comm), || c!(out(rank, comm::lookup(comm)?.rank as c_int, "rank")))
}

/// `MPI_Comm_size`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Comm_size", Scope::Comm(comm), || c!(out(size, comm::lookup(comm)?.size() as c_int, "size")))
}

fn new_comm(parent: c_int, handle: Option<c_int>, newcomm: *mut c_int) -> MpiResult<()> {
    if let Some(h) = handle {
        crate::errhandler::inherit(parent, h);
    }
    c!(out(newcomm, handle.unwrap_or(COMM_NULL), "newcomm"))
}

/// `MPI_Comm_dup`: same members and order, a new context, the parent's topology and
/// error handler.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_dup(comm: c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Comm_dup", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let h = comm::split(c, Some(0), c.rank as c_int, c.topology.clone())?;
        new_comm(comm, h, newcomm)
    })
}

fn color(color: c_int) -> MpiResult<Option<u32>> {
    match color {
        UNDEFINED => Ok(None),
        c => u32::try_from(c)
            .map(Some)
            .map_err(|_| MpiError::new(class::ARG, format!("colour {c} is neither MPI_UNDEFINED nor >= 0"))),
    }
}

/// `MPI_Comm_split`.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: c_int,
    colour: c_int,
    key: c_int,
    newcomm: *mut c_int,
) -> c_int {
    entry("MPI_Comm_split", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let h = comm::split(c, color(colour)?, key, Topology::None)?;
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Comm_split_type`: every core of an sccemu job shares memory, so
/// `MPI_COMM_TYPE_SHARED` keeps the whole communicator.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: c_int,
    split_type: c_int,
    key: c_int,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    entry("MPI_Comm_split_type", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        crate::info::pairs(info)?;
        let colour = match split_type {
            UNDEFINED => None,
            1 => Some(0),
            t => {
                return fail(
                    class::ARG,
                    format!("split type {t} is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED"),
                );
            }
        };
        let h = comm::split(c, colour, key, Topology::None)?;
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Comm_create`: the members of `group` (a subgroup of `comm`'s), in its order.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_create(comm: c_int, grp: c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Comm_create", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let g = group::lookup(grp)?;
        if let Some(w) = g.iter().find(|&&w| c.rank_of_world(w).is_none()) {
            return fail(class::GROUP, format!("world rank {w} of the group is not in the communicator"));
        }
        let me = c.members[c.rank as usize];
        let position = g.iter().position(|&w| w == me);
        let h = comm::split(c, position.map(|_| 0), position.map_or(0, |p| p as c_int), Topology::None)?;
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Comm_free`: the handle becomes `MPI_COMM_NULL`.
///
/// # Safety
/// `comm` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    let handle = if comm.is_null() { COMM_NULL } else { c!(read(comm, "comm")).unwrap_or(COMM_NULL) };
    entry("MPI_Comm_free", Scope::Comm(handle), || {
        comm::free(c!(read(comm, "comm"))?)?;
        c!(out(comm, COMM_NULL, "comm"))
    })
}

/// `MPI_Comm_group`.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_group(comm: c_int, grp: *mut c_int) -> c_int {
    entry("MPI_Comm_group", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        c!(out(grp, group::insert(c.members.clone()), "group"))
    })
}

/// `MPI_Comm_compare`.
///
/// # Safety
/// `result` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_compare(comm1: c_int, comm2: c_int, result: *mut c_int) -> c_int {
    entry("MPI_Comm_compare", Scope::Comm(comm1), || {
        let (a, b) = (comm::lookup(comm1)?, comm::lookup(comm2)?);
        let r = match group::compare(&a.members, &b.members) {
            _ if comm1 == comm2 => 0,
            0 => 1, // same members and order: congruent
            r => r,
        };
        c!(out(result, r, "result"))
    })
}

/// `MPI_Topo_test`.
///
/// # Safety
/// `status` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    entry("MPI_Topo_test", Scope::Comm(comm), || {
        let t = match comm::lookup(comm)?.topology {
            Topology::None => UNDEFINED,
            Topology::Cart { .. } => 2,
            Topology::DistGraph { .. } => 3,
        };
        c!(out(status, t, "status"))
    })
}

/// `MPI_Group_size`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_size(grp: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Group_size", WORLD, || c!(out(size, group::lookup(grp)?.len() as c_int, "size")))
}

/// `MPI_Group_rank`: `MPI_UNDEFINED` if this process is not a member.
///
/// # Safety
/// `rank` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_rank(grp: c_int, rank: *mut c_int) -> c_int {
    entry("MPI_Group_rank", WORLD, || {
        let me = comm::my_world_rank()?;
        let r = group::lookup(grp)?.iter().position(|&w| w == me).map_or(UNDEFINED, |r| r as c_int);
        c!(out(rank, r, "rank"))
    })
}

/// `MPI_Group_incl`.
///
/// # Safety
/// `ranks` holds `n` ints; `newgroup` points to an `MPI_Group`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_incl(
    grp: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    entry("MPI_Group_incl", WORLD, || {
        let members = group::incl(&group::lookup(grp)?, c!(array(ranks, n, "ranks"))?)?;
        c!(out(newgroup, if members.is_empty() { GROUP_EMPTY } else { group::insert(members) }, "newgroup"))
    })
}

/// `MPI_Group_excl`.
///
/// # Safety
/// `ranks` holds `n` ints; `newgroup` points to an `MPI_Group`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_excl(
    grp: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    entry("MPI_Group_excl", WORLD, || {
        let members = group::excl(&group::lookup(grp)?, c!(array(ranks, n, "ranks"))?)?;
        c!(out(newgroup, if members.is_empty() { GROUP_EMPTY } else { group::insert(members) }, "newgroup"))
    })
}

/// `MPI_Group_translate_ranks`: `MPI_UNDEFINED` where a process is not in `group2`.
///
/// # Safety
/// `ranks1` and `ranks2` hold `n` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    group1: c_int,
    n: c_int,
    ranks1: *const c_int,
    group2: c_int,
    ranks2: *mut c_int,
) -> c_int {
    entry("MPI_Group_translate_ranks", WORLD, || {
        let (g1, g2) = (group::lookup(group1)?, group::lookup(group2)?);
        let from = c!(array(ranks1, n, "ranks1"))?;
        let to = c!(array_mut(ranks2, from.len(), "ranks2"))?;
        for (r, t) in from.iter().zip(to.iter_mut()) {
            *t = match *r {
                crate::p2p::PROC_NULL => crate::p2p::PROC_NULL,
                r => {
                    let w = usize::try_from(r).ok().and_then(|r| g1.get(r)).ok_or_else(|| {
                        MpiError::new(class::RANK, format!("rank {r} is not in a group of {}", g1.len()))
                    })?;
                    g2.iter().position(|x| x == w).map_or(UNDEFINED, |p| p as c_int)
                }
            };
        }
        Ok(())
    })
}

/// `MPI_Group_compare`.
///
/// # Safety
/// `result` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_compare(group1: c_int, group2: c_int, result: *mut c_int) -> c_int {
    entry("MPI_Group_compare", WORLD, || {
        c!(out(result, group::compare(&group::lookup(group1)?, &group::lookup(group2)?), "result"))
    })
}

/// `MPI_Group_free`: the handle becomes `MPI_GROUP_NULL`.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Group_free(grp: *mut c_int) -> c_int {
    entry("MPI_Group_free", WORLD, || {
        let h = c!(read(grp, "group"))?;
        if h != GROUP_EMPTY {
            group::free(h)?;
        }
        c!(out(grp, group::GROUP_NULL, "group"))
    })
}

/// `MPI_Dims_create`.
///
/// # Safety
/// `dims` holds `ndims` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    entry("MPI_Dims_create", WORLD, || {
        let n = usize::try_from(ndims).map_err(|_| MpiError::new(class::DIMS, format!("ndims {ndims}")))?;
        topology::dims_create(nnodes, c!(array_mut(dims, n, "dims"))?)
    })
}

fn cart(comm: c_int) -> MpiResult<(&'static comm::CommObj, Vec<i32>, Vec<bool>)> {
    let c = comm::lookup(comm)?;
    match &c.topology {
        Topology::Cart { dims, periods } => {
            let (d, p) = (dims.clone(), periods.clone());
            Ok((c, d, p))
        }
        _ => fail(class::TOPOLOGY, "the communicator has no Cartesian topology"),
    }
}

/// `MPI_Cart_create`: ranks keep their order (`reorder` is allowed to do nothing);
/// processes beyond the grid get `MPI_COMM_NULL`.
///
/// # Safety
/// `dims` and `periods` hold `ndims` ints; `comm_cart` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cart_create(
    comm_old: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut c_int,
) -> c_int {
    entry("MPI_Cart_create", Scope::Comm(comm_old), || {
        let c = comm::lookup(comm_old)?;
        if ndims < 0 {
            return fail(class::DIMS, format!("ndims {ndims}"));
        }
        let dims = c!(array(dims, ndims, "dims"))?.to_vec();
        let periods: Vec<bool> = c!(array(periods, ndims, "periods"))?.iter().map(|&p| p != 0).collect();
        if let Some(d) = dims.iter().find(|&&d| d <= 0) {
            return fail(class::DIMS, format!("dimension {d} is not positive"));
        }
        let cells = topology::grid_size(&dims).filter(|&n| n <= c.members.len()).ok_or_else(|| {
            MpiError::new(
                class::TOPOLOGY,
                format!("a grid of {dims:?} needs more than {} processes", c.members.len()),
            )
        })?;
        let inside = (c.rank as usize) < cells;
        let h = comm::split(c, inside.then_some(0), c.rank as c_int, Topology::Cart { dims, periods })?;
        new_comm(comm_old, h, comm_cart)
    })
}

/// `MPI_Cartdim_get`.
///
/// # Safety
/// `ndims` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    entry("MPI_Cartdim_get", Scope::Comm(comm), || c!(out(ndims, cart(comm)?.1.len() as c_int, "ndims")))
}

/// `MPI_Cart_get`.
///
/// # Safety
/// `dims`, `periods` and `coords` hold `maxdims` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: c_int,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    entry("MPI_Cart_get", Scope::Comm(comm), || {
        let (c, d, p) = cart(comm)?;
        let n = d.len();
        if (maxdims as usize) < n || maxdims < 0 {
            return fail(class::ARG, format!("maxdims {maxdims} < {n}"));
        }
        c!(array_mut(dims, n, "dims"))?.copy_from_slice(&d);
        for (o, &x) in c!(array_mut(periods, n, "periods"))?.iter_mut().zip(&p) {
            *o = x as c_int;
        }
        c!(array_mut(coords, n, "coords"))?.copy_from_slice(&topology::coords(&d, c.rank as i32));
        Ok(())
    })
}

/// `MPI_Cart_coords`.
///
/// # Safety
/// `coords` holds `maxdims` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: c_int,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    entry("MPI_Cart_coords", Scope::Comm(comm), || {
        let (c, d, _) = cart(comm)?;
        c.world_rank(rank)?;
        if maxdims < 0 || (maxdims as usize) < d.len() {
            return fail(class::ARG, format!("maxdims {maxdims} < {}", d.len()));
        }
        c!(array_mut(coords, d.len(), "coords"))?.copy_from_slice(&topology::coords(&d, rank));
        Ok(())
    })
}

/// `MPI_Cart_rank`.
///
/// # Safety
/// `coords` holds one int per dimension; `rank` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) -> c_int {
    entry("MPI_Cart_rank", Scope::Comm(comm), || {
        let (_, d, p) = cart(comm)?;
        let r = topology::rank_at(&d, &p, c!(array(coords, d.len() as c_int, "coords"))?)?;
        c!(out(rank, r, "rank"))
    })
}

/// `MPI_Cart_shift`: `MPI_PROC_NULL` off the edge of a non-periodic dimension.
///
/// # Safety
/// `rank_source` and `rank_dest` point to ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: c_int,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> c_int {
    entry("MPI_Cart_shift", Scope::Comm(comm), || {
        let (c, d, p) = cart(comm)?;
        let dir = usize::try_from(direction).ok().filter(|&i| i < d.len()).ok_or_else(|| {
            MpiError::new(class::ARG, format!("direction {direction} of a {}-dimensional grid", d.len()))
        })?;
        let (s, t) = topology::shift(&d, &p, c.rank as i32, dir, disp);
        c!(out(rank_source, s.unwrap_or(crate::p2p::PROC_NULL), "rank_source"))?;
        c!(out(rank_dest, t.unwrap_or(crate::p2p::PROC_NULL), "rank_dest"))
    })
}

fn weights(p: *const c_int, n: c_int, what: &str) -> MpiResult<Option<Vec<i32>>> {
    // MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the addresses 2 and 3.
    if matches!(p as usize, 2 | 3) || (n == 0 && p.is_null()) {
        return Ok(None);
    }
    c!(array(p, n, what)).map(|w| Some(w.to_vec()))
}

/// `MPI_Dist_graph_create_adjacent`: ranks keep their order.
///
/// # Safety
/// The arrays hold `indegree` and `outdegree` ints (or are `MPI_UNWEIGHTED`);
/// `comm_dist_graph` points to an `MPI_Comm`.
#[unsafe(no_mangle)]
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
        let c = comm::lookup(comm_old)?;
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

fn graph(comm: c_int) -> MpiResult<Topology> {
    match comm::lookup(comm)?.topology.clone() {
        t @ Topology::DistGraph { .. } => Ok(t),
        _ => fail(class::TOPOLOGY, "the communicator has no distributed graph topology"),
    }
}

/// `MPI_Dist_graph_neighbors_count`.
///
/// # Safety
/// All three point to ints.
#[unsafe(no_mangle)]
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
#[unsafe(no_mangle)]
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
            if matches!(p as usize, 2 | 3) {
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
