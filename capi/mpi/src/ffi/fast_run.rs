//! How a C entry point with a fast path (`super::fast`) runs it: the fast path under
//! the entry point's panic guard, with the general path and the error mapping out of
//! line, so that the success path is the fast path and one test.
//!
//! An error that a fast path settles itself (a failed lock wait; a put or get that
//! sccemu's entry refused and the window's general call then failed) goes to the
//! window's error handler only once the closure given to `on_win` has returned: the
//! handler is the program's code and may call MPI on the same window, whose state
//! (`Serial::unlocked`) must not be borrowed then. Such errors leave the closure boxed,
//! two words in registers, so that the success path carries no error's room.

use std::ffi::c_int;
use std::panic::AssertUnwindSafe;

use sccemu::{RmaError, SyncError};

use crate::error::class;
use crate::ffi::Scope;
use crate::win::{rma_error, sync_error};

/// Runs a call's general path out of line, so that the entry point's frame is the
/// fast path's alone.
#[inline(never)]
pub fn general<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The body of a C entry point with a fast path whose `Some` carries the call's code
/// (success, or an error the fast path settled: put and get's refusals by sccemu,
/// lock and lock_all's failed waits): `fast`, under the entry point's panic guard; its
/// refusal (`None`) runs `general`, the entry point's general path, out of line, so
/// that the success path is the fast path and one test.
#[inline(always)]
pub fn run_code(
    name: &'static str,
    fast: impl FnOnce() -> Option<c_int>,
    general: impl FnOnce() -> c_int,
) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(fast)) {
        Ok(Some(code)) => code,
        Ok(None) => general(),
        Err(panic) => super::panicked(name, panic),
    }
}

/// [`run_code`] for the fast paths that leave every refusal to the general path (`None`):
/// sccemu's entry points for bindings, which refuse having done nothing, and build no
/// error to carry (module docs).
#[inline(always)]
pub fn run_done(
    name: &'static str,
    fast: impl FnOnce() -> Option<()>,
    general: impl FnOnce() -> c_int,
) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(fast)) {
        Ok(Some(())) => class::SUCCESS,
        Ok(None) => general(),
        Err(panic) => super::panicked(name, panic),
    }
}

/// [`run_code`] for the fast paths whose sccemu refusal (`Some(None)`) must not share the
/// library's refusal's exit (`None`): both run the general path, but `refused`, from a
/// call site of its own. Where they shared one, the C arguments, saved across sccemu's
/// part, were loaded back before each of its refusal tests, on the success path too
/// (8 B fetch-and-op: six loads); with their own exit, only that exit loads them.
#[inline(always)]
pub fn run_refusable(
    name: &'static str,
    fast: impl FnOnce() -> Option<Option<()>>,
    refused: impl FnOnce() -> c_int,
    general: impl FnOnce() -> c_int,
) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(fast)) {
        Ok(Some(Some(()))) => class::SUCCESS,
        Ok(Some(None)) => refused(),
        Ok(None) => general(),
        Err(panic) => super::panicked(name, panic),
    }
}

/// The general path after a refusal by sccemu ([`run_refusable`]): `general`, from this
/// call site, out of line.
#[cold]
#[inline(never)]
pub fn refused<R>(general: impl FnOnce() -> R) -> R {
    general()
}

/// A put or get's outcome as the call's code: an error goes to the window's handler
/// here, after `on_win`'s closure, since the handler, the program's code, may call
/// MPI on this window, whose state must not be borrowed then.
#[inline(always)]
pub fn settle_rma(name: &'static str, win: c_int, done: Result<(), Box<RmaError>>) -> c_int {
    match done {
        Ok(()) => class::SUCCESS,
        Err(e) => rma_failed(name, win, *e),
    }
}

/// A put or get's error, to the window's handler.
#[cold]
#[inline(never)]
fn rma_failed(name: &'static str, win: c_int, e: RmaError) -> c_int {
    super::failed(name, Scope::Win(win), rma_error(e))
}

/// sccemu's answer to a lock call, with a failed wait's error boxed (out of line), so
/// that what leaves `on_win`'s closure is two words, returned in registers: carried
/// out as it is, the `SyncError`'s room was copied through the stack on the success
/// path too (callgrind, 8 B lock + unlock: 16 to 18 instructions more).
#[inline(always)]
pub fn boxed(answer: Option<Result<(), SyncError>>) -> Option<Result<(), Box<SyncError>>> {
    match answer? {
        Ok(()) => Some(Ok(())),
        Err(e) => Some(Err(boxed_error(e))),
    }
}

/// A failed wait's error on the heap (the cold path of [`boxed`]).
#[cold]
#[inline(never)]
fn boxed_error(e: SyncError) -> Box<SyncError> {
    Box::new(e)
}

/// A lock call's answer as the entry point's code: a failed wait's error goes to the
/// window's handler here, once `on_win`'s closure has returned (the handler, the
/// program's code, may call MPI on this window, whose state must not be borrowed
/// then), and its code is the call's.
#[inline(always)]
pub fn settled(name: &'static str, win: c_int, answer: Result<(), Box<SyncError>>) -> Option<c_int> {
    match answer {
        Ok(()) => Some(class::SUCCESS),
        Err(e) => Some(wait_failed(name, win, *e)),
    }
}

/// A failed lock wait's error, to the window's handler.
#[cold]
#[inline(never)]
fn wait_failed(name: &'static str, win: c_int, e: SyncError) -> c_int {
    super::failed(name, Scope::Win(win), sync_error(e))
}
