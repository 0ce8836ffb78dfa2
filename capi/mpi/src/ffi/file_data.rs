//! MPI-IO entry points that move data or place it: views (`MPI_File_set_view`,
//! `MPI_File_get_view`), reads and writes at explicit offsets and at the individual
//! file pointer, their collective (`_all`) and nonblocking (`MPI_File_iread_at`,
//! `MPI_File_iwrite_at`) forms, and the pointer's calls (`MPI_File_seek`,
//! `MPI_File_get_position`, `MPI_File_get_byte_offset`).
//!
//! A status reports the bytes moved (so `MPI_Get_count` and `MPI_Get_elements` count
//! the elements of the memory datatype). A collective read or write is the process's
//! own access followed by a barrier of the file's communicator, so that when it
//! returns anywhere every member's access is done (a write then is visible to any
//! later read). The nonblocking forms do their access when they start and return a
//! request that is already complete.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use crate::comm::coll_error;
use crate::datatype::{self, TypeRef};
use crate::error::{MpiResult, class, fail};
use crate::ffi::c;
use crate::ffi::file::file_entry;
use crate::ffi::p2p::MpiStatus;
use crate::io::view::View;
use crate::io::{self, FileObj, SEEK_CUR, SEEK_END, SEEK_SET};
use crate::request::{self, Status};

/// `MPI_MAX_DATAREP_STRING` (mpi.h).
const MAX_DATAREP: usize = 128;

/// Which way data moves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// Where an access starts.
#[derive(Clone, Copy)]
enum At {
    /// An explicit offset, in etypes of the view.
    Offset(i64),
    /// The individual file pointer (which then moves past the data).
    Pointer,
}

/// One access of `count` elements of `datatype` at `buf`: the bytes moved.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (readable to write, writable to read).
unsafe fn access(
    f: &FileObj,
    dir: Dir,
    at: At,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> MpiResult<usize> {
    f.check_not_sequential()?;
    match dir {
        Dir::Read => f.check_readable()?,
        Dir::Write => f.check_writable()?,
    }
    let map = datatype::committed(datatype)?;
    let b = c!(user_buffer(buf, count, &map))?;
    let mut st = f.state();
    let offset = match at {
        At::Offset(o) => o,
        At::Pointer => st.pointer,
    };
    let moved = match dir {
        Dir::Read => io::access::read(f, &st.view, offset, &b)?,
        Dir::Write => io::access::write(f, &st.view, offset, &b)?,
    };
    if let At::Pointer = at {
        st.pointer += (moved as u64 / st.view.etype_size()) as i64;
    }
    Ok(moved)
}

/// The status of an access that moved `bytes`.
fn status(bytes: usize) -> Status {
    Status { bytes, ..Status::EMPTY }
}

/// The body of the blocking reads and writes: the access, then (collective forms) a
/// barrier of the file's communicator whatever the access's outcome, then the status.
///
/// # Safety
/// As [`access`]; `st` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[allow(clippy::too_many_arguments)]
unsafe fn blocking(
    fh: c_int,
    dir: Dir,
    at: At,
    collective: bool,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    st: *mut MpiStatus,
) -> MpiResult<()> {
    let f = io::lookup(fh)?;
    // SAFETY: this function's contract.
    let moved = unsafe { access(&f, dir, at, buf, count, datatype) };
    if collective {
        f.comm()?.coll().barrier().map_err(coll_error)?;
    }
    c!(write_status(st, status(moved?), 0))
}

/// `MPI_File_read_at`: reads at an explicit offset (in etypes of the view).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_at")]
pub unsafe extern "C" fn MPI_File_read_at(
    fh: c_int,
    offset: i64,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read_at", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Offset(offset), false, buf, count, datatype, status) }
    })
}

/// `MPI_File_write_at`: writes at an explicit offset (in etypes of the view).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_at")]
pub unsafe extern "C" fn MPI_File_write_at(
    fh: c_int,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write_at", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Offset(offset), false, buf, count, datatype, status) }
    })
}

/// `MPI_File_read_at_all`: the collective `MPI_File_read_at`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_at_all")]
pub unsafe extern "C" fn MPI_File_read_at_all(
    fh: c_int,
    offset: i64,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read_at_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Offset(offset), true, buf, count, datatype, status) }
    })
}

/// `MPI_File_write_at_all`: the collective `MPI_File_write_at`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_at_all")]
pub unsafe extern "C" fn MPI_File_write_at_all(
    fh: c_int,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write_at_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Offset(offset), true, buf, count, datatype, status) }
    })
}

/// `MPI_File_read`: reads at the individual file pointer, which moves past the data.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read")]
pub unsafe extern "C" fn MPI_File_read(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Pointer, false, buf, count, datatype, status) }
    })
}

/// `MPI_File_write`: writes at the individual file pointer, which moves past the data.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write")]
pub unsafe extern "C" fn MPI_File_write(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Pointer, false, buf, count, datatype, status) }
    })
}

/// `MPI_File_read_all`: the collective `MPI_File_read`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_all")]
pub unsafe extern "C" fn MPI_File_read_all(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Pointer, true, buf, count, datatype, status) }
    })
}

/// `MPI_File_write_all`: the collective `MPI_File_write`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_all")]
pub unsafe extern "C" fn MPI_File_write_all(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Pointer, true, buf, count, datatype, status) }
    })
}

/// The body of the nonblocking reads and writes at explicit offsets: the access now,
/// and a completed request.
///
/// # Safety
/// As [`access`]; `request` points to an `MPI_Request`.
unsafe fn started(
    fh: c_int,
    dir: Dir,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> MpiResult<()> {
    if request.is_null() {
        return fail(class::ARG, "request is a null pointer");
    }
    let f = io::lookup(fh)?;
    // SAFETY: this function's contract.
    let moved = unsafe { access(&f, dir, At::Offset(offset), buf, count, datatype) }?;
    c!(out(request, request::insert(Box::new(request::Done(status(moved)))), "request"))
}

/// `MPI_File_iread_at`: reads at an explicit offset; the read is done when the call
/// returns, and the request is complete.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iread_at")]
pub unsafe extern "C" fn MPI_File_iread_at(
    fh: c_int,
    offset: i64,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iread_at", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Read, offset, buf, count, datatype, request) }
    })
}

/// `MPI_File_iwrite_at`: writes at an explicit offset; the write is done when the
/// call returns, and the request is complete.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iwrite_at")]
pub unsafe extern "C" fn MPI_File_iwrite_at(
    fh: c_int,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iwrite_at", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Write, offset, buf, count, datatype, request) }
    })
}

/// `MPI_File_set_view`, collective: displacement `disp` (bytes), etype, filetype,
/// data representation (`"native"` only). Resets the file pointers to 0.
///
/// # Safety
/// `datarep` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_File_set_view")]
pub unsafe extern "C" fn MPI_File_set_view(
    fh: c_int,
    disp: i64,
    etype: c_int,
    filetype: c_int,
    datarep: *const c_char,
    info: c_int,
) -> c_int {
    file_entry("MPI_File_set_view", fh, || {
        let f = io::lookup(fh)?;
        let local = (|| {
            let rep = c!(string(datarep, "datarep"))?;
            if rep != "native" {
                return fail(
                    class::UNSUPPORTED_DATAREP,
                    format!("data representation {rep:?}: only \"native\""),
                );
            }
            let Ok(disp) = u64::try_from(disp) else {
                return fail(class::ARG, format!("displacement {disp} is negative"));
            };
            let e = datatype::committed(etype)?;
            let t = datatype::committed(filetype)?;
            let hints = crate::info::pairs(info)?;
            Ok((View::new(disp, (e, etype), (t, filetype))?, hints))
        })();
        let esize = local.as_ref().map_or(0, |(v, _)| v.etype_size() as i64);
        io::open::agree(f.comm()?, local.as_ref().map(drop).map_err(Clone::clone), &[esize])?;
        let (view, hints) = local?;
        let mut st = f.state();
        st.view = view;
        st.pointer = 0;
        crate::ffi::file::merge_hints(&mut st.hints, hints);
        Ok(())
    })
}

/// The handle `MPI_File_get_view` gives for a view's type: a predefined type's own,
/// a new handle to a copy of a derived one (which the program frees).
fn handle_for(t: &(TypeRef, c_int)) -> c_int {
    match &t.0 {
        TypeRef::Predefined(_) => t.1,
        TypeRef::User(map) => datatype::insert(Arc::new((**map).clone())),
    }
}

/// `MPI_File_get_view`.
///
/// # Safety
/// `disp` points to an `MPI_Offset`, `etype` and `filetype` to `MPI_Datatype`s,
/// `datarep` to `MPI_MAX_DATAREP_STRING` chars.
#[unsafe(export_name = "PMPI_File_get_view")]
pub unsafe extern "C" fn MPI_File_get_view(
    fh: c_int,
    disp: *mut i64,
    etype: *mut c_int,
    filetype: *mut c_int,
    datarep: *mut c_char,
) -> c_int {
    file_entry("MPI_File_get_view", fh, || {
        let view = io::lookup(fh)?.state().view.clone();
        if disp.is_null() || etype.is_null() || filetype.is_null() || datarep.is_null() {
            return fail(class::ARG, "an out-parameter is a null pointer");
        }
        c!(out(disp, view.disp as i64, "disp"))?;
        c!(out(etype, handle_for(&view.etype), "etype"))?;
        c!(out(filetype, handle_for(&view.filetype), "filetype"))?;
        c!(out_string(datarep, std::ptr::null_mut(), MAX_DATAREP, "native"))
    })
}

/// `MPI_File_seek`: moves the individual file pointer (in etypes of the view).
#[unsafe(export_name = "PMPI_File_seek")]
pub extern "C" fn MPI_File_seek(fh: c_int, offset: i64, whence: c_int) -> c_int {
    file_entry("MPI_File_seek", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let mut st = f.state();
        let base = match whence {
            SEEK_SET => 0,
            SEEK_CUR => st.pointer,
            SEEK_END => (st.view.stream_below(io::open::size(&f)?) / st.view.etype_size()) as i64,
            _ => return fail(class::ARG, format!("whence {whence} is not an MPI_SEEK_*")),
        };
        match base.checked_add(offset) {
            Some(p) if p >= 0 => {
                st.pointer = p;
                Ok(())
            }
            _ => fail(class::ARG, format!("seeking to {base} + {offset}: before the view's start")),
        }
    })
}

/// `MPI_File_get_position`: the individual file pointer, in etypes of the view.
///
/// # Safety
/// `offset` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_position")]
pub unsafe extern "C" fn MPI_File_get_position(fh: c_int, offset: *mut i64) -> c_int {
    file_entry("MPI_File_get_position", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let p = f.state().pointer;
        c!(out(offset, p, "offset"))
    })
}

/// `MPI_File_get_byte_offset`: the file byte of view offset `offset` (in etypes).
///
/// # Safety
/// `disp` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_byte_offset")]
pub unsafe extern "C" fn MPI_File_get_byte_offset(fh: c_int, offset: i64, disp: *mut i64) -> c_int {
    file_entry("MPI_File_get_byte_offset", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let Ok(k) = u64::try_from(offset) else {
            return fail(class::ARG, format!("offset {offset} is negative"));
        };
        let view = f.state().view.clone();
        let pos = k
            .checked_mul(view.etype_size())
            .ok_or_else(|| crate::error::MpiError::new(class::ARG, "the offset is too large"))?;
        let byte = view.file_byte(pos)?;
        c!(out(disp, byte as i64, "disp"))
    })
}
