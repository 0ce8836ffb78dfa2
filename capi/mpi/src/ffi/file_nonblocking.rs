//! MPI-IO's nonblocking reads and writes (MPI 3.1 sections 13.4.2 to 13.4.4):
//! `MPI_File_iread_at`, `MPI_File_iwrite_at`, `MPI_File_iread`, `MPI_File_iwrite`,
//! `MPI_File_iread_shared`, `MPI_File_iwrite_shared` and the collective
//! `MPI_File_iread_all`, `MPI_File_iwrite_all`, `MPI_File_iread_at_all`,
//! `MPI_File_iwrite_at_all`.
//!
//! Each does its access when it starts (through [`super::file_data`]'s `access`, so
//! the file pointers move at once) and returns a request that is already complete,
//! whose status gives the bytes moved; the buffer may be reused as soon as the call
//! returns. Errors are reported by the starting call.

use std::ffi::{c_int, c_void};

use crate::error::MpiResult;
use crate::ffi::file::file_entry;
use crate::ffi::file_data::{At, Dir, access, status};
use crate::io;
use crate::request;

/// The body of the nonblocking reads and writes: the access now, and a completed
/// request. The collective forms synchronize nothing (MPI does not require them to),
/// so that no member waits for another while starting one.
///
/// # Safety
/// As [`access`]; `request` points to an `MPI_Request`.
unsafe fn started(
    fh: c_int,
    dir: Dir,
    at: At,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> MpiResult<()> {
    crate::ffi::icoll::started(request, || {
        let f = io::lookup(fh)?;
        // SAFETY: this function's contract.
        let moved = unsafe { access(&f, dir, at, buf, count, datatype) }?;
        Ok(Box::new(request::Done(status(moved))))
    })
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
        unsafe { started(fh, Dir::Read, At::Offset(offset), buf, count, datatype, request) }
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
        unsafe { started(fh, Dir::Write, At::Offset(offset), buf, count, datatype, request) }
    })
}

/// `MPI_File_iread`: reads at the individual file pointer; done when the call returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iread")]
pub unsafe extern "C" fn MPI_File_iread(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iread", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Read, At::Pointer, buf, count, datatype, request) }
    })
}

/// `MPI_File_iwrite`: writes at the individual file pointer; done when the call returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iwrite")]
pub unsafe extern "C" fn MPI_File_iwrite(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iwrite", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Write, At::Pointer, buf, count, datatype, request) }
    })
}

/// `MPI_File_iread_shared`: reads at the shared file pointer; done when the call returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iread_shared")]
pub unsafe extern "C" fn MPI_File_iread_shared(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iread_shared", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Read, At::Shared, buf, count, datatype, request) }
    })
}

/// `MPI_File_iwrite_shared`: writes at the shared file pointer; done when the call
/// returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iwrite_shared")]
pub unsafe extern "C" fn MPI_File_iwrite_shared(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iwrite_shared", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Write, At::Shared, buf, count, datatype, request) }
    })
}

/// `MPI_File_iread_all`: the nonblocking `MPI_File_read_all`; done when the call returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iread_all")]
pub unsafe extern "C" fn MPI_File_iread_all(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iread_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Read, At::Pointer, buf, count, datatype, request) }
    })
}

/// `MPI_File_iwrite_all`: the nonblocking `MPI_File_write_all`; done when the call
/// returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iwrite_all")]
pub unsafe extern "C" fn MPI_File_iwrite_all(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iwrite_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Write, At::Pointer, buf, count, datatype, request) }
    })
}

/// `MPI_File_iread_at_all`: the nonblocking `MPI_File_read_at_all`; done when the call
/// returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iread_at_all")]
pub unsafe extern "C" fn MPI_File_iread_at_all(
    fh: c_int,
    offset: i64,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iread_at_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Read, At::Offset(offset), buf, count, datatype, request) }
    })
}

/// `MPI_File_iwrite_at_all`: the nonblocking `MPI_File_write_at_all`; done when the
/// call returns.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_File_iwrite_at_all")]
pub unsafe extern "C" fn MPI_File_iwrite_at_all(
    fh: c_int,
    offset: i64,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    request: *mut c_int,
) -> c_int {
    file_entry("MPI_File_iwrite_at_all", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { started(fh, Dir::Write, At::Offset(offset), buf, count, datatype, request) }
    })
}
