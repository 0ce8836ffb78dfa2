//! The shared heap: DRAM that windows, channels and communicators come from.
//!
//! One allocator serves the whole job, and its state lives in the segment
//! ([`HeapAllocator`]): a lock word and a free list of at most `N` ranges. Any core may
//! allocate or free under the lock; the free list is only read or written while it is
//! held, so its words can be Relaxed: the lock's Acquire/Release orders them.
//!
//! Collective allocation is "leader allocates, everyone learns the result": for the
//! whole job ([`Core::heap_alloc`]) rank 0 allocates, stores the result in one of two
//! publication words, and the world barrier carries it to every core. The word used
//! alternates with the call's parity; it is rewritten two calls later, after a barrier
//! that every core passes only after reading it. Sub-communicators do the same with
//! their own leader (see `comm`).
//!
//! [`Core::heap_alloc`]: crate::segment::CoreContext::heap_alloc

use crossbeam_utils::CachePadded;

use crate::protocol::alloc::freelist::{AllocError, FreeList, Range};
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// Heap allocations start on a page: windows of different cores never share a line,
/// and large ones can be copied page by page.
pub const HEAP_GRANULE: usize = 4096;

/// Free ranges that fit the layout's allocator region.
pub const MAX_FREE_RANGES: usize = (shm_layout::ALLOCATOR_BYTES - 3 * shm_layout::LINE) / 16;

#[repr(C)]
struct LockLine {
    held: AtomicU32,
    ranges: AtomicU32,
}

/// The allocator's state, in the segment's allocator region: at most `N` free ranges,
/// in granules of `G` bytes. The MPB window pool (`segment::mpb_pool`) is one of these
/// too, with the MPB's granule, in a block of the heap.
#[repr(C)]
pub struct HeapAllocator<const N: usize = MAX_FREE_RANGES, const G: usize = HEAP_GRANULE> {
    lock: CachePadded<LockLine>,
    /// Results of world-collective calls, by call parity (see module docs).
    published: CachePadded<[AtomicU64; 2]>,
    /// `(offset, len)` of each free range, sorted by offset.
    free: [[AtomicU64; 2]; N],
}

#[cfg(not(sccemu_loom))]
const _: () = assert!(size_of::<HeapAllocator>() <= shm_layout::ALLOCATOR_BYTES);

impl<const N: usize, const G: usize> HeapAllocator<N, G> {
    /// A heap of `len` bytes, all free (for loom models; production views the segment).
    pub fn new(len: usize) -> HeapAllocator<N, G> {
        let this = HeapAllocator {
            lock: CachePadded::new(LockLine { held: AtomicU32::new(0), ranges: AtomicU32::new(0) }),
            published: CachePadded::new([AtomicU64::new(0), AtomicU64::new(0)]),
            free: std::array::from_fn(|_| [AtomicU64::new(0), AtomicU64::new(0)]),
        };
        this.init(len, 0);
        this
    }

    /// Marks `len` bytes free but for the first `reserved` (the two-sided channels'
    /// per-pair DRAM). Only before any core can see the allocator.
    pub fn init(&self, len: usize, reserved: usize) {
        let mut list = FreeList::new(len, G);
        if reserved > 0 {
            let taken = list.alloc(reserved).expect("the channels' reservation fits the heap");
            debug_assert_eq!(taken.offset, 0);
        }
        self.store(&list).expect("one range fits");
    }

    fn load(&self) -> FreeList {
        let count = self.lock.ranges.load(Ordering::Relaxed) as usize;
        let ranges = self.free[..count.min(N)]
            .iter()
            .map(|[o, l]| Range {
                offset: o.load(Ordering::Relaxed) as usize,
                len: l.load(Ordering::Relaxed) as usize,
            })
            .collect();
        FreeList::from_ranges(G, ranges)
    }

    fn store(&self, list: &FreeList) -> Result<(), AllocError> {
        let ranges = list.ranges();
        if ranges.len() > N {
            return Err(AllocError::TooFragmented);
        }
        for ([o, l], r) in self.free.iter().zip(ranges) {
            o.store(r.offset as u64, Ordering::Relaxed);
            l.store(r.len as u64, Ordering::Relaxed);
        }
        self.lock.ranges.store(ranges.len() as u32, Ordering::Relaxed);
        Ok(())
    }

    /// Runs `f` on the free list under the lock; `f`'s changes are kept only if it
    /// succeeds and they fit.
    fn with_list<T>(
        &self,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        f: impl FnOnce(&mut FreeList) -> Result<T, AllocError>,
    ) -> Result<T, AllocError> {
        // Acquire: the previous holder's free-list writes (before its Release) are visible.
        waiter.wait_until(bell, || {
            self.lock.held.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok().then_some(())
        })?;
        let mut list = self.load();
        let result = f(&mut list).and_then(|v| self.store(&list).map(|()| v));
        // Release: publishes this holder's free-list writes to the next holder.
        self.lock.held.store(0, Ordering::Release);
        bell.ring();
        result
    }

    /// Allocates `bytes`; sleeps on `bell` while another core holds the lock.
    pub fn alloc(&self, bytes: usize, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<Range, AllocError> {
        self.with_list(waiter, bell, |list| list.alloc(bytes))
    }

    /// Returns `range` to the heap; sleeps on `bell` while another core holds the lock.
    pub fn free(&self, range: Range, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), AllocError> {
        self.with_list(waiter, bell, |list| list.free(range))
    }

    /// Total free bytes (a snapshot, for statistics).
    pub fn free_bytes(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<usize, AllocError> {
        self.with_list(waiter, bell, |list| Ok(list.ranges().iter().map(|r| r.len).sum()))
    }

    /// The publication word for collective call number `call`.
    pub fn published(&self, call: u64) -> &AtomicU64 {
        &self.published[(call % 2) as usize]
    }
}

/// How a collective allocation's result travels in one publication word: the offset,
/// or the high bit set with the free byte count of an exhausted heap.
pub fn encode_result(result: &Result<Range, AllocError>) -> u64 {
    const ERROR: u64 = 1 << 63;
    match result {
        Ok(r) => r.offset as u64,
        Err(AllocError::Exhausted { free, .. }) => ERROR | *free as u64,
        Err(_) => ERROR | (ERROR - 1),
    }
}

/// The result a publication word carries, for an allocation of `bytes` ([`encode_result`]).
pub fn decode_result(word: u64, bytes: usize) -> Result<Range, AllocError> {
    const ERROR: u64 = 1 << 63;
    match word {
        w if w & ERROR == 0 => Ok(Range { offset: w as usize, len: bytes }),
        w if w == ERROR | (ERROR - 1) => Err(AllocError::TooFragmented),
        w => Err(AllocError::Exhausted { requested: bytes, free: (w & !ERROR) as usize }),
    }
}
