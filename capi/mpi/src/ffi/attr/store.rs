//! The one store of the program's attribute keys and of the attributes set with them,
//! for the three kinds of object MPI caches attributes on: communicators, windows and
//! datatypes (MPI-3.1 §6.7). The per-kind entry points ([`super::keyval`],
//! [`super::win_keyval`], [`super::type_keyval`]) only check their object's handle
//! and call in here.
//!
//! Invariants:
//! - A key belongs to one [`Kind`]: used with an object of another kind, or as no key
//!   at all, it is `MPI_ERR_KEYVAL`. Key handles are never reused, so a stale one is
//!   reported rather than taken for a newer key.
//! - A key counts the attributes set with it (`uses`). Freeing it forbids new
//!   attributes but keeps it valid for the ones set (read, delete, copy at dup, their
//!   callbacks); it goes when it is freed and its last attribute is deleted, as
//!   MPI's `MPI_COMM_FREE_KEYVAL` describes.
//! - Attributes are keyed by (object handle, key); handles of different kinds lie in
//!   different ranges (mpi.h), so one map holds all. An object's attributes are all
//!   deleted before its handle is freed (and may be reused).
//! - The lock is held only to read or change the tables, never across a callback:
//!   callbacks are the program's C code and may call MPI, this store included.
//!
//! A callback that returns an error fails the call that ran it, with that error's
//! class. A failed delete callback leaves the attribute as it was when the call was
//! `MPI_*_delete_attr` or `MPI_*_set_attr` (nothing changed); when an object is freed,
//! every attribute goes, each callback runs, and the first error is returned.
//! Concurrent writes by two threads to one attribute of one object are the program's
//! race, as MPI leaves them; the tables stay consistent whatever the order.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::c;

/// `MPI_Comm_copy_attr_function`, `MPI_Win_copy_attr_function` and
/// `MPI_Type_copy_attr_function` (and MPI-1's `MPI_Copy_function`): every handle is an
/// int, so one signature serves the three kinds.
pub type CopyFunction =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function`, `MPI_Win_delete_attr_function` and
/// `MPI_Type_delete_attr_function` (and MPI-1's `MPI_Delete_function`).
pub type DeleteFunction = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

/// The kind of object a key caches attributes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Communicators (`MPI_Comm_create_keyval`).
    Comm,
    /// Windows (`MPI_Win_create_keyval`).
    Win,
    /// Datatypes (`MPI_Type_create_keyval`).
    Type,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "communicator",
            Kind::Win => "window",
            Kind::Type => "datatype",
        }
    }
}

/// `MPI_KEYVAL_INVALID`.
pub const KEYVAL_INVALID: c_int = -1;
/// The first key the program gets (the predefined attributes' keys come before).
const FIRST_KEYVAL: c_int = 0x6440_0100;

/// A key: its kind, callbacks and extra state, whether the program freed it, and how
/// many attributes are set with it.
#[derive(Clone, Copy)]
struct Key {
    kind: Kind,
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    extra: usize,
    freed: bool,
    uses: usize,
}

struct Store {
    /// Key `FIRST_KEYVAL + i` is `keys[i]`; `None` once freed and unused.
    keys: Vec<Option<Key>>,
    /// Attribute values by (object handle, key).
    values: BTreeMap<(c_int, c_int), usize>,
}

static STORE: Mutex<Store> = Mutex::new(Store { keys: Vec::new(), values: BTreeMap::new() });

fn store() -> MutexGuard<'static, Store> {
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    fn slot(&mut self, keyval: c_int) -> Option<&mut Key> {
        let index = usize::try_from(keyval.checked_sub(FIRST_KEYVAL)?).ok()?;
        self.keys.get_mut(index)?.as_mut()
    }

    /// Key `keyval`, which must be a live key of `kind`.
    fn key(&mut self, kind: Kind, keyval: c_int) -> MpiResult<Key> {
        match self.slot(keyval) {
            Some(k) if k.kind == kind => Ok(*k),
            Some(k) => fail(
                class::KEYVAL,
                format!("attribute key {keyval:#x} is a {} key, not a {} key", k.kind.name(), kind.name()),
            ),
            None => fail(class::KEYVAL, format!("{keyval:#x} is not a {} attribute key", kind.name())),
        }
    }

    /// Sets the attribute, counting a new one as a use of its key; false, and nothing
    /// set, if the key is gone (freed with no use left, by another thread or a
    /// callback since the caller looked it up).
    fn attach(&mut self, handle: c_int, keyval: c_int, value: usize) -> bool {
        let new = !self.values.contains_key(&(handle, keyval));
        let Some(k) = self.slot(keyval) else { return false };
        if new {
            k.uses += 1;
        }
        self.values.insert((handle, keyval), value);
        true
    }

    /// Removes the attribute and the use of its key (the key goes if it was freed and
    /// this was its last use); its value, if it was set.
    fn detach(&mut self, handle: c_int, keyval: c_int) -> Option<usize> {
        let value = self.values.remove(&(handle, keyval))?;
        self.release(keyval);
        Some(value)
    }

    fn release(&mut self, keyval: c_int) {
        if let Some(k) = self.slot(keyval) {
            k.uses = k.uses.saturating_sub(1);
            if k.freed && k.uses == 0 {
                self.keys[(keyval - FIRST_KEYVAL) as usize] = None;
            }
        }
    }

    /// The attributes of `handle`, by key.
    fn of(&self, handle: c_int) -> Vec<(c_int, usize)> {
        self.values.range((handle, c_int::MIN)..=(handle, c_int::MAX)).map(|(&(_, k), &v)| (k, v)).collect()
    }
}

/// The error of a callback that returned `rc`.
fn callback_failed(what: &str, keyval: c_int, rc: c_int) -> MpiError {
    let class = crate::error::class_of(rc).unwrap_or(class::OTHER);
    MpiError::new(class, format!("the {what} callback of attribute key {keyval:#x} returned {rc}"))
}

/// Runs the delete callback of `k` on the value of attribute `keyval` of `handle`.
fn run_delete(k: Key, handle: c_int, keyval: c_int, value: usize) -> MpiResult<()> {
    let Some(f) = k.delete else { return Ok(()) };
    // SAFETY: the program gave `f` as this key's delete callback, of this C signature;
    // it gets the object, the key, the value the program set and the key's extra
    // state, as MPI specifies. No lock of this library is held.
    let rc = unsafe { f(handle, keyval, value as *mut c_void, k.extra as *mut c_void) };
    if rc == class::SUCCESS { Ok(()) } else { Err(callback_failed("delete", keyval, rc)) }
}

/// A new key of `kind` with these callbacks and extra state.
pub fn create(
    kind: Kind,
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    extra: *mut c_void,
) -> c_int {
    let mut s = store();
    s.keys.push(Some(Key { kind, copy, delete, extra: extra as usize, freed: false, uses: 0 }));
    FIRST_KEYVAL + s.keys.len() as c_int - 1
}

/// Frees key `keyval` of `kind`: no attribute can be set with it any more; it lives
/// on while attributes set with it remain.
pub fn free(kind: Kind, keyval: c_int) -> MpiResult<()> {
    let mut s = store();
    if s.key(kind, keyval)?.freed {
        return fail(class::KEYVAL, format!("attribute key {keyval:#x} was freed already"));
    }
    let k = s.slot(keyval).expect("checked above");
    k.freed = true;
    if k.uses == 0 {
        s.keys[(keyval - FIRST_KEYVAL) as usize] = None;
    }
    Ok(())
}

/// The value of attribute `keyval` of `handle`, an object of `kind`, if set.
pub fn get(kind: Kind, handle: c_int, keyval: c_int) -> MpiResult<Option<usize>> {
    let mut s = store();
    s.key(kind, keyval)?;
    Ok(s.values.get(&(handle, keyval)).copied())
}

/// Sets attribute `keyval` of `handle` to `value`, after the delete callback ran on
/// the value it replaces (MPI: as if the old one were deleted first).
pub fn set(kind: Kind, handle: c_int, keyval: c_int, value: usize) -> MpiResult<()> {
    let (k, old) = {
        let mut s = store();
        let k = s.key(kind, keyval)?;
        if k.freed {
            return fail(class::KEYVAL, format!("attribute key {keyval:#x} was freed"));
        }
        (k, s.values.get(&(handle, keyval)).copied())
    };
    if let Some(old) = old {
        run_delete(k, handle, keyval, old)?;
    }
    if !store().attach(handle, keyval, value) {
        return fail(class::KEYVAL, format!("attribute key {keyval:#x} was freed"));
    }
    Ok(())
}

/// Deletes attribute `keyval` of `handle`, running its delete callback; an attribute
/// that is not set is `MPI_ERR_KEYVAL`.
pub fn delete(kind: Kind, handle: c_int, keyval: c_int) -> MpiResult<()> {
    let (k, value) = {
        let mut s = store();
        let k = s.key(kind, keyval)?;
        match s.values.get(&(handle, keyval)) {
            Some(&v) => (k, v),
            None => {
                return fail(
                    class::KEYVAL,
                    format!("no attribute with key {keyval:#x} is set on this {}", kind.name()),
                );
            }
        }
    };
    run_delete(k, handle, keyval, value)?;
    store().detach(handle, keyval);
    Ok(())
}

/// The dup's part (`MPI_Comm_dup`, `MPI_Type_dup`): runs the copy callback of every
/// attribute of `old`, giving `new` those the callbacks keep, with the values they
/// give. A key with no copy callback is not copied. On a callback's error the caller
/// deletes what `new` got ([`delete_all`]) and frees it.
pub fn copy_all(old: c_int, new: c_int) -> MpiResult<()> {
    let attributes = store().of(old);
    for (keyval, value) in attributes {
        // The key lives while `old` holds an attribute with it; a callback that
        // deleted that attribute meanwhile ends its copy.
        let Some(k) = store().slot(keyval).copied() else { continue };
        let Some(f) = k.copy else { continue };
        let (mut out, mut flag) = (std::ptr::null_mut::<c_void>(), 0);
        let out_ptr = std::ptr::from_mut(&mut out).cast::<c_void>();
        // SAFETY: the program gave `f` as this key's copy callback, of this C
        // signature; `out` and `flag` are locals it may write, as MPI specifies. No
        // lock of this library is held.
        let rc = unsafe { f(old, keyval, k.extra as *mut c_void, value as *mut c_void, out_ptr, &mut flag) };
        if rc != class::SUCCESS {
            return Err(callback_failed("copy", keyval, rc));
        }
        // A key that a callback freed meanwhile, with its last use, copies nothing.
        if flag != 0 {
            store().attach(new, keyval, out as usize);
        }
    }
    Ok(())
}

/// The free's part (`MPI_Comm_free`, `MPI_Win_free`, `MPI_Type_free`, and
/// `MPI_Finalize` for `MPI_COMM_SELF` and `MPI_COMM_WORLD`): deletes every attribute
/// of `handle`, running the delete callbacks; the first callback error is returned,
/// after all ran. Attributes that callbacks set on `handle` meanwhile go too.
pub fn delete_all(handle: c_int) -> MpiResult<()> {
    let mut first = Ok(());
    loop {
        let gone: Vec<(Option<Key>, c_int, usize)> = {
            let mut s = store();
            let attributes = s.of(handle);
            attributes
                .into_iter()
                .map(|(keyval, value)| {
                    s.values.remove(&(handle, keyval));
                    (s.slot(keyval).copied(), keyval, value)
                })
                .collect()
        };
        if gone.is_empty() {
            return first;
        }
        for (k, keyval, value) in gone {
            if let Some(k) = k {
                first = first.and(run_delete(k, handle, keyval, value));
            }
            // The key stays valid until its attribute's callback has run.
            store().release(keyval);
        }
    }
}

/// `MPI_*_create_keyval`: a new key of `kind`, written through `keyval`.
///
/// # Safety
/// `keyval` is null or points to an int.
pub unsafe fn create_out(
    kind: Kind,
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> MpiResult<()> {
    if keyval.is_null() {
        return fail(class::ARG, "keyval is a null pointer");
    }
    c!(out(keyval, create(kind, copy, delete, extra), "keyval"))
}

/// `MPI_*_free_keyval`: frees the key of `kind` `*keyval`, which becomes
/// `MPI_KEYVAL_INVALID`.
///
/// # Safety
/// `keyval` is null or points to an int.
pub unsafe fn free_out(kind: Kind, keyval: *mut c_int) -> MpiResult<()> {
    free(kind, c!(read(keyval, "keyval"))?)?;
    c!(out(keyval, KEYVAL_INVALID, "keyval"))
}

/// `MPI_*_get_attr`'s answer: `value`, if any, through `attribute_val` (a `void **`
/// passed as `void *`), and whether there is one through `flag`.
///
/// # Safety
/// `attribute_val` is null or points to a `void *`; `flag` is null or points to an
/// int.
pub unsafe fn get_out(
    value: Option<*mut c_void>,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    if attribute_val.is_null() {
        return fail(class::ARG, "attribute_val is a null pointer");
    }
    let Some(value) = value else { return c!(out(flag, 0, "flag")) };
    c!(out(attribute_val.cast::<*mut c_void>(), value, "attribute_val"))?;
    c!(out(flag, 1, "flag"))
}
