//! Entry points for bindings (the MPI library's C calls): put, get, ARMW and flush on
//! a byte window, at byte offsets, and the lock epochs' opening and closing (lock,
//! unlock, lock_all, unlock_all), in the common case only, each check made once.
//!
//! Each does what [`Window::put`], [`Window::get`], the ARMW family or
//! [`Window::flush`] does, when that call would accept it and the case is the common
//! one: a window on one node, no virtual time and, for ARMW and flush, the `Atomic`
//! accumulate strategy (no stripe locks to take, no owner agent to wait for). Anything
//! else returns `None` having done nothing, and the binding makes the general call,
//! which does it or reports why. So these calls build no error: a C entry point
//! cannot inline across its caller, and an error built on the way, or carried back
//! from a general call made out of line, cost it stack traffic on the common path
//! too (8 B flush through the MPI library: 59 instructions with its error carried, 50
//! without, where the entry point saves no register). The epoch
//! state is read once (one `RefCell` borrow that checks the epoch and records the
//! access as issued, where the general calls take two), and the part is looked up
//! once (the index is the rank check).
//!
//! Accesses are quick in a fence or lock epoch; in a PSCW access epoch they refuse, and
//! the general call (which takes the access group's membership test) does them.
//!
//! The lock calls keep the general calls' epoch state machine: a refusal (`None`) leaves
//! the epochs as found, so the general call then finds the same state and reports the
//! misuse (lock twice, unlock without lock, lock_all over a lock, a rank out of range).
//! Past their checks they wait for the lock, and a wait can fail (the job aborted, or a
//! lock found corrupted): that error is built out of line and returned (`Some(Err)`),
//! since a lock that was waited for must not be retried by the general call. Unlock
//! and unlock_all refuse under a strategy with accumulate locks (whose owner-computes
//! requests an unlock waits for: `Window::acc_quiesce`), and cannot fail otherwise.
//!
//! Everything on the way is inlined by force, closures too: left to LLVM, an 8 B
//! fetch-and-op's entry point called the epoch check and the ARMW's closure out of
//! line, with their results through memory (fetch-and-op + flush through the MPI
//! library: 300 instructions that way, 263 inlined; callgrind).
//!
//! Nothing here is unsafe: every index and every range is checked before use.

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::armw::{AtomicElem, RmwOp, Word};
use crate::protocol::payload::Payload;
use crate::protocol::rwlock::LockKind;
use crate::rma::epoch::{Epochs, Held};
use crate::rma::error::SyncError;
use crate::rma::window::Window;
use crate::segment::mapping::SharedBytes;
use crate::segment::view::{atomic_u32_at, atomic_u64_at};

impl<'c> Window<'c, u8> {
    /// Whether the common case applies: one node, no virtual time, and for ARMW and
    /// flush (`armw`) no accumulate locks or agent.
    #[inline(always)]
    fn quick_case(&self, armw: bool) -> bool {
        // `quick`: one node, no virtual time (fixed at creation: see the field).
        self.quick && !(armw && self.acc_locks())
    }

    /// Runs `then` on the bytes of `target`'s part if an access of `bytes` bytes at
    /// byte `at` is allowed (rank, epoch, bounds) and `align`-aligned in the segment,
    /// and records the access as issued if `then` accepts it (`Some`). One borrow of
    /// the epochs for the check and the record.
    #[inline(always)]
    fn quick_access<R>(
        &self,
        target: u32,
        (at, bytes, align): (usize, usize, usize),
        then: impl FnOnce(SharedBytes<'c>) -> Option<R>,
    ) -> Option<R> {
        let part = *self.parts.get(target as usize)?;
        let mut e = self.epochs.try_borrow_mut().ok()?;
        // A fence or lock epoch; a PSCW access epoch is left to the general call, whose
        // membership test is a call out of line: on this path, the arguments would be
        // saved across it (to memory and back on every call: callgrind, 8 B get + flush
        // through the MPI library).
        let allowed = e.fence_open || e.lock_all.is_some() || e.locks.get(target as usize)?.is_some();
        // The alignment last: `at` is in the part by then, so the sum cannot overflow.
        if !allowed || at.checked_add(bytes)? > part.len || (part.offset + at) % align != 0 {
            return None;
        }
        let done = then(self.ctx.segment().bytes(part))?;
        e.ops_since_fence = true;
        Some(done)
    }

    /// [`Window::put`] of `src` at byte `at` of `target`'s part, in the common case
    /// (module docs).
    #[inline(always)]
    pub fn quick_put(&self, target: u32, at: usize, src: &[u8]) -> Option<()> {
        if !self.quick_case(false) {
            return None;
        }
        self.quick_access(target, (at, src.len(), 1), #[inline(always)] |part| {
            part.write(at, src);
            Some(())
        })?;
        self.pending_stores.set(true);
        Some(())
    }

    /// [`Window::get`] into `dst` from byte `at` of `target`'s part, in the common
    /// case (module docs).
    #[inline(always)]
    pub fn quick_get(&self, target: u32, at: usize, dst: &mut [u8]) -> Option<()> {
        if !self.quick_case(false) {
            return None;
        }
        self.quick_access(target, (at, dst.len(), 1), #[inline(always)] |part| {
            part.read(at, dst);
            Some(())
        })
    }

    /// Runs `armw` on the word of an `A` at byte `at` of `target`'s part, if the
    /// access is allowed and the word aligned.
    ///
    /// The alignment is tested with the other checks, before anything is called, on
    /// the word's offset in the segment: the segment's mapping starts on a page
    /// boundary (`mmap`), so the offset is aligned exactly when the address is, and
    /// the view's own alignment test (`atomic_u64_at`) cannot fail after it. No
    /// refusal then follows the view: one that did (the view's `None`) made the MPI
    /// library keep its C arguments for the general path across the view, which LLVM
    /// left out of line there (callgrind, 8 B fetch-and-op + flush through the MPI
    /// library: 219 instructions that way, 202 this way).
    #[inline(always)]
    fn quick_armw<A: AtomicElem>(&self, target: u32, at: usize, armw: impl FnOnce(Word<'c>) -> u64) -> Option<A> {
        if !self.quick_case(true) {
            return None;
        }
        self.quick_access(target, (at, A::WIDTH, A::WIDTH), #[inline(always)] |part| {
            const ALIGNED: &str = "an ARMW word aligned in the segment is aligned in memory";
            let word = match A::WIDTH {
                4 => Word::W32(atomic_u32_at(part, at).expect(ALIGNED)),
                _ => Word::W64(atomic_u64_at(part, at).expect(ALIGNED)),
            };
            Some(A::from_bits(armw(word)))
        })
    }

    /// The ARMW `op` with `v` on the `A` at byte `at` of `target`'s part (the
    /// fetch-and-op family and swap), in the common case (module docs); returns the
    /// old value. A bitwise op on a float element acts on its bits.
    #[inline(always)]
    pub fn quick_fetch_op<A: AtomicElem>(&self, target: u32, at: usize, op: RmwOp, v: A) -> Option<A> {
        self.quick_armw::<A>(target, at, #[inline(always)] |w| w.fetch_op(op, A::KIND, v.to_bits()))
    }

    /// [`Window::load`] of the `A` at byte `at` of `target`'s part, in the common case
    /// (module docs).
    #[inline(always)]
    pub fn quick_load<A: AtomicElem>(&self, target: u32, at: usize) -> Option<A> {
        self.quick_armw::<A>(target, at, Word::load)
    }

    /// [`Window::compare_and_swap`] on the `A` at byte `at` of `target`'s part, in the
    /// common case (module docs).
    #[inline(always)]
    pub fn quick_compare_and_swap<A: AtomicElem>(&self, target: u32, at: usize, current: A, new: A) -> Option<A> {
        self.quick_armw::<A>(target, at, #[inline(always)] |w| w.compare_and_swap(current.to_bits(), new.to_bits()))
    }

    /// [`Window::flush`] of `target`, in the common case (module docs): under the
    /// `Atomic` strategy no accumulate is pending, so a flush is its fence.
    #[inline(always)]
    pub fn quick_flush(&self, target: u32) -> Option<()> {
        if !self.quick_case(true) {
            return None;
        }
        // A mutable borrow, though it only reads: it tests and sets one word where a
        // shared borrow counts up and back down (callgrind, 8 B flush through the MPI
        // library); nothing is called while it lives.
        let e = self.epochs.try_borrow_mut().ok()?;
        // The rank first: under lock_all too, a rank out of range is refused.
        let held = e.locks.get(target as usize)?;
        if e.lock_all.is_none() && held.is_none() {
            return None;
        }
        drop(e);
        self.complete_stores();
        Some(())
    }

    /// [`Window::lock_unguarded`] of `target`, in the common case (module docs): the
    /// epoch stays open until an unlock. `Some(Err)` only when the wait for the lock
    /// failed, the epochs left as found.
    #[inline(always)]
    pub fn quick_lock(&self, kind: LockKind, target: u32) -> Option<Result<(), SyncError>> {
        if !self.quick_case(false) {
            return None;
        }
        let views = &self.lock_views;
        // The index is the rank check (one entry per rank).
        let &(lock, bell) = views.targets.get(target as usize)?;
        // Held through the wait, as the general call's: nothing a wait drives touches a
        // window's epochs.
        let mut e = self.epochs.try_borrow_mut().ok()?;
        let Epochs { locks, locked, lock_all, generation, .. } = &mut *e;
        let slot = locks.get_mut(target as usize)?;
        if lock_all.is_some() || slot.is_some() {
            return None;
        }
        let waited = match kind {
            LockKind::Shared => lock.lock_shared(&views.waiter, bell).map(|()| None),
            LockKind::Exclusive => lock.lock_exclusive(target, &views.waiter, bell, views.all, views.home).map(Some),
        };
        let exclusive = match waited {
            Ok(exclusive) => exclusive,
            Err(e) => return Some(Err(self.quick_wait_failed(e))),
        };
        *generation += 1;
        *slot = Some(Held { kind, generation: *generation, exclusive });
        *locked += 1;
        Some(Ok(()))
    }

    /// [`Window::unlock`] of `target`, in the common case (module docs); `None` (nothing
    /// done) if `target` is not locked, for the general call to report.
    #[inline(always)]
    pub fn quick_unlock(&self, target: u32) -> Option<()> {
        if !self.quick_case(true) {
            return None;
        }
        let views = &self.lock_views;
        let &(lock, bell) = views.targets.get(target as usize)?;
        let mut e = self.epochs.try_borrow_mut().ok()?;
        // `take` of an empty slot changes nothing.
        let held = e.locks.get_mut(target as usize)?.take()?;
        e.locked -= 1;
        drop(e);
        match held.exclusive {
            None => lock.unlock_shared(bell),
            Some(hold) => lock.unlock_exclusive(hold, bell, views.all, views.home, views.handoff_cpu),
        }
        Some(())
    }

    /// [`Window::lock_all`] without a guard, in the common case (module docs): open
    /// until an unlock_all. `Some(Err)` only when the wait failed, as `quick_lock`.
    #[inline(always)]
    pub fn quick_lock_all(&self) -> Option<Result<(), SyncError>> {
        if !self.quick_case(false) {
            return None;
        }
        // Held through the wait, as in `quick_lock`.
        let mut e = self.epochs.try_borrow_mut().ok()?;
        if e.lock_all.is_some() || e.locked > 0 {
            return None;
        }
        if let Err(err) = self.lock_all_here() {
            return Some(Err(self.quick_wait_failed(err)));
        }
        let generation = e.next_generation();
        e.lock_all = Some(generation);
        Some(Ok(()))
    }

    /// [`Window::unlock_all`], in the common case (module docs); `None` (nothing done)
    /// if no lock_all epoch is open, for the general call to report.
    #[inline(always)]
    pub fn quick_unlock_all(&self) -> Option<()> {
        if !self.quick_case(true) {
            return None;
        }
        self.epochs.try_borrow_mut().ok()?.lock_all.take()?;
        self.lock_views.all.unlock_all(self.lock_views.home);
        Some(())
    }

    /// The error of a failed lock wait, as the general calls report it (out of line:
    /// the common path builds no error).
    #[cold]
    #[inline(never)]
    fn quick_wait_failed(&self, e: JobAborted) -> SyncError {
        self.fail_stop(e)
    }
}
