//! Allocators of shared memory: the deterministic free list that every core replicates
//! ([`freelist`], symmetric MPB allocation) and the heap allocator that lives in the
//! segment and serves the whole job ([`heap`]).

pub mod freelist;
pub mod heap;
