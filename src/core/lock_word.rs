//! Test-and-set words in the shared heap of any node ([`Core::lock_word`],
//! [`Core::unlock_word`]): the SCC's test-and-set registers, for C interfaces that keep
//! them in shared DRAM (RCCE's locks).
//!
//! A word in this node's heap is taken and released as `protocol::test_and_set` says,
//! waiting on its owner's doorbell. A word in another node's heap (every node lays its
//! heap out alike, so an offset names a word on each) is taken by that node's gateway,
//! in a thread of its own that waits there on the owner's doorbell exactly as a local
//! taker would, and answers once it holds the word: the taker sleeps on its own futex
//! for the answer and never polls the network. It is released by an atomic swap made
//! there, which rings the owner's doorbell (one-way).
//!
//! What the holder did before releasing is visible to the next holder: on one node by
//! the release's Release swap; across nodes, the holder's one-way requests to other
//! nodes' MPBs (puts and flag updates, `remote_mpb`) are completed first, by a sync round
//! trip to each rank they went to, since requests to different ranks may apply in any
//! order.

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::op::{ElemKind, Op};
use crate::protocol::test_and_set;
use crate::rma::remote::wire::{Header, Kind};
use crate::segment::WaitMark;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::atomic_u32_at;
use crate::sync::AtomicU32;

use super::facade::Core;

/// Why a test-and-set word could not be taken or released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockWordError {
    /// The owner is not a core of the job.
    RankOutOfRange {
        /// The owner rank.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// The word at `offset` does not lie in the heap, or is not 4-byte aligned.
    BadOffset {
        /// The word's offset in the heap.
        offset: usize,
    },
    /// The job aborted (a core died).
    Aborted(JobAborted),
}

impl std::fmt::Display for LockWordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => write!(f, "rank {rank} is not a core of this {size}-core job"),
            Self::BadOffset { offset } => {
                write!(f, "a test-and-set word at heap offset {offset} is outside the heap or misaligned")
            }
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LockWordError {}

impl From<JobAborted> for LockWordError {
    fn from(e: JobAborted) -> Self {
        LockWordError::Aborted(e)
    }
}

impl Core {
    /// The word at heap offset `offset` (of every node's heap), checked; and where it
    /// lies in the segment.
    fn lock_word_at(&self, rank: u32, offset: usize) -> Result<(&AtomicU32, usize), LockWordError> {
        if rank >= self.size() {
            return Err(LockWordError::RankOutOfRange { rank, size: self.size() });
        }
        let heap = self.context().segment().layout().heap;
        let bad = LockWordError::BadOffset { offset };
        if offset % 4 != 0 || offset.checked_add(4).is_none_or(|end| end > heap.len) {
            return Err(bad);
        }
        let word = atomic_u32_at(self.heap_bytes(HeapRegion { offset, len: 4 }), 0).ok_or(bad)?;
        Ok((word, heap.offset + offset))
    }

    /// Takes the test-and-set word at heap offset `offset` of `rank`'s node, whose
    /// releases ring `rank`'s doorbell, waiting while another core holds it (module
    /// docs). Fails only on a bad argument or if the job aborts meanwhile.
    ///
    /// # Examples
    ///
    /// Core 0 keeps the word in its node's heap and tells every core where; any core,
    /// on any node, then takes it:
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use sccemu::protocol::payload::Payload;
    /// let core = sccemu::Core::attach()?;
    /// let mut at = [0u8; 8];
    /// if core.rank() == 0 {
    ///     let word = core.heap_alloc_local(64)?;
    ///     core.heap_bytes(word).zero(0, 64);
    ///     at = (word.offset as u64).to_le_bytes();
    ///     (1..core.size()).try_for_each(|r| core.send(r, 1, &at))?;
    /// } else {
    ///     core.recv(0, 1, &mut at)?;
    /// }
    /// let at = u64::from_le_bytes(at) as usize;
    /// core.lock_word(0, at)?;
    /// // ... the critical section ...
    /// core.unlock_word(0, at)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn lock_word(&self, rank: u32, offset: usize) -> Result<(), LockWordError> {
        let (word, at) = self.lock_word_at(rank, offset)?;
        if !self.context().is_local(rank) {
            let mut head = Header::new(Kind::TestAndSet, at);
            head.rank = rank;
            crate::rma::remote::timed::round_trip(0, 0);
            return Ok(self.remote_request(rank, head, &[], Some(&mut []))?);
        }
        if test_and_set::try_take(word) {
            return Ok(());
        }
        let _blocked = self.mark_wait(WaitMark::Lock { owner: rank });
        Ok(test_and_set::take(word, &self.waiter(), &self.context().segment().slot(rank).bell)?)
    }

    /// Releases the test-and-set word at heap offset `offset` of `rank`'s node (taken
    /// with [`Core::lock_word`]) and wakes its waiters, once this core's requests to
    /// other nodes' MPBs are complete (module docs).
    pub fn unlock_word(&self, rank: u32, offset: usize) -> Result<(), LockWordError> {
        let (word, at) = self.lock_word_at(rank, offset)?;
        self.complete_remote_mpb()?;
        if self.context().is_local(rank) {
            test_and_set::release(word, &self.context().segment().slot(rank).bell);
            return Ok(());
        }
        let mut head = Header::accumulate(at, ElemKind::U32, Op::Replace, 1);
        (head.ring, head.rank) = (true, rank);
        // Not left to complete (`remote_request` would mark it): nothing follows a
        // release that needs it applied.
        Ok(crate::rma::remote::request(&self.node_link(), rank, head, &[&0u32.to_le_bytes()], None)?)
    }
}
