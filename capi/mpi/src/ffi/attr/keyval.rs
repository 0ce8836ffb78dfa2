//! The program's attribute keys (`MPI_Comm_create_keyval`, MPI-1 `MPI_Keyval_create`)
//! and the attributes set with them (`MPI_Comm_set_attr`, `MPI_Comm_delete_attr`, MPI-1
//! `MPI_Attr_put` and `MPI_Attr_delete`), with their copy and delete callbacks.
//!
//! As MPI defines them: an attribute is a pointer-sized value a process attaches to a
//! communicator (its own: attributes are local). `MPI_Comm_dup` runs each attribute's
//! copy callback, which decides whether the new communicator gets it and with what
//! value; `MPI_Comm_free`, `MPI_Comm_delete_attr` and setting an attribute again run
//! the delete callback on the value that goes; `MPI_Finalize` deletes the attributes
//! of `MPI_COMM_SELF` first (libraries hook their clean-up there), then those of
//! `MPI_COMM_WORLD`. A freed key sets nothing new, but the attributes set with it keep
//! their callbacks until deleted.
//!
//! Callbacks are plain C calls made with no lock of this library held (they may call
//! MPI, to set other attributes say); one that returns an error code fails the call
//! that ran it with that code's class. Nothing unwinds across them (a foreign exception
//! aborts).

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::comm;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::{Scope, WORLD, c, entry};

/// `MPI_Comm_copy_attr_function` (and MPI-1's `MPI_Copy_function`).
pub type CopyFunction =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function` (and MPI-1's `MPI_Delete_function`).
pub type DeleteFunction = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

/// `MPI_KEYVAL_INVALID`.
const KEYVAL_INVALID: c_int = -1;
/// The first key the program gets (after the predefined attributes' keys).
const FIRST_KEYVAL: c_int = 0x6440_0100;

/// A key: its callbacks, its extra state, and whether it was freed.
#[derive(Clone, Copy)]
struct Key {
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    extra: usize,
    freed: bool,
}

#[derive(Default)]
struct Attributes {
    /// Key `FIRST_KEYVAL + i` is `keys[i]`.
    keys: Vec<Key>,
    /// By (communicator handle, key).
    values: BTreeMap<(c_int, c_int), usize>,
}

static ATTRIBUTES: Mutex<Option<Attributes>> = Mutex::new(None);

fn attributes() -> MutexGuard<'static, Option<Attributes>> {
    ATTRIBUTES.lock().unwrap_or_else(|p| p.into_inner())
}

fn with<R>(f: impl FnOnce(&mut Attributes) -> R) -> R {
    f(attributes().get_or_insert_with(Attributes::default))
}

fn key(keyval: c_int) -> MpiResult<Key> {
    let index = keyval.checked_sub(FIRST_KEYVAL).and_then(|i| usize::try_from(i).ok());
    match index.and_then(|i| with(|a| a.keys.get(i).copied())) {
        Some(k) => Ok(k),
        None => fail(class::KEYVAL, format!("{keyval:#x} is not an attribute key")),
    }
}

/// The error of a callback that returned `rc`.
fn callback_failed(what: &str, keyval: c_int, rc: c_int) -> MpiError {
    let class = crate::error::class_of(rc).unwrap_or(class::OTHER);
    MpiError::new(class, format!("the {what} callback of attribute key {keyval:#x} returned {rc}"))
}

fn run_delete(k: Key, comm: c_int, keyval: c_int, value: usize) -> MpiResult<()> {
    let Some(f) = k.delete else { return Ok(()) };
    // SAFETY: the program gave `f` as this key's delete callback, of this C signature;
    // it gets the value the program set and the key's extra state, as MPI specifies.
    let rc = unsafe { f(comm, keyval, value as *mut c_void, k.extra as *mut c_void) };
    if rc == class::SUCCESS { Ok(()) } else { Err(callback_failed("delete", keyval, rc)) }
}

/// The program's attribute `keyval` on `comm`, if set (`MPI_ERR_KEYVAL` if `keyval`
/// is no key).
pub fn get(comm: c_int, keyval: c_int) -> MpiResult<Option<usize>> {
    key(keyval)?;
    Ok(with(|a| a.values.get(&(comm, keyval)).copied()))
}

fn set(comm: c_int, keyval: c_int, value: usize) -> MpiResult<()> {
    comm::lookup(comm)?;
    let k = key(keyval)?;
    if k.freed {
        return fail(class::KEYVAL, format!("attribute key {keyval:#x} was freed"));
    }
    if let Some(old) = with(|a| a.values.insert((comm, keyval), value)) {
        run_delete(k, comm, keyval, old)?;
    }
    Ok(())
}

fn delete(comm: c_int, keyval: c_int) -> MpiResult<()> {
    comm::lookup(comm)?;
    let k = key(keyval)?;
    match with(|a| a.values.remove(&(comm, keyval))) {
        Some(old) => run_delete(k, comm, keyval, old),
        None => fail(class::KEYVAL, format!("no attribute with key {keyval:#x} is set on this communicator")),
    }
}

/// `MPI_Comm_dup`'s part: runs the copy callback of every attribute of `old`, giving
/// `new` those the callbacks keep.
pub fn copy_all(old: c_int, new: c_int) -> MpiResult<()> {
    let set: Vec<(c_int, usize)> =
        with(|a| a.values.range((old, c_int::MIN)..=(old, c_int::MAX)).map(|(&(_, k), &v)| (k, v)).collect());
    for (keyval, value) in set {
        let k = key(keyval)?;
        let Some(f) = k.copy else { continue };
        let (mut out, mut flag) = (std::ptr::null_mut::<c_void>(), 0);
        let out_ptr = std::ptr::from_mut(&mut out).cast::<c_void>();
        // SAFETY: the program gave `f` as this key's copy callback, of this C
        // signature; `out` and `flag` are locals it may write, as MPI specifies.
        let rc = unsafe { f(old, keyval, k.extra as *mut c_void, value as *mut c_void, out_ptr, &mut flag) };
        if rc != class::SUCCESS {
            return Err(callback_failed("copy", keyval, rc));
        }
        if flag != 0 {
            with(|a| a.values.insert((new, keyval), out as usize));
        }
    }
    Ok(())
}

/// `MPI_Comm_free`'s and `MPI_Finalize`'s part: deletes every attribute of `comm`,
/// running the delete callbacks; the first callback error is returned, after all ran.
pub fn delete_all(comm: c_int) -> MpiResult<()> {
    let gone: Vec<(c_int, usize)> = with(|a| {
        let keys: Vec<c_int> =
            a.values.range((comm, c_int::MIN)..=(comm, c_int::MAX)).map(|(&(_, k), _)| k).collect();
        keys.into_iter().map(|k| (k, a.values.remove(&(comm, k)).expect("listed"))).collect()
    });
    let mut first = Ok(());
    for (keyval, value) in gone {
        first = first.and(key(keyval).and_then(|k| run_delete(k, comm, keyval, value)));
    }
    first
}

/// Creates a key.
///
/// # Safety
/// `keyval` points to an int.
unsafe fn create(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> MpiResult<()> {
    if keyval.is_null() {
        return fail(class::ARG, "keyval is a null pointer");
    }
    let handle = with(|a| {
        a.keys.push(Key { copy, delete, extra: extra as usize, freed: false });
        FIRST_KEYVAL + a.keys.len() as c_int - 1
    });
    c!(out(keyval, handle, "keyval"))
}

/// Frees a key: `*keyval` becomes `MPI_KEYVAL_INVALID`.
///
/// # Safety
/// `keyval` points to an int.
unsafe fn free(keyval: *mut c_int) -> MpiResult<()> {
    let k = c!(read(keyval, "keyval"))?;
    key(k)?;
    with(|a| a.keys[(k - FIRST_KEYVAL) as usize].freed = true);
    c!(out(keyval, KEYVAL_INVALID, "keyval"))
}

/// `MPI_Comm_create_keyval`.
///
/// # Safety
/// The callbacks are null or functions of their C types; `keyval` points to an int.
#[unsafe(export_name = "PMPI_Comm_create_keyval")]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Comm_create_keyval", WORLD, || unsafe { create(copy, delete, keyval, extra_state) })
}

/// `MPI_Keyval_create`, MPI-1's name for [`MPI_Comm_create_keyval`].
///
/// # Safety
/// As [`MPI_Comm_create_keyval`].
#[unsafe(export_name = "PMPI_Keyval_create")]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: Option<CopyFunction>,
    delete: Option<DeleteFunction>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Keyval_create", WORLD, || unsafe { create(copy, delete, keyval, extra_state) })
}

/// `MPI_Comm_free_keyval`.
///
/// # Safety
/// `keyval` points to an int.
#[unsafe(export_name = "PMPI_Comm_free_keyval")]
pub unsafe extern "C" fn MPI_Comm_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Comm_free_keyval", WORLD, || unsafe { free(keyval) })
}

/// `MPI_Keyval_free`, MPI-1's name for [`MPI_Comm_free_keyval`].
///
/// # Safety
/// As [`MPI_Comm_free_keyval`].
#[unsafe(export_name = "PMPI_Keyval_free")]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Keyval_free", WORLD, || unsafe { free(keyval) })
}

/// `MPI_Comm_set_attr`: attaches `attribute_val` (a value, not read) under `keyval`;
/// an earlier value's delete callback runs first.
#[unsafe(export_name = "PMPI_Comm_set_attr")]
pub extern "C" fn MPI_Comm_set_attr(comm: c_int, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Comm_set_attr", Scope::Comm(comm), || set(comm, keyval, attribute_val as usize))
}

/// `MPI_Attr_put`, MPI-1's name for [`MPI_Comm_set_attr`].
#[unsafe(export_name = "PMPI_Attr_put")]
pub extern "C" fn MPI_Attr_put(comm: c_int, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    entry("MPI_Attr_put", Scope::Comm(comm), || set(comm, keyval, attribute_val as usize))
}

/// `MPI_Comm_delete_attr`: removes the attribute, running its delete callback.
#[unsafe(export_name = "PMPI_Comm_delete_attr")]
pub extern "C" fn MPI_Comm_delete_attr(comm: c_int, keyval: c_int) -> c_int {
    entry("MPI_Comm_delete_attr", Scope::Comm(comm), || delete(comm, keyval))
}

/// `MPI_Attr_delete`, MPI-1's name for [`MPI_Comm_delete_attr`].
#[unsafe(export_name = "PMPI_Attr_delete")]
pub extern "C" fn MPI_Attr_delete(comm: c_int, keyval: c_int) -> c_int {
    entry("MPI_Attr_delete", Scope::Comm(comm), || delete(comm, keyval))
}

/// `MPI_COMM_NULL_COPY_FN` (and `MPI_NULL_COPY_FN`): the attribute is not copied.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sccemu_comm_null_copy_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    _attribute_val_in: *mut c_void,
    _attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a pointer to an int (this function's contract).
    unsafe { *flag = 0 };
    class::SUCCESS
}

/// `MPI_COMM_DUP_FN` (and `MPI_DUP_FN`): the new communicator gets the same value.
///
/// # Safety
/// `attribute_val_out` points to a `void *`; `flag` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sccemu_comm_dup_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a pointer to a `void *` and one to an int (this function's
    // contract).
    unsafe {
        *attribute_val_out.cast::<*mut c_void>() = attribute_val_in;
        *flag = 1;
    }
    class::SUCCESS
}

/// `MPI_COMM_NULL_DELETE_FN` (and `MPI_NULL_DELETE_FN`): nothing to release.
#[unsafe(no_mangle)]
pub extern "C" fn sccemu_comm_null_delete_fn(
    _comm: c_int,
    _keyval: c_int,
    _attribute_val: *mut c_void,
    _extra_state: *mut c_void,
) -> c_int {
    class::SUCCESS
}
