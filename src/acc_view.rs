//! Typed views for the accumulate modules: the unsafe corner of accumulate.
//!
//! - a run of window elements viewed as `[AtomicU32]`/`[AtomicU64]` for the lock-free
//!   strategy (the same access `view::atomic_u64_at` gives one element at a time);
//! - the owner-computes and stripe control structs, viewed in place in the shared
//!   heap (they are [`AtomicsOnly`]).

use crossbeam_utils::CachePadded;

use crate::acc_atomic::Words;
use crate::acc_queue::QueueCtl;
use crate::op::{Element, Op};
use crate::owner::OriginCtl;
use crate::payload::Payload;
use crate::segment::SharedBytes;
use crate::stripes::CombineTarget;
use crate::stripes::Stripe;
use crate::sync::{AtomicU32, AtomicU64};
use crate::view::AtomicsOnly;

// SAFETY: atomic words and a Doorbell (a futex word and a counter), each CachePadded,
// valid as zero bytes.
unsafe impl AtomicsOnly for QueueCtl {}
// SAFETY: two atomic words, valid as zero bytes.
unsafe impl AtomicsOnly for CachePadded<Stripe> {}
// SAFETY: atomic words only, valid as zero bytes.
unsafe impl AtomicsOnly for OriginCtl {}

/// `count` consecutive `width`-byte atomics at byte `offset` of `bytes`, or `None` if
/// the first is misaligned. Panics if the run is out of bounds (callers check first).
pub fn words_at(bytes: SharedBytes<'_>, offset: usize, width: usize, count: usize) -> Option<Words<'_>> {
    assert!(width == 4 || width == 8);
    assert!(offset + width * count <= bytes.len(), "atomics past their region");
    let ptr = bytes.addr(offset);
    if (ptr as usize) % width != 0 {
        return None;
    }
    Some(if width == 4 {
        // SAFETY: in bounds (asserted) and aligned (checked); window bytes are only
        // accessed by atomics or raw byte copies, never through non-atomic references;
        // the mapping outlives the borrow of `bytes`.
        Words::W32(unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU32>(), count) })
    } else {
        // SAFETY: as above.
        Words::W64(unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), count) })
    })
}

/// `count` sequence words (8 bytes each) at byte `offset` of `bytes`.
pub fn u64s_at(bytes: SharedBytes<'_>, offset: usize, count: usize) -> &[AtomicU64] {
    match words_at(bytes, offset, 8, count) {
        Some(Words::W64(w)) => w,
        _ => panic!("misaligned control words at {offset}"),
    }
}

/// `count` stripe locks at byte `offset` of `bytes` (line-aligned).
pub fn stripes_at(bytes: SharedBytes<'_>, offset: usize, count: usize) -> &[CachePadded<Stripe>] {
    let size = size_of::<CachePadded<Stripe>>();
    assert!(offset + size * count <= bytes.len(), "stripes past their region");
    let ptr = bytes.addr(offset);
    assert_eq!(ptr as usize % align_of::<CachePadded<Stripe>>(), 0, "misaligned stripes");
    // SAFETY: in bounds and aligned (asserted); Stripe is atomics only, valid as zero
    // bytes (the block is zeroed before use); the mapping outlives the borrow.
    unsafe { std::slice::from_raw_parts(ptr.cast::<CachePadded<Stripe>>(), count) }
}

/// One pass over the mapping: each element is read, combined and written in place.
impl CombineTarget for SharedBytes<'_> {
    fn combine<T: Element>(&self, at: usize, op: Op, src: &[T], old: Option<&mut [T]>, _: &mut Vec<T>) {
        assert!(at + std::mem::size_of_val(src) <= self.len(), "combine past its region");
        if let Some(old) = old {
            self.read(at, bytemuck::cast_slice_mut(old));
        }
        let ptr = self.addr(at).cast::<T>();
        assert_eq!(ptr as usize % align_of::<T>(), 0, "misaligned combine");
        // One loop per op, so that the op is a constant inside it (vectorized).
        match op {
            Op::NoOp => {}
            Op::Replace => self.write(at, bytemuck::cast_slice(src)),
            Op::Sum => apply(ptr, src, |a, b| T::combine(Op::Sum, a, b)),
            Op::Prod => apply(ptr, src, |a, b| T::combine(Op::Prod, a, b)),
            Op::Min => apply(ptr, src, |a, b| T::combine(Op::Min, a, b)),
            Op::Max => apply(ptr, src, |a, b| T::combine(Op::Max, a, b)),
            Op::BitAnd => apply(ptr, src, |a, b| T::combine(Op::BitAnd, a, b)),
            Op::BitOr => apply(ptr, src, |a, b| T::combine(Op::BitOr, a, b)),
            Op::BitXor => apply(ptr, src, |a, b| T::combine(Op::BitXor, a, b)),
            Op::LogicalAnd => apply(ptr, src, |a, b| T::combine(Op::LogicalAnd, a, b)),
            Op::LogicalOr => apply(ptr, src, |a, b| T::combine(Op::LogicalOr, a, b)),
            Op::Axpy(alpha) => apply(ptr, src, |a, b| T::combine(Op::Axpy(alpha), a, b)),
        }
    }
}

/// `ptr[i] = f(ptr[i], src[i])` for `src.len()` elements at `ptr` (in bounds and
/// aligned: asserted by the caller, who is also their only writer).
#[inline(always)]
fn apply<T: Element>(ptr: *mut T, src: &[T], f: impl Fn(T, T) -> T) {
    for (i, &b) in src.iter().enumerate() {
        // SAFETY: in bounds and aligned (asserted by `combine`); T is Pod, so any bytes
        // are a valid T; the caller is the only writer of these elements (it holds
        // their stripe lock, or is the owner's agent); racing plain reads by other
        // cores are the same raw accesses as `SharedBytes` copies (see
        // `segment::SharedBytes`); no reference to the shared memory is formed, and
        // `src` is private memory, so it does not overlap.
        unsafe { ptr.add(i).write(f(ptr.add(i).read(), b)) };
    }
}
