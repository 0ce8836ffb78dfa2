//! Typed views of protocol state placed in the shared segment.
//!
//! Channels keep their counters as `#[repr(C)]` structs of atomics at offsets the
//! layout (or a symmetric allocation) gives. This is the one place outside `segment`
//! that turns such an offset into a reference; it accepts only the types marked
//! [`AtomicView`].

use crate::payload::Payload;
use crate::segment::SharedBytes;

/// # Safety
/// Implementors consist only of atomics (and padding), so all-zero bytes (a fresh
/// memfd) are a valid value and every access from any process is atomic.
pub(crate) unsafe trait AtomicView: Sized {}

// SAFETY: two cache-padded lines of `AtomicU32`s.
unsafe impl AtomicView for crate::srb::SrbCounters {}
// SAFETY: four `AtomicU32`s.
unsafe impl AtomicView for crate::perpeer::SlotCtl {}

/// The `T` at `offset` of `bytes`. Panics if it does not fit or is misaligned.
pub(crate) fn view<'a, T: AtomicView>(bytes: SharedBytes<'a>, offset: usize) -> &'a T {
    assert!(offset + size_of::<T>() <= bytes.len(), "view past its region");
    let ptr = bytes.addr(offset);
    assert!(ptr.align_offset(align_of::<T>()) == 0, "misaligned view");
    // SAFETY: in bounds and aligned (asserted); the mapping outlives 'a (SharedBytes
    // borrows the segment); T is all atomics, valid when zero, and these bytes are only
    // ever accessed as this T (AtomicView's contract and the channel placement).
    unsafe { &*ptr.cast::<T>() }
}
