//! The request channel: how a window or MPB request leaves its origin for its node's
//! gateway, apart from every two-sided message.
//!
//! A node of a job that spans nodes has one (`layout.requests`, after the heap): a
//! shared-receive-buffer ring ([`Srb`]) of `shm_layout::REQUEST_RING_BYTES`, its
//! counters ahead of it, with the node's ranks as producers and its gateway as the
//! consumer. A request (`wire`) is written as the ring's data fragments: source the
//! origin, *tag the destination rank* (on another node), the message's length; one
//! request's fragments in order (a process's threads take turns: [`SENDING`]; other
//! origins' fragments may come between, and the target's gateway reassembles by origin
//! and destination). The gateway takes every entry at each collect and forwards it to
//! the destination's node with the request tag, where it is applied on arrival
//! (`job::gateway`). So:
//! - a request never waits behind two-sided data: not its sender's queued messages
//!   (its send queue, a per-peer pair's one-fragment channel), nor a stand-in ring that
//!   messages held back by flow control fill. It waits only for room in the channel,
//!   which the gateway frees whatever the two-sided credit;
//! - requests keep causal order, those of one origin and those of different origins:
//!   the ring's order is its reservations' (a request written before another is
//!   reserved, so drained and applied, first). A request is also applied before any
//!   two-sided message sent after it (by its origin, or causally after) is delivered:
//!   the gateway holds back the messages a collect took until it has drained every
//!   reservation made before (`job::gateway`'s `requests`). A request may pass messages
//!   sent before it, as it passes data held back;
//! - the gateway holds nothing of a request: it frames each entry into the batch at
//!   once, at most a ring's worth per collect, so flow control's bound on what a
//!   gateway holds is unchanged.
//!
//! Waiting: a fragment is a ticket (reserved whether or not it fits); one that does not
//! fit counts its sender as a space waiter and sleeps on the ring's space bell
//! (`srb::space`), which the gateway rings when it publishes what it consumed. A dead
//! gateway aborts the job, which ends the wait.

use std::sync::Mutex;

use shm_layout::{REQUEST_COUNTER_BYTES, REQUEST_RING_BYTES, Region};

use crate::protocol::abort::JobAborted;
use crate::protocol::ring::frag::FragHeader;
use crate::protocol::ring::srb::{COUNTER_BYTES, Srb, entry_len};
use crate::protocol::waiter::Waiter;
use crate::segment::mapping::Segment;
use crate::segment::ring::ShmRing;
use crate::segment::view::atomics_at;

const _: () = assert!(COUNTER_BYTES <= REQUEST_COUNTER_BYTES);

/// One request's fragments at a time in a process's channel (its threads share it).
static SENDING: Mutex<()> = Mutex::new(());

/// This segment's node's request channel; `None` if it has none (the job runs on one
/// node).
pub(crate) fn ring(seg: &Segment) -> Option<Srb<'_, ShmRing<'_>>> {
    let own = seg.layout().requests;
    if own.len == 0 {
        return None;
    }
    let counters = atomics_at(seg.bytes(Region { offset: own.offset, len: REQUEST_COUNTER_BYTES }), 0);
    let region = Region { offset: own.offset + REQUEST_COUNTER_BYTES, len: REQUEST_RING_BYTES };
    Some(Srb::new(counters, ShmRing::new(seg, region), seg.config().node_first, seg.config().cores))
}

/// Sends the request `msg` of this node's rank `origin` to rank `dest` of another node
/// through the node's channel (module docs); returns once every fragment is written.
pub(crate) fn send(seg: &Segment, waiter: &Waiter<'_>, (origin, dest): (u32, u32), msg: &[u8]) -> Result<(), JobAborted> {
    let ring = ring(seg).expect("a node of a job across nodes");
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
