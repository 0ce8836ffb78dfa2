//! The program's datatype attribute keys (`MPI_Type_create_keyval`,
//! `MPI_Type_free_keyval`) and the attributes set with them (`MPI_Type_set_attr`,
//! `MPI_Type_get_attr`, `MPI_Type_delete_attr`): the datatype entry points of the
//! attribute [`store`], which holds the keys and values of every kind and states their
//! rules.
//!
//! Any datatype may carry attributes, the predefined ones included (which are never
//! freed, so theirs last until deleted). `MPI_Type_dup` runs the copy callbacks
//! ([`copy_all`]), `MPI_Type_free` the delete callbacks ([`delete_all`]), as for
//! communicators; no other constructor copies attributes. Datatypes have no error
//! handler: errors go to `MPI_COMM_WORLD`'s. Every call checks the datatype first
//! (`MPI_ERR_TYPE`), then the key (`MPI_ERR_KEYVAL`).

use std::ffi::{c_int, c_void};

use crate::datatype;
use crate::error::MpiResult;
use crate::ffi::attr::store::{self, CopyFunction, DeleteFunction, Kind};
use crate::ffi::{WORLD, entry};

/// `MPI_Type_dup`'s part: runs the copy callback of every attribute of `old`, giving
/// `new` those the callbacks keep. On an error the caller deletes what `new` got
/// ([`delete_all`]) and frees it.
pub fn copy_all(old: c_int, new: c_int) -> MpiResult<()> {
    store::copy_all(old, new)
}

/// `MPI_Type_free`'s part, before the type goes: deletes every attribute of `handle`,
/// running the delete callbacks; the first callback error is returned, after all ran.
pub fn delete_all(handle: c_int) -> MpiResult<()> {
    store::delete_all(handle)
}

/// `MPI_Type_create_keyval`.
///
/// # Safety
/// The callbacks are null or functions of their C types; `type_keyval` points to an
/// int.
#[unsafe(export_name = "PMPI_Type_create_keyval")]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Type_create_keyval", WORLD, || unsafe {
        store::create_out(Kind::Type, copy, delete, type_keyval, extra_state)
    })
}

/// `MPI_Type_free_keyval`: `*type_keyval` becomes `MPI_KEYVAL_INVALID`; attributes set
/// with it keep it until they are deleted.
///
/// # Safety
/// `type_keyval` points to an int.
#[unsafe(export_name = "PMPI_Type_free_keyval")]
pub unsafe extern "C" fn MPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Type_free_keyval", WORLD, || unsafe { store::free_out(Kind::Type, type_keyval) })
}

/// `MPI_Type_set_attr`: attaches `attribute_val` (a value, not read) under
/// `type_keyval`; an earlier value's delete callback runs first.
#[unsafe(export_name = "PMPI_Type_set_attr")]
pub extern "C" fn MPI_Type_set_attr(handle: c_int, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Type_set_attr", WORLD, || {
        datatype::lookup(handle)?;
        store::set(Kind::Type, handle, type_keyval, attribute_val as usize)
    })
}

/// `MPI_Type_get_attr`: stores the value set under `type_keyval` through
/// `attribute_val` (a `void **` passed as `void *`) and sets `flag`.
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` points to an int.
#[unsafe(export_name = "PMPI_Type_get_attr")]
pub unsafe extern "C" fn MPI_Type_get_attr(
    handle: c_int,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Type_get_attr", WORLD, || {
        datatype::lookup(handle)?;
        let value = store::get(Kind::Type, handle, type_keyval)?.map(|v| v as *mut c_void);
        // SAFETY: this call's contract.
        unsafe { store::get_out(value, attribute_val, flag) }
    })
}

/// `MPI_Type_delete_attr`: removes the attribute, running its delete callback.
#[unsafe(export_name = "PMPI_Type_delete_attr")]
pub extern "C" fn MPI_Type_delete_attr(handle: c_int, type_keyval: c_int) -> c_int {
    entry("MPI_Type_delete_attr", WORLD, || {
        datatype::lookup(handle)?;
        store::delete(Kind::Type, handle, type_keyval)
    })
}
