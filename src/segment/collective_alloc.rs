//! Collective allocation from the shared heap: the leader allocates, everyone learns.
//!
//! [`CoreContext::heap_alloc`] is collective over the whole job: rank 0 allocates from the
//! shared [`HeapAllocator`] and publishes the result through the word for this call's
//! parity; the world barrier (Release/Acquire) carries it to every core, which reads
//! it after the barrier. Every core counts its calls, so all agree on the parity. The
//! same barrier carries the cores' orphan lists, and after it the windows every core
//! dropped without `free` are reclaimed (see `reclaim`).
//!
//! Checking mode: before anything else, the cores compare the size they ask for
//! ([`CoreContext::agree_world`]); on a mismatch every core returns
//! [`AllocError::Mismatch`] and nothing is allocated.

use crate::protocol::agree::{Fingerprint, agree};
use crate::segment::context::CoreContext;
use crate::protocol::alloc::freelist::{AllocError, Range};
use crate::protocol::alloc::heap::{HeapAllocator, decode_result, encode_result};
use crate::segment::mapping::SharedBytes;
use crate::sync::Ordering;

/// A heap allocation, as offsets within the heap.
pub type HeapRegion = Range;

impl CoreContext {
    fn heap(&self) -> &HeapAllocator {
        self.segment().heap_allocator()
    }

    /// Allocates from the shared heap for this core alone (communicator leaders use it
    /// to allocate on behalf of their group).
    pub fn heap_alloc_local(&self, bytes: usize) -> Result<HeapRegion, AllocError> {
        let region = self.heap().alloc(bytes, &self.waiter(), &self.segment().slot(0).bell)?;
        // Relaxed: a statistic for tools, not a synchronisation point.
        self.segment().job().alloc_cursor.fetch_max((region.offset + region.len) as u64, Ordering::Relaxed);
        Ok(region)
    }

    /// Returns a region from [`CoreContext::heap_alloc_local`].
    pub fn heap_free_local(&self, region: HeapRegion) -> Result<(), AllocError> {
        self.heap().free(region, &self.waiter(), &self.segment().slot(0).bell)
    }

    fn next_heap_call(&self) -> u64 {
        let mut calls = self.heap_calls.lock().unwrap_or_else(|e| e.into_inner());
        *calls += 1;
        *calls
    }

    /// Collective over the job: allocates `bytes` of the shared heap; every core gets the
    /// same region. In checking mode, cores that ask for different sizes all get
    /// [`AllocError::Mismatch`], naming the ranks that differ, and nothing is allocated.
    pub fn heap_alloc(&self, bytes: usize) -> Result<HeapRegion, AllocError> {
        // First: a core passing 0 is then named, not left alone in the barrier below.
        self.agree_world(&Fingerprint::new("heap_alloc").field("bytes", bytes as u64))??;
        if bytes == 0 {
            return Err(AllocError::ZeroSize);
        }
        // Every core decides this alike, from the config, so nobody is left waiting.
        if self.spans_nodes() {
            return Err(AllocError::AcrossNodes);
        }
        let call = self.next_heap_call();
        let word = self.heap().published(call);
        if self.rank() == 0 {
            // Relaxed: the barrier below publishes it.
            word.store(encode_result(&self.heap_alloc_local(bytes)), Ordering::Relaxed);
        }
        // The barrier, which also compares the orphan lists (`reclaim`).
        let (fingerprint, orphans) = self.take_orphans();
        let alike = agree(&self.orphan_slots(), self.size(), self.rank(), call, &fingerprint, || self.barrier());
        let result = decode_result(word.load(Ordering::Relaxed), bytes);
        match alike {
            Ok(Ok(())) => self.reclaim(orphans),
            Ok(Err(_)) => self.keep_orphans(orphans),
            Err(e) => {
                self.keep_orphans(orphans);
                return Err(e.into());
            }
        }
        result
    }

    /// Collective over the job: returns a region from [`CoreContext::heap_alloc`].
    /// Nobody may use it afterwards; the barrier first makes sure everyone has stopped.
    pub fn heap_free(&self, region: HeapRegion) -> Result<(), AllocError> {
        let word = self.heap().published(self.next_heap_call());
        self.barrier()?;
        if self.rank() == 0 {
            let result = self.heap_free_local(region).map(|()| region);
            word.store(encode_result(&result), Ordering::Relaxed);
        }
        self.barrier()?;
        decode_result(word.load(Ordering::Relaxed), region.len).map(|_| ())
    }

    /// Bytes of the shared heap that are free now (a snapshot).
    pub fn heap_free_bytes(&self) -> Result<usize, AllocError> {
        self.heap().free_bytes(&self.waiter(), &self.segment().slot(0).bell)
    }

    /// Bytes of the shared heap.
    pub fn heap_len(&self) -> usize {
        self.segment().layout().heap.len
    }

    /// The bytes of a heap region, shared by every core.
    pub fn heap_bytes(&self, region: HeapRegion) -> SharedBytes<'_> {
        let heap = self.segment().layout().heap;
        assert!(region.offset + region.len <= heap.len, "{region:?} is not in the heap");
        self.segment().bytes(shm_layout::Region { offset: heap.offset + region.offset, len: region.len })
    }
}
