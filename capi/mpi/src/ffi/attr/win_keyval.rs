//! The program's window attribute keys (`MPI_Win_create_keyval`,
//! `MPI_Win_free_keyval`) and the attributes set with them (`MPI_Win_set_attr`,
//! `MPI_Win_delete_attr`): the window entry points of the attribute [`store`], which
//! holds the keys and values of every kind and states their rules.
//!
//! `MPI_Win_get_attr` lives with the predefined window attributes
//! ([`crate::ffi::win_attr`]), which it answers first. A window is never copied, so a
//! window key's copy callback is kept but never runs; the delete callbacks run at
//! `MPI_Win_delete_attr`, when a value is replaced, and at `MPI_Win_free`
//! ([`delete_all`]). Every call checks the window first (`MPI_ERR_WIN`), then the key
//! (`MPI_ERR_KEYVAL`).

use std::ffi::{c_int, c_void};

use crate::error::MpiResult;
use crate::ffi::attr::store::{self, CopyFunction, DeleteFunction, Kind};
use crate::ffi::{Scope, WORLD, entry};
use crate::win;

/// The program's attribute `keyval` on window `w`, if set (`MPI_ERR_KEYVAL` if
/// `keyval` is no window key).
pub fn get(w: c_int, keyval: c_int) -> MpiResult<Option<usize>> {
    store::get(Kind::Win, w, keyval)
}

/// `MPI_Win_free`'s part, before the window goes: deletes every attribute of `w`,
/// running the delete callbacks; the first callback error is returned, after all ran.
pub fn delete_all(w: c_int) -> MpiResult<()> {
    win::check_handle(w)?;
    store::delete_all(w)
}

/// `MPI_Win_create_keyval`.
///
/// # Safety
/// The callbacks are null or functions of their C types; `win_keyval` points to an
/// int.
#[unsafe(export_name = "PMPI_Win_create_keyval")]
pub unsafe extern "C" fn MPI_Win_create_keyval(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Win_create_keyval", WORLD, || unsafe {
        store::create_out(Kind::Win, copy, delete, win_keyval, extra_state)
    })
}

/// `MPI_Win_free_keyval`: `*win_keyval` becomes `MPI_KEYVAL_INVALID`; attributes set
/// with it keep it until they are deleted.
///
/// # Safety
/// `win_keyval` points to an int.
#[unsafe(export_name = "PMPI_Win_free_keyval")]
pub unsafe extern "C" fn MPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Win_free_keyval", WORLD, || unsafe { store::free_out(Kind::Win, win_keyval) })
}

/// `MPI_Win_set_attr`: attaches `attribute_val` (a value, not read) under
/// `win_keyval`; an earlier value's delete callback runs first.
#[unsafe(export_name = "PMPI_Win_set_attr")]
pub extern "C" fn MPI_Win_set_attr(w: c_int, win_keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Win_set_attr", Scope::Win(w), || {
        win::check_handle(w)?;
        store::set(Kind::Win, w, win_keyval, attribute_val as usize)
    })
}

/// `MPI_Win_delete_attr`: removes the attribute, running its delete callback.
#[unsafe(export_name = "PMPI_Win_delete_attr")]
pub extern "C" fn MPI_Win_delete_attr(w: c_int, win_keyval: c_int) -> c_int {
    entry("MPI_Win_delete_attr", Scope::Win(w), || {
        win::check_handle(w)?;
        store::delete(Kind::Win, w, win_keyval)
    })
}
