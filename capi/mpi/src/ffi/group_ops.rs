//! Groups built from other groups (`crate::group` has the rules): `MPI_Group_union`,
//! `MPI_Group_intersection`, `MPI_Group_difference`, `MPI_Group_range_incl` and
//! `MPI_Group_range_excl`. An empty result is `MPI_GROUP_EMPTY`, as for
//! `MPI_Group_incl`.

use std::ffi::c_int;

use crate::error::MpiResult;
use crate::ffi::{WORLD, c, entry};
use crate::group::{self, GROUP_EMPTY};

/// Hands out `members` as a new group (or the empty one).
///
/// # Safety
/// `newgroup` points to an `MPI_Group`.
pub(super) unsafe fn give(members: Vec<u32>, newgroup: *mut c_int) -> MpiResult<()> {
    let handle = if members.is_empty() { GROUP_EMPTY } else { group::insert(members) };
    c!(out(newgroup, handle, "newgroup"))
}

/// `MPI_Group_union`.
///
/// # Safety
/// `newgroup` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_union")]
pub unsafe extern "C" fn MPI_Group_union(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
    entry("MPI_Group_union", WORLD, || {
        let members = group::union(&group::lookup(group1)?, &group::lookup(group2)?);
        // SAFETY: this call's contract.
        unsafe { give(members, newgroup) }
    })
}

/// `MPI_Group_intersection`.
///
/// # Safety
/// `newgroup` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_intersection")]
pub unsafe extern "C" fn MPI_Group_intersection(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
    entry("MPI_Group_intersection", WORLD, || {
        let members = group::filter(&group::lookup(group1)?, &group::lookup(group2)?, true);
        // SAFETY: this call's contract.
        unsafe { give(members, newgroup) }
    })
}

/// `MPI_Group_difference`.
///
/// # Safety
/// `newgroup` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_difference")]
pub unsafe extern "C" fn MPI_Group_difference(group1: c_int, group2: c_int, newgroup: *mut c_int) -> c_int {
    entry("MPI_Group_difference", WORLD, || {
        let members = group::filter(&group::lookup(group1)?, &group::lookup(group2)?, false);
        // SAFETY: this call's contract.
        unsafe { give(members, newgroup) }
    })
}

/// The members of `grp` that `n` range triplets name (`incl`), or the others.
///
/// # Safety
/// `ranges` holds `n` triplets; `newgroup` points to an `MPI_Group`.
unsafe fn by_ranges(
    grp: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
    incl: bool,
) -> MpiResult<()> {
    let g = group::lookup(grp)?;
    let ranks = group::range_ranks(g.len(), c!(array(ranges, n, "ranges"))?)?;
    let members = if incl { group::incl(&g, &ranks)? } else { group::excl(&g, &ranks)? };
    // SAFETY: this function's contract.
    unsafe { give(members, newgroup) }
}

/// `MPI_Group_range_incl`: the ranks of each triplet (first, last, stride), in order.
///
/// # Safety
/// `ranges` holds `n` triplets of ints; `newgroup` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_range_incl")]
pub unsafe extern "C" fn MPI_Group_range_incl(
    grp: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Group_range_incl", WORLD, || unsafe { by_ranges(grp, n, ranges, newgroup, true) })
}

/// `MPI_Group_range_excl`: the members the triplets do not name, in group order.
///
/// # Safety
/// As [`MPI_Group_range_incl`].
#[unsafe(export_name = "PMPI_Group_range_excl")]
pub unsafe extern "C" fn MPI_Group_range_excl(
    grp: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Group_range_excl", WORLD, || unsafe { by_ranges(grp, n, ranges, newgroup, false) })
}
