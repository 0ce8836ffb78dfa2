//! Error handlers: which communicators and windows return errors and which abort.
//!
//! Every object starts with `MPI_ERRORS_ARE_FATAL`, MPI's default; a communicator made
//! from another inherits its handler, as `MPI_Comm_dup` does. Handlers are kept by
//! object handle (kinds have disjoint handle ranges, so one map serves all), and an
//! object's entry goes when the object is freed. Errors that belong to no object use
//! `MPI_COMM_WORLD`'s handler.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// `MPI_ERRHANDLER_NULL`.
pub const NULL: c_int = 0x5800_0000;
/// `MPI_ERRORS_ARE_FATAL`.
pub const FATAL: c_int = 0x5800_0001;
/// `MPI_ERRORS_RETURN`.
pub const RETURN: c_int = 0x5800_0002;

static HANDLERS: Mutex<Option<HashMap<c_int, c_int>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashMap<c_int, c_int>) -> R) -> R {
    let mut map = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    f(map.get_or_insert_with(HashMap::new))
}

/// Whether `handler` is one this library knows.
pub fn is_valid(handler: c_int) -> bool {
    handler == FATAL || handler == RETURN
}

/// The handler of `object` (a communicator or window handle).
pub fn of(object: c_int) -> c_int {
    with(|m| m.get(&object).copied().unwrap_or(FATAL))
}

/// Sets the handler of `object`.
pub fn set(object: c_int, handler: c_int) {
    with(|m| m.insert(object, handler));
}

/// Gives `child` the handler of `parent`.
pub fn inherit(parent: c_int, child: c_int) {
    let h = of(parent);
    set(child, h);
}

/// Forgets a freed object.
pub fn forget(object: c_int) {
    with(|m| m.remove(&object));
}
