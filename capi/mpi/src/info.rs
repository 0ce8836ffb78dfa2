//! Info objects: ordered key/value pairs that creation calls read hints from.
//!
//! `MPI_INFO_NULL` is the empty info; `MPI_INFO_ENV` is predefined and empty too.
//! Keys and values are kept as given (keys up to `MPI_MAX_INFO_KEY` bytes, values up
//! to `MPI_MAX_INFO_VAL`); a later set of the same key replaces its value in place.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

use crate::error::{MpiResult, class, fail};
use crate::handles::Table;

/// `MPI_INFO_NULL`: the info table's base.
pub const INFO_NULL: c_int = 0x5400_0000;
/// `MPI_INFO_ENV`.
pub const INFO_ENV: c_int = INFO_NULL | 1;
/// `MPI_MAX_INFO_KEY`.
pub const MAX_KEY: usize = 255;
const MAX_VAL: usize = 1024;

/// Key/value pairs, in the order first set.
pub type Pairs = Vec<(String, String)>;

static INFOS: Mutex<Table<Pairs>> = Mutex::new(Table::new(INFO_NULL));

fn infos() -> MutexGuard<'static, Table<Pairs>> {
    let mut t = INFOS.lock().unwrap_or_else(|p| p.into_inner());
    if !t.is_predefined(INFO_ENV) {
        t.predefine(Vec::new());
    }
    t
}

/// A new empty info.
pub fn create() -> c_int {
    with_pairs(Vec::new())
}

/// A new info holding `pairs` (`MPI_Info_dup`, and the hints a getter reports).
pub fn with_pairs(pairs: Pairs) -> c_int {
    infos().insert(pairs)
}

/// The pairs of `handle` (none for `MPI_INFO_NULL`).
pub fn pairs(handle: c_int) -> MpiResult<Pairs> {
    if handle == INFO_NULL {
        return Ok(Vec::new());
    }
    infos().get(handle).cloned().ok_or_else(|| bad(handle))
}

fn bad(handle: c_int) -> crate::error::MpiError {
    crate::error::MpiError::new(class::INFO, format!("{handle:#x} is not an info handle"))
}

fn user(t: &mut Table<Pairs>, handle: c_int) -> MpiResult<&mut Pairs> {
    if t.is_predefined(handle) {
        return fail(class::INFO, "a predefined info cannot be changed");
    }
    t.get_mut(handle).ok_or_else(|| bad(handle))
}

/// `MPI_Info_set`.
pub fn set(handle: c_int, key: &str, value: &str) -> MpiResult<()> {
    if key.is_empty() || key.len() > MAX_KEY {
        return fail(class::INFO_KEY, format!("key of {} bytes (1..={MAX_KEY})", key.len()));
    }
    if value.is_empty() || value.len() > MAX_VAL {
        return fail(class::INFO_VALUE, format!("value of {} bytes (1..={MAX_VAL})", value.len()));
    }
    let mut t = infos();
    let pairs = user(&mut t, handle)?;
    match pairs.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value.to_owned(),
        None => pairs.push((key.to_owned(), value.to_owned())),
    }
    Ok(())
}

/// `MPI_Info_get`: the value of `key`, if set.
pub fn get(handle: c_int, key: &str) -> MpiResult<Option<String>> {
    Ok(pairs(handle)?.into_iter().find(|(k, _)| k == key).map(|(_, v)| v))
}

/// `MPI_Info_delete`.
pub fn delete(handle: c_int, key: &str) -> MpiResult<()> {
    let mut t = infos();
    let pairs = user(&mut t, handle)?;
    let before = pairs.len();
    pairs.retain(|(k, _)| k != key);
    if pairs.len() == before {
        return fail(class::INFO_NOKEY, format!("key {key:?} is not set"));
    }
    Ok(())
}

/// `MPI_Info_free`.
pub fn free(handle: c_int) -> MpiResult<()> {
    let mut t = infos();
    user(&mut t, handle)?;
    t.remove(handle).map(drop).ok_or_else(|| bad(handle))
}
