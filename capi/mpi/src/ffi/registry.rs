//! Objects that every call looks up, without a lock: communicators and windows.
//!
//! A [`Registry`] maps handles (`BASE | index`, as `crate::handles` does) to objects
//! that live as long as the process: a handle's slot holds a pointer to its boxed
//! object, published with Release and read with Acquire, so a lookup is one atomic load
//! and no lock, however many threads call. Freeing clears the slot and moves the box to
//! a retired list that is never dropped: a thread that looked the object up just before
//! the free may still be using it (erroneous in MPI, but it must not reach freed
//! memory). A retired object is a few hundred bytes; the memory it managed (a window's
//! parts, a communicator's shared area) is returned by the free itself.
//!
//! Mutable state inside such an object goes in a [`Serial`]: MPI calls on one object
//! are serialized by a mutex under `MPI_THREAD_MULTIPLE`, and by the program's own
//! promise at the lower thread levels, where taking the mutex would be wasted time.

use std::cell::UnsafeCell;
use std::ffi::c_int;
use std::sync::atomic::AtomicPtr;
use std::sync::{Mutex, MutexGuard};

use sccemu::sync::{AtomicU32, Ordering};

/// Handles per registry.
pub const CAPACITY: usize = 1 << 14;
const INDEX_MASK: u32 = (1 << 24) - 1;
const _: () = assert!(CAPACITY as u32 <= INDEX_MASK);

struct Slots<T: 'static> {
    next: usize,
    free: Vec<usize>,
    retired: Vec<Box<T>>,
}

/// Lock-free lookup of long-lived objects by handle (module docs). The base is a
/// constant, so that a lookup subtracts an immediate rather than a field loaded first.
pub struct Registry<T: 'static, const BASE: c_int> {
    slots: [AtomicPtr<T>; CAPACITY],
    alloc: Mutex<Slots<T>>,
}

// Objects are handed to any thread by shared reference: they must be `Sync`.
impl<T: Send + Sync + 'static, const BASE: c_int> Registry<T, BASE> {
    /// An empty registry whose handles are `BASE | index`, index 0 being the null handle.
    #[allow(clippy::new_without_default)] // for statics: a const constructor, never a default
    pub const fn new() -> Registry<T, BASE> {
        assert!(BASE as u32 & INDEX_MASK == 0, "a registry's base has no index bits");
        Registry {
            slots: [const { AtomicPtr::new(std::ptr::null_mut()) }; CAPACITY],
            alloc: Mutex::new(Slots { next: 1, free: Vec::new(), retired: Vec::new() }),
        }
    }

    #[inline(always)]
    fn index(&self, handle: c_int) -> Option<usize> {
        // `BASE` has no index bits and CAPACITY is below INDEX_MASK: one subtraction and
        // one comparison test both the base and the index.
        let i = (handle as u32).wrapping_sub(BASE as u32) as usize;
        (i < CAPACITY).then_some(i)
    }

    /// The object `handle` names, if it is live.
    #[inline]
    pub fn get(&'static self, handle: c_int) -> Option<&'static T> {
        let slot = &self.slots[self.index(handle)?];
        // Acquire: pairs with the Release store in `insert`, so the object's contents
        // are initialised when seen.
        let ptr = slot.load(Ordering::Acquire);
        // SAFETY: a non-null slot holds a pointer from `Box::into_raw` whose box is never
        // dropped (it moves to `retired` on removal and stays there), so it points to a
        // live `T` for the rest of the process; only shared references are handed out.
        unsafe { ptr.as_ref() }
    }

    /// Stores `value`, returning its handle, or `None` when every handle is taken.
    pub fn insert(&self, value: T) -> Option<c_int> {
        let index = self.free_index()?;
        // Release: the object's initialisation happens before any lookup that sees it.
        self.slots[index].store(Box::into_raw(Box::new(value)), Ordering::Release);
        Some((BASE as u32 | index as u32) as c_int)
    }

    /// Takes a handle whose object comes later ([`Registry::fill`]): until then a
    /// lookup finds nothing, as for a freed handle (`MPI_Comm_idup` hands its new
    /// communicator's handle out at the call, usable once the request completes).
    /// `None` when every handle is taken.
    pub fn reserve(&self) -> Option<c_int> {
        let index = self.free_index()?;
        Some((BASE as u32 | index as u32) as c_int)
    }

    /// Takes a free slot's index, if any is left.
    fn free_index(&self) -> Option<usize> {
        let mut a = self.alloc.lock().unwrap_or_else(|e| e.into_inner());
        match a.free.pop() {
            Some(i) => Some(i),
            None if a.next < CAPACITY => {
                a.next += 1;
                Some(a.next - 1)
            }
            None => None,
        }
    }

    /// Stores `value` under `handle`, which [`Registry::reserve`] gave and nothing has
    /// filled: `false` (and nothing stored) for any other handle.
    pub fn fill(&self, handle: c_int, value: T) -> bool {
        let Some(index) = self.index(handle).filter(|&i| i > 0) else { return false };
        let _a = self.alloc.lock().unwrap_or_else(|e| e.into_inner());
        if !self.slots[index].load(Ordering::Relaxed).is_null() {
            return false;
        }
        // Release: as in `insert`.
        self.slots[index].store(Box::into_raw(Box::new(value)), Ordering::Release);
        true
    }

    /// Gives back a reserved `handle` that will never be filled.
    pub fn unreserve(&self, handle: c_int) {
        let Some(index) = self.index(handle).filter(|&i| i > 0) else { return };
        let mut a = self.alloc.lock().unwrap_or_else(|e| e.into_inner());
        if self.slots[index].load(Ordering::Relaxed).is_null() && !a.free.contains(&index) {
            a.free.push(index);
        }
    }

    /// Removes the object of `handle` (if live), keeping it alive for threads still
    /// using it (module docs); returns it.
    pub fn remove(&'static self, handle: c_int) -> Option<&'static T> {
        let index = self.index(handle)?;
        let mut a = self.alloc.lock().unwrap_or_else(|e| e.into_inner());
        // Relaxed: the lock orders removals; lookups that still see the old pointer may
        // use the object, which stays alive.
        let ptr = self.slots[index].swap(std::ptr::null_mut(), Ordering::Relaxed);
        if ptr.is_null() {
            return None;
        }
        // SAFETY: the pointer came from `Box::into_raw` in `insert` and is taken out of
        // its slot exactly once (the swap), so this is its only box.
        let boxed = unsafe { Box::from_raw(ptr) };
        let object: *const T = &*boxed;
        a.retired.push(boxed);
        a.free.push(index);
        // SAFETY: the box now lives in `retired`, which is never dropped or shrunk, and a
        // box's contents do not move when the box does.
        Some(unsafe { &*object })
    }
}

/// Whether calls on one object may come from several threads at once
/// (`MPI_THREAD_MULTIPLE` granted); set once at `MPI_Init`.
static MULTIPLE: AtomicU32 = AtomicU32::new(0);

/// Records the thread level granted.
pub fn set_multiple(multiple: bool) {
    // Relaxed: set in MPI_Init, before the program starts any thread that calls MPI.
    MULTIPLE.store(multiple.into(), Ordering::Relaxed);
}

/// State of one MPI object that its calls change (module docs).
pub struct Serial<T> {
    lock: Mutex<()>,
    value: UnsafeCell<T>,
}

// SAFETY: access to `value` is exclusive: under MPI_THREAD_MULTIPLE through the lock,
// below it by the program's promise not to call MPI concurrently (see `with`).
unsafe impl<T: Send> Sync for Serial<T> {}

impl<T> Serial<T> {
    /// The state.
    pub fn new(value: T) -> Serial<T> {
        Serial { lock: Mutex::new(()), value: UnsafeCell::new(value) }
    }

    /// Runs `f` on the state, alone. `f` must not call `with` on the same object.
    ///
    /// Below `MPI_THREAD_MULTIPLE` this is one load and one branch before `f`: the
    /// locked form is a separate copy out of line, so that no guard lives across `f`
    /// on the fast paths (a guard held in a stack slot cost them a store, a load and a
    /// test each).
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // Relaxed: see `set_multiple`.
        if MULTIPLE.load(Ordering::Relaxed) != 0 {
            return self.with_locked(f);
        }
        // SAFETY: below MPI_THREAD_MULTIPLE the program promised (the thread level it
        // asked for) that no two threads call MPI at once, and `f` does not re-enter: this
        // is the only reference.
        f(unsafe { &mut *self.value.get() })
    }

    /// The state, without the lock, below `MPI_THREAD_MULTIPLE`; `None` under it.
    ///
    /// # Safety
    /// Nothing calls `with` or `read` on this object while the reference lives.
    #[inline(always)]
    pub unsafe fn unlocked(&self) -> Option<&T> {
        // Relaxed: see `set_multiple`.
        if MULTIPLE.load(Ordering::Relaxed) != 0 {
            return None;
        }
        // SAFETY: below MPI_THREAD_MULTIPLE no other thread calls MPI, and this thread
        // calls no `with` on the object while the reference lives (this function's
        // contract): nothing writes the state meanwhile.
        Some(unsafe { &*self.value.get() })
    }

    /// [`Serial::with`] under `MPI_THREAD_MULTIPLE`.
    #[cold]
    #[inline(never)]
    fn with_locked<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the lock is held, so no other `with` on this object runs, and `f` does
        // not re-enter: this is the only reference.
        f(unsafe { &mut *self.value.get() })
    }

    /// The state to read, alone while the returned guard lives (as [`Serial::with`]:
    /// nothing may call `with` or `read` on the same object meanwhile).
    #[inline(always)]
    pub fn read(&self) -> SerialRef<'_, T> {
        // Relaxed: see `set_multiple`.
        let held = if MULTIPLE.load(Ordering::Relaxed) != 0 { Some(self.acquire()) } else { None };
        SerialRef { serial: self, held }
    }

    #[cold]
    #[inline(never)]
    fn acquire(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Shared access to a [`Serial`]'s state (see [`Serial::read`]).
pub struct SerialRef<'a, T> {
    serial: &'a Serial<T>,
    held: Option<MutexGuard<'a, ()>>,
}

impl<T> std::ops::Deref for SerialRef<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: as in `Serial::with`: the lock is held under MPI_THREAD_MULTIPLE, and
        // at the lower levels only this thread calls MPI; no `with` on this object runs
        // while the guard lives (`read`'s contract), so nothing writes the state.
        unsafe { &*self.serial.value.get() }
    }
}

impl<T> Drop for SerialRef<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(guard) = self.held.take() {
            release(guard);
        }
    }
}

/// Releases a [`Serial`]'s lock (out of line, as it is taken).
#[cold]
#[inline(never)]
fn release(guard: MutexGuard<'_, ()>) {
    drop(guard);
}
