//! MPI-IO entry points on whole files (`crate::io` does the work): open, close,
//! delete, sizes, mode, group, sync, hints and error handlers.
//!
//! Errors of file calls go to the file's error handler ([`file_entry`]); a call
//! with no valid file (`MPI_File_open`, `MPI_File_delete`, a bad handle) uses that of
//! `MPI_FILE_NULL`. As MPI says, files start with `MPI_ERRORS_RETURN`: that is
//! `MPI_FILE_NULL`'s handler until the program changes it, and a file opened takes
//! `MPI_FILE_NULL`'s handler of the moment.

use std::ffi::{c_char, c_int};

use crate::errhandler::{self, Kind, UserFunction};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::{Scope, c, entry};
use crate::io::{self, FILE_NULL};

/// Runs the body of file call `name` on file `fh`, as [`entry`] does, under the
/// file's error handler (`MPI_FILE_NULL`'s if `fh` is not an open file).
#[inline]
pub fn file_entry(name: &'static str, fh: c_int, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    static DEFAULTS: std::sync::Once = std::sync::Once::new();
    DEFAULTS.call_once(|| errhandler::set(FILE_NULL, errhandler::RETURN));
    let object = if io::is_live(fh) { fh } else { FILE_NULL };
    entry(name, Scope::Comm(object), || {
        let result = body();
        if let Err(e) = &result {
            // `entry` would take an object's MPI_ERRORS_ARE_FATAL for "no handler of
            // its own" and use MPI_COMM_WORLD's: a file's own choice applies.
            if errhandler::of(object) == errhandler::FATAL {
                crate::ffi::fatal(name, e)
            }
        }
        result
    })
}

/// `MPI_File_open`, collective over `comm`.
///
/// # Safety
/// `filename` is a NUL-terminated string; `fh` points to an `MPI_File`.
#[unsafe(export_name = "PMPI_File_open")]
pub unsafe extern "C" fn MPI_File_open(
    comm: c_int,
    filename: *const c_char,
    amode: c_int,
    info: c_int,
    fh: *mut c_int,
) -> c_int {
    file_entry("MPI_File_open", FILE_NULL, || {
        // Checked before the collective part, whose agreement fails every member alike.
        let args = (|| {
            let path = c!(string(filename, "filename"))?;
            if path.is_empty() {
                return fail(class::BAD_FILE, "the file name is empty");
            }
            let hints = crate::info::pairs(info)?;
            if fh.is_null() {
                return fail(class::ARG, "fh is a null pointer");
            }
            Ok((path, hints))
        })();
        let handle = io::open::open(comm, args, amode)?;
        errhandler::set(handle, errhandler::of(FILE_NULL));
        c!(out(fh, handle, "fh"))
    })
}

/// `MPI_File_close`, collective: sets `*fh` to `MPI_FILE_NULL`.
///
/// # Safety
/// `fh` points to an `MPI_File`.
#[unsafe(export_name = "PMPI_File_close")]
pub unsafe extern "C" fn MPI_File_close(fh: *mut c_int) -> c_int {
    let handle = if fh.is_null() { FILE_NULL } else { c!(read(fh, "fh")).unwrap_or(FILE_NULL) };
    file_entry("MPI_File_close", handle, || {
        let handle = c!(read(fh, "fh"))?;
        io::open::close(handle)?;
        errhandler::forget(handle);
        c!(out(fh, FILE_NULL, "fh"))
    })
}

/// `MPI_File_delete`.
///
/// # Safety
/// `filename` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_File_delete")]
pub unsafe extern "C" fn MPI_File_delete(filename: *const c_char, info: c_int) -> c_int {
    file_entry("MPI_File_delete", FILE_NULL, || {
        let path = c!(string(filename, "filename"))?;
        crate::info::pairs(info)?;
        io::open::delete(&path)
    })
}

/// `MPI_File_get_size`: bytes.
///
/// # Safety
/// `size` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_size")]
pub unsafe extern "C" fn MPI_File_get_size(fh: c_int, size: *mut i64) -> c_int {
    file_entry("MPI_File_get_size", fh, || {
        let len = io::open::size(&*io::lookup(fh)?)?;
        c!(out(size, len as i64, "size"))
    })
}

/// `MPI_File_set_size`, collective.
#[unsafe(export_name = "PMPI_File_set_size")]
pub extern "C" fn MPI_File_set_size(fh: c_int, size: i64) -> c_int {
    file_entry("MPI_File_set_size", fh, || io::open::resize(&*io::lookup(fh)?, size, false))
}

/// `MPI_File_preallocate`, collective: the file is at least `size` bytes.
#[unsafe(export_name = "PMPI_File_preallocate")]
pub extern "C" fn MPI_File_preallocate(fh: c_int, size: i64) -> c_int {
    file_entry("MPI_File_preallocate", fh, || io::open::resize(&*io::lookup(fh)?, size, true))
}

/// `MPI_File_get_amode`.
///
/// # Safety
/// `amode` points to an int.
#[unsafe(export_name = "PMPI_File_get_amode")]
pub unsafe extern "C" fn MPI_File_get_amode(fh: c_int, amode: *mut c_int) -> c_int {
    file_entry("MPI_File_get_amode", fh, || c!(out(amode, io::lookup(fh)?.amode, "amode")))
}

/// `MPI_File_get_group`: a new group, that of the file's communicator.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_File_get_group")]
pub unsafe extern "C" fn MPI_File_get_group(fh: c_int, group: *mut c_int) -> c_int {
    file_entry("MPI_File_get_group", fh, || {
        let members = io::lookup(fh)?.comm()?.members.clone();
        if group.is_null() {
            return fail(class::ARG, "group is a null pointer");
        }
        c!(out(group, crate::group::insert(members), "group"))
    })
}

/// `MPI_File_sync`, collective.
#[unsafe(export_name = "PMPI_File_sync")]
pub extern "C" fn MPI_File_sync(fh: c_int) -> c_int {
    file_entry("MPI_File_sync", fh, || io::open::sync(&*io::lookup(fh)?))
}

/// `MPI_File_set_info`, collective: the hints are kept (sccemu tunes nothing by
/// them), replacing those of the same keys.
#[unsafe(export_name = "PMPI_File_set_info")]
pub extern "C" fn MPI_File_set_info(fh: c_int, info: c_int) -> c_int {
    file_entry("MPI_File_set_info", fh, || {
        let f = io::lookup(fh)?;
        let given = crate::info::pairs(info);
        io::open::agree(f.comm()?, given.as_ref().map(drop).map_err(MpiError::clone), &[])?;
        merge_hints(&mut f.state().hints, given?);
        Ok(())
    })
}

/// Sets the hints in `given`, keeping the others.
pub fn merge_hints(hints: &mut crate::info::Pairs, given: crate::info::Pairs) {
    for (key, value) in given {
        match hints.iter_mut().find(|(k, _)| *k == key) {
            Some(hint) => hint.1 = value,
            None => hints.push((key, value)),
        }
    }
}

/// `MPI_File_get_info`: a new info holding the file's hints.
///
/// # Safety
/// `info_used` points to an `MPI_Info`.
#[unsafe(export_name = "PMPI_File_get_info")]
pub unsafe extern "C" fn MPI_File_get_info(fh: c_int, info_used: *mut c_int) -> c_int {
    file_entry("MPI_File_get_info", fh, || {
        let hints = io::lookup(fh)?.state().hints.clone();
        if info_used.is_null() {
            return fail(class::ARG, "info_used is a null pointer");
        }
        c!(out(info_used, crate::info::with_pairs(hints), "info_used"))
    })
}

/// The file `fh`, or `MPI_FILE_NULL`, whose handler the calls below set or use.
fn handler_object(fh: c_int) -> MpiResult<c_int> {
    if fh == FILE_NULL || io::is_live(fh) {
        Ok(fh)
    } else {
        fail(class::FILE, format!("{fh:#x} is not a file handle"))
    }
}

/// `MPI_File_set_errhandler` (on `MPI_FILE_NULL`: the handler of files opened later).
#[unsafe(export_name = "PMPI_File_set_errhandler")]
pub extern "C" fn MPI_File_set_errhandler(fh: c_int, handler: c_int) -> c_int {
    file_entry("MPI_File_set_errhandler", fh, || {
        crate::ffi::handlers::set_handler(handler_object(fh)?, handler, Kind::File)
    })
}

/// `MPI_File_get_errhandler`.
///
/// # Safety
/// `handler` points to an `MPI_Errhandler`.
#[unsafe(export_name = "PMPI_File_get_errhandler")]
pub unsafe extern "C" fn MPI_File_get_errhandler(fh: c_int, handler: *mut c_int) -> c_int {
    file_entry("MPI_File_get_errhandler", fh, || {
        c!(out(handler, errhandler::of(handler_object(fh)?), "errhandler"))
    })
}

/// `MPI_File_create_errhandler`: a handler that calls `function` with the file and
/// the error code.
///
/// # Safety
/// `function` is an `MPI_File_errhandler_function`; `handler` points to an int.
#[unsafe(export_name = "PMPI_File_create_errhandler")]
pub unsafe extern "C" fn MPI_File_create_errhandler(
    function: Option<UserFunction>,
    handler: *mut c_int,
) -> c_int {
    file_entry("MPI_File_create_errhandler", FILE_NULL, || {
        let f = function.ok_or_else(|| MpiError::new(class::ARG, "the function is a null pointer"))?;
        c!(out(handler, errhandler::create(f, Kind::File), "errhandler"))
    })
}

/// `MPI_File_call_errhandler`: runs the file's handler on `errorcode`.
#[unsafe(export_name = "PMPI_File_call_errhandler")]
pub extern "C" fn MPI_File_call_errhandler(fh: c_int, errorcode: c_int) -> c_int {
    file_entry("MPI_File_call_errhandler", fh, || {
        crate::ffi::handlers::call("MPI_File_call_errhandler", handler_object(fh)?, errorcode)
    })
}

/// `MPI_File_set_atomicity`, collective (every member passes the same flag): in
/// atomic mode each access runs under the file's lock among its processes (see
/// `crate::io::shared`).
#[unsafe(export_name = "PMPI_File_set_atomicity")]
pub extern "C" fn MPI_File_set_atomicity(fh: c_int, flag: c_int) -> c_int {
    file_entry("MPI_File_set_atomicity", fh, || {
        let f = io::lookup(fh)?;
        let on = flag != 0;
        io::open::agree(f.comm()?, Ok(()), &[i64::from(on)])?;
        f.state().atomic = on;
        Ok(())
    })
}

/// `MPI_File_get_atomicity`.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_File_get_atomicity")]
pub unsafe extern "C" fn MPI_File_get_atomicity(fh: c_int, flag: *mut c_int) -> c_int {
    file_entry("MPI_File_get_atomicity", fh, || {
        let on = io::lookup(fh)?.state().atomic;
        c!(out(flag, c_int::from(on), "flag"))
    })
}

/// `MPI_File_get_type_extent`: the extent of `datatype` in the file, which for the
/// "native" representation is its extent in memory.
///
/// # Safety
/// `extent` points to an `MPI_Aint`.
#[unsafe(export_name = "PMPI_File_get_type_extent")]
pub unsafe extern "C" fn MPI_File_get_type_extent(fh: c_int, datatype: c_int, extent: *mut isize) -> c_int {
    file_entry("MPI_File_get_type_extent", fh, || {
        io::lookup(fh)?;
        let map = crate::datatype::lookup(datatype)?;
        c!(out(extent, map.extent, "extent"))
    })
}
