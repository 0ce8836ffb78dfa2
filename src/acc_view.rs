//! Typed views for the accumulate modules: the unsafe corner of accumulate.
//!
//! - a run of window elements viewed as `[AtomicU32]`/`[AtomicU64]` for the lock-free
//!   strategy (the same access `view::atomic_u64_at` gives one element at a time);
//! - the owner-computes and stripe control structs, viewed in place in the shared
//!   heap (they are [`AtomicsOnly`]).

use crossbeam_utils::CachePadded;

use crate::acc_atomic::Words;
use crate::acc_queue::QueueCtl;
use crate::owner::OriginCtl;
use crate::payload::Payload;
use crate::segment::SharedBytes;
use crate::stripes::Stripe;
use crate::sync::{AtomicU32, AtomicU64};
use crate::view::AtomicsOnly;

// SAFETY: atomics (through CachePadded and Doorbell, itself a futex word and a counter),
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
