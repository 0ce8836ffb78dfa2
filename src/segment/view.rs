//! Typed views of shared memory: the unsafe corner of the window, channel and
//! communicator modules.
//!
//! Window parts, control blocks, channel counters and communicator areas are ranges of
//! the shared mapping reached through [`SharedBytes`]. Three kinds of access exist, all
//! here:
//! - element payloads are copied as bytes: a [`Plain`] slice is viewed as `[u8]`
//!   (through `bytemuck`, safely);
//! - ARMW elements are viewed as `AtomicU32`/`AtomicU64` at an aligned address;
//! - protocol words (`#[repr(C)]` structs of atomics, [`AtomicsOnly`]) are viewed at
//!   line-aligned offsets of the control block.
//!
//! No `&[u8]` or `&[T]` over shared memory ever exists; racing copies can tear bytes
//! but every bit pattern is a valid [`Plain`] value, so nothing undefined follows.

use crate::segment::mapping::SharedBytes;
use crate::sync::{AtomicU32, AtomicU64};

/// Element types a window may hold: plain data (`bytemuck::Pod`: no padding, no
/// pointers, valid for every bit pattern), so that copying their bytes in and out of
/// shared memory is sound. Derive `Pod` and `Zeroable` for your own `#[repr(C)]` types.
pub trait Plain: bytemuck::Pod + Send + Sync {}

impl<T: bytemuck::Pod + Send + Sync> Plain for T {}

/// The bytes of a slice of plain elements.
pub fn bytes_of<T: Plain>(s: &[T]) -> &[u8] {
    bytemuck::cast_slice(s)
}

/// The bytes of a mutable slice of plain elements.
pub fn bytes_of_mut<T: Plain>(s: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(s)
}

/// `#[repr(C)]` protocol structs made only of atomics (and padding), valid as zero
/// bytes, that may be viewed in place in shared memory.
///
/// # Safety
/// Implementors must consist only of atomics, `CachePadded` atomics and structs of
/// them, so that any shared access goes through atomic operations, and must be valid
/// when all bytes are zero.
pub unsafe trait AtomicsOnly {}

// SAFETY: an atomic word.
unsafe impl AtomicsOnly for AtomicU32 {}

/// Views the protocol struct at `offset` of `bytes`.
/// Panics unless it lies inside `bytes` and `offset` is aligned for `S`.
#[inline]
pub fn atomics_at<'a, S: AtomicsOnly>(bytes: SharedBytes<'a>, offset: usize) -> &'a S {
    assert!(offset + size_of::<S>() <= crate::protocol::payload::Payload::len(&bytes), "view past its region");
    let ptr = bytes.addr(offset);
    assert_eq!(ptr as usize % align_of::<S>(), 0, "misaligned protocol view");
    // SAFETY: in bounds and aligned (asserted); S is AtomicsOnly, so every access is
    // atomic and zeroed or previously used bytes are a valid S; the mapping outlives 'a.
    unsafe { &*ptr.cast::<S>() }
}

/// The 32-bit atomic at `offset` of `bytes`, or `None` if it is misaligned.
/// Panics if it is out of bounds (callers check bounds, with a typed error, first).
#[inline]
pub fn atomic_u32_at(bytes: SharedBytes<'_>, offset: usize) -> Option<&AtomicU32> {
    assert!(offset + 4 <= crate::protocol::payload::Payload::len(&bytes), "atomic past its region");
    let ptr = bytes.addr(offset);
    if (ptr as usize) % 4 != 0 {
        return None;
    }
    // SAFETY: in bounds (asserted), aligned (checked); window bytes are only accessed
    // by atomics or by raw byte copies, never through non-atomic references.
    Some(unsafe { &*ptr.cast::<AtomicU32>() })
}

/// The byte at `offset` of `bytes`, viewed as an atomic (RCCE's byte flags in the MPB).
/// Panics if it is out of bounds (callers check bounds, with a typed error, first).
#[inline]
pub fn atomic_u8_at(bytes: SharedBytes<'_>, offset: usize) -> &std::sync::atomic::AtomicU8 {
    assert!(offset < crate::protocol::payload::Payload::len(&bytes), "atomic past its region");
    // SAFETY: in bounds (asserted), and a byte is always aligned; shared bytes are only
    // accessed by atomics or by raw byte copies, never through non-atomic references.
    unsafe { std::sync::atomic::AtomicU8::from_ptr(bytes.addr(offset)) }
}

/// The 64-bit atomic at `offset` of `bytes`, or `None` if it is misaligned.
#[inline]
pub fn atomic_u64_at(bytes: SharedBytes<'_>, offset: usize) -> Option<&AtomicU64> {
    assert!(offset + 8 <= crate::protocol::payload::Payload::len(&bytes), "atomic past its region");
    let ptr = bytes.addr(offset);
    if (ptr as usize) % 8 != 0 {
        return None;
    }
    // SAFETY: as for `atomic_u32_at`.
    Some(unsafe { &*ptr.cast::<AtomicU64>() })
}

/// A value of all-zero bits (valid for every [`Plain`] type): buffers to copy into.
pub fn zeroed<T: Plain>() -> T {
    T::zeroed()
}

// SAFETY: an atomic word.
unsafe impl AtomicsOnly for AtomicU64 {}
// SAFETY: one cache-padded `AtomicU64`, valid as zero (generation 0, nobody arrived).
unsafe impl AtomicsOnly for crate::protocol::barrier::BarrierState {}
// SAFETY: a lock line of `AtomicU32`s, then `AtomicU64`s; valid as zero (unlocked, no
// free range).
unsafe impl<const N: usize, const G: usize> AtomicsOnly for crate::protocol::alloc::heap::HeapAllocator<N, G> {}
// SAFETY: two cache-padded lines of `AtomicU32`s.
unsafe impl AtomicsOnly for crate::protocol::ring::srb::SrbCounters {}
// SAFETY: four `AtomicU32`s.
unsafe impl AtomicsOnly for crate::protocol::ring::perpeer::SlotCtl {}
