//! MPI-IO entry points that move data: reads and writes at explicit offsets, at the
//! individual file pointer and at the shared one (`crate::io::shared`), their
//! collective forms (`_all`, and `MPI_File_read_ordered`/`write_ordered`, whose
//! members' parts follow each other in rank order). The nonblocking forms are in
//! [`super::file_nonblocking`], the split collectives in [`super::file_split`]. Views and pointers are placed by
//! [`super::file_shared`].
//!
//! A status reports the bytes moved (so `MPI_Get_count` and `MPI_Get_elements` count
//! the elements of the memory datatype). A collective read or write is the process's
//! own access followed by a barrier of the file's communicator, so that when it
//! returns anywhere every member's access is done (a write then is visible to any
//! later read).

use std::ffi::{c_int, c_void};

use crate::comm::coll_error;
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::c;
use crate::ffi::file::file_entry;
use crate::ffi::p2p::MpiStatus;
use crate::io::{self, FileObj};
use crate::request::Status;

/// Which way data moves.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Dir {
    /// From the file.
    Read,
    /// To the file.
    Write,
}

/// Where an access starts.
#[derive(Clone, Copy)]
pub(super) enum At {
    /// An explicit offset, in etypes of the view.
    Offset(i64),
    /// The individual file pointer (which then moves past the data).
    Pointer,
    /// The shared file pointer, claimed by this process alone.
    Shared,
    /// The shared file pointer, claimed by every member in rank order (collective).
    Ordered,
}

/// One access of `count` elements of `datatype` at `buf`: the bytes moved.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` (readable to write, writable to read).
pub(super) unsafe fn access(
    f: &FileObj,
    dir: Dir,
    at: At,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
) -> MpiResult<usize> {
    let map = datatype::committed(datatype);
    let local = (|| {
        if let At::Offset(_) | At::Pointer = at {
            f.check_not_sequential()?;
        }
        match dir {
            Dir::Read => f.check_readable()?,
            Dir::Write => f.check_writable()?,
        }
        let map = map.as_ref().map_err(Clone::clone)?;
        let b = c!(user_buffer(buf, count, map))?;
        let (len, esize) = (b.data_len()? as u64, f.state().view.etype_size());
        if len % esize != 0 {
            return fail(class::TYPE, format!("{len} bytes of data are not a whole number of etypes"));
        }
        Ok((b, len / esize))
    })();
    // The ordered calls claim their part together, whatever this member's arguments.
    let ordered = match at {
        At::Ordered => Some(io::shared::claim_ordered(f, local.as_ref().map_or(0, |l| l.1))?),
        _ => None,
    };
    let (b, etypes) = local?;
    let mut st = f.state();
    let offset = match at {
        At::Offset(o) => o,
        At::Pointer => st.pointer,
        At::Shared => f.shared.claim(etypes)? as i64,
        At::Ordered => ordered.unwrap_or_default() as i64,
    };
    let run = || match dir {
        Dir::Read => io::access::read(f, &st.view, offset, &b),
        Dir::Write => io::access::write(f, &st.view, offset, &b),
    };
    let moved = if st.atomic { f.shared.atomically(dir == Dir::Write, run)? } else { run()? };
    if let At::Pointer = at {
        st.pointer += (moved as u64 / st.view.etype_size()) as i64;
    }
    Ok(moved)
}

/// The status of an access that moved `bytes`.
pub(super) fn status(bytes: usize) -> Status {
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

/// `MPI_File_read_shared`: reads at the shared file pointer, which moves past the data
/// requested.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_shared")]
pub unsafe extern "C" fn MPI_File_read_shared(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read_shared", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Shared, false, buf, count, datatype, status) }
    })
}

/// `MPI_File_write_shared`: writes at the shared file pointer, which moves past the
/// data.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_shared")]
pub unsafe extern "C" fn MPI_File_write_shared(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write_shared", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Shared, false, buf, count, datatype, status) }
    })
}

/// `MPI_File_read_ordered`: the collective `MPI_File_read_shared`, the members' parts
/// in rank order.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_read_ordered")]
pub unsafe extern "C" fn MPI_File_read_ordered(
    fh: c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_read_ordered", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Read, At::Ordered, true, buf, count, datatype, status) }
    })
}

/// `MPI_File_write_ordered`: the collective `MPI_File_write_shared`, the members'
/// parts in rank order.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `status` is `MPI_STATUS_IGNORE` or
/// points to an `MPI_Status`.
#[unsafe(export_name = "PMPI_File_write_ordered")]
pub unsafe extern "C" fn MPI_File_write_ordered(
    fh: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    status: *mut MpiStatus,
) -> c_int {
    file_entry("MPI_File_write_ordered", fh, || {
        // SAFETY: this entry point's contract.
        unsafe { blocking(fh, Dir::Write, At::Ordered, true, buf, count, datatype, status) }
    })
}
