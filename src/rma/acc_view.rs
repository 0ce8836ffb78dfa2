//! Typed views for the accumulate modules: the unsafe corner of accumulate.
//!
//! - a run of window elements viewed as `[AtomicU32]`/`[AtomicU64]` for the lock-free
//!   strategy (the same access `view::atomic_u64_at` gives one element at a time);
//! - the owner-computes and stripe control structs, viewed in place in the shared
//!   heap (they are [`AtomicsOnly`]).

use crossbeam_utils::CachePadded;
use shm_layout::Region;

use crate::protocol::atomic::acc_atomic::Words;
use crate::protocol::atomic::acc_queue::QueueCtl;
use crate::protocol::atomic::op::{Element, Op};
use crate::rma::owner::OriginCtl;
use crate::protocol::payload::Payload;
use crate::segment::mapping::{Segment, SharedBytes};
use crate::protocol::atomic::stripes::CombineTarget;
use crate::protocol::atomic::stripes::Stripe;
use crate::sync::{AtomicU32, AtomicU64};
use crate::segment::view::AtomicsOnly;

// SAFETY: atomic words and a Doorbell (a futex word), each CachePadded,
// valid as zero bytes.
unsafe impl AtomicsOnly for QueueCtl {}
// SAFETY: two atomic words, valid as zero bytes.
unsafe impl AtomicsOnly for CachePadded<Stripe> {}
// SAFETY: atomic words only, valid as zero bytes.
unsafe impl AtomicsOnly for OriginCtl {}

/// Runs `$body` with `$f` bound to a closure computing `a op b` for a constant op in
/// each arm (so that the compiler folds the op and vectorizes the loop), `$replace`
/// for `Replace`, nothing for `NoOp`.
macro_rules! for_op {
    ($op:expr, $f:ident, $body:expr, $replace:expr) => {
        match $op {
            Op::NoOp => {}
            Op::Replace => $replace,
            Op::Sum => {
                let $f = |a, b| T::combine(Op::Sum, a, b);
                $body
            }
            Op::Prod => {
                let $f = |a, b| T::combine(Op::Prod, a, b);
                $body
            }
            Op::Min => {
                let $f = |a, b| T::combine(Op::Min, a, b);
                $body
            }
            Op::Max => {
                let $f = |a, b| T::combine(Op::Max, a, b);
                $body
            }
            Op::BitAnd => {
                let $f = |a, b| T::combine(Op::BitAnd, a, b);
                $body
            }
            Op::BitOr => {
                let $f = |a, b| T::combine(Op::BitOr, a, b);
                $body
            }
            Op::BitXor => {
                let $f = |a, b| T::combine(Op::BitXor, a, b);
                $body
            }
            Op::LogicalAnd => {
                let $f = |a, b| T::combine(Op::LogicalAnd, a, b);
                $body
            }
            Op::LogicalOr => {
                let $f = |a, b| T::combine(Op::LogicalOr, a, b);
                $body
            }
            Op::LogicalXor => {
                let $f = |a, b| T::combine(Op::LogicalXor, a, b);
                $body
            }
            Op::MinLoc => {
                let $f = |a, b| T::combine(Op::MinLoc, a, b);
                $body
            }
            Op::MaxLoc => {
                let $f = |a, b| T::combine(Op::MaxLoc, a, b);
                $body
            }
            Op::Axpy(alpha) => {
                let $f = |a, b| T::combine(Op::Axpy(alpha), a, b);
                $body
            }
        }
    };
}

/// [`words_at`] over the segment's aligned 4-byte words around `span` (an absolute
/// region that holds the elements; the lanes of a 1- or 2-byte element are read and
/// written in the whole word around it): `count` elements of `width` bytes at absolute
/// offset `at`. `None` if the first element is not aligned to its width.
pub(crate) fn words_around(seg: &Segment, span: Region, at: usize, width: usize, count: usize) -> Option<Words<'_>> {
    let lo = span.offset & !3;
    let hi = span.end().next_multiple_of(4).min(seg.layout().total);
    words_at(seg.bytes(Region { offset: lo, len: hi - lo }), at - lo, width, count)
}

/// The atomic words that hold `count` consecutive `width`-byte elements at byte
/// `offset` of the segment bytes `bytes` (1- and 2-byte elements as lanes of the
/// aligned 4-byte words around them), or `None` if the first element is not aligned to
/// its width, or the words around it leave `bytes`. Panics on a width other than 1, 2,
/// 4 or 8, or if the run itself leaves `bytes` (callers check first).
pub fn words_at(bytes: SharedBytes<'_>, offset: usize, width: usize, count: usize) -> Option<Words<'_>> {
    assert!(offset + width * count <= bytes.len(), "atomics past their region");
    if width < 4 {
        assert!(width == 1 || width == 2, "no atomic lanes of {width} bytes");
        let addr = bytes.addr(offset) as usize;
        if addr % width != 0 {
            return None;
        }
        let first = addr % 4;
        let start = offset.checked_sub(first)?;
        let end = (offset + width * count).next_multiple_of(4);
        if end > bytes.len() {
            return None;
        }
        // SAFETY: `start` is 4-aligned (the address's remainder was taken off) and the
        // words end inside `bytes` (checked); access as for the whole words below.
        let words = unsafe { std::slice::from_raw_parts(bytes.addr(start).cast::<AtomicU32>(), (end - start) / 4) };
        return Some(Words::Lanes { words, first, width, count });
    }
    assert!(width == 4 || width == 8, "no atomic words of {width} bytes");
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
        for_op!(op, f, apply(ptr, src, f), self.write(at, bytemuck::cast_slice(src)));
    }
}

/// `dst[at..] = dst[at..] op src[..count]` where both are in the mapping: the owner's
/// agent combining an origin's staged chunk in one pass, without a private copy. The
/// agent is the only writer of `dst`; the origin does not touch its staging buffer
/// until the agent releases it.
pub fn combine_staged<T: Element>(
    dst: SharedBytes<'_>,
    at: usize,
    op: Op,
    src: SharedBytes<'_>,
    count: usize,
) {
    let bytes = count * size_of::<T>();
    assert!(at + bytes <= dst.len() && bytes <= src.len(), "staged combine past its region");
    let d = dst.addr(at).cast::<T>();
    let s = src.addr(0).cast::<T>().cast_const();
    assert!(d as usize % align_of::<T>() == 0 && s as usize % align_of::<T>() == 0, "misaligned");
    let copy = || {
        let mut tmp = vec![T::zeroed(); count];
        src.read(0, bytemuck::cast_slice_mut(&mut tmp));
        dst.write(at, bytemuck::cast_slice(&tmp));
    };
    for_op!(op, f, apply_staged(d, s, count, f), copy());
}

/// `d[i] = f(d[i], s[i])` for `count` elements (checked by `combine_staged`), with
/// AVX2 where the CPU has it (see `apply`).
#[inline(always)]
fn apply_staged<T: Element>(d: *mut T, s: *const T, count: usize, f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (detected at run time); the rest as for
        // `apply_staged_each`.
        return unsafe { apply_staged_avx2(d, s, count, f) };
    }
    apply_staged_each(d, s, count, f)
}

/// [`apply_staged_each`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2; the arguments as for `apply_staged_each`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_staged_avx2<T: Element>(d: *mut T, s: *const T, count: usize, f: impl Fn(T, T) -> T) {
    apply_staged_each(d, s, count, f)
}

#[inline(always)]
fn apply_staged_each<T: Element>(d: *mut T, s: *const T, count: usize, f: impl Fn(T, T) -> T) {
    for i in 0..count {
        // SAFETY: both runs in bounds and aligned (asserted by `combine_staged`); T is
        // Pod; `d` (a window part) and `s` (a staging buffer) are disjoint regions; the
        // agent is the only writer of `d`, and `s` is not written while the agent owns
        // it (see `owner`); no reference to shared memory is formed.
        unsafe { d.add(i).write(f(d.add(i).read(), s.add(i).read())) };
    }
}

/// `ptr[i] = f(ptr[i], src[i])` for `src.len()` elements at `ptr` (in bounds and
/// aligned: asserted by the caller, who is also their only writer). With AVX2 where the
/// CPU has it: twice the lanes of the x86-64 baseline's SSE2, as MPI's own AVX
/// reduction kernels use.
#[inline(always)]
fn apply<T: Element>(ptr: *mut T, src: &[T], f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (detected at run time); the rest as for `apply_each`.
        return unsafe { apply_avx2(ptr, src, f) };
    }
    apply_each(ptr, src, f)
}

/// [`apply_each`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2; the arguments as for `apply_each`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_avx2<T: Element>(ptr: *mut T, src: &[T], f: impl Fn(T, T) -> T) {
    apply_each(ptr, src, f)
}

#[inline(always)]
fn apply_each<T: Element>(ptr: *mut T, src: &[T], f: impl Fn(T, T) -> T) {
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
