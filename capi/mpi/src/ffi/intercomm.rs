//! Intercommunicator calls (MPI-3.1 section 6.6): creation, merging and the queries of
//! the remote group; the mechanism is `crate::intercomm`. `MPI_Comm_size`,
//! `MPI_Comm_rank` and `MPI_Comm_group` (in [`super::comm`]) give an
//! intercommunicator's local group, as MPI says; `MPI_Comm_dup`, `MPI_Comm_free` and
//! `MPI_Comm_compare` take either kind.

use std::ffi::c_int;

use crate::comm::{self, CommObj};
use crate::error::{MpiResult, class, fail};
use crate::ffi::comm::new_comm;
use crate::ffi::{Scope, c, entry};
use crate::{group, intercomm};

/// The intercommunicator `handle` names; an intracommunicator is `MPI_ERR_COMM`.
fn lookup_inter(handle: c_int) -> MpiResult<&'static CommObj> {
    let c = comm::lookup(handle)?;
    if !c.is_inter() {
        return fail(
            class::COMM,
            format!("{handle:#x} is an intracommunicator: this call takes an intercommunicator"),
        );
    }
    Ok(c)
}

/// `MPI_Intercomm_create`: collective over `local_comm`; the leaders meet through
/// `peer_comm` (significant at `local_leader` only, as are `remote_leader` and `tag`).
///
/// # Safety
/// `newintercomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Intercomm_create")]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: c_int,
    local_leader: c_int,
    peer_comm: c_int,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut c_int,
) -> c_int {
    entry("MPI_Intercomm_create", Scope::Comm(local_comm), || {
        let local = comm::lookup_intra(local_comm)?;
        let h = intercomm::create(local, local_leader, peer_comm, remote_leader, tag)?;
        new_comm(local_comm, Some(h), newintercomm)
    })
}

/// `MPI_Intercomm_merge`: the intracommunicator of both groups, the one whose processes
/// passed `high` false first (the lower leader's world rank first if both passed alike).
///
/// # Safety
/// `newintracomm` points to an `MPI_Comm`.
#[unsafe(export_name = "PMPI_Intercomm_merge")]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: c_int,
    high: c_int,
    newintracomm: *mut c_int,
) -> c_int {
    entry("MPI_Intercomm_merge", Scope::Comm(intercomm), || {
        let h = intercomm::merge(lookup_inter(intercomm)?, high != 0)?;
        new_comm(intercomm, Some(h), newintracomm)
    })
}

/// `MPI_Comm_test_inter`: whether `comm` is an intercommunicator.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_Comm_test_inter")]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: c_int, flag: *mut c_int) -> c_int {
    entry("MPI_Comm_test_inter", Scope::Comm(comm), || {
        c!(out(flag, c_int::from(comm::lookup(comm)?.is_inter()), "flag"))
    })
}

/// `MPI_Comm_remote_size`: the remote group's size (`MPI_ERR_COMM` on an
/// intracommunicator).
///
/// # Safety
/// `size` points to an int.
#[unsafe(export_name = "PMPI_Comm_remote_size")]
pub unsafe extern "C" fn MPI_Comm_remote_size(comm: c_int, size: *mut c_int) -> c_int {
    entry("MPI_Comm_remote_size", Scope::Comm(comm), || {
        c!(out(size, lookup_inter(comm)?.peers.len() as c_int, "size"))
    })
}

/// `MPI_Comm_remote_group`: the remote group (`MPI_ERR_COMM` on an intracommunicator).
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Comm_remote_group")]
pub unsafe extern "C" fn MPI_Comm_remote_group(comm: c_int, grp: *mut c_int) -> c_int {
    entry("MPI_Comm_remote_group", Scope::Comm(comm), || {
        c!(out(grp, group::insert(lookup_inter(comm)?.peers.clone()), "group"))
    })
}
