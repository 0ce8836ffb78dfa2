//! The MPB window pool: MPB space for windows over communicators.
//!
//! The symmetric MPB allocator (`mpb`) gives an allocation the same offset in every
//! core's MPB without any communication, because every core makes the same calls in the
//! same order on its own replica. A window over a communicator cannot use it: the cores
//! outside the communicator do not make its calls, so their replicas would drift from
//! the members', and the next symmetric allocation would land at different offsets on
//! different cores (no later step could repair that without the non-members taking
//! part). So such windows take their MPB parts from a *pool* that the whole job sets
//! aside once, collectively ([`CoreContext::reserve_mpb_pool`]): a range at the same
//! offset of every MPB, allocated from the symmetric allocator (so it never overlaps a
//! symmetric allocation), and managed from then on by one shared allocator (a
//! [`HeapAllocator`] with the MPB's granule, in a block of the heap) that any core may
//! call under its lock. A window's leader allocates the window's range there (the same
//! offset in each member's MPB, each part in its owner's MPB), and whoever releases the
//! window last returns it.
//!
//! Protocol of the reservation, every core in the same order: the symmetric MPB
//! allocation of the range, the job-wide heap allocation of the allocator's state,
//! rank 0 marks the range free in it, and a world barrier (Release/Acquire) publishes
//! that before any core can allocate from it. Every core then records the pool in its
//! context. Every step gives every core the same result, so a refusal (a pool already
//! reserved, no room) is the same everywhere and leaves nothing allocated.
//!
//! Invariant: every range the pool hands out lies inside the reserved range, which no
//! symmetric allocation overlaps while the job lives (the pool is never returned).

use std::fmt;

use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::alloc::heap::HeapAllocator;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::context::CoreContext;
use crate::segment::mpb::{MPB_GRANULE, MpbRegion};
use crate::segment::view::atomics_at;

/// Free ranges the pool's allocator can record.
const POOL_RANGES: usize = 32;

/// The pool's shared allocator: MPB granules, offsets from the pool's start.
type PoolAllocator = HeapAllocator<POOL_RANGES, MPB_GRANULE>;

/// Where the job's MPB window pool is (the same on every core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpbPool {
    /// The allocator's state, in the heap.
    state: HeapRegion,
    /// The pool's range, at the same offset of every MPB.
    range: MpbRegion,
}

impl MpbPool {
    /// Offset of the pool in every MPB: ranges it hands out are relative to it.
    pub fn base(&self) -> usize {
        self.range.offset
    }

    /// Bytes of the pool in each MPB.
    pub fn bytes(&self) -> usize {
        self.range.len
    }
}

/// Why the MPB window pool could not be reserved (on every core alike; nothing was
/// reserved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The job already has a pool, of this many bytes per MPB.
    Reserved {
        /// Bytes of the existing pool.
        bytes: usize,
    },
    /// The symmetric MPB allocation or the heap allocation failed.
    Alloc(AllocError),
}

impl From<AllocError> for PoolError {
    fn from(e: AllocError) -> Self {
        PoolError::Alloc(e)
    }
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reserved { bytes } => write!(f, "the job already reserved an MPB window pool of {bytes} bytes"),
            Self::Alloc(e) => write!(f, "cannot reserve the MPB window pool: {e}"),
        }
    }
}

impl std::error::Error for PoolError {}

impl CoreContext {
    /// Bytes of the largest range the symmetric MPB allocator has free (the same on
    /// every core between collective calls): what [`CoreContext::reserve_mpb_pool`]
    /// could take at most.
    pub fn mpb_largest_free(&self) -> usize {
        let replica = self.mpb_allocator.lock().unwrap_or_else(|e| e.into_inner());
        replica.ranges().iter().map(|r| r.len).max().unwrap_or(0)
    }

    /// Collective over the job: sets `bytes` of every core's MPB aside for windows over
    /// communicators (`Comm::window` with MPB placement), which cannot use the
    /// symmetric allocator (module docs). Once per job; every core gets the same result.
    pub fn reserve_mpb_pool(&self, bytes: usize) -> Result<(), PoolError> {
        if let Some(pool) = self.mpb_pool.get() {
            return Err(PoolError::Reserved { bytes: pool.bytes() });
        }
        let range = self.mpb_alloc(bytes)?;
        let state = match self.heap_alloc(size_of::<PoolAllocator>()) {
            Ok(state) => state,
            Err(e) => {
                // Every core got the same error: every replica gives the range back.
                let _ = self.mpb_free(range);
                return Err(e.into());
            }
        };
        let pool = MpbPool { state, range };
        if self.rank() == 0 {
            // Relaxed stores under no lock: nobody can reach the allocator before the
            // barrier below, whose Release/Acquire publishes them.
            self.pool_allocator(pool).init(range.len, 0);
        }
        self.barrier().map_err(AllocError::from)?;
        // Every core sets it once, here (checked above, alike everywhere).
        let _ = self.mpb_pool.set(pool);
        Ok(())
    }

    /// The job's MPB window pool, once reserved.
    pub fn mpb_pool(&self) -> Option<MpbPool> {
        self.mpb_pool.get().copied()
    }

    fn pool_allocator(&self, pool: MpbPool) -> &PoolAllocator {
        atomics_at(self.heap_bytes(pool.state), 0)
    }

    /// Allocates `bytes` of `pool` (the job's) for this core alone (a window's leader,
    /// for its members): the range, relative to [`MpbPool::base`], in every MPB.
    pub(crate) fn pool_alloc(&self, pool: MpbPool, bytes: usize) -> Result<MpbRegion, AllocError> {
        // Waiters for the lock sleep on rank 0's doorbell, as the heap's do.
        self.pool_allocator(pool).alloc(bytes, &self.waiter(), &self.segment().slot(0).bell)
    }

    /// Returns a range from [`CoreContext::pool_alloc`] (any core may).
    pub(crate) fn pool_free(&self, region: MpbRegion) -> Result<(), AllocError> {
        let Some(pool) = self.mpb_pool() else { return Err(AllocError::NotAllocated(region)) };
        self.pool_allocator(pool).free(region, &self.waiter(), &self.segment().slot(0).bell)
    }
}
