//! Opening, closing and deleting files, and the calls on a file's size: the
//! collective ones agree among the file's processes before anyone acts, so that every
//! member sees the same outcome.
//!
//! Agreement ([`agree`]) is one allreduce (max) of each member's local error class
//! and of the arguments that must match (each value and its negation, so that max
//! and min come together). `MPI_File_open` first agrees on the access mode; then
//! communicator rank 0 alone opens with `O_CREAT`/`O_EXCL` as the mode says, and
//! broadcasts its outcome, so exactly one creation happens and an `EXCL` failure is
//! everyone's; the others open the existing file after that, and a last agreement
//! makes any member's failure everyone's (each then closes what it opened), and so does
//! a name that reached another file (device and inode differ: `MPI_ERR_NOT_SAME`). Size
//! changes are made by rank 0 and agreed the same way.

use std::ffi::c_int;
use std::fs::OpenOptions;
use std::os::unix::fs::MetadataExt;

use sccemu::Op;

use super::view::View;
use super::{FileObj, Mutable, io_error, lookup, mode};
use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};

/// Collective over `comm`: fails everywhere if `local` failed anywhere (with the
/// member's own error where it failed, `MPI_ERR_<largest class>` elsewhere), or if
/// the members' `values` differ (`MPI_ERR_NOT_SAME`).
pub fn agree(comm: &CommObj, local: MpiResult<()>, values: &[i64]) -> MpiResult<()> {
    let mut mine = vec![local.as_ref().err().map_or(0, |e| i64::from(e.class))];
    for &v in values {
        mine.push(v);
        mine.push(v.wrapping_neg());
    }
    let mut all = vec![0i64; mine.len()];
    comm.coll().allreduce(&mine, &mut all, Op::Max).map_err(coll_error)?;
    local?;
    if all[0] != 0 {
        return fail(all[0] as c_int, "the call failed on another process of the file's communicator");
    }
    if all[1..].chunks(2).any(|mm| mm[0] != mm[1].wrapping_neg()) {
        return fail(class::NOT_SAME, "the processes of the file's communicator passed different arguments");
    }
    Ok(())
}

/// The descriptor for `path` under `amode`, creating the file if `create` and the
/// mode says so.
fn open_one(path: &str, amode: c_int, create: bool) -> MpiResult<std::fs::File> {
    let mut o = OpenOptions::new();
    o.read(amode & (mode::RDONLY | mode::RDWR) != 0).write(amode & (mode::WRONLY | mode::RDWR) != 0);
    // MPI_MODE_EXCL only matters when creating (as O_EXCL without O_CREAT).
    if create && amode & mode::CREATE != 0 {
        if amode & mode::EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
    }
    let file = o.open(path).map_err(|e| io_error(path, &e))?;
    if file.metadata().map_err(|e| io_error(path, &e))?.is_dir() {
        return fail(class::BAD_FILE, format!("{path} is a directory"));
    }
    Ok(file)
}

/// `MPI_File_open`, collective over `comm`: the new file's handle. `args` is the
/// outcome of the caller's checks of its other arguments: the path and the hints, or
/// the error that fails every member.
pub fn open(
    comm_handle: c_int,
    args: MpiResult<(String, crate::info::Pairs)>,
    amode: c_int,
) -> MpiResult<c_int> {
    let comm = crate::comm::lookup_intra(comm_handle)?;
    let local = args.as_ref().map(drop).map_err(MpiError::clone).and_then(|()| super::check_amode(amode));
    agree(comm, local, &[i64::from(amode)])?;
    let (path, hints) = args?;
    let path = path.as_str();
    // Rank 0 alone may create the file; everyone learns how that went.
    let first = (comm.rank == 0).then(|| open_one(path, amode, true));
    let mut outcome = [first.as_ref().map_or(0, |r| r.as_ref().err().map_or(0, |e| e.class))];
    comm.coll().bcast(0, &mut outcome).map_err(coll_error)?;
    if outcome[0] != 0 {
        return match first {
            Some(Err(e)) => Err(e),
            _ => fail(outcome[0], format!("{path}: the file's rank 0 could not open it")),
        };
    }
    let file = match first {
        Some(r) => r,
        None => open_one(path, amode, false),
    };
    // The names may differ (a relative and an absolute path), but not the file.
    let identity = file.as_ref().ok().and_then(|f| f.metadata().ok()).map_or([0, 0], |m| [m.dev(), m.ino()]);
    agree(comm, file.as_ref().map(drop).map_err(MpiError::clone), &identity.map(|x| x as i64))?;
    let file = file?;
    let own = crate::comm::split(comm, Some(0), comm.rank as c_int, crate::topology::Topology::None)?
        .ok_or_else(|| MpiError::new(class::INTERN, "the file's communicator was not made"))?;
    let pointer = if amode & mode::APPEND != 0 {
        file.metadata().map_err(|e| io_error(path, &e))?.len() as i64
    } else {
        0
    };
    let shared = super::shared::SharedPointer::new(crate::comm::lookup(own)?, pointer as u64)?;
    let state = Mutable { view: View::default_view(), pointer, hints, atomic: false, split: None };
    Ok(super::insert(FileObj {
        file,
        path: path.to_owned(),
        amode,
        comm: own,
        state: std::sync::Mutex::new(state),
        shared,
    }))
}

/// `MPI_File_close`, collective: closes the file (deleting it under
/// `MPI_MODE_DELETE_ON_CLOSE`, once every member is done with it).
pub fn close(handle: c_int) -> MpiResult<()> {
    let f = lookup(handle)?;
    let comm = f.comm()?;
    comm.coll().barrier().map_err(coll_error)?;
    super::remove(handle);
    let mut result = Ok(());
    if f.amode & mode::DELETE_ON_CLOSE != 0 && comm.rank == 0 {
        result = std::fs::remove_file(&f.path).map_err(|e| io_error(&f.path, &e));
    }
    f.shared.free()?;
    crate::comm::free(f.comm)?;
    result
}

/// `MPI_File_delete`.
pub fn delete(path: &str) -> MpiResult<()> {
    std::fs::remove_file(path).map_err(|e| io_error(path, &e))
}

/// `MPI_File_get_size`: bytes.
pub fn size(f: &FileObj) -> MpiResult<u64> {
    Ok(f.file.metadata().map_err(|e| io_error(&f.path, &e))?.len())
}

/// `MPI_File_set_size` (`grow_only` false) and `MPI_File_preallocate` (true),
/// collective: rank 0 changes the size, and everyone learns the outcome.
pub fn resize(f: &FileObj, size: i64, grow_only: bool) -> MpiResult<()> {
    let comm = f.comm()?;
    let local =
        if size < 0 { fail(class::ARG, format!("size {size} is negative")) } else { f.check_writable() };
    agree(comm, local, &[size])?;
    let mut done = Ok(());
    if comm.rank == 0 {
        done = self::size(f).and_then(|now| {
            if grow_only && now >= size as u64 {
                return Ok(());
            }
            f.file.set_len(size as u64).map_err(|e| io_error(&f.path, &e))
        });
    }
    agree(comm, done, &[])
}

/// `MPI_File_sync`, collective: this process's writes reach the storage device.
pub fn sync(f: &FileObj) -> MpiResult<()> {
    let local = f.file.sync_all().map_err(|e| io_error(&f.path, &e));
    agree(f.comm()?, local, &[])
}
