//! The program's communicator attribute keys (`MPI_Comm_create_keyval`, MPI-1
//! `MPI_Keyval_create`) and the attributes set with them (`MPI_Comm_set_attr`,
//! `MPI_Comm_delete_attr`, MPI-1 `MPI_Attr_put` and `MPI_Attr_delete`), with the
//! predefined callbacks: the communicator entry points of the attribute [`store`],
//! which holds the keys and values of every kind and states their rules.
//!
//! As MPI defines them: an attribute is a pointer-sized value a process attaches to a
//! communicator (its own: attributes are local). `MPI_Comm_dup` runs each attribute's
//! copy callback, which decides whether the new communicator gets it and with what
//! value; `MPI_Comm_free`, `MPI_Comm_delete_attr` and setting an attribute again run
//! the delete callback on the value that goes; `MPI_Finalize` deletes the attributes
//! of `MPI_COMM_SELF` first (libraries hook their clean-up there), then those of
//! `MPI_COMM_WORLD`. Every call checks the communicator first (`MPI_ERR_COMM`), then
//! the key (`MPI_ERR_KEYVAL`).

use std::ffi::{c_int, c_void};

use crate::comm;
use crate::error::{MpiResult, class};
use crate::ffi::attr::store::{self, Kind};
use crate::ffi::{Scope, WORLD, entry};

pub use store::{CopyFunction, DeleteFunction};

/// The program's attribute `keyval` on `comm`, if set (`MPI_ERR_KEYVAL` if `keyval`
/// is no communicator key).
pub fn get(comm: c_int, keyval: c_int) -> MpiResult<Option<usize>> {
    store::get(Kind::Comm, comm, keyval)
}

fn set(comm: c_int, keyval: c_int, value: usize) -> MpiResult<()> {
    comm::lookup(comm)?;
    store::set(Kind::Comm, comm, keyval, value)
}

fn delete(comm: c_int, keyval: c_int) -> MpiResult<()> {
    comm::lookup(comm)?;
    store::delete(Kind::Comm, comm, keyval)
}

/// `MPI_Comm_dup`'s part: runs the copy callback of every attribute of `old`, giving
/// `new` those the callbacks keep.
pub fn copy_all(old: c_int, new: c_int) -> MpiResult<()> {
    store::copy_all(old, new)
}

/// `MPI_Comm_free`'s and `MPI_Finalize`'s part: deletes every attribute of `comm`,
/// running the delete callbacks; the first callback error is returned, after all ran.
pub fn delete_all(comm: c_int) -> MpiResult<()> {
    store::delete_all(comm)
}

/// `MPI_Comm_create_keyval`.
///
/// # Safety
/// The callbacks are null or functions of their C types; `keyval` points to an int.
#[unsafe(export_name = "PMPI_Comm_create_keyval")]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Comm_create_keyval", WORLD, || unsafe {
        store::create_out(Kind::Comm, copy, delete, keyval, extra_state)
    })
}

/// `MPI_Keyval_create`, MPI-1's name for [`MPI_Comm_create_keyval`].
///
/// # Safety
/// As [`MPI_Comm_create_keyval`].
#[unsafe(export_name = "PMPI_Keyval_create")]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Keyval_create", WORLD, || unsafe {
        store::create_out(Kind::Comm, copy, delete, keyval, extra_state)
    })
}

/// `MPI_Comm_free_keyval`.
///
/// # Safety
/// `keyval` points to an int.
#[unsafe(export_name = "PMPI_Comm_free_keyval")]
pub unsafe extern "C" fn MPI_Comm_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Comm_free_keyval", WORLD, || unsafe { store::free_out(Kind::Comm, keyval) })
}

/// `MPI_Keyval_free`, MPI-1's name for [`MPI_Comm_free_keyval`].
///
/// # Safety
/// As [`MPI_Comm_free_keyval`].
#[unsafe(export_name = "PMPI_Keyval_free")]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Keyval_free", WORLD, || unsafe { store::free_out(Kind::Comm, keyval) })
}

/// `MPI_Comm_set_attr`: attaches `attribute_val` (a value, not read) under `keyval`;
/// an earlier value's delete callback runs first.
#[unsafe(export_name = "PMPI_Comm_set_attr")]
pub extern "C" fn MPI_Comm_set_attr(comm: c_int, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Comm_set_attr", Scope::Comm(comm), || set(comm, keyval, attribute_val as usize))
}

/// `MPI_Attr_put`, MPI-1's name for [`MPI_Comm_set_attr`].
#[unsafe(export_name = "PMPI_Attr_put")]
pub extern "C" fn MPI_Attr_put(comm: c_int, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Attr_put", Scope::Comm(comm), || set(comm, keyval, attribute_val as usize))
}

/// `MPI_Comm_delete_attr`: removes the attribute, running its delete callback.
#[unsafe(export_name = "PMPI_Comm_delete_attr")]
pub extern "C" fn MPI_Comm_delete_attr(comm: c_int, keyval: c_int) -> c_int {
    entry("MPI_Comm_delete_attr", Scope::Comm(comm), || delete(comm, keyval))
}

/// `MPI_Attr_delete`, MPI-1's name for [`MPI_Comm_delete_attr`].
#[unsafe(export_name = "PMPI_Attr_delete")]
pub extern "C" fn MPI_Attr_delete(comm: c_int, keyval: c_int) -> c_int {
    entry("MPI_Attr_delete", Scope::Comm(comm), || delete(comm, keyval))
}

/// `MPI_COMM_NULL_COPY_FN` (and `MPI_NULL_COPY_FN`, `MPI_TYPE_NULL_COPY_FN`,
/// `MPI_WIN_NULL_COPY_FN`): the attribute is not copied.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sccemu_comm_null_copy_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    _attribute_val_in: *mut c_void,
    _attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a pointer to an int (this function's contract).
    unsafe { *flag = 0 };
    class::SUCCESS
}

/// `MPI_COMM_DUP_FN` (and `MPI_DUP_FN`, `MPI_TYPE_DUP_FN`, `MPI_WIN_DUP_FN`): the new
/// object gets the same value.
///
/// # Safety
/// `attribute_val_out` points to a `void *`; `flag` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sccemu_comm_dup_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a pointer to a `void *` and one to an int (this function's
    // contract).
    unsafe {
        *attribute_val_out.cast::<*mut c_void>() = attribute_val_in;
        *flag = 1;
    }
    class::SUCCESS
}

/// `MPI_COMM_NULL_DELETE_FN` (and `MPI_NULL_DELETE_FN`, `MPI_TYPE_NULL_DELETE_FN`,
/// `MPI_WIN_NULL_DELETE_FN`): nothing to release.
#[unsafe(no_mangle)]
pub extern "C" fn sccemu_comm_null_delete_fn(
    _comm: c_int,
    _keyval: c_int,
    _attribute_val: *mut c_void,
    _extra_state: *mut c_void,
) -> c_int {
    class::SUCCESS
}
