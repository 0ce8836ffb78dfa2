//! Collective calls.

use std::ffi::c_int;

use crate::comm::{self, coll_error};
use crate::ffi::{Scope, entry};

/// `MPI_Barrier`.
#[unsafe(no_mangle)]
pub extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    entry("MPI_Barrier", Scope::Comm(comm), || comm::lookup(comm)?.coll().barrier().map_err(coll_error))
}
