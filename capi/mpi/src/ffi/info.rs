//! Info objects at the C boundary: `MPI_Info_create`, `MPI_Info_dup`, `MPI_Info_set`,
//! `MPI_Info_get`, `MPI_Info_get_valuelen`, `MPI_Info_delete`, `MPI_Info_get_nkeys`,
//! `MPI_Info_get_nthkey` and `MPI_Info_free` (the pairs themselves: `crate::info`).

use std::ffi::{c_char, c_int};

use crate::error::{MpiError, class, fail};
use crate::ffi::{WORLD, c, entry};
use crate::info;

/// `MPI_Info_create`.
///
/// # Safety
/// `info` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_Info_create")]
pub unsafe extern "C" fn MPI_Info_create(info_out: *mut c_int) -> c_int {
    entry("MPI_Info_create", WORLD, || c!(out(info_out, info::create(), "info")))
}

/// `MPI_Info_set`.
///
/// # Safety
/// `key` and `value` are NUL-terminated strings.
#[unsafe(export_name = "PMPI_Info_set")]
pub unsafe extern "C" fn MPI_Info_set(handle: c_int, key: *const c_char, value: *const c_char) -> c_int {
    entry("MPI_Info_set", WORLD, || info::set(handle, &c!(string(key, "key"))?, &c!(string(value, "value"))?))
}

/// `MPI_Info_get`.
///
/// # Safety
/// `key` is a NUL-terminated string; `value` holds `valuelen + 1` chars; `flag`
/// points to an int.
#[unsafe(export_name = "PMPI_Info_get")]
pub unsafe extern "C" fn MPI_Info_get(
    handle: c_int,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Info_get", WORLD, || {
        let found = info::get(handle, &c!(string(key, "key"))?)?;
        c!(out(flag, found.is_some() as c_int, "flag"))?;
        match found {
            Some(v) => {
                let max =
                    usize::try_from(valuelen).map_err(|_| MpiError::new(class::ARG, "negative valuelen"))?;
                c!(out_string(value, std::ptr::null_mut(), max + 1, &v))
            }
            None => Ok(()),
        }
    })
}

/// `MPI_Info_delete`.
///
/// # Safety
/// `key` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_Info_delete")]
pub unsafe extern "C" fn MPI_Info_delete(handle: c_int, key: *const c_char) -> c_int {
    entry("MPI_Info_delete", WORLD, || info::delete(handle, &c!(string(key, "key"))?))
}

/// `MPI_Info_get_nkeys`.
///
/// # Safety
/// `nkeys` points to an int.
#[unsafe(export_name = "PMPI_Info_get_nkeys")]
pub unsafe extern "C" fn MPI_Info_get_nkeys(handle: c_int, nkeys: *mut c_int) -> c_int {
    entry("MPI_Info_get_nkeys", WORLD, || c!(out(nkeys, info::pairs(handle)?.len() as c_int, "nkeys")))
}

/// `MPI_Info_free`: the handle becomes `MPI_INFO_NULL`.
///
/// # Safety
/// `info` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_Info_free")]
pub unsafe extern "C" fn MPI_Info_free(handle: *mut c_int) -> c_int {
    entry("MPI_Info_free", WORLD, || {
        info::free(c!(read(handle, "info"))?)?;
        c!(out(handle, info::INFO_NULL, "info"))
    })
}

/// `MPI_Info_dup`: a new info with the same pairs, in the same order.
///
/// # Safety
/// `newinfo` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_Info_dup")]
pub unsafe extern "C" fn MPI_Info_dup(handle: c_int, newinfo: *mut c_int) -> c_int {
    entry("MPI_Info_dup", WORLD, || {
        if handle == info::INFO_NULL {
            return fail(class::INFO, "MPI_INFO_NULL cannot be duplicated");
        }
        c!(out(newinfo, info::with_pairs(info::pairs(handle)?), "newinfo"))
    })
}

/// `MPI_Info_get_valuelen`: the length of `key`'s value, without its terminating NUL.
///
/// # Safety
/// `key` is a NUL-terminated string; `valuelen` and `flag` point to ints.
#[unsafe(export_name = "PMPI_Info_get_valuelen")]
pub unsafe extern "C" fn MPI_Info_get_valuelen(
    handle: c_int,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Info_get_valuelen", WORLD, || {
        let found = info::get(handle, &c!(string(key, "key"))?)?;
        if let Some(v) = &found {
            c!(out(valuelen, v.len() as c_int, "valuelen"))?;
        }
        c!(out(flag, found.is_some() as c_int, "flag"))
    })
}

/// `MPI_Info_get_nthkey`: the `n`th key, in the order the keys were first set.
///
/// # Safety
/// `key` holds `MPI_MAX_INFO_KEY + 1` chars.
#[unsafe(export_name = "PMPI_Info_get_nthkey")]
pub unsafe extern "C" fn MPI_Info_get_nthkey(handle: c_int, n: c_int, key: *mut c_char) -> c_int {
    entry("MPI_Info_get_nthkey", WORLD, || {
        let pairs = info::pairs(handle)?;
        let nth = usize::try_from(n).ok().and_then(|i| pairs.get(i)).ok_or_else(|| {
            MpiError::new(class::ARG, format!("key {n} of an info with {} keys", pairs.len()))
        })?;
        c!(out_string(key, std::ptr::null_mut(), info::MAX_KEY + 1, &nth.0))
    })
}

/// `MPI_Comm_set_info`: sets the hints `info` holds, keeping the others. sccemu tunes
/// nothing by a communicator's hints; `MPI_Comm_get_info` returns them.
#[unsafe(export_name = "PMPI_Comm_set_info")]
pub extern "C" fn MPI_Comm_set_info(comm: c_int, handle: c_int) -> c_int {
    entry("MPI_Comm_set_info", crate::ffi::Scope::Comm(comm), || {
        let obj = crate::comm::lookup(comm)?;
        obj.set_hints(info::pairs(handle)?);
        Ok(())
    })
}

/// `MPI_Comm_get_info`: a new info with the communicator's hints (those the program
/// set, on it or on the communicator it was duplicated from).
///
/// # Safety
/// `info_used` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_Comm_get_info")]
pub unsafe extern "C" fn MPI_Comm_get_info(comm: c_int, info_used: *mut c_int) -> c_int {
    entry("MPI_Comm_get_info", crate::ffi::Scope::Comm(comm), || {
        let hints = crate::comm::lookup(comm)?.hints();
        c!(out(info_used, info::with_pairs(hints), "info_used"))
    })
}
