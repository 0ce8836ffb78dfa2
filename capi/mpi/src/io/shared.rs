//! The shared file pointer (MPI 3.1 section 13.4.4): one pointer per open file that
//! every process of the file moves, in etypes of the view (which MPI requires to be
//! the same on every process for these calls).
//!
//! The pointer is an `u64` in an sccemu window over the file's own communicator, on
//! communicator rank 0 (the others' parts are empty), made at `MPI_File_open` and
//! freed at `MPI_File_close` (both collective already); each update is an atomic in
//! a passive-target epoch of its own. An independent access
//! (`MPI_File_read_shared`, `MPI_File_write_shared`) claims its etypes with one atomic
//! fetch-and-add, so concurrent accesses take disjoint, consecutive parts of the
//! file in some order. The collective calls act at rank 0 and broadcast:
//! `MPI_File_read_ordered`/`write_ordered` gather every member's count, rank 0
//! advances the pointer by their sum, and each member's part starts after those of
//! the lower ranks; `MPI_File_seek_shared` and `MPI_File_set_view` set it at rank 0
//! between two agreements, so nobody uses it meanwhile.
//!
//! A read moves the pointer by the data requested, even where the file ends sooner.
//!
//! The same window serves atomic mode (`MPI_File_set_atomicity`): each access then
//! runs under a lock of the window's rank 0 part, shared for reads and exclusive for
//! writes ([`SharedPointer::atomically`]), so that the accesses of the file's
//! processes that overlap see each other whole or not at all. It is taken after the
//! access's offset is known (the pointer's own epochs are separate and short).

use sccemu::{Allgather, LockKind, Placement, Window};

use super::FileObj;
use super::open::agree;
use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};

/// A file's shared pointer: the window holding it, until the file is closed.
pub struct SharedPointer(std::sync::Mutex<Option<Window<'static, u64>>>);

impl std::fmt::Debug for SharedPointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedPointer")
    }
}

fn rma(e: impl std::fmt::Display) -> MpiError {
    MpiError::new(class::INTERN, format!("the shared file pointer: {e}"))
}

impl SharedPointer {
    /// Collective over `comm` (the file's own): a pointer at `start`.
    pub fn new(comm: &CommObj, start: u64) -> MpiResult<SharedPointer> {
        let len = usize::from(comm.rank == 0);
        let win = comm.coll().window::<u64>(len, Placement::Dram).map_err(rma)?;
        let pointer = SharedPointer(std::sync::Mutex::new(Some(win)));
        if comm.rank == 0 {
            pointer.set(start)?;
        }
        comm.coll().barrier().map_err(coll_error)?;
        Ok(pointer)
    }

    /// Runs `f` on the window in a passive-target epoch (a shared lock on every
    /// member, which only orders `f` after earlier epochs: the updates are atomic).
    fn with<R>(&self, f: impl FnOnce(&Window<'static, u64>) -> MpiResult<R>) -> MpiResult<R> {
        let w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(win) = w.as_ref() else { return fail(class::FILE, "the file is closed") };
        let epoch = win.lock_all().map_err(rma)?;
        let result = f(win);
        epoch.unlock_all().map_err(rma)?;
        result
    }

    /// Moves the pointer by `n` etypes: where it was.
    pub fn claim(&self, n: u64) -> MpiResult<u64> {
        self.with(|w| w.fetch_add(0, 0, n).map_err(rma))
    }

    /// Sets the pointer (rank 0 only; the caller agrees before and after).
    fn set(&self, at: u64) -> MpiResult<()> {
        self.with(|w| w.swap(0, 0, at).map(drop).map_err(rma))
    }

    /// Runs `f` (an access in atomic mode) under the file's lock among its processes:
    /// exclusive for a write, shared for a read.
    pub fn atomically<R>(&self, exclusive: bool, f: impl FnOnce() -> MpiResult<R>) -> MpiResult<R> {
        let w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(win) = w.as_ref() else { return fail(class::FILE, "the file is closed") };
        let kind = if exclusive { LockKind::Exclusive } else { LockKind::Shared };
        let epoch = win.lock(kind, 0).map_err(rma)?;
        let result = f();
        epoch.unlock().map_err(rma)?;
        result
    }

    /// Collective: frees the window.
    pub fn free(&self) -> MpiResult<()> {
        let win = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        win.map_or(Ok(()), |w| w.free().map_err(rma))
    }
}

/// Collective: sets `f`'s shared pointer to `at` etypes (`None`: this member's
/// arguments were wrong, which fails everyone).
pub fn reset(f: &FileObj, at: MpiResult<u64>) -> MpiResult<()> {
    let comm = f.comm()?;
    let value = at.as_ref().map_or(0, |&v| v as i64);
    agree(comm, at.as_ref().map(drop).map_err(Clone::clone), &[value])?;
    let done = if comm.rank == 0 { f.shared.set(value as u64) } else { Ok(()) };
    agree(comm, done, &[])
}

/// Collective: claims `n` etypes for this member after those of the lower ranks: the
/// offset where its part starts.
pub fn claim_ordered(f: &FileObj, n: u64) -> MpiResult<u64> {
    let comm = f.comm()?;
    let mut counts = vec![0u64; comm.size() as usize];
    comm.coll().allgather(&[n], &mut counts, Allgather::Auto).map_err(coll_error)?;
    let total: u64 = counts.iter().sum();
    let mut base = [if comm.rank == 0 { f.shared.claim(total).unwrap_or(u64::MAX) } else { 0 }];
    comm.coll().bcast(0, &mut base).map_err(coll_error)?;
    if base[0] == u64::MAX {
        return fail(class::INTERN, "the shared file pointer could not be moved");
    }
    Ok(base[0] + counts[..comm.rank as usize].iter().sum::<u64>())
}

/// The current value, for `MPI_File_get_position_shared`.
pub fn position(f: &FileObj) -> MpiResult<u64> {
    f.shared.claim(0)
}
