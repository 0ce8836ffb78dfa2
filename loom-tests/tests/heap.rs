//! The shared heap allocator's lock (`sccemu::heap`): two cores allocating and freeing at
//! once get disjoint ranges, and the free list ends whole: freed neighbours merge, so the
//! whole heap can be allocated again as one range, and freed again. The allocator
//! records at most 2 free ranges, and in the interleavings where the 1-granule range at
//! the start is freed first the list holds exactly 2 (it must still fit); the last free
//! goes from an empty list to one range.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::alloc::heap::{HEAP_GRANULE, HeapAllocator};
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    bell: Doorbell,
    heap: HeapAllocator<2>,
}

#[test]
fn concurrent_allocations_are_disjoint_and_frees_merge() {
    loom::model(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bell: Doorbell::new(),
            heap: HeapAllocator::new(4 * HEAP_GRANULE),
        });
        let other = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                s.heap.alloc(HEAP_GRANULE, &waiter, &s.bell).unwrap()
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let mine = s.heap.alloc(2 * HEAP_GRANULE, &waiter, &s.bell).unwrap();
        let theirs = other.join().unwrap();
        let disjoint = mine.offset + mine.len <= theirs.offset || theirs.offset + theirs.len <= mine.offset;
        assert!(disjoint, "{mine:?} overlaps {theirs:?}");
        let freer = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                s.heap.free(theirs, &waiter, &s.bell).unwrap();
            })
        };
        s.heap.free(mine, &waiter, &s.bell).unwrap();
        freer.join().unwrap();
        assert_eq!(s.heap.free_bytes(&waiter, &s.bell).unwrap(), 4 * HEAP_GRANULE);
        // The neighbours merged: the whole heap is one range again.
        let all = s.heap.alloc(4 * HEAP_GRANULE, &waiter, &s.bell).unwrap();
        assert_eq!((all.offset, all.len), (0, 4 * HEAP_GRANULE));
        assert_eq!(s.heap.free_bytes(&waiter, &s.bell).unwrap(), 0);
        s.heap.free(all, &waiter, &s.bell).unwrap();
        assert_eq!(s.heap.free_bytes(&waiter, &s.bell).unwrap(), 4 * HEAP_GRANULE);
    });
}
