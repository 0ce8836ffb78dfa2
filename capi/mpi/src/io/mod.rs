//! MPI-IO (MPI 3.1 chapter 13) over POSIX files: every process of a job runs on one
//! machine and sees one file system, so each member of a file's communicator opens
//! the file itself, and data moves with positioned reads and writes (`pread`,
//! `pwrite`) on its own descriptor.
//!
//! A file handle (`MPI_File`) names a [`FileObj`] in a table of its own (handles
//! `FILE_NULL | index`, see `crate::handles`). The object keeps: the descriptor, the
//! path, the access mode, a private duplicate of the communicator it was opened on
//! (so that the file's collectives never meet the program's), the view
//! ([`view::View`]) and the individual file pointer (in etypes of the view), its
//! hints, atomic mode, the split collective in progress, and the shared file pointer
//! ([`shared`], a window over the private communicator that also holds the lock of
//! atomic mode).
//!
//! Invariants: a live handle's descriptor is open with the access its mode allows
//! (read for `RDONLY`/`RDWR`, write for `WRONLY`/`RDWR`), never with `O_APPEND`
//! (positioned writes must go where they are told); its communicator and window are
//! live until `MPI_File_close` frees them; the individual pointer is never negative.
//! Errors of file calls follow the file's error handler (`crate::ffi::file`). Files: [`open`] (open, close, delete, sizes),
//! [`view`] (views and how view offsets map to file bytes), [`access`] (reads and
//! writes), [`shared`] (the shared file pointer).

pub mod access;
pub mod open;
pub mod shared;
pub mod view;

use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{MpiError, MpiResult, class, fail};
use crate::handles::Table;

/// `MPI_FILE_NULL`: the file table's base.
pub const FILE_NULL: c_int = 0x6c00_0000;

/// `MPI_MODE_*` (mpi.h).
pub mod mode {
    use std::ffi::c_int;
    /// Create the file if it does not exist.
    pub const CREATE: c_int = 1;
    /// Read only.
    pub const RDONLY: c_int = 2;
    /// Write only.
    pub const WRONLY: c_int = 4;
    /// Read and write.
    pub const RDWR: c_int = 8;
    /// Delete the file when it is closed.
    pub const DELETE_ON_CLOSE: c_int = 16;
    /// Nobody else opens the file meanwhile (a hint).
    pub const UNIQUE_OPEN: c_int = 32;
    /// Error if creating a file that exists.
    pub const EXCL: c_int = 64;
    /// File pointers start at the end of the file.
    pub const APPEND: c_int = 128;
    /// Sequential access only (shared file pointer).
    pub const SEQUENTIAL: c_int = 256;
    /// Every bit a mode may have.
    pub const ALL: c_int = 511;
}

/// `MPI_SEEK_SET`, `MPI_SEEK_CUR`, `MPI_SEEK_END` (mpi.h).
pub const SEEK_SET: c_int = 600;
/// See [`SEEK_SET`].
pub const SEEK_CUR: c_int = 602;
/// See [`SEEK_SET`].
pub const SEEK_END: c_int = 604;

/// `MPI_DISPLACEMENT_CURRENT` (mpi.h): `MPI_File_set_view`'s displacement at the
/// shared file pointer.
pub const DISPLACEMENT_CURRENT: i64 = -54_278_278;

/// The parts of an open file that calls change.
#[derive(Debug)]
pub struct Mutable {
    /// The current view.
    pub view: view::View,
    /// The individual file pointer, in etypes of the view.
    pub pointer: i64,
    /// The hints given at open and by `MPI_File_set_info`/`MPI_File_set_view`.
    pub hints: crate::info::Pairs,
    /// Atomic mode (`MPI_File_set_atomicity`): accesses run under the file's lock.
    pub atomic: bool,
    /// The split collective begun and not yet ended: its begin call's name and the
    /// outcome of its access (done at the begin).
    pub split: Option<(&'static str, MpiResult<usize>)>,
}

/// One open file.
#[derive(Debug)]
pub struct FileObj {
    /// The descriptor.
    pub file: std::fs::File,
    /// The name it was opened by.
    pub path: String,
    /// `MPI_MODE_*` bits.
    pub amode: c_int,
    /// The private duplicate of the communicator it was opened on.
    pub comm: c_int,
    /// View, pointer, hints.
    pub state: Mutex<Mutable>,
    /// The shared file pointer.
    pub shared: shared::SharedPointer,
}

impl FileObj {
    /// The mutable part, locked.
    pub fn state(&self) -> MutexGuard<'_, Mutable> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The communicator object of the file.
    pub fn comm(&self) -> MpiResult<&'static crate::comm::CommObj> {
        crate::comm::lookup(self.comm)
    }

    /// Fails unless the mode allows reading.
    pub fn check_readable(&self) -> MpiResult<()> {
        if self.amode & mode::WRONLY != 0 {
            return fail(class::ACCESS, format!("{} was opened write-only", self.path));
        }
        Ok(())
    }

    /// Fails unless the mode allows writing.
    pub fn check_writable(&self) -> MpiResult<()> {
        if self.amode & mode::RDONLY != 0 {
            return fail(class::READ_ONLY, format!("{} was opened read-only", self.path));
        }
        Ok(())
    }

    /// Fails if the file was opened `MPI_MODE_SEQUENTIAL` (for explicit offsets and
    /// individual file pointers, which such a file does not have).
    pub fn check_not_sequential(&self) -> MpiResult<()> {
        if self.amode & mode::SEQUENTIAL != 0 {
            return fail(
                class::UNSUPPORTED_OPERATION,
                format!("{} was opened MPI_MODE_SEQUENTIAL: only shared file pointers", self.path),
            );
        }
        Ok(())
    }
}

static FILES: Mutex<Table<Arc<FileObj>>> = Mutex::new(Table::new(FILE_NULL));

fn files() -> MutexGuard<'static, Table<Arc<FileObj>>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stores an open file: its handle.
pub fn insert(obj: FileObj) -> c_int {
    files().insert(Arc::new(obj))
}

/// The open file `handle` names.
pub fn lookup(handle: c_int) -> MpiResult<Arc<FileObj>> {
    match files().get(handle) {
        Some(f) => Ok(f.clone()),
        None if handle == FILE_NULL => fail(class::FILE, "MPI_FILE_NULL is not an open file"),
        None => fail(class::FILE, format!("{handle:#x} is not a file handle")),
    }
}

/// Whether `handle` names an open file.
pub fn is_live(handle: c_int) -> bool {
    files().get(handle).is_some()
}

/// Removes an open file from the table (at close).
pub fn remove(handle: c_int) -> Option<Arc<FileObj>> {
    files().remove(handle)
}

/// The MPI error for a failed system call on `path`.
pub fn io_error(path: &str, e: &std::io::Error) -> MpiError {
    use std::io::ErrorKind as K;
    let class = match e.kind() {
        K::NotFound => class::NO_SUCH_FILE,
        K::PermissionDenied => class::ACCESS,
        K::AlreadyExists => class::FILE_EXISTS,
        _ => match e.raw_os_error() {
            Some(28) => class::NO_SPACE,                       // ENOSPC
            Some(30) => class::READ_ONLY,                      // EROFS
            Some(122) => class::QUOTA,                         // EDQUOT
            Some(20) | Some(21) | Some(36) => class::BAD_FILE, // ENOTDIR, EISDIR, ENAMETOOLONG
            Some(26) => class::FILE_IN_USE,                    // ETXTBSY
            _ => class::IO,
        },
    };
    MpiError::new(class, format!("{path}: {e}"))
}

/// Checks an access mode alone (MPI 3.1 section 13.2.1): exactly one of `RDONLY`,
/// `RDWR`, `WRONLY`; no `CREATE` or `EXCL` with `RDONLY`; no `SEQUENTIAL` with `RDWR`.
pub fn check_amode(amode: c_int) -> MpiResult<()> {
    let access = [mode::RDONLY, mode::RDWR, mode::WRONLY].iter().filter(|&&m| amode & m != 0).count();
    let why = if amode & !mode::ALL != 0 {
        "it has bits that are no MPI_MODE_*"
    } else if access != 1 {
        "it needs exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY"
    } else if amode & mode::RDONLY != 0 && amode & (mode::CREATE | mode::EXCL) != 0 {
        "MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL"
    } else if amode & mode::RDWR != 0 && amode & mode::SEQUENTIAL != 0 {
        "MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL"
    } else {
        return Ok(());
    };
    fail(class::AMODE, format!("access mode {amode:#x}: {why}"))
}
