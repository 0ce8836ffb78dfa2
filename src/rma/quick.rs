//! Entry points for bindings (the MPI library's C calls): put, get, ARMW and flush on
//! a byte window, at byte offsets, each in one frame with its checks made once.
//!
//! They do what [`Window::put`], [`Window::get`], the ARMW family and
//! [`Window::flush`] do, and refuse what those refuse, with the same errors in the same
//! order (rank, epoch, bounds, alignment), having done nothing. The difference is the
//! shape: a C entry point cannot inline across its caller, so each call here reads the
//! epoch state once (one `RefCell` borrow that checks the epoch and records the access
//! as issued, where the general calls take two), looks the part up once (the index is
//! the rank check), and keeps every error's construction out of line. Whatever is
//! not the common case on one node (a window across nodes, an accumulate strategy
//! with locks, virtual time) goes to the general call, out of line.
//!
//! Everything on the way is inlined by force, closures too: left to LLVM, an 8 B
//! fetch-and-op's entry point called the epoch check and the ARMW's closure out of
//! line, with their results through memory (169 instructions in the entry point
//! against 125 inlined).
//!
//! Nothing here is unsafe: every index and every range is checked before use.

use crate::protocol::atomic::armw::{AtomicElem, RmwOp, Word};
use crate::protocol::payload::Payload;
use crate::rma::error::{RmaError, SyncError};
use crate::rma::window::Window;
use crate::segment::mapping::SharedBytes;
use crate::segment::view::{atomic_u32_at, atomic_u64_at};
use crate::timing;

/// The error of a refused access, built out of line.
#[cold]
#[inline(never)]
fn refused(error: RmaError) -> RmaError {
    error
}

impl<'c> Window<'c, u8> {
    /// Whether this call must take the general path: a window across nodes, ARMW under
    /// locks (`locked` and a strategy with them), or virtual time.
    #[inline(always)]
    fn general_only(&self, locked: bool) -> bool {
        self.remote.is_some() || (locked && self.acc_locks()) || timing::clock().is_some()
    }

    /// Checks an access of `bytes` bytes at byte `at` of `target`'s part (rank, epoch,
    /// bounds, in that order, as the general calls do; a refusal counts `elements`, as
    /// theirs), runs `then` on the part's bytes
    /// and records the access as issued if `then` accepts it. One borrow of the epochs
    /// for the check and the record.
    #[inline(always)]
    fn quick_access<R>(
        &self,
        target: u32,
        at: usize,
        (bytes, elements): (usize, usize),
        then: impl FnOnce(SharedBytes<'c>) -> Result<R, RmaError>,
    ) -> Result<R, RmaError> {
        let Some(&part) = self.parts.get(target as usize) else {
            return Err(refused(RmaError::RankOutOfRange { rank: target, size: self.parts.len() as u32 }));
        };
        let mut e = self.epochs.borrow_mut();
        if !e.may_access(target) {
            return Err(refused(RmaError::NoEpoch { rank: target }));
        }
        if at.checked_add(bytes).is_none_or(|end| end > part.len) {
            return Err(refused(RmaError::OutOfBounds { rank: target, index: at, len: elements, part_len: part.len }));
        }
        let done = then(self.ctx.segment().bytes(part))?;
        e.ops_since_fence = true;
        Ok(done)
    }

    /// [`Window::put`] of `src` at byte `at` of `target`'s part.
    #[inline(always)]
    pub fn quick_put(&self, target: u32, at: usize, src: &[u8]) -> Result<(), RmaError> {
        if self.general_only(false) {
            return self.put_general(target, at, src);
        }
        self.quick_access(target, at, (src.len(), src.len()), #[inline(always)] |part| {
            part.write(at, src);
            Ok(())
        })?;
        self.pending_stores.set(true);
        Ok(())
    }

    #[inline(never)]
    fn put_general(&self, target: u32, at: usize, src: &[u8]) -> Result<(), RmaError> {
        self.put(target, at, src)
    }

    /// [`Window::get`] into `dst` from byte `at` of `target`'s part.
    #[inline(always)]
    pub fn quick_get(&self, target: u32, at: usize, dst: &mut [u8]) -> Result<(), RmaError> {
        if self.general_only(false) {
            return self.get_general(target, at, dst);
        }
        self.quick_access(target, at, (dst.len(), dst.len()), #[inline(always)] |part| {
            part.read(at, dst);
            Ok(())
        })
    }

    #[inline(never)]
    fn get_general(&self, target: u32, at: usize, dst: &mut [u8]) -> Result<(), RmaError> {
        self.get(target, at, dst)
    }

    /// Runs `armw` on the word of an `A` at byte `at` of `target`'s part, checked as
    /// the general ARMW checks it (then its alignment).
    #[inline(always)]
    fn quick_armw<A: AtomicElem>(&self, target: u32, at: usize, armw: impl FnOnce(Word<'c>) -> u64) -> Result<A, RmaError> {
        self.quick_access(target, at, (A::WIDTH, 1), #[inline(always)] |part| {
            let word = match A::WIDTH {
                4 => atomic_u32_at(part, at).map(Word::W32),
                _ => atomic_u64_at(part, at).map(Word::W64),
            };
            match word {
                Some(word) => Ok(A::from_bits(armw(word))),
                None => Err(refused(RmaError::Misaligned { rank: target, byte_offset: at, width: A::WIDTH })),
            }
        })
    }

    /// The ARMW `op` with `v` on the `A` at byte `at` of `target`'s part (the
    /// fetch-and-op family and swap); returns the old value. A bitwise op on a float
    /// element acts on its bits.
    #[inline(always)]
    pub fn quick_fetch_op<A: AtomicElem>(&self, target: u32, at: usize, op: RmwOp, v: A) -> Result<A, RmaError> {
        if self.general_only(true) {
            return self.fetch_op_general(target, at, op, v);
        }
        self.quick_armw::<A>(target, at, #[inline(always)] |w| w.fetch_op(op, A::KIND, v.to_bits()))
    }

    #[inline(never)]
    fn fetch_op_general<A: AtomicElem>(&self, target: u32, at: usize, op: RmwOp, v: A) -> Result<A, RmaError> {
        self.rmw(target, at, op, v)
    }

    /// [`Window::load`] of the `A` at byte `at` of `target`'s part.
    #[inline(always)]
    pub fn quick_load<A: AtomicElem>(&self, target: u32, at: usize) -> Result<A, RmaError> {
        if self.general_only(true) {
            return self.load_general(target, at);
        }
        self.quick_armw::<A>(target, at, Word::load)
    }

    #[inline(never)]
    fn load_general<A: AtomicElem>(&self, target: u32, at: usize) -> Result<A, RmaError> {
        self.load(target, at)
    }

    /// [`Window::compare_and_swap`] on the `A` at byte `at` of `target`'s part.
    #[inline(always)]
    pub fn quick_compare_and_swap<A: AtomicElem>(
        &self,
        target: u32,
        at: usize,
        current: A,
        new: A,
    ) -> Result<A, RmaError> {
        if self.general_only(true) {
            return self.compare_and_swap_general(target, at, current, new);
        }
        self.quick_armw::<A>(target, at, #[inline(always)] |w| w.compare_and_swap(current.to_bits(), new.to_bits()))
    }

    #[inline(never)]
    fn compare_and_swap_general<A: AtomicElem>(&self, target: u32, at: usize, current: A, new: A) -> Result<A, RmaError> {
        self.compare_and_swap(target, at, current, new)
    }

    /// [`Window::flush`] of `target`.
    #[inline(always)]
    pub fn quick_flush(&self, target: u32) -> Result<(), SyncError> {
        if self.general_only(false) {
            return self.flush_general(target);
        }
        let passive = {
            let e = self.epochs.borrow();
            e.lock_all.is_some() || e.locks.get(target as usize).is_some_and(Option::is_some)
        };
        if !passive {
            return self.flush_general(target);
        }
        self.acc_quiesce()?;
        self.complete_stores();
        Ok(())
    }

    /// The general flush: every case the quick one does not take, and the errors.
    #[inline(never)]
    fn flush_general(&self, target: u32) -> Result<(), SyncError> {
        self.flush(target)
    }
}
