//! What a program can ask of a window besides its parts: its attributes
//! (`MPI_Win_get_attr`: those MPI predefines on every window, `MPI_WIN_BASE`,
//! `MPI_WIN_SIZE`, `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR` and `MPI_WIN_MODEL`,
//! answered here, and the program's own, kept by [`crate::ffi::attr::store`]), its
//! name (`MPI_Win_set_name`, `MPI_Win_get_name`) and the hints it uses
//! (`MPI_Win_get_info`).
//!
//! As for communicators, an attribute is handed out as a pointer to its value, except
//! `MPI_WIN_BASE`, whose value is the base address itself. The values live as long as
//! the window: in the window's object (its own part's size and unit) or in statics.
//! Every window is in the unified memory model: its parts are the shared memory that
//! loads and stores reach, so the public and private copies are one.

use std::ffi::{c_char, c_int, c_void};

use crate::ffi::attr::{store, win_keyval};
use crate::ffi::datatype::MAX_OBJECT_NAME;
use crate::ffi::{Scope, c, entry};
use crate::win::{self, Flavor};

/// `MPI_WIN_BASE`, `MPI_WIN_SIZE`, `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR` and
/// `MPI_WIN_MODEL` (mpi.h).
const BASE: c_int = 0x6440_0021;
const SIZE: c_int = 0x6440_0023;
const DISP_UNIT: c_int = 0x6440_0025;
const CREATE_FLAVOR: c_int = 0x6440_0027;
const MODEL: c_int = 0x6440_0029;

/// `MPI_WIN_FLAVOR_*` by `Flavor`, and `MPI_WIN_UNIFIED`.
static FLAVORS: [c_int; 5] = [0, 1, 2, 3, 4];
static UNIFIED: c_int = 2;

/// `MPI_Win_get_attr`: stores the attribute through `attribute_val` (a `void **`
/// passed as `void *`) and sets `flag`: a predefined one, or the program's own
/// ([`crate::ffi::attr::win_keyval`]).
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` points to an int.
#[unsafe(export_name = "PMPI_Win_get_attr")]
pub unsafe extern "C" fn MPI_Win_get_attr(
    w: c_int,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Win_get_attr", Scope::Win(w), || {
        let obj = win::lookup(w)?;
        let value: *const c_void = match win_keyval {
            BASE if obj.flavor == Flavor::Dynamic => std::ptr::null(),
            BASE => match obj.given_base {
                Some(base) => base as *const c_void,
                None => win::shared_query(obj, obj.comm.rank as c_int)?.2,
            },
            SIZE => std::ptr::from_ref(&obj.own_part.0).cast(),
            DISP_UNIT => std::ptr::from_ref(&obj.own_part.1).cast(),
            CREATE_FLAVOR => std::ptr::from_ref(&FLAVORS[obj.flavor as usize]).cast(),
            MODEL => std::ptr::from_ref(&UNIFIED).cast(),
            // The program's own (`MPI_ERR_KEYVAL` for a key of another kind).
            other => match win_keyval::get(w, other)? {
                Some(value) => value as *const c_void,
                // SAFETY: this call's contract.
                None => return unsafe { store::get_out(None, attribute_val, flag) },
            },
        };
        // SAFETY: this call's contract.
        unsafe { store::get_out(Some(value.cast_mut()), attribute_val, flag) }
    })
}

/// `MPI_Win_set_name`: names the window for this process (cut to
/// `MPI_MAX_OBJECT_NAME - 1` characters).
///
/// # Safety
/// `win_name` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_Win_set_name")]
pub unsafe extern "C" fn MPI_Win_set_name(w: c_int, win_name: *const c_char) -> c_int {
    entry("MPI_Win_set_name", Scope::Win(w), || {
        let obj = win::lookup(w)?;
        let name = c!(string(win_name, "win_name"))?;
        *obj.name.lock().unwrap_or_else(|p| p.into_inner()) =
            name.chars().take(MAX_OBJECT_NAME - 1).collect();
        Ok(())
    })
}

/// `MPI_Win_get_name`: the name, empty if none was set.
///
/// # Safety
/// `win_name` has room for `MPI_MAX_OBJECT_NAME` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Win_get_name")]
pub unsafe extern "C" fn MPI_Win_get_name(w: c_int, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
    entry("MPI_Win_get_name", Scope::Win(w), || {
        let name = win::lookup(w)?.name.lock().unwrap_or_else(|p| p.into_inner()).clone();
        c!(out_string(win_name, resultlen, MAX_OBJECT_NAME, &name))
    })
}

/// `MPI_Win_get_info`: a new info with the hints the window uses, with their values in
/// effect (`crate::win::WinObj::hints`); the program frees it.
///
/// # Safety
/// `info_used` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_Win_get_info")]
pub unsafe extern "C" fn MPI_Win_get_info(handle: c_int, info_used: *mut c_int) -> c_int {
    entry("MPI_Win_get_info", Scope::Win(handle), || {
        let obj = win::lookup(handle)?;
        c!(out(info_used, crate::info::with_pairs(obj.hints.clone()), "info_used"))
    })
}
