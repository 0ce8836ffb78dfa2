//! The array datatype constructors: `MPI_Type_create_subarray` (a box of an array) and
//! `MPI_Type_create_darray` (one process's part of a distributed array), which share
//! the array's storage order.

use std::ffi::c_int;

use crate::darray;
use crate::datatype;
use crate::decode::{Recipe, TypeArg};
use crate::derived;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::datatype::new_type;
use crate::ffi::{WORLD, c, entry};

/// `MPI_ORDER_C` and `MPI_ORDER_FORTRAN`.
const ORDER_C: c_int = 56;
const ORDER_FORTRAN: c_int = 57;

/// The storage order `mpi.h`'s `order` names.
fn storage_order(order: c_int) -> MpiResult<derived::Order> {
    match order {
        ORDER_C => Ok(derived::Order::C),
        ORDER_FORTRAN => Ok(derived::Order::Fortran),
        other => fail(class::ARG, format!("order {other} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN")),
    }
}

/// `MPI_Type_create_subarray`.
///
/// # Safety
/// `sizes`, `subsizes` and `starts` hold `ndims` ints; `newtype` points to an
/// `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_subarray")]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_subarray", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let layout = storage_order(order)?;
        if ndims < 1 {
            return fail(class::DIMS, format!("ndims {ndims} is not positive"));
        }
        let sizes = c!(array(sizes, ndims, "array_of_sizes"))?;
        let subsizes = c!(array(subsizes, ndims, "array_of_subsizes"))?;
        let starts = c!(array(starts, ndims, "array_of_starts"))?;
        let recipe = Recipe::subarray(sizes, subsizes, starts, order, TypeArg::of(oldtype, &old));
        new_type(derived::subarray(sizes, subsizes, starts, layout, &old), recipe, newtype)
    })
}

/// `MPI_Type_create_darray`.
///
/// # Safety
/// `gsizes`, `distribs`, `dargs` and `psizes` hold `ndims` ints; `newtype` points to
/// an `MPI_Datatype`.
#[unsafe(export_name = "PMPI_Type_create_darray")]
#[allow(clippy::too_many_arguments)] // MPI_Type_create_darray's
pub unsafe extern "C" fn MPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const c_int,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    entry("MPI_Type_create_darray", WORLD, || {
        let old = datatype::lookup(oldtype)?;
        let layout = storage_order(order)?;
        if ndims < 1 {
            return fail(class::DIMS, format!("ndims {ndims} is not positive"));
        }
        let size_arg = usize::try_from(size).ok().filter(|&s| s > 0);
        let size_arg =
            size_arg.ok_or_else(|| MpiError::new(class::ARG, format!("size {size} is not positive")))?;
        let rank_arg = usize::try_from(rank)
            .map_err(|_| MpiError::new(class::RANK, format!("rank {rank} is negative")))?;
        let gsizes = c!(array(gsizes, ndims, "array_of_gsizes"))?;
        let distribs = c!(array(distribs, ndims, "array_of_distribs"))?;
        let dargs = c!(array(dargs, ndims, "array_of_dargs"))?;
        let psizes = c!(array(psizes, ndims, "array_of_psizes"))?;
        let mut dims = Vec::with_capacity(gsizes.len());
        for (d, (((&g, &distrib), &darg), &p)) in
            gsizes.iter().zip(distribs).zip(dargs).zip(psizes).enumerate()
        {
            let (Ok(gsize @ 1..), Ok(psize @ 1..)) = (usize::try_from(g), usize::try_from(p)) else {
                return fail(class::ARG, format!("dimension {d}: gsize {g} and psize {p} must be positive"));
            };
            dims.push(darray::Dimension {
                gsize,
                distribution: darray::distribution(distrib, darg, d)?,
                psize,
            });
        }
        let header = [size, rank, ndims];
        let recipe =
            Recipe::darray(&header, gsizes, distribs, dargs, psizes, order, TypeArg::of(oldtype, &old));
        new_type(darray::darray(size_arg, rank_arg, &dims, layout, &old), recipe, newtype)
    })
}
