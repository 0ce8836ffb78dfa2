//! Process topologies: `MPI_Topo_test` and Cartesian grids (`MPI_Dims_create`,
//! `MPI_Cart_*`); graphs are [`super::graph`]'s, distributed graphs
//! [`super::dist_graph`]'s. A topology rides on a communicator made by
//! [`super::comm`]'s machinery.

use std::ffi::c_int;

use crate::comm;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::comm::{UNDEFINED, new_comm};
use crate::ffi::{Scope, WORLD, c, entry};
use crate::topology::{self, Topology};

/// `MPI_Topo_test`.
///
/// # Safety
/// `status` points to an int.
#[unsafe(export_name = "PMPI_Topo_test")]
pub unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    entry("MPI_Topo_test", Scope::Comm(comm), || {
        let t = match comm::lookup(comm)?.topology {
            Topology::None => UNDEFINED,
            Topology::Graph { .. } => 1,
            Topology::Cart { .. } => 2,
            Topology::DistGraph { .. } => 3,
        };
        c!(out(status, t, "status"))
    })
}

/// `MPI_Dims_create`.
///
/// # Safety
/// `dims` holds `ndims` ints.
#[unsafe(export_name = "PMPI_Dims_create")]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    entry("MPI_Dims_create", WORLD, || {
        let n = usize::try_from(ndims).map_err(|_| MpiError::new(class::DIMS, format!("ndims {ndims}")))?;
        topology::dims_create(nnodes, c!(array_mut(dims, n, "dims"))?)
    })
}

fn cart(comm: c_int) -> MpiResult<(&'static comm::CommObj, Vec<i32>, Vec<bool>)> {
    let c = comm::lookup_intra(comm)?;
    match &c.topology {
        Topology::Cart { dims, periods } => {
            let (d, p) = (dims.clone(), periods.clone());
            Ok((c, d, p))
        }
        _ => fail(class::TOPOLOGY, "the communicator has no Cartesian topology"),
    }
}

/// The grid of `ndims` dimensions `dims` gives, checked (`MPI_ERR_DIMS`), and its
/// number of cells, which must fit in `c` (`MPI_ERR_TOPOLOGY`).
///
/// # Safety
/// `dims` holds `ndims` ints.
unsafe fn grid_of(c: &comm::CommObj, ndims: c_int, dims: *const c_int) -> MpiResult<(Vec<i32>, usize)> {
    if ndims < 0 {
        return fail(class::DIMS, format!("ndims {ndims}"));
    }
    let dims = c!(array(dims, ndims, "dims"))?.to_vec();
    if let Some(d) = dims.iter().find(|&&d| d <= 0) {
        return fail(class::DIMS, format!("dimension {d} is not positive"));
    }
    let cells = topology::grid_size(&dims).filter(|&n| n <= c.members.len()).ok_or_else(|| {
        MpiError::new(
            class::TOPOLOGY,
            format!("a grid of {dims:?} needs more than {} processes", c.members.len()),
        )
    })?;
    Ok((dims, cells))
}

/// `MPI_Cart_map`: the rank this process would have in `MPI_Cart_create`'s grid
/// (its own: ranks are never reordered), `MPI_UNDEFINED` beyond the grid.
///
/// # Safety
/// `dims` and `periods` hold `ndims` ints; `newrank` points to an int.
#[unsafe(export_name = "PMPI_Cart_map")]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    entry("MPI_Cart_map", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        // SAFETY: this call's contract.
        let (_, cells) = unsafe { grid_of(c, ndims, dims) }?;
        c!(array(periods, ndims, "periods"))?;
        let rank = if (c.rank as usize) < cells { c.rank as c_int } else { UNDEFINED };
        c!(out(newrank, rank, "newrank"))
    })
}

/// `MPI_Cart_create`: ranks keep their order (`reorder` is allowed to do nothing);
/// processes beyond the grid get `MPI_COMM_NULL`.
///
/// # Safety
/// `dims` and `periods` hold `ndims` ints; `comm_cart` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Cart_create")]
pub unsafe extern "C" fn MPI_Cart_create(
    comm_old: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut c_int,
) -> c_int {
    entry("MPI_Cart_create", Scope::Comm(comm_old), || {
        let c = comm::lookup_intra(comm_old)?;
        // SAFETY: this call's contract.
        let (dims, cells) = unsafe { grid_of(c, ndims, dims) }?;
        let periods: Vec<bool> = c!(array(periods, ndims, "periods"))?.iter().map(|&p| p != 0).collect();
        let inside = (c.rank as usize) < cells;
        let h = comm::split(c, inside.then_some(0), c.rank as c_int, Topology::Cart { dims, periods })?;
        new_comm(comm_old, h, comm_cart)
    })
}

/// `MPI_Cart_sub`: the sub-grid of the dimensions `remain_dims` keeps, through this
/// process, with their sizes and periodicity, ranks in row-major order of the kept
/// coordinates (which is the parent's order within a sub-grid). Keeping none gives
/// each process a grid of its own, of no dimensions.
///
/// # Safety
/// `remain_dims` holds one int per dimension of `comm`'s grid; `newcomm` points to an
/// `MPI_Comm`.
#[unsafe(export_name = "PMPI_Cart_sub")]
pub unsafe extern "C" fn MPI_Cart_sub(comm: c_int, remain_dims: *const c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Cart_sub", Scope::Comm(comm), || {
        let (c, dims, periods) = cart(comm)?;
        let keep: Vec<bool> =
            c!(array(remain_dims, dims.len() as c_int, "remain_dims"))?.iter().map(|&k| k != 0).collect();
        let coords = topology::coords(&dims, c.rank as i32);
        // The sub-grid is named by the coordinates this process does not keep.
        let colour = dims
            .iter()
            .zip(&coords)
            .zip(&keep)
            .filter(|(_, k)| !**k)
            .fold(0u64, |acc, ((&d, &x), _)| acc * d as u64 + x as u64);
        let pick = |v: &[i32]| v.iter().zip(&keep).filter(|(_, k)| **k).map(|(&x, _)| x).collect::<Vec<_>>();
        let sub_periods = periods.iter().zip(&keep).filter(|(_, k)| **k).map(|(&p, _)| p).collect();
        let topology = Topology::Cart { dims: pick(&dims), periods: sub_periods };
        let colour = u32::try_from(colour).expect("a grid has fewer cells than processes");
        let h = comm::split(c, Some(colour), c.rank as c_int, topology)?;
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Cartdim_get`.
///
/// # Safety
/// `ndims` points to an int.
#[unsafe(export_name = "PMPI_Cartdim_get")]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    entry("MPI_Cartdim_get", Scope::Comm(comm), || c!(out(ndims, cart(comm)?.1.len() as c_int, "ndims")))
}

/// `MPI_Cart_get`.
///
/// # Safety
/// `dims`, `periods` and `coords` hold `maxdims` ints.
#[unsafe(export_name = "PMPI_Cart_get")]
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
#[unsafe(export_name = "PMPI_Cart_coords")]
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
#[unsafe(export_name = "PMPI_Cart_rank")]
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
#[unsafe(export_name = "PMPI_Cart_shift")]
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
