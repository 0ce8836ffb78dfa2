//! Window synchronization calls.

use std::ffi::c_int;

use sccemu::LockKind;

use crate::ffi::{Scope, c, entry, fast};
use crate::win;
use crate::winsync;

/// `MPI_Win_fence`.
#[unsafe(export_name = "PMPI_Win_fence")]
pub extern "C" fn MPI_Win_fence(assert: c_int, win: c_int) -> c_int {
    entry("MPI_Win_fence", Scope::Win(win), || winsync::fence(win::lookup(win)?, assert))
}

/// `MPI_Win_post`.
#[unsafe(export_name = "PMPI_Win_post")]
pub extern "C" fn MPI_Win_post(group: c_int, assert: c_int, win: c_int) -> c_int {
    entry("MPI_Win_post", Scope::Win(win), || winsync::post(win::lookup(win)?, group, assert))
}

/// `MPI_Win_start`.
#[unsafe(export_name = "PMPI_Win_start")]
pub extern "C" fn MPI_Win_start(group: c_int, assert: c_int, win: c_int) -> c_int {
    entry("MPI_Win_start", Scope::Win(win), || winsync::start(win::lookup(win)?, group, assert))
}

/// `MPI_Win_complete`.
#[unsafe(export_name = "PMPI_Win_complete")]
pub extern "C" fn MPI_Win_complete(win: c_int) -> c_int {
    entry("MPI_Win_complete", Scope::Win(win), || winsync::complete(win::lookup(win)?))
}

/// `MPI_Win_wait`.
#[unsafe(export_name = "PMPI_Win_wait")]
pub extern "C" fn MPI_Win_wait(win: c_int) -> c_int {
    entry("MPI_Win_wait", Scope::Win(win), || winsync::wait(win::lookup(win)?))
}

/// `MPI_Win_test`.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_Win_test")]
pub unsafe extern "C" fn MPI_Win_test(win: c_int, flag: *mut c_int) -> c_int {
    entry("MPI_Win_test", Scope::Win(win), || {
        let done = winsync::test(win::lookup(win)?)?;
        c!(out(flag, done as c_int, "flag"))
    })
}

/// `MPI_Win_lock`: each lock type without asserts to an entry of its own, the rest to
/// the general path. The dispatch cannot panic, and each callee has its own guard; a
/// call in tail position (a jump: the callees are `extern "C"`, so nothing unwinds out
/// of them and the call needs no landing pad), so that each type's path has its type
/// as a constant (callgrind, 8 B shared lock: 121 instructions a call with one entry
/// for both types, 114 with one each).
#[unsafe(export_name = "PMPI_Win_lock")]
pub extern "C" fn MPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: c_int) -> c_int {
    match (lock_type, assert) {
        (fast::LOCK_EXCLUSIVE, 0) => lock_of::<true>(rank, win),
        (fast::LOCK_SHARED, 0) => lock_of::<false>(rank, win),
        _ => lock_general(lock_type, rank, assert, win),
    }
}

/// `MPI_Win_lock` of an exclusive (`EXCLUSIVE`) or shared lock, without asserts.
#[inline(never)]
extern "C" fn lock_of<const EXCLUSIVE: bool>(rank: c_int, win: c_int) -> c_int {
    let (kind, lock_type) = match EXCLUSIVE {
        true => (LockKind::Exclusive, fast::LOCK_EXCLUSIVE),
        false => (LockKind::Shared, fast::LOCK_SHARED),
    };
    fast::run_code("MPI_Win_lock", || fast::lock(kind, rank, win), || lock_general(lock_type, rank, 0, win))
}

/// `MPI_Win_unlock`.
#[unsafe(export_name = "PMPI_Win_unlock")]
pub extern "C" fn MPI_Win_unlock(rank: c_int, win: c_int) -> c_int {
    fast::run_done("MPI_Win_unlock", || fast::unlock(rank, win), || unlock_general(rank, win))
}

/// `MPI_Win_lock_all`.
#[unsafe(export_name = "PMPI_Win_lock_all")]
pub extern "C" fn MPI_Win_lock_all(assert: c_int, win: c_int) -> c_int {
    fast::run_code("MPI_Win_lock_all", || fast::lock_all(assert, win), || lock_all_general(assert, win))
}

/// `MPI_Win_unlock_all`.
#[unsafe(export_name = "PMPI_Win_unlock_all")]
pub extern "C" fn MPI_Win_unlock_all(win: c_int) -> c_int {
    fast::run_done("MPI_Win_unlock_all", || fast::unlock_all(win), || unlock_all_general(win))
}

/// `MPI_Win_flush`.
#[unsafe(export_name = "PMPI_Win_flush")]
pub extern "C" fn MPI_Win_flush(rank: c_int, win: c_int) -> c_int {
    fast::run_done("MPI_Win_flush", || fast::flush(rank, win), || flush_general(rank, win))
}

/// `MPI_Win_flush_all`.
#[unsafe(export_name = "PMPI_Win_flush_all")]
pub extern "C" fn MPI_Win_flush_all(win: c_int) -> c_int {
    entry("MPI_Win_flush_all", Scope::Win(win), || winsync::flush_all(win::lookup(win)?, false))
}

/// `MPI_Win_flush_local`.
#[unsafe(export_name = "PMPI_Win_flush_local")]
pub extern "C" fn MPI_Win_flush_local(rank: c_int, win: c_int) -> c_int {
    entry("MPI_Win_flush_local", Scope::Win(win), || winsync::flush(win::lookup(win)?, rank, true))
}

/// `MPI_Win_flush_local_all`.
#[unsafe(export_name = "PMPI_Win_flush_local_all")]
pub extern "C" fn MPI_Win_flush_local_all(win: c_int) -> c_int {
    entry("MPI_Win_flush_local_all", Scope::Win(win), || winsync::flush_all(win::lookup(win)?, true))
}

/// `MPI_Win_sync`.
#[unsafe(export_name = "PMPI_Win_sync")]
pub extern "C" fn MPI_Win_sync(win: c_int) -> c_int {
    entry("MPI_Win_sync", Scope::Win(win), || winsync::sync(win::lookup(win)?))
}

// The general paths of the calls with fast paths, under the entry point's guard: out of
// line, with their arguments by value (a closure over the entry point's arguments would
// take their addresses, and the fast path would store every one of them to memory
// first).

#[inline(never)]
extern "C" fn lock_general(lock_type: c_int, rank: c_int, assert: c_int, win: c_int) -> c_int {
    entry("MPI_Win_lock", Scope::Win(win), || winsync::lock(win::lookup(win)?, lock_type, rank, assert))
}

#[inline(never)]
fn unlock_general(rank: c_int, win: c_int) -> c_int {
    entry("MPI_Win_unlock", Scope::Win(win), || winsync::unlock(win::lookup(win)?, rank))
}

#[inline(never)]
fn lock_all_general(assert: c_int, win: c_int) -> c_int {
    entry("MPI_Win_lock_all", Scope::Win(win), || winsync::lock_all(win::lookup(win)?, assert))
}

#[inline(never)]
fn unlock_all_general(win: c_int) -> c_int {
    entry("MPI_Win_unlock_all", Scope::Win(win), || winsync::unlock_all(win::lookup(win)?))
}

#[inline(never)]
fn flush_general(rank: c_int, win: c_int) -> c_int {
    entry("MPI_Win_flush", Scope::Win(win), || winsync::flush(win::lookup(win)?, rank, false))
}
