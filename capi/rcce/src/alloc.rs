//! A replicated allocator that frees by offset, as `RCCE_free(ptr)` and
//! `RCCE_shfree(ptr)` do: sccemu's first-fit free list plus the sizes of the live
//! allocations. Every UE runs the same calls in the same order, so every UE's replica
//! hands out the same offsets.

use std::collections::BTreeMap;

use sccemu::protocol::alloc::freelist::{FreeList, Range};

/// First fit over `0..capacity` in `granule`s, freeing by offset.
#[derive(Debug)]
pub struct Allocator {
    list: FreeList,
    live: BTreeMap<usize, usize>,
}

/// The offset is not the start of a live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAllocated;

impl Allocator {
    /// Everything free.
    pub fn new(capacity: usize, granule: usize) -> Allocator {
        Allocator { list: FreeList::new(capacity, granule), live: BTreeMap::new() }
    }

    /// The offset of `len` bytes, or `None` when no free range is long enough.
    pub fn alloc(&mut self, len: usize) -> Option<usize> {
        let range = self.list.alloc(len).ok()?;
        self.live.insert(range.offset, range.len);
        Some(range.offset)
    }

    /// Frees the allocation that starts at `offset`.
    pub fn free_at(&mut self, offset: usize) -> Result<(), NotAllocated> {
        let len = self.live.remove(&offset).ok_or(NotAllocated)?;
        self.list.free(Range { offset, len }).map_err(|_| NotAllocated)
    }

    /// Free bytes in all.
    pub fn free_bytes(&self) -> usize {
        self.list.ranges().iter().map(|r| r.len).sum()
    }

    /// The longest free range (the first of equals): `(offset, len)`.
    pub fn largest_free(&self) -> Option<(usize, usize)> {
        let best = self.list.ranges().iter().rev().max_by_key(|r| r.len)?;
        Some((best.offset, best.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frees_by_offset_and_refuses_strangers() {
        let mut a = Allocator::new(8192, 32);
        assert_eq!(a.alloc(32), Some(0));
        let x = a.alloc(100).unwrap();
        assert_eq!(x, 32);
        assert_eq!(a.largest_free(), Some((160, 8192 - 32 - 128)));
        assert_eq!(a.free_at(33), Err(NotAllocated));
        a.free_at(x).unwrap();
        assert_eq!(a.free_at(x), Err(NotAllocated), "double free");
        assert_eq!(a.free_bytes(), 8192 - 32);
        assert_eq!(a.alloc(9000), None);
    }
}
