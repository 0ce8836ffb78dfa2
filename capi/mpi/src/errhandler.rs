//! Error handlers: which communicators and windows return errors, which abort, and
//! which call a function of the program's.
//!
//! Every object starts with `MPI_ERRORS_ARE_FATAL`, MPI's default; a communicator made
//! from another inherits its handler, as `MPI_Comm_dup` does. Files are the exception
//! MPI makes: `crate::ffi::file` gives `MPI_FILE_NULL` `MPI_ERRORS_RETURN` and each
//! file opened the handler `MPI_FILE_NULL` has then. Handlers are kept by
//! object handle (kinds have disjoint handle ranges, so one map serves all), and an
//! object's entry goes when the object is freed. Errors that belong to no object use
//! `MPI_COMM_WORLD`'s handler.
//!
//! User handlers (`MPI_Comm_create_errhandler`, `MPI_Win_create_errhandler`) get
//! handles after the predefined ones and keep their function for the job: MPI lets an
//! object keep using a handler after the handler is freed, and a handle is never
//! reused, so a freed one is only refused to new `*_set_errhandler` calls.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// `MPI_ERRHANDLER_NULL`.
pub const NULL: c_int = 0x5800_0000;
/// `MPI_ERRORS_ARE_FATAL`.
pub const FATAL: c_int = 0x5800_0001;
/// `MPI_ERRORS_RETURN`.
pub const RETURN: c_int = 0x5800_0002;

/// The C type of a user handler: `MPI_Comm_errhandler_function` and
/// `MPI_Win_errhandler_function` (the object's handle, the error code, and variadic
/// arguments that MPI leaves to implementations; none are passed here).
pub type UserFunction = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

/// What kind of object a user handler is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `MPI_Comm_create_errhandler`'s.
    Comm,
    /// `MPI_Win_create_errhandler`'s.
    Win,
    /// `MPI_File_create_errhandler`'s.
    File,
}

/// A user handler: its function, its kind, and whether its handle was freed.
#[derive(Clone, Copy)]
struct User {
    function: UserFunction,
    kind: Kind,
    freed: bool,
}

#[derive(Default)]
struct Handlers {
    /// By object handle.
    of: HashMap<c_int, c_int>,
    /// User handlers, handle `FIRST_USER + index`.
    users: Vec<User>,
}

/// The first user handler's handle.
const FIRST_USER: c_int = RETURN + 1;

static HANDLERS: Mutex<Option<Handlers>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Handlers) -> R) -> R {
    let mut h = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    f(h.get_or_insert_with(Handlers::default))
}

/// A new user handler of `kind`.
pub fn create(function: UserFunction, kind: Kind) -> c_int {
    with(|h| {
        h.users.push(User { function, kind, freed: false });
        FIRST_USER + h.users.len() as c_int - 1
    })
}

/// The user handler `handler`, if it is one (freed or not).
fn user(handler: c_int) -> Option<User> {
    let i = usize::try_from(handler.checked_sub(FIRST_USER)?).ok()?;
    with(|h| h.users.get(i).copied())
}

/// Whether `handler` may be given to an object of `kind`: a predefined one, or a
/// live user handler of that kind.
pub fn is_valid(handler: c_int, kind: Kind) -> bool {
    handler == FATAL || handler == RETURN || user(handler).is_some_and(|u| u.kind == kind && !u.freed)
}

/// Frees `handler` (a predefined one needs nothing); false if it is no handler.
pub fn free(handler: c_int) -> bool {
    if handler == FATAL || handler == RETURN {
        return true;
    }
    let Some(i) = handler.checked_sub(FIRST_USER).and_then(|i| usize::try_from(i).ok()) else { return false };
    with(|h| match h.users.get_mut(i) {
        Some(u) if !u.freed => {
            u.freed = true;
            true
        }
        _ => false,
    })
}

/// What an error on `object` under `handler` does once the handler ran: calls a user
/// handler with the object and `code` (the call then returns the code); gives `None`
/// for the predefined handlers, which the caller applies.
pub fn call_user(handler: c_int, object: c_int, code: c_int) -> Option<c_int> {
    let u = user(handler)?;
    let (mut object, mut code) = (object, code);
    // SAFETY: the program gave this function as an error handler of this kind, whose
    // C signature `UserFunction` is; the pointers are to locals that outlive the call.
    // It is a plain C call: nothing unwinds across it (a foreign exception aborts), and
    // no lock of this library is held meanwhile (the handler may call MPI).
    unsafe { (u.function)(&mut object, &mut code) };
    Some(code)
}

/// The handler of `object` (a communicator or window handle).
pub fn of(object: c_int) -> c_int {
    with(|h| h.of.get(&object).copied().unwrap_or(FATAL))
}

/// Sets the handler of `object`.
pub fn set(object: c_int, handler: c_int) {
    with(|h| h.of.insert(object, handler));
}

/// Gives `child` the handler of `parent`.
pub fn inherit(parent: c_int, child: c_int) {
    let h = of(parent);
    set(child, h);
}

/// Forgets a freed object.
pub fn forget(object: c_int) {
    with(|h| h.of.remove(&object));
}
