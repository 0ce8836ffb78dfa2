//! `MPI_Type_create_darray` (MPI-3.1 section 4.1.4): the part of a distributed global
//! array that one process of a process grid owns, as a datatype over the whole array.
//!
//! The processes form a grid of `psizes`, numbered in row-major order whatever the
//! array's storage `order`. In each dimension, a process with grid coordinate `p` of
//! `psize` owns these indices of the dimension's `gsize`:
//! - `MPI_DISTRIBUTE_NONE`: all of them (the grid must be 1 wide there);
//! - `MPI_DISTRIBUTE_BLOCK` with block `b` (default `ceil(gsize / psize)`, and
//!   `b * psize >= gsize`): `p * b` up to `(p + 1) * b`, clipped to the array, maybe
//!   none;
//! - `MPI_DISTRIBUTE_CYCLIC` with block `b` (default 1): blocks of `b` dealt round the
//!   grid, block `k` to `k mod psize`; the last one may be short.
//!
//! The type holds the owned elements in the array's storage order: built from the
//! fastest dimension outwards, each dimension's owned runs of the previous type, whose
//! extent is first set to one step of that dimension; the result is resized to the
//! whole array (lower bound 0, extent the array's bytes), so that consecutive elements
//! of the type are consecutive arrays, as for a subarray.

use std::ffi::c_int;

use crate::datatype::TypeMap;
use crate::derived::{Block, Order, from_blocks, resized};
use crate::error::{MpiError, MpiResult, class, fail};

/// How one dimension is spread over its processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// `MPI_DISTRIBUTE_BLOCK`, with the block size given (`Some`) or the default.
    Block(Option<usize>),
    /// `MPI_DISTRIBUTE_CYCLIC`, with the block size given (`Some`) or the default 1.
    Cyclic(Option<usize>),
    /// `MPI_DISTRIBUTE_NONE`.
    None,
}

/// One dimension of the global array and of the process grid.
#[derive(Clone, Copy, Debug)]
pub struct Dimension {
    /// Elements of the array along it.
    pub gsize: usize,
    /// How they are spread.
    pub distribution: Distribution,
    /// Processes of the grid along it.
    pub psize: usize,
}

/// The runs `(first index, length)` of one dimension that grid coordinate `p` owns.
fn owned_runs(d: &Dimension, p: usize, dim: usize) -> MpiResult<Vec<(usize, usize)>> {
    let bad = |what: String| MpiError::new(class::ARG, format!("dimension {dim}: {what}"));
    match d.distribution {
        Distribution::None if d.psize != 1 => {
            Err(bad(format!("MPI_DISTRIBUTE_NONE over {} processes (it needs 1)", d.psize)))
        }
        Distribution::None => Ok(vec![(0, d.gsize)]),
        Distribution::Block(b) => {
            let b = b.unwrap_or(d.gsize.div_ceil(d.psize));
            if b.checked_mul(d.psize).is_none_or(|all| all < d.gsize) {
                return Err(bad(format!(
                    "blocks of {b} over {} processes miss some of {}",
                    d.psize, d.gsize
                )));
            }
            let first = (p * b).min(d.gsize);
            let end = (first + b).min(d.gsize);
            Ok(if end > first { vec![(first, end - first)] } else { vec![] })
        }
        Distribution::Cyclic(b) => {
            let b = b.unwrap_or(1);
            let step = b * d.psize;
            Ok((p * b..d.gsize).step_by(step).map(|first| (first, b.min(d.gsize - first))).collect())
        }
    }
}

/// The type of process `rank`'s part of the `dims` array (slowest dimension first in
/// the argument order, as the call takes them) of `old` elements, stored in `order`.
pub fn darray(
    size: usize,
    rank: usize,
    dims: &[Dimension],
    order: Order,
    old: &TypeMap,
) -> MpiResult<TypeMap> {
    if dims.is_empty() {
        return fail(class::DIMS, "a distributed array needs at least one dimension");
    }
    let processes = dims.iter().try_fold(1usize, |n, d| n.checked_mul(d.psize)).unwrap_or(0);
    if processes != size {
        return fail(
            class::ARG,
            format!("the process grid holds {processes} processes, not the size {size}"),
        );
    }
    if rank >= size {
        return fail(class::RANK, format!("rank {rank} is not below the size {size}"));
    }
    // Row-major grid coordinates, whatever the storage order.
    let mut coords = vec![0; dims.len()];
    let mut rest = rank;
    for (c, d) in coords.iter_mut().zip(dims).rev() {
        (*c, rest) = (rest % d.psize, rest / d.psize);
    }
    let mut fastest_first: Vec<(usize, &Dimension)> = dims.iter().enumerate().collect();
    if order == Order::C {
        fastest_first.reverse();
    }
    let overflow = || MpiError::new(class::ARG, "the distributed array's bytes overflow the address space");
    // `step`: bytes between consecutive indices of the current dimension.
    let (mut map, mut step) = (old.clone(), old.extent);
    for &(dim, d) in &fastest_first {
        let unit = resized(&map, 0, step)?;
        let runs = owned_runs(d, coords[dim], dim)?;
        let blocks: MpiResult<Vec<Block<'_>>> = runs
            .iter()
            .map(|&(first, len)| {
                let disp =
                    isize::try_from(first).ok().and_then(|f| f.checked_mul(step)).ok_or_else(overflow)?;
                Ok(Block { disp, count: len, map: &unit })
            })
            .collect();
        map = from_blocks(&blocks?, false)?;
        step = isize::try_from(d.gsize).ok().and_then(|g| g.checked_mul(step)).ok_or_else(overflow)?;
    }
    resized(&map, 0, step)
}

/// The distribution that `mpi.h`'s `distrib` and `darg` name.
pub fn distribution(distrib: c_int, darg: c_int, dim: usize) -> MpiResult<Distribution> {
    let block = match darg {
        DFLT_DARG => None,
        b if b > 0 => Some(b as usize),
        b => {
            return fail(
                class::ARG,
                format!("dimension {dim}: darg {b} is neither positive nor the default"),
            );
        }
    };
    match distrib {
        DISTRIBUTE_BLOCK => Ok(Distribution::Block(block)),
        DISTRIBUTE_CYCLIC => Ok(Distribution::Cyclic(block)),
        DISTRIBUTE_NONE => Ok(Distribution::None),
        other => {
            fail(class::ARG, format!("dimension {dim}: distribution {other} is not an MPI_DISTRIBUTE_ value"))
        }
    }
}

/// `MPI_DISTRIBUTE_BLOCK`, `_CYCLIC`, `_NONE` and `_DFLT_DARG` (mpi.h).
pub const DISTRIBUTE_BLOCK: c_int = 121;
pub const DISTRIBUTE_CYCLIC: c_int = 122;
pub const DISTRIBUTE_NONE: c_int = 123;
pub const DFLT_DARG: c_int = -49767;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{Prim, Run};

    fn int() -> TypeMap {
        TypeMap::basic("MPI_INT", Prim::I32)
    }

    fn dim(gsize: usize, distribution: Distribution, psize: usize) -> Dimension {
        Dimension { gsize, distribution, psize }
    }

    /// The element indices (in units of int) the type covers, in type-map order.
    fn indices(map: &TypeMap) -> Vec<isize> {
        map.runs.iter().flat_map(|r: &Run| r.offset / 4..(r.offset + r.len as isize) / 4).collect()
    }

    #[test]
    fn block_rows_cyclic_columns() {
        // A 4 x 6 C array over a 2 x 2 grid: rows in blocks of 2, columns dealt one by one.
        let dims = [dim(4, Distribution::Block(None), 2), dim(6, Distribution::Cyclic(None), 2)];
        let t = darray(4, 1, &dims, Order::C, &int()).unwrap();
        // Rank 1 is grid (0, 1): rows 0-1, columns 1, 3, 5.
        assert_eq!(indices(&t), [1, 3, 5, 7, 9, 11]);
        assert_eq!((t.lb, t.extent, t.size), (0, 4 * 6 * 4, 6 * 4));
        let f = darray(4, 1, &dims, Order::Fortran, &int()).unwrap();
        // Fortran order: element (i, j) at i + 4 j; rows 0-1, columns 1, 3, 5.
        assert_eq!(indices(&f), [4, 5, 12, 13, 20, 21]);
    }

    #[test]
    fn cyclic_blocks_end_short_and_blocks_may_be_empty() {
        let cyclic = [dim(7, Distribution::Cyclic(Some(2)), 2)];
        assert_eq!(indices(&darray(2, 0, &cyclic, Order::C, &int()).unwrap()), [0, 1, 4, 5]);
        assert_eq!(indices(&darray(2, 1, &cyclic, Order::C, &int()).unwrap()), [2, 3, 6]);
        // Blocks of 3 over 4 processes of 7: the last owns nothing.
        let block = [dim(7, Distribution::Block(Some(3)), 4)];
        assert_eq!(indices(&darray(4, 2, &block, Order::C, &int()).unwrap()), [6]);
        let empty = darray(4, 3, &block, Order::C, &int()).unwrap();
        assert_eq!((empty.size, empty.extent), (0, 28));
    }

    #[test]
    fn bad_grids_are_refused() {
        let too_small = [dim(8, Distribution::Block(Some(1)), 4)];
        assert!(darray(4, 0, &too_small, Order::C, &int()).is_err(), "blocks miss elements");
        let none = [dim(8, Distribution::None, 2)];
        assert!(darray(2, 0, &none, Order::C, &int()).is_err(), "NONE over two processes");
        let grid = [dim(8, Distribution::Block(None), 3)];
        assert!(darray(4, 0, &grid, Order::C, &int()).is_err(), "grid of 3 for 4 processes");
        assert!(darray(3, 3, &grid, Order::C, &int()).is_err(), "rank past the size");
    }
}
