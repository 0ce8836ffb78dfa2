//! The one door to atomics, futexes and spinning.
//!
//! Protocol code (waiter, barrier, flags, and every later ring, lock and epoch) uses
//! only what this module exports. Normally that is `std`'s atomics and the kernel's
//! futex; under `--cfg sccemu_loom` it is loom's atomics and a futex emulated with a
//! loom mutex and condvar, so the loom models in `loom-tests` check the very code that
//! runs in production. clippy's `disallowed-types` keeps raw `std::sync::atomic` types
//! out of every other module.
#![allow(clippy::disallowed_types)]

// Aliases rather than re-exports, so that clippy's `disallowed-types` (which sees
// through `use`) flags raw std atomics everywhere except through this facade.
/// `std`'s 32-bit atomic (loom's under `--cfg sccemu_loom`).
#[cfg(not(sccemu_loom))]
pub type AtomicU32 = std::sync::atomic::AtomicU32;
/// `std`'s 64-bit atomic (loom's under `--cfg sccemu_loom`).
#[cfg(not(sccemu_loom))]
pub type AtomicU64 = std::sync::atomic::AtomicU64;
#[cfg(not(sccemu_loom))]
pub use std::sync::atomic::{Ordering, fence};

#[cfg(sccemu_loom)]
pub use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

pub use futex::FutexWord;

/// A full (SeqCst) fence placed right after an atomic read-modify-write, for the
/// store-load (Dekker) orderings of the lock protocols; Linux's `smp_mb__after_atomic`.
/// On x86 every locked RMW already is a full barrier in hardware (the store buffer is
/// drained and later loads cannot pass it), so only the compiler must be kept from
/// moving later accesses before the RMW. Elsewhere, and under loom (which models the
/// fence, not the hardware), it is a real SeqCst fence. Only valid directly after an
/// RMW that follows every store that must be ordered (on x86 any locked RMW drains the
/// store buffer, whatever its location).
#[inline(always)]
pub fn fence_after_rmw() {
    #[cfg(all(not(sccemu_loom), any(target_arch = "x86", target_arch = "x86_64")))]
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
    #[cfg(not(all(not(sccemu_loom), any(target_arch = "x86", target_arch = "x86_64"))))]
    fence(Ordering::SeqCst);
}

#[cfg(sccemu_loom)]
pub use loom::thread::yield_now;
/// Gives up the CPU; under loom, a scheduling point of the model.
#[cfg(not(sccemu_loom))]
pub use std::thread::yield_now;

/// One pause of a spin that waits for another core; under loom a scheduling point of
/// the model, which could not otherwise run the core being waited for.
#[inline(always)]
pub fn spin_pause() {
    #[cfg(not(sccemu_loom))]
    std::hint::spin_loop();
    #[cfg(sccemu_loom)]
    loom::thread::yield_now();
}

/// Spinning before a sleep: `crossbeam_utils::Backoff` (spin with growing pauses, then
/// yield) in production; under loom every step is a `yield_now`, so that the model
/// scheduler can run the thread being waited for.
#[cfg(not(sccemu_loom))]
pub use crossbeam_utils::Backoff;

/// Loom's stand-in for `crossbeam_utils::Backoff`: every step yields.
#[cfg(sccemu_loom)]
#[derive(Default)]
pub struct Backoff;

#[cfg(sccemu_loom)]
impl Backoff {
    /// A fresh backoff (it has no state under loom).
    pub fn new() -> Backoff {
        Backoff
    }
    /// One step of waiting: a yield, so the model can run someone else.
    pub fn snooze(&self) {
        loom::thread::yield_now();
    }
    /// Loom models sleep at once: the futex path is the one worth checking.
    pub fn is_completed(&self) -> bool {
        true
    }
}

/// A 32-bit word that waiters can sleep on until it changes.
#[cfg(not(sccemu_loom))]
mod futex {
    use rustix::thread::futex;

    use super::{AtomicU32, Ordering};

    /// Lives in the shared segment. Flags are empty, not `PRIVATE`: sleepers and wakers
    /// are different processes.
    #[repr(transparent)]
    #[derive(Default)]
    pub struct FutexWord(AtomicU32);

    impl FutexWord {
        /// The word's value.
        pub fn load(&self, order: Ordering) -> u32 {
            self.0.load(order)
        }

        /// Adds `v` (wrapping), returning the previous value; wakes nobody.
        pub fn fetch_add(&self, v: u32, order: Ordering) -> u32 {
            self.0.fetch_add(v, order)
        }

        /// Sets the bits of `v`, returning the previous value; wakes nobody.
        pub fn fetch_or(&self, v: u32, order: Ordering) -> u32 {
            self.0.fetch_or(v, order)
        }

        /// Stores `new` if the word holds `current`; the previous value either way (as
        /// `AtomicU32::compare_exchange`). Wakes nobody.
        pub fn compare_exchange(
            &self,
            current: u32,
            new: u32,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u32, u32> {
            self.0.compare_exchange(current, new, success, failure)
        }

        /// Sleeps while the word still holds `expected`; may return spuriously.
        pub fn wait(&self, expected: u32) {
            // EAGAIN (the word already changed) and EINTR are both "look again".
            let _ = futex::wait(&self.0, futex::Flags::empty(), expected, None);
        }

        /// Sleeps while the word still holds `expected` and `other` still holds
        /// `other_expected`: until either changes and is woken (`futex_waitv`, which
        /// compares both words and queues the sleeper on both atomically, as `wait` does
        /// for one). May return spuriously.
        pub fn wait_or(&self, expected: u32, other: &FutexWord, other_expected: u32) {
            let entry = |word: &FutexWord, value: u32| {
                let mut w = futex::Wait::new();
                w.val = u64::from(value);
                w.uaddr = futex::WaitPtr::new(word.0.as_ptr().cast());
                // Not FUTEX2_PRIVATE: the words are shared between processes.
                w.flags = futex::WaitFlags::SIZE_U32;
                w
            };
            use rustix::io::Errno;
            use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
            // Set once futex_waitv has failed for a reason other than the words having
            // changed: ENOSYS before Linux 5.16, EPERM under seccomp profiles that do not
            // know it (containers). Relaxed: a hint; a stale read costs one failed call.
            static NO_WAITV: AtomicBool = AtomicBool::new(false);
            if !NO_WAITV.load(StdOrdering::Relaxed) {
                let both = [entry(self, expected), entry(other, other_expected)];
                match futex::waitv(&both, futex::WaitvFlags::empty(), None, futex::ClockId::Monotonic) {
                    Ok(_) | Err(Errno::AGAIN | Errno::INTR | Errno::TIMEDOUT) => return,
                    Err(_) => NO_WAITV.store(true, StdOrdering::Relaxed),
                }
            }
            // Without futex_waitv: sleep on this word, and look at `other` every
            // millisecond (the caller loops and compares again), so no caller spins.
            let tick = futex::Timespec { tv_sec: 0, tv_nsec: 1_000_000 };
            let _ = futex::wait(&self.0, futex::Flags::empty(), expected, Some(&tick));
        }

        /// Wakes every process sleeping on the word.
        pub fn wake_all(&self) {
            // The kernel reads the count as an int: u32::MAX would be -1 and wake one.
            let _ = futex::wake(&self.0, futex::Flags::empty(), i32::MAX as u32);
        }
    }
}

/// The kernel compares the words and queues the sleeper under one lock; the emulation
/// does the same with one loom mutex and condvar for every word (the kernel's hash
/// bucket, in effect), so a wake between the compare and the sleep is never lost here
/// unless it would be lost in the kernel too. A wake on one word also wakes the
/// sleepers of the others: spurious wake-ups, which every caller tolerates.
#[cfg(sccemu_loom)]
mod futex {
    use loom::sync::{Condvar, Mutex};

    use super::{AtomicU32, Ordering};

    loom::lazy_static! {
        /// The emulated kernel: its lock and its one queue.
        static ref KERNEL: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }

    /// The word; its sleepers queue in the emulated kernel.
    #[derive(Default)]
    pub struct FutexWord {
        word: AtomicU32,
    }

    impl FutexWord {
        /// The word's value.
        pub fn load(&self, order: Ordering) -> u32 {
            self.word.load(order)
        }

        /// Adds `v` (wrapping), returning the previous value; wakes nobody.
        pub fn fetch_add(&self, v: u32, order: Ordering) -> u32 {
            self.word.fetch_add(v, order)
        }

        /// Sets the bits of `v`, returning the previous value; wakes nobody.
        pub fn fetch_or(&self, v: u32, order: Ordering) -> u32 {
            self.word.fetch_or(v, order)
        }

        /// Stores `new` if the word holds `current`; the previous value either way.
        pub fn compare_exchange(
            &self,
            current: u32,
            new: u32,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u32, u32> {
            self.word.compare_exchange(current, new, success, failure)
        }

        /// Sleeps while the word still holds `expected`.
        pub fn wait(&self, expected: u32) {
            let queued = KERNEL.0.lock().unwrap();
            if self.word.load(Ordering::Relaxed) == expected {
                drop(KERNEL.1.wait(queued).unwrap());
            }
        }

        /// Sleeps while the word holds `expected` and `other` holds `other_expected`.
        pub fn wait_or(&self, expected: u32, other: &FutexWord, other_expected: u32) {
            let queued = KERNEL.0.lock().unwrap();
            if self.word.load(Ordering::Relaxed) == expected
                && other.word.load(Ordering::Relaxed) == other_expected
            {
                drop(KERNEL.1.wait(queued).unwrap());
            }
        }

        /// Wakes every thread sleeping on the word (and, spuriously, on any other).
        pub fn wake_all(&self) {
            let _queue = KERNEL.0.lock().unwrap();
            KERNEL.1.notify_all();
        }
    }
}
