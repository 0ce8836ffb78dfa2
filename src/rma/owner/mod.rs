//! Owner-computes accumulate: origins hand their operand to the target's owner, whose
//! agent thread combines it into the owner's part. The data crosses once, and the
//! target's memory stays in the owner's cache.
//!
//! Per owner (rank r) the window's accumulate block holds a request queue
//! ([`crate::protocol::atomic::acc_queue`]: `CAP` slots of `SLOT_BYTES`) and, per origin (also rank r,
//! as an origin), an [`OriginCtl`] and `HALVES` staging buffers of `HALF_BYTES`.
//! - Small accumulates (payload ≤ `INLINE_BYTES`) travel inline in a queue slot.
//! - Larger ones are cut into staging-sized chunks. For each, the origin waits until
//!   the staging half is free (`busy == 0`, Acquire: pairs with the agent's Release
//!   after it read it), copies the chunk in, marks it busy and enqueues a descriptor;
//!   the owner's agent pulls the chunk from the origin's staging. `HALVES` buffers
//!   (4) let the origin fill some while the owner combines others.
//! - get_accumulate and fetch_and_op go through staging: the agent writes the
//!   previous values back into the half before releasing it; the origin waits for it.
//! - After applying any request the agent clears `busy` (if staged), then increments
//!   the origin's `applied` counter (Release: the combined data happens before the
//!   origin's Acquire load in `quiesce`), and rings the origin's doorbell if the
//!   origin registered as waiting (`OriginCtl::waiting`).
//! - Flow control is the queue's: a full queue blocks the origin on the queue's
//!   `space` doorbell (the owner's slot doorbell) until the agent frees a slot; a busy
//!   staging buffer blocks it on its own doorbell.
//!
//! Footprint: `OwnerBlock::STRIDE` (about 400 KiB: 130 KiB of queue, 8 KiB of stripe
//! locks, 256 KiB of staging) of shared heap per core and owner-computes window.
//!
//! Completion: `accumulate` returns once the request is enqueued (the origin buffer is
//! free). Every call that completes RMA (flush, unlock, fence, complete, free) first
//! waits until `applied == issued` (all this origin's requests applied everywhere).
//! get_accumulate and fetch_and_op return when their own request has been applied.
//! Order: one origin's requests to one owner are applied in queue (issue) order.
//!
//! The agent is the only combiner of its owner's part under this strategy (the owner's
//! own accumulates go through its queue too). It combines each request granule by
//! granule (`OWNER_GRANULE` bytes), holding that granule's stripe lock from the owner's
//! share of the block (`stripes`); ARMW on the part (`transfer`) takes the same locks,
//! after waiting for its origin's own pending requests ([`OwnerState::armw_domain`]), so that
//! an ARMW is atomic with the agent's combines and lands after the accumulates its
//! origin issued before it. The agent never waits for anything else while it holds a
//! stripe, and ARMW holders only run one CPU atomic, so the agent waits at most that
//! long. One agent
//! thread per process and window maps the segment itself (a second mapping of the
//! job's memfd), sleeps on the queue's own doorbell through the waiter when idle, and
//! stops when the window is freed or dropped (which the owner's process does when its
//! calls fail on a job abort; the launcher reaps the process in any case). Origins
//! blocked on a dead owner (full queue, completion) sleep on slot doorbells, which the
//! abort protocol rings, and return the abort error.
//!
//! The parts: the block's layout in the segment (`block`), the request's wire format
//! (`request`), the origin's side (`origin`: [`OwnerState`]) and the agent thread
//! (`agent`).

use crate::protocol::atomic::stripes::Striping;

mod agent;
mod block;
mod origin;
mod request;

pub use block::{OriginCtl, OwnerBlock};
pub use origin::OwnerState;

/// Request queue slots per owner.
pub const CAP: usize = 32;
/// Bytes per queue slot (a 4-byte length, the header, the inline payload): the
/// contention pattern's sizes (200 B to 4 KB) travel inline.
pub const SLOT_BYTES: usize = 4096 + 64;
const HEADER: usize = 40;
/// Largest payload sent inline.
pub const INLINE_BYTES: usize = SLOT_BYTES - 4 - HEADER;
/// Staging buffers per origin.
pub const HALVES: usize = 4;
/// Bytes per staging buffer (the largest chunk of a staged request).
pub const HALF_BYTES: usize = 64 * 1024;
/// Bytes the agent combines under one stripe lock: an ARMW waits for at most one such
/// granule of a concurrent combine.
pub const OWNER_GRANULE: usize = 4096;

/// How an owner's part of `part_bytes` is striped: the same for the agent and for ARMW
/// origins, and for every element type (granules are multiples of
/// [`ACC_ALIGN`](crate::rma::accumulate::ACC_ALIGN)).
pub fn owner_striping(part_bytes: usize) -> Striping {
    Striping::new(OWNER_GRANULE, part_bytes, crate::rma::accumulate::ACC_ALIGN)
}
