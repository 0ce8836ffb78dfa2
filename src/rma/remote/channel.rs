//! The request channel: how a window or MPB request leaves its origin for its node's
//! gateway, apart from every two-sided message.
//!
//! Each rank of a node of a job that spans nodes has one (`layout.requests`, by rank
//! from the node's first): a shared-receive-buffer ring ([`Srb`]) of
//! `shm_layout::REQUEST_RING_BYTES`, its counters ahead of it, with the rank as its only
//! producer and the node's gateway as its consumer. A request (`wire`) is written as the
//! ring's data fragments: source the origin, *tag the destination rank* (on another
//! node), the message's length; one request's fragments one after another (the threads
//! of a process take turns: [`SENDING`]). The gateway takes every entry at each collect
//! and forwards it to the destination's node with the request tag, where it is applied
//! on arrival (`job::gateway`). So:
//! - a request never waits behind two-sided data: not its sender's queued messages
//!   (its send queue, a per-peer pair's one-fragment channel), nor a stand-in ring that
//!   messages held back by flow control fill. It waits only for room in its own
//!   channel, which the gateway frees whatever the two-sided credit;
//! - the requests of one origin keep their order (one ring, drained in order, each
//!   node's batches delivered in order, applied on arrival); requests and the origin's
//!   two-sided messages are not ordered with each other (nothing relies on it: an epoch
//!   ends with a [`Kind::Sync`](super::wire::Kind::Sync) round trip or a request);
//! - the gateway holds nothing of a request: it frames each entry into the batch at
//!   once, at most a ring's worth per rank and collect, so flow control's bound on what
//!   a gateway holds is unchanged.
//!
//! Waiting: a fragment is a ticket (reserved whether or not it fits); one that does not
//! fit counts its sender as a space waiter and sleeps on the ring's space bell
//! (`srb::space`), which the gateway rings when it publishes what it consumed. A dead
//! gateway aborts the job, which ends the wait.

use std::sync::Mutex;

use shm_layout::{REQUEST_COUNTER_BYTES, REQUEST_RING_BYTES, Region};

use crate::protocol::abort::JobAborted;
use crate::protocol::ring::frag::FragHeader;
use crate::protocol::ring::srb::{COUNTER_BYTES, RingMem, Srb, entry_len};
use crate::protocol::waiter::Waiter;
use crate::segment::mapping::{Segment, SharedBytes};
use crate::segment::view::atomics_at;
use crate::sync::AtomicU32;

const _: () = assert!(COUNTER_BYTES <= REQUEST_COUNTER_BYTES);

/// One request's fragments at a time in a process's channel (its threads share it).
static SENDING: Mutex<()> = Mutex::new(());

/// A request channel's ring memory: its control words overlay its header bytes.
pub(crate) struct ChannelMem<'s> {
    seg: &'s Segment,
    region: Region,
    bytes: SharedBytes<'s>,
}

impl<'s> RingMem for ChannelMem<'s> {
    type Bytes = SharedBytes<'s>;
    fn bytes(&self) -> &SharedBytes<'s> {
        &self.bytes
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        self.seg.word(self.region, offset)
    }
}

/// The request channel of `rank`, a rank of this segment's node; `None` if it has none
/// (the job runs on one node).
pub(crate) fn ring(seg: &Segment, rank: u32) -> Option<Srb<'_, ChannelMem<'_>>> {
    let config = seg.config();
    let own = seg.layout().requests.get(rank.checked_sub(config.node_first)? as usize)?;
    let counters = atomics_at(seg.bytes(Region { offset: own.offset, len: REQUEST_COUNTER_BYTES }), 0);
    let region = Region { offset: own.offset + REQUEST_COUNTER_BYTES, len: REQUEST_RING_BYTES };
    let mem = ChannelMem { seg, region, bytes: seg.bytes(region) };
    Some(Srb::new(counters, mem, rank, config.cores))
}

/// Sends the request `msg` of this node's rank `origin` to rank `dest` of another node
/// through `origin`'s channel (module docs); returns once every fragment is written.
pub(crate) fn send(seg: &Segment, waiter: &Waiter<'_>, (origin, dest): (u32, u32), msg: &[u8]) -> Result<(), JobAborted> {
    let ring = ring(seg, origin).expect("a rank of a node of a job across nodes");
    let _turn = SENDING.lock().unwrap_or_else(|e| e.into_inner());
    let max = ring.max_payload() as usize;
    let total = u32::try_from(msg.len()).expect("a request fits a message");
    let mut at = 0;
    loop {
        let chunk = &msg[at..msg.len().min(at + max)];
        let r = ring.reserve(entry_len(chunk.len() as u32));
        if !ring.fits(&r) {
            // Counted before the last check (`wait_until` fences before each): the
            // gateway publishes what it consumed while a space waiter is counted, and
            // rings the bell of the quarter where the reservation ends (`srb::space`).
            ring.add_space_waiter(true);
            let waited = waiter.wait_until(ring.space_bell(&r), || ring.fits(&r).then_some(()));
            ring.remove_space_waiter(true);
            waited?;
        }
        ring.publish(r, &FragHeader::data(origin, dest, chunk.len() as u32, total, at == 0), chunk);
        at += chunk.len();
        if at == msg.len() {
            return Ok(());
        }
    }
}
