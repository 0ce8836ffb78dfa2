//! Windows (placeholder of the skeleton: the RMA work replaces this file).

use std::ffi::{c_int, c_void};

use crate::error::{MpiResult, class, fail};

/// `MPI_WIN_NULL`: the window table's base.
pub const WIN_NULL: c_int = 0x5000_0000;

/// Checks that `win` names a live window.
pub fn check_handle(win: c_int) -> MpiResult<()> {
    fail(class::WIN, format!("{win:#x} is not a window handle"))
}

/// `MPI_Alloc_mem`.
pub fn alloc_mem(_size: usize) -> MpiResult<*mut c_void> {
    fail(class::NO_MEM, "MPI_Alloc_mem is not written yet")
}

/// `MPI_Free_mem`.
pub fn free_mem(_base: *mut c_void) -> MpiResult<()> {
    fail(class::BASE, "MPI_Free_mem is not written yet")
}
