//! Error classes and codes the program adds (`MPI_Add_error_class`,
//! `MPI_Add_error_code`) and their texts (`MPI_Add_error_string`).
//!
//! They take the values from [`FIRST`] on, one numbering for classes and codes alike,
//! above `MPI_ERR_LASTCODE` as MPI requires, so they never collide with the library's
//! own codes (a class plus a message slot, `crate::error`). Each value keeps its class
//! (a class is its own) and its text. They are the process's: MPI makes them local, and
//! a program that wants the same values everywhere adds them in the same order.
//! `MPI_LASTUSEDCODE` on `MPI_COMM_WORLD` is the largest value given out so far
//! ([`last_used`]). Nothing is ever removed, as MPI has no call to remove them.

use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{MpiResult, class, fail};

/// `MPI_ERR_LASTCODE` (mpi.h): the largest of the library's own codes.
pub const LASTCODE: c_int = 0x3fff_ffff;
/// The first value given to the program's classes and codes.
pub const FIRST: c_int = LASTCODE + 1;
/// `MPI_MAX_ERROR_STRING` (mpi.h) less its terminating NUL.
pub const MAX_TEXT: usize = 511;

/// A class or code the program added.
struct Added {
    class: c_int,
    text: String,
}

/// By value, from [`FIRST`].
static ADDED: Mutex<Vec<Added>> = Mutex::new(Vec::new());
/// `MPI_LASTUSEDCODE`'s value, where the attribute points.
static LAST_USED: AtomicI32 = AtomicI32::new(LASTCODE);

fn added() -> std::sync::MutexGuard<'static, Vec<Added>> {
    ADDED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where `value` is in `ADDED`, if it is one of the program's values.
fn index(value: c_int) -> Option<usize> {
    usize::try_from(value.checked_sub(FIRST)?).ok()
}

fn add(list: &mut Vec<Added>, class: Option<c_int>) -> MpiResult<c_int> {
    let Some(value) = c_int::try_from(list.len()).ok().and_then(|n| FIRST.checked_add(n)) else {
        return fail(class::OTHER, "no error values are left to add");
    };
    list.push(Added { class: class.unwrap_or(value), text: String::new() });
    // Relaxed: the value is the process's own, read back by its threads through MPI
    // calls that take the same lock first.
    LAST_USED.store(value, Ordering::Relaxed);
    Ok(value)
}

/// `MPI_Add_error_class`: a new class.
pub fn add_class() -> MpiResult<c_int> {
    add(&mut added(), None)
}

/// `MPI_Add_error_code`: a new code of `class`, one of the library's classes or one
/// the program added.
pub fn add_code(error_class: c_int) -> MpiResult<c_int> {
    let mut list = added();
    let is_class = match index(error_class) {
        Some(i) => list.get(i).is_some_and(|a| a.class == error_class),
        None => class::text(error_class).is_some() && error_class != class::SUCCESS,
    };
    if !is_class {
        return fail(class::ARG, format!("{error_class} is not an error class"));
    }
    add(&mut list, Some(error_class))
}

/// `MPI_Add_error_string`: `text` for `value`, a class or code the program added.
pub fn set_text(value: c_int, text: &str) -> MpiResult<()> {
    if text.len() > MAX_TEXT {
        return fail(class::ARG, format!("an error string of {} bytes (at most {MAX_TEXT})", text.len()));
    }
    let mut list = added();
    match index(value).and_then(|i| list.get_mut(i)) {
        Some(a) => {
            a.text = text.to_owned();
            Ok(())
        }
        None => fail(class::ARG, format!("{value} is not an error class or code the program added")),
    }
}

/// The class and text of `value`, if the program added it.
pub fn lookup(value: c_int) -> Option<(c_int, String)> {
    added().get(index(value)?).map(|a| (a.class, a.text.clone()))
}

/// Where `MPI_LASTUSEDCODE`'s value lives.
pub fn last_used() -> *mut c_int {
    LAST_USED.as_ptr()
}
