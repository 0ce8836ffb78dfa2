//! The request table's lock, which a thread that holds it never waits for.
//!
//! Every request function locks the table ([`lock`]), and a generalized request's
//! `query_fn`, `free_fn` and `cancel_fn` run under that lock: they run in its test
//! and cancel, which happen in place in the table (`test_in_place`, `cancel`). A
//! callback that calls a request function would then wait for the lock its own thread
//! holds, for ever. Instead that call fails: an operation of another kind (`Op::Other`,
//! the only kind that runs program code) is tested or cancelled inside [`in_callbacks`],
//! which marks the thread, and a lock that finds the table taken panics with
//! [`Reentered`] if the mark is set, before it waits. The C entry point turns that
//! into `MPI_ERR_OTHER` under the error handler in force (`ffi::panicked`); the table
//! is untouched, and the callback goes on. The refused call did nothing to the table,
//! but what it did before it needed the table stays done: an `MPI_Isend`'s message,
//! say, is sent, without a request.
//!
//! A marked thread holds the table, so the table being taken is then its own doing:
//! the refusal is never one of another thread's holds. The uncontended lock costs what
//! a plain one does (no thread-local is read unless the table is taken).
//!
//! Invariant: the mark is set exactly while an [`in_callbacks`] of this thread runs
//! (cleared by a guard's drop, which unwinding runs too).

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, TryLockError};

use super::Requests;
use crate::error::{MpiError, class};

thread_local! {
    static IN_CALLBACKS: Cell<bool> = const { Cell::new(false) };
}

/// The panic of a request function called while its thread holds the table.
pub struct Reentered;

impl Reentered {
    /// The error the call returns instead.
    pub fn error() -> MpiError {
        MpiError::new(
            class::OTHER,
            "a request function called while this thread holds the request table (from a generalized \
             request's query_fn, free_fn or cancel_fn)",
        )
    }
}

/// Locks `table`; panics with [`Reentered`] if this thread holds it (module docs).
#[inline(always)]
pub(super) fn lock(table: &'static Mutex<Requests>) -> MutexGuard<'static, Requests> {
    match table.try_lock() {
        Ok(guard) => guard,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => contended(table),
    }
}

#[cold]
#[inline(never)]
fn contended(table: &'static Mutex<Requests>) -> MutexGuard<'static, Requests> {
    if IN_CALLBACKS.get() {
        std::panic::panic_any(Reentered);
    }
    table.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f`, which may call a generalized request's callbacks, with this thread marked
/// as holding the table (which it must).
pub(super) fn in_callbacks<R>(f: impl FnOnce() -> R) -> R {
    struct Unmark;
    impl Drop for Unmark {
        fn drop(&mut self) {
            IN_CALLBACKS.set(false);
        }
    }
    IN_CALLBACKS.set(true);
    let _unmark = Unmark;
    f()
}
