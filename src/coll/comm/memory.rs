//! A communicator's shared memory: where things are in its area, the blocks its leader
//! allocates for it (step flags, staging) and their return to the heap, by `free` or by
//! the last member's drop (the protocols are `comm`'s module docs). Kept in one file so
//! that every offset into the area is computed in one place.

use crate::coll::collectives::headers_bytes;
use crate::protocol::abort::JobAborted;
use crate::protocol::agree::MEMBER_BYTES;
use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::alloc::heap::{decode_result, encode_result};
use crate::protocol::barrier::BarrierState;
use crate::protocol::last_out;
use crate::protocol::payload::Payload;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::{AtomicsOnly, atomics_at};
use crate::sync::{AtomicU32, AtomicU64, Ordering};

use super::{CollError, Comm};

const LINE: usize = shm_layout::LINE;
/// Offset of the publication words in an area, after the barrier.
const PUBLISH_AT: usize = size_of::<BarrierState>().next_multiple_of(LINE);
/// Offset of the drop count, after the two publication words.
const DROPPED_AT: usize = PUBLISH_AT + 16;
/// Offset of the members' rendezvous flags, a line each.
const RENDEZVOUS_AT: usize = PUBLISH_AT + LINE;
const _: () = assert!(MEMBER_BYTES % LINE == 0);

/// Bytes of the area of a communicator with `size` members.
pub(super) fn area_bytes(size: usize) -> usize {
    checks_at(size) + size * MEMBER_BYTES
}

/// Offset of the checking-mode slots in the area.
pub(super) fn checks_at(size: usize) -> usize {
    RENDEZVOUS_AT + size * LINE
}

/// Bytes of one member's row of step flags.
fn flags_stride(size: usize) -> usize {
    (size * 4).div_ceil(LINE) * LINE
}

impl<'c> Comm<'c> {
    /// The protocol word at `offset` of the area.
    pub(super) fn area_word<T: AtomicsOnly>(&self, offset: usize) -> &'c T {
        atomics_at(self.ctx.heap_bytes(self.area), offset)
    }

    /// The flag that member `rank` raises itself for the rendezvous of a round (`coll`).
    pub(crate) fn rendezvous_flag(&self, rank: u32) -> &'c AtomicU32 {
        self.area_word(RENDEZVOUS_AT + rank as usize * LINE)
    }

    /// Member `rank`'s arrival stamp of meetings of `parity`, in virtual time: in its
    /// rendezvous flag's line (see `timed`).
    pub(crate) fn meeting_stamp(&self, rank: u32, parity: usize) -> Option<&'c AtomicU64> {
        crate::timing::clock()?;
        Some(self.area_word(RENDEZVOUS_AT + rank as usize * LINE + 8 + 8 * parity))
    }

    /// Collective: makes sure the step flags exist (`comm`'s module docs). Every member
    /// calls it before a put-based allgather, which every member runs alike.
    pub(crate) fn ensure_step_flags(&self) -> Result<(), CollError> {
        if self.steps.get().is_none() {
            let n = self.members.len();
            self.steps.set(Some(self.leader_alloc(n * flags_stride(n), true)?));
        }
        Ok(())
    }

    /// Step flag `index` of member `rank` (see `allgather`). Panics unless
    /// [`Comm::ensure_step_flags`] ran and `index` is below the size.
    pub(crate) fn flag(&self, rank: u32, index: usize) -> &'c AtomicU32 {
        let n = self.members.len();
        assert!(index < n);
        let steps = self.steps.get().expect("step flags allocated before a put-based allgather");
        atomics_at(self.ctx.heap_bytes(steps), rank as usize * flags_stride(n) + index * 4)
    }

    /// Collective: the leader allocates `bytes` from the heap (and zeroes them if
    /// `zero`); every member learns it.
    fn leader_alloc(&self, bytes: usize, zero: bool) -> Result<HeapRegion, CollError> {
        Ok(self.leader_publish(bytes, zero)??)
    }

    /// [`Comm::leader_alloc`], its outcomes apart (the allocation's, inside the wait's).
    pub(super) fn leader_publish(&self, bytes: usize, zero: bool) -> Result<Result<HeapRegion, AllocError>, JobAborted> {
        let call = self.allocs.get() + 1;
        self.allocs.set(call);
        let word: &AtomicU64 = self.area_word(PUBLISH_AT + (call % 2) as usize * 8);
        if self.rank == 0 {
            let region = self.ctx.heap_alloc_local(bytes);
            if let (Ok(region), true) = (&region, zero) {
                self.ctx.heap_bytes(*region).zero(0, region.len);
            }
            // Relaxed: the barrier below publishes it, and the zeroes before it.
            word.store(encode_result(&region), Ordering::Relaxed);
        }
        self.wait_barrier()?;
        Ok(decode_result(word.load(Ordering::Relaxed), bytes))
    }

    /// Staging of at least `bytes` per half and member; grows collectively.
    pub(crate) fn staging(&self, bytes: usize) -> Result<(HeapRegion, usize), CollError> {
        let current = *self.staging.borrow();
        if let Some((region, capacity)) = current.filter(|&(_, c)| c >= bytes) {
            return Ok((region, capacity));
        }
        let capacity = bytes.max(4096).next_power_of_two();
        // Everyone has finished with the old block before the leader frees it.
        self.barrier_unchecked()?;
        if let Some((old, _)) = current {
            if self.rank == 0 {
                self.ctx.heap_free_local(old)?;
            }
            *self.staging.borrow_mut() = None;
        }
        let n = self.members.len();
        let region = self.leader_alloc(2 * (headers_bytes(n) + capacity * n), false)?;
        *self.staging.borrow_mut() = Some((region, capacity));
        Ok((region, capacity))
    }

    /// Returns the staging, the step flags and the area to the heap.
    pub(super) fn return_memory(&self) -> Result<(), CollError> {
        let staging = self.staging.borrow().map(|(region, _)| region);
        for region in [staging, self.steps.get(), Some(self.area)].into_iter().flatten() {
            self.ctx.heap_free_local(region)?;
        }
        Ok(())
    }
}

impl Comm<'_> {
    /// Counts this member out now, as dropping the communicator does (`comm`'s module
    /// docs), for a holder that cannot drop it: the MPI library keeps a freed
    /// communicator's object alive for threads that may still hold a reference (an
    /// erroneous program's), so it releases the memory at `MPI_Comm_free` instead.
    /// Collective calls on it afterwards return [`CollError::Released`] (the last
    /// member's release returned the area). Later releases and the drop count nothing.
    pub fn release(&self) {
        if self.released.replace(true) {
            return;
        }
        // Over messages: no memory, only the context id to give back (`over_p2p`).
        if let Some(link) = &self.messages {
            link.give_back();
            return;
        }
        // Gives up this member's hold on its windows' check area (checking mode).
        drop(self.window_checks.borrow_mut().take());
        // Every member's accesses to the area and staging happen before the return.
        if last_out::count_out(self.area_word(DROPPED_AT), self.size()) {
            // Fails only if the job is aborting, when nothing needs the memory.
            let _ = self.return_memory();
        }
    }
}

/// Dropped (after [`Comm::free`] or without it): the last member to drop or release the
/// communicator returns its memory (`comm`'s module docs).
impl Drop for Comm<'_> {
    fn drop(&mut self) {
        self.release();
    }
}
