//! The shared heap: DRAM that windows and DRAM channels come from.
//!
//! Allocation is collective and symmetric, like MPB allocation: every core makes the
//! same calls in the same order, and the deterministic allocator gives every core the
//! same region without communication. The header's collective-allocation cursor
//! records the high-water mark, so tools can see how much of the heap a job used.
//! A region is reached by every core without copies ([`Core::heap_bytes`]).

use crate::core::Core;
use crate::mpb::{MpbAllocError, MpbRegion};
use crate::segment::SharedBytes;
use crate::sync::Ordering;

/// Heap allocations start on a page: windows of different cores never share a line,
/// and large ones can be copied page by page.
pub const HEAP_GRANULE: usize = 4096;

/// A symmetric heap allocation, as offsets within the heap.
pub type HeapRegion = MpbRegion;

impl Core {
    /// Collective: allocates `bytes` of the shared heap (same region on every core).
    pub fn heap_alloc(&self, bytes: usize) -> Result<HeapRegion, MpbAllocError> {
        let region = self.heap_allocator.lock().unwrap_or_else(|e| e.into_inner()).alloc(bytes)?;
        // Relaxed: a statistic, not a synchronisation point.
        self.segment().job().alloc_cursor.fetch_max((region.offset + region.len) as u64, Ordering::Relaxed);
        Ok(region)
    }

    /// Collective: returns a region from [`Core::heap_alloc`].
    pub fn heap_free(&self, region: HeapRegion) -> Result<(), MpbAllocError> {
        self.heap_allocator.lock().unwrap_or_else(|e| e.into_inner()).free(region)
    }

    /// The bytes of a heap region, shared by every core.
    pub fn heap_bytes(&self, region: HeapRegion) -> SharedBytes<'_> {
        let heap = self.segment().layout().heap;
        assert!(region.offset + region.len <= heap.len, "{region:?} is not in the heap");
        self.segment().bytes(shm_layout::Region { offset: heap.offset + region.offset, len: region.len })
    }
}
