//! Communicators and groups. Topologies (Cartesian and distributed graph) are in
//! [`super::topology`].

use std::ffi::c_int;

use crate::comm::{self, COMM_NULL};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::attr::keyval;
use crate::ffi::datatype::MAX_OBJECT_NAME;
use crate::ffi::group_ops::give;
use crate::ffi::{Scope, WORLD, c, entry};
use crate::group::{self, GROUP_EMPTY};
use crate::topology::Topology;

/// `MPI_UNDEFINED`.
pub const UNDEFINED: c_int = -32766;

/// `MPI_Comm_rank`.
///
/// # Safety
/// `rank` points to an int.
#[unsafe(export_name = "PMPI_Comm_rank")]
pub unsafe extern "C" fn MPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int {
    entry("MPI_Comm_rank", Scope::Comm(comm), || c!(out(rank, comm::lookup(comm)?.rank as c_int, "rank")))
}

/// `MPI_Comm_size`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(export_name = "PMPI_Comm_size")]
pub unsafe extern "C" fn MPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Comm_size", Scope::Comm(comm), || c!(out(size, comm::lookup(comm)?.size() as c_int, "size")))
}

pub(super) fn new_comm(parent: c_int, handle: Option<c_int>, newcomm: *mut c_int) -> MpiResult<()> {
    if let Some(h) = handle {
        crate::errhandler::inherit(parent, h);
    }
    c!(out(newcomm, handle.unwrap_or(COMM_NULL), "newcomm"))
}

/// `MPI_Comm_dup`: same members and order (both groups, for an intercommunicator), a
/// new context, the parent's topology, error handler and hints.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_dup")]
pub unsafe extern "C" fn MPI_Comm_dup(comm: c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Comm_dup", Scope::Comm(comm), || dup(comm, comm::lookup(comm)?.hints(), newcomm))
}

/// `MPI_Comm_dup_with_info`: as `MPI_Comm_dup`, with the hints of `info` instead of the
/// parent's.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_dup_with_info")]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Comm_dup_with_info", Scope::Comm(comm), || dup(comm, crate::info::pairs(info)?, newcomm))
}

/// A duplicate of `comm` with `hints`, written through `newcomm`.
fn dup(comm: c_int, hints: crate::info::Pairs, newcomm: *mut c_int) -> MpiResult<()> {
    let c = comm::lookup(comm)?;
    let h = match c.is_inter() {
        true => Some(crate::intercomm::dup(c)?),
        false => comm::split(c, Some(0), c.rank as c_int, c.topology.clone())?,
    };
    if let Some(h) = h {
        comm::lookup(h)?.set_hints(hints);
        // The attributes' copy callbacks decide what the new one gets.
        if let Err(e) = keyval::copy_all(comm, h) {
            let _ = keyval::delete_all(h);
            let _ = comm::free(h);
            return Err(e);
        }
    }
    new_comm(comm, h, newcomm)
}

fn color(color: c_int) -> MpiResult<Option<u32>> {
    match color {
        UNDEFINED => Ok(None),
        c => u32::try_from(c)
            .map(Some)
            .map_err(|_| MpiError::new(class::ARG, format!("colour {c} is neither MPI_UNDEFINED nor >= 0"))),
    }
}

/// `MPI_Comm_split`; of an intercommunicator, an intercommunicator per colour
/// (`crate::intersplit`).
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_split")]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: c_int,
    colour: c_int,
    key: c_int,
    newcomm: *mut c_int,
) -> c_int {
    entry("MPI_Comm_split", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let h = match c.is_inter() {
            true => crate::intersplit::split(c, color(colour)?, key)?,
            false => comm::split(c, color(colour)?, key, Topology::None)?,
        };
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Comm_split_type`: every core of a node shares memory, so
/// `MPI_COMM_TYPE_SHARED` keeps the whole communicator on one node, and a node's ranks
/// of it in a job that spans nodes.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_split_type")]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: c_int,
    split_type: c_int,
    key: c_int,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    entry("MPI_Comm_split_type", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        crate::info::pairs(info)?;
        let colour = match split_type {
            UNDEFINED => None,
            // The colour is the node's first rank (0 on one node), alike on its ranks.
            1 => {
                let ctx = crate::state::mpi()?.core.context();
                Some((0..ctx.size()).find(|&r| ctx.is_local(r)).unwrap_or(0))
            }
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

/// `MPI_Comm_create`: the members of `group` (a subgroup of `comm`'s), in its order; of
/// an intercommunicator, the intercommunicator between the groups each side passed
/// (`crate::intersplit`).
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_create")]
pub unsafe extern "C" fn MPI_Comm_create(comm: c_int, grp: c_int, newcomm: *mut c_int) -> c_int {
    entry("MPI_Comm_create", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let g = group::lookup(grp)?;
        if c.is_inter() {
            let h = crate::intersplit::create(c, &g)?;
            return new_comm(comm, h, newcomm);
        }
        if let Some(w) = g.iter().find(|&&w| c.rank_of_world(w).is_none()) {
            return fail(class::GROUP, format!("world rank {w} of the group is not in the communicator"));
        }
        let me = c.members[c.rank as usize];
        let position = g.iter().position(|&w| w == me);
        let h = comm::split(c, position.map(|_| 0), position.map_or(0, |p| p as c_int), Topology::None)?;
        new_comm(comm, h, newcomm)
    })
}

/// `MPI_Comm_create_group`: the members of `group` (a subgroup of `comm`'s), in its
/// order, created by them alone, told apart from their other creations by `tag`
/// (`crate::create_group`). A caller outside the group gets `MPI_ERR_GROUP`.
///
/// # Safety
/// `newcomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_create_group")]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: c_int,
    grp: c_int,
    tag: c_int,
    newcomm: *mut c_int,
) -> c_int {
    entry("MPI_Comm_create_group", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        let g = group::lookup(grp)?;
        let h = crate::create_group::create_group(c, &g, tag)?;
        new_comm(comm, Some(h), newcomm)
    })
}

/// `MPI_Comm_free`: the handle becomes `MPI_COMM_NULL`.
///
/// # Safety
/// `comm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Comm_free")]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    let handle = if comm.is_null() { COMM_NULL } else { c!(read(comm, "comm")).unwrap_or(COMM_NULL) };
    entry("MPI_Comm_free", Scope::Comm(handle), || {
        let h = c!(read(comm, "comm"))?;
        comm::lookup(h)?;
        if h != comm::WORLD && h != comm::SELF {
            keyval::delete_all(h)?;
        }
        comm::free(h)?;
        c!(out(comm, COMM_NULL, "comm"))
    })
}

/// `MPI_Comm_group`: the local group, for an intercommunicator.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Comm_group")]
pub unsafe extern "C" fn MPI_Comm_group(comm: c_int, grp: *mut c_int) -> c_int {
    entry("MPI_Comm_group", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        c!(out(grp, group::insert(c.members.clone()), "group"))
    })
}

/// `MPI_Comm_compare`: for two intercommunicators, both groups are compared (congruent
/// if both are identical, similar if both are at least similar); an intercommunicator
/// and an intracommunicator are unequal.
///
/// # Safety
/// `result` points to an int.
#[unsafe(export_name = "PMPI_Comm_compare")]
pub unsafe extern "C" fn MPI_Comm_compare(comm1: c_int, comm2: c_int, result: *mut c_int) -> c_int {
    entry("MPI_Comm_compare", Scope::Comm(comm1), || {
        let (a, b) = (comm::lookup(comm1)?, comm::lookup(comm2)?);
        // Group comparisons: 0 identical, 2 similar, 3 unequal; so the larger decides.
        let remote = match (a.remote(), b.remote()) {
            (Some(x), Some(y)) => group::compare(x, y),
            (None, None) => 0,
            _ => 3,
        };
        let r = match group::compare(&a.members, &b.members).max(remote) {
            _ if comm1 == comm2 => 0,
            0 => 1, // same groups and order: congruent
            r => r,
        };
        c!(out(result, r, "result"))
    })
}

/// `MPI_Group_size`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(export_name = "PMPI_Group_size")]
pub unsafe extern "C" fn MPI_Group_size(grp: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Group_size", WORLD, || c!(out(size, group::lookup(grp)?.len() as c_int, "size")))
}

/// `MPI_Group_rank`: `MPI_UNDEFINED` if this process is not a member.
///
/// # Safety
/// `rank` points to an int.
#[unsafe(export_name = "PMPI_Group_rank")]
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
#[unsafe(export_name = "PMPI_Group_incl")]
pub unsafe extern "C" fn MPI_Group_incl(
    grp: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    entry("MPI_Group_incl", WORLD, || {
        let members = group::incl(&group::lookup(grp)?, c!(array(ranks, n, "ranks"))?)?;
        // SAFETY: this call's contract.
        unsafe { give(members, newgroup) }
    })
}

/// `MPI_Group_excl`.
///
/// # Safety
/// `ranks` holds `n` ints; `newgroup` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_excl")]
pub unsafe extern "C" fn MPI_Group_excl(
    grp: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    entry("MPI_Group_excl", WORLD, || {
        let members = group::excl(&group::lookup(grp)?, c!(array(ranks, n, "ranks"))?)?;
        // SAFETY: this call's contract.
        unsafe { give(members, newgroup) }
    })
}

/// `MPI_Group_translate_ranks`: `MPI_UNDEFINED` where a process is not in `group2`.
///
/// # Safety
/// `ranks1` and `ranks2` hold `n` ints.
#[unsafe(export_name = "PMPI_Group_translate_ranks")]
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
#[unsafe(export_name = "PMPI_Group_compare")]
pub unsafe extern "C" fn MPI_Group_compare(group1: c_int, group2: c_int, result: *mut c_int) -> c_int {
    entry("MPI_Group_compare", WORLD, || {
        c!(out(result, group::compare(&group::lookup(group1)?, &group::lookup(group2)?), "result"))
    })
}

/// `MPI_Group_free`: the handle becomes `MPI_GROUP_NULL`.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Group_free")]
pub unsafe extern "C" fn MPI_Group_free(grp: *mut c_int) -> c_int {
    entry("MPI_Group_free", WORLD, || {
        let h = c!(read(grp, "group"))?;
        if h != GROUP_EMPTY {
            group::free(h)?;
        }
        c!(out(grp, group::GROUP_NULL, "group"))
    })
}

/// `MPI_Comm_set_name`: names the communicator for this process (cut to
/// `MPI_MAX_OBJECT_NAME - 1` characters).
///
/// # Safety
/// `comm_name` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_Comm_set_name")]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: c_int, comm_name: *const std::ffi::c_char) -> c_int {
    entry("MPI_Comm_set_name", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let name = c!(string(comm_name, "comm_name"))?;
        c.set_name(name.chars().take(MAX_OBJECT_NAME - 1).collect());
        Ok(())
    })
}

/// `MPI_Comm_get_name`: the name, empty if none was set.
///
/// # Safety
/// `comm_name` has room for `MPI_MAX_OBJECT_NAME` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Comm_get_name")]
pub unsafe extern "C" fn MPI_Comm_get_name(
    comm: c_int,
    comm_name: *mut std::ffi::c_char,
    resultlen: *mut c_int,
) -> c_int {
    entry("MPI_Comm_get_name", Scope::Comm(comm), || {
        let name = comm::lookup(comm)?.name();
        c!(out_string(comm_name, resultlen, MAX_OBJECT_NAME, &name))
    })
}
