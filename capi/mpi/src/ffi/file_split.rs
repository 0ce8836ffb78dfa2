//! MPI-IO's split collectives (MPI 3.1 section 13.4.5): `MPI_File_read_all_begin`
//! and `MPI_File_read_all_end`, and the same for `read_at_all`, `write_all`,
//! `write_at_all`, `read_ordered` and `write_ordered`.
//!
//! The begin call does the process's access at once (as the blocking collective
//! would, see [`super::file_data`]) and keeps its outcome in the file
//! (`crate::io::Mutable::split`); the end call waits for the other members (a
//! barrier of the file's communicator, taken before anything can fail, so that every
//! member that ends gets past it) and returns the status, or the begin's error. A file
//! has at most one split collective outstanding, and its end must be of the same
//! kind: otherwise the call fails with `MPI_ERR_OTHER`.

use std::ffi::{c_int, c_void};

use crate::comm::coll_error;
use crate::error::{MpiResult, class, fail};
use crate::ffi::c;
use crate::ffi::file::file_entry;
use crate::ffi::file_data::{At, Dir, access, status};
use crate::ffi::p2p::MpiStatus;
use crate::io;

/// The begin call `name`: the access, kept for the end.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (readable to write, writable to read).
unsafe fn begin(
    name: &'static str,
    fh: c_int,
    dir: Dir,
    at: At,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> MpiResult<()> {
    let f = io::lookup(fh)?;
    if let Some((other, _)) = &f.state().split {
        return fail(class::OTHER, format!("{other} is not ended yet: one split collective at a time"));
    }
    // SAFETY: this function's contract.
    let outcome = unsafe { access(&f, dir, at, buf, count, datatype) };
    f.state().split = Some((name, outcome.clone()));
    outcome.map(drop)
}

/// The end call of `begun`'s split collective: the barrier, then its status.
///
/// # Safety
/// `st` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
unsafe fn end(begun: &'static str, fh: c_int, st: *mut MpiStatus) -> MpiResult<()> {
    let f = io::lookup(fh)?;
    f.comm()?.coll().barrier().map_err(coll_error)?;
    let mut state = f.state();
    let moved = match state.split.take() {
        Some((name, outcome)) if name == begun => outcome?,
        Some((name, outcome)) => {
            state.split = Some((name, outcome));
            return fail(class::OTHER, format!("the split collective begun is {name}, not {begun}"));
        }
        None => return fail(class::OTHER, format!("no {begun} to end")),
    };
    drop(state);
    c!(write_status(st, status(moved), 0))
}

/// `MPI_File_read_at_all_begin`: starts a split `MPI_File_read_at_all`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_read_at_all_begin")]
pub unsafe extern "C" fn MPI_File_read_at_all_begin(
    fh: c_int,
    offset: i64,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_read_at_all_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe {
            begin("MPI_File_read_at_all_begin", fh, Dir::Read, At::Offset(offset), buf, count, datatype)
        }
    })
}

/// `MPI_File_read_at_all_end`: ends the split `MPI_File_read_at_all`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_at_all_end")]
pub unsafe extern "C" fn MPI_File_read_at_all_end(
    fh: c_int,
    buf: *mut c_void,
    status: *mut MpiStatus,
) -> c_int {
    let _ = buf;
    file_entry("MPI_File_read_at_all_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_read_at_all_begin", fh, status) }
    })
}

/// `MPI_File_write_at_all_begin`: starts a split `MPI_File_write_at_all`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_write_at_all_begin")]
pub unsafe extern "C" fn MPI_File_write_at_all_begin(
    fh: c_int,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_write_at_all_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe {
            begin("MPI_File_write_at_all_begin", fh, Dir::Write, At::Offset(offset), buf, count, datatype)
        }
    })
}

/// `MPI_File_write_at_all_end`: ends the split `MPI_File_write_at_all`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_at_all_end")]
pub unsafe extern "C" fn MPI_File_write_at_all_end(
    fh: c_int,
    buf: *const c_void,
    status: *mut MpiStatus,
) -> c_int {
    let _ = buf;
    file_entry("MPI_File_write_at_all_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_write_at_all_begin", fh, status) }
    })
}

/// `MPI_File_read_all_begin`: starts a split `MPI_File_read_all`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_read_all_begin")]
pub unsafe extern "C" fn MPI_File_read_all_begin(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_read_all_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { begin("MPI_File_read_all_begin", fh, Dir::Read, At::Pointer, buf, count, datatype) }
    })
}

/// `MPI_File_read_all_end`: ends the split `MPI_File_read_all`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_all_end")]
pub unsafe extern "C" fn MPI_File_read_all_end(fh: c_int, buf: *mut c_void, status: *mut MpiStatus) -> c_int {
    let _ = buf;
    file_entry("MPI_File_read_all_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_read_all_begin", fh, status) }
    })
}

/// `MPI_File_write_all_begin`: starts a split `MPI_File_write_all`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_write_all_begin")]
pub unsafe extern "C" fn MPI_File_write_all_begin(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_write_all_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { begin("MPI_File_write_all_begin", fh, Dir::Write, At::Pointer, buf, count, datatype) }
    })
}

/// `MPI_File_write_all_end`: ends the split `MPI_File_write_all`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_all_end")]
pub unsafe extern "C" fn MPI_File_write_all_end(
    fh: c_int,
    buf: *const c_void,
    status: *mut MpiStatus,
) -> c_int {
    let _ = buf;
    file_entry("MPI_File_write_all_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_write_all_begin", fh, status) }
    })
}

/// `MPI_File_read_ordered_begin`: starts a split `MPI_File_read_ordered`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_read_ordered_begin")]
pub unsafe extern "C" fn MPI_File_read_ordered_begin(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_read_ordered_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { begin("MPI_File_read_ordered_begin", fh, Dir::Read, At::Ordered, buf, count, datatype) }
    })
}

/// `MPI_File_read_ordered_end`: ends the split `MPI_File_read_ordered`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_ordered_end")]
pub unsafe extern "C" fn MPI_File_read_ordered_end(
    fh: c_int,
    buf: *mut c_void,
    status: *mut MpiStatus,
) -> c_int {
    let _ = buf;
    file_entry("MPI_File_read_ordered_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_read_ordered_begin", fh, status) }
    })
}

/// `MPI_File_write_ordered_begin`: starts a split `MPI_File_write_ordered`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`, untouched until the end call.
#[unsafe(export_name = "PMPI_File_write_ordered_begin")]
pub unsafe extern "C" fn MPI_File_write_ordered_begin(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> c_int {
    file_entry("MPI_File_write_ordered_begin", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { begin("MPI_File_write_ordered_begin", fh, Dir::Write, At::Ordered, buf, count, datatype) }
    })
}

/// `MPI_File_write_ordered_end`: ends the split `MPI_File_write_ordered`, with its status.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE` or points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_ordered_end")]
pub unsafe extern "C" fn MPI_File_write_ordered_end(
    fh: c_int,
    buf: *const c_void,
    status: *mut MpiStatus,
) -> c_int {
    let _ = buf;
    file_entry("MPI_File_write_ordered_end", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { end("MPI_File_write_ordered_begin", fh, status) }
    })
}
