//! Synchronization of MPI windows: fence, post-start-complete-wait, locks and flushes,
//! each the sccemu window's own (the MPICH2 protocols the project reproduces).
//!
//! Ranks are the window communicator's, which are the sccemu window's too; an
//! `MPI_Group` holds processes (world ranks), translated to their ranks in the window's
//! communicator (a process outside it is `MPI_ERR_GROUP`). `MPI_PROC_NULL` as a lock or
//! flush target does nothing. Assert flags map one to one onto `sccemu::Assert`, where the protocols
//! use them: `NOCHECK` skips the post/start handshake, `NOPRECEDE`/`NOSUCCEED` the
//! fence's epoch bookkeeping; `NOSTORE` and `NOPUT` cost nothing to honour on shared
//! memory. A lock's `NOCHECK` is accepted and the lock still taken (always correct).
//! An unknown flag is `MPI_ERR_ASSERT`.

use std::ffi::c_int;

use sccemu::{Assert, Group, LockKind};

use crate::comm::CommObj;
use crate::error::{MpiResult, class, fail};
use crate::win::{CachedGroup, WinObj, WinState, sync_error, with_win};

/// `MPI_MODE_*`, and the sccemu assert of each.
const MODES: [(c_int, Assert); 5] = [
    (1024, Assert::NOCHECK),
    (2048, Assert::NOSTORE),
    (4096, Assert::NOPUT),
    (8192, Assert::NOPRECEDE),
    (16384, Assert::NOSUCCEED),
];

/// `MPI_LOCK_EXCLUSIVE` and `MPI_LOCK_SHARED`.
const LOCK_EXCLUSIVE: c_int = 234;
const LOCK_SHARED: c_int = 235;

/// The sccemu asserts of an `assert` argument.
#[inline]
fn asserts(bits: c_int) -> MpiResult<Assert> {
    if bits == 0 {
        return Ok(Assert::NONE);
    }
    let known = MODES.iter().fold(0, |all, (b, _)| all | b);
    if bits & !known != 0 {
        return fail(class::ASSERT, format!("assert {bits:#x} has bits no MPI_MODE_* has"));
    }
    Ok(MODES.iter().filter(|(b, _)| bits & b != 0).fold(Assert::NONE, |a, (_, s)| a | *s))
}

/// Window rank `rank`, checked; `None` for `MPI_PROC_NULL`.
fn target(obj: &WinObj, rank: c_int) -> MpiResult<Option<u32>> {
    if rank == crate::p2p::PROC_NULL {
        return Ok(None);
    }
    match usize::try_from(rank).ok().filter(|&r| r < obj.targets.len()) {
        Some(r) => Ok(Some(r as u32)),
        None => fail(class::RANK, format!("rank {rank} of a window of {}", obj.targets.len())),
    }
}

/// The sccemu group of `MPI_Group` handle `group`: its processes' ranks in `comm`.
fn group(comm: &CommObj, handle: c_int) -> MpiResult<Group> {
    let members = crate::group::lookup(handle)?;
    let rank = |&world: &u32| match comm.rank_of_world(world) {
        Some(r) => Ok(r),
        None => fail(
            class::GROUP,
            format!("process {world} of the group is not in the window's communicator of {}", comm.size()),
        ),
    };
    members.iter().map(rank).collect()
}

/// The sccemu group of `handle`, from `cache` while no group was freed since it was
/// filled (a group never changes, and its handle is reused only after a free).
fn cached_group<'a>(
    comm: &CommObj,
    cache: &'a mut Option<CachedGroup>,
    handle: c_int,
) -> MpiResult<&'a Group> {
    let frees = crate::group::frees();
    let fresh = matches!(cache, Some((h, f, _)) if *h == handle && *f == frees);
    if !fresh {
        *cache = Some((handle, frees, group(comm, handle)?));
    }
    Ok(&cache.as_ref().expect("just filled").2)
}

/// Runs a PSCW call that takes a group: the group (cached in slot `which` of the
/// window's state), then the asserts, then `f` on the live window.
fn with_group(
    obj: &WinObj,
    which: usize,
    grp: c_int,
    assert: c_int,
    f: impl FnOnce(&sccemu::Window<'static, u8>, &Group, Assert) -> Result<(), sccemu::SyncError>,
) -> MpiResult<()> {
    obj.state.with(|s| {
        let WinState { win, epoch_groups, .. } = s;
        let g = cached_group(obj.comm, &mut epoch_groups[which], grp)?;
        let a = asserts(assert)?;
        match win {
            Some(w) => f(w, g, a).map_err(sync_error),
            None => fail(class::WIN, "the window was freed"),
        }
    })
}

/// `MPI_Win_fence`.
pub fn fence(obj: &WinObj, assert: c_int) -> MpiResult<()> {
    let a = asserts(assert)?;
    if a.contains(Assert::NOCHECK) {
        return fail(class::ASSERT, "MPI_MODE_NOCHECK does not apply to a fence");
    }
    with_win(obj, |w, _| w.fence_with(a).map_err(sync_error))
}

/// `MPI_Win_post`.
pub fn post(obj: &WinObj, grp: c_int, assert: c_int) -> MpiResult<()> {
    with_group(obj, 0, grp, assert, |w, g, a| w.post_with(g, a))
}

/// `MPI_Win_start`.
pub fn start(obj: &WinObj, grp: c_int, assert: c_int) -> MpiResult<()> {
    with_group(obj, 1, grp, assert, |w, g, a| w.start_with(g, a))
}

/// `MPI_Win_complete`.
pub fn complete(obj: &WinObj) -> MpiResult<()> {
    with_win(obj, |w, _| w.complete().map_err(sync_error))
}

/// `MPI_Win_wait`.
pub fn wait(obj: &WinObj) -> MpiResult<()> {
    with_win(obj, |w, _| w.wait().map_err(sync_error))
}

/// `MPI_Win_test`.
pub fn test(obj: &WinObj) -> MpiResult<bool> {
    with_win(obj, |w, _| w.test().map_err(sync_error))
}

/// `MPI_Win_lock`.
pub fn lock(obj: &WinObj, lock_type: c_int, rank: c_int, assert: c_int) -> MpiResult<()> {
    let kind = match lock_type {
        LOCK_EXCLUSIVE => LockKind::Exclusive,
        LOCK_SHARED => LockKind::Shared,
        other => return fail(class::LOCKTYPE, format!("lock type {other} is neither exclusive nor shared")),
    };
    asserts(assert)?;
    let Some(target) = target(obj, rank)? else { return Ok(()) };
    with_win(obj, |w, _| {
        // The epoch stays open until MPI_Win_unlock: its guard must not close it.
        std::mem::forget(w.lock(kind, target).map_err(sync_error)?);
        Ok(())
    })
}

/// `MPI_Win_unlock`.
pub fn unlock(obj: &WinObj, rank: c_int) -> MpiResult<()> {
    let Some(target) = target(obj, rank)? else { return Ok(()) };
    with_win(obj, |w, _| w.unlock(target).map_err(sync_error))
}

/// `MPI_Win_lock_all`.
pub fn lock_all(obj: &WinObj, assert: c_int) -> MpiResult<()> {
    asserts(assert)?;
    with_win(obj, |w, _| {
        // Open until MPI_Win_unlock_all, as for `lock`.
        std::mem::forget(w.lock_all().map_err(sync_error)?);
        Ok(())
    })
}

/// `MPI_Win_unlock_all`.
pub fn unlock_all(obj: &WinObj) -> MpiResult<()> {
    with_win(obj, |w, _| w.unlock_all().map_err(sync_error))
}

/// `MPI_Win_flush` and `MPI_Win_flush_local` (`local`).
pub fn flush(obj: &WinObj, rank: c_int, local: bool) -> MpiResult<()> {
    let Some(target) = target(obj, rank)? else { return Ok(()) };
    with_win(obj, |w, _| if local { w.flush_local(target) } else { w.flush(target) }.map_err(sync_error))
}

/// `MPI_Win_flush_all` and `MPI_Win_flush_local_all` (`local`).
pub fn flush_all(obj: &WinObj, local: bool) -> MpiResult<()> {
    with_win(obj, |w, _| if local { w.flush_local_all() } else { w.flush_all() }.map_err(sync_error))
}

/// `MPI_Win_sync`.
pub fn sync(obj: &WinObj) -> MpiResult<()> {
    with_win(obj, |w, _| {
        w.sync();
        Ok(())
    })
}
