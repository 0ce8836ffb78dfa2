//! The engine's point-to-point messages over MPI: nonblocking sends whose buffers live
//! until MPI is done with them ([`Outbox`]), and receiving whatever message arrives next
//! from any node ([`Inbox`]). This module holds the nodes' side's only `unsafe` code.
//!
//! Invariants:
//! - A buffer handed to [`Outbox::send`] is neither written nor freed until its request
//!   has completed (`MPI_Test` said so); then it is freed. If the outbox is dropped with
//!   requests still pending (the engine returns an error, and the caller aborts the
//!   world), their requests and buffers are leaked, never freed under MPI's feet.
//! - Sends to one node leave in the order of the `send` calls, and MPI keeps that order
//!   between two processes for messages that match the same receive: the inbox receives
//!   with any source and any tag, so it takes each node's messages in the order they
//!   were sent.
//! - [`Inbox::receive`] receives exactly the message it probed (`MPI_Improbe` then
//!   `MPI_Mrecv`), so no other receive can take it in between.
//! - A message longer than [`PIECE`] leaves as consecutive MPI messages of at most
//!   [`PIECE`] bytes, all but the last tagged [`MORE`] and the last with the message's
//!   tag; the inbox appends a node's pieces, in order, to that node's buffer and hands
//!   the message over with its last piece. Why: Open MPI's TCP transport sends a
//!   message of more than its eager limit (64 KiB) only after the receiver answers its
//!   first fragment, and on this oversubscribed 2-CPU machine that handshake between
//!   two polling gateways stalled for milliseconds at times, for the raw MPI too.

use mpi::Tag;
use mpi::datatype::Equivalence;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination, Source};

/// The tag of a piece of a message that more pieces follow (module docs); the engine's
/// own tags are smaller.
pub const MORE: Tag = 100;
/// The most bytes one MPI message carries: a piece, under Open MPI's TCP eager limit of
/// 64 KiB with the transport's own header.
pub const PIECE: usize = 63 * 1024;

/// One message in flight: the requests of its pieces, and the buffer they read, owned
/// here.
struct Pending {
    requests: Vec<Request<'static, [u8]>>,
    /// From `Box::into_raw`; freed once every request has completed.
    buffer: *mut [u8],
}

/// The sends in flight from this node.
#[derive(Default)]
pub struct Outbox {
    pending: Vec<Pending>,
}

impl Outbox {
    /// Starts sending `bytes` to world rank `to` with `tag`; they are owned here until
    /// the send completes. An error if they exceed an MPI count.
    pub fn send(
        &mut self,
        world: &SimpleCommunicator,
        to: usize,
        tag: Tag,
        bytes: Vec<u8>,
    ) -> Result<(), String> {
        if i32::try_from(bytes.len()).is_err() {
            return Err(format!("a message of {} bytes exceeds an MPI count", bytes.len()));
        }
        let to = i32::try_from(to).map_err(|_| format!("no node {to}"))?;
        let buffer = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: `buffer` comes from `Box::into_raw` just above, so it points to a live,
        // initialized allocation that nothing else refers to. It is freed only in
        // `progress`, after the request that reads it has completed and been consumed
        // (and never if the outbox is dropped first), and nothing writes to it meanwhile;
        // so the shared reference, which the request holds, stays valid for as long as
        // MPI may read through it.
        let shared: &'static [u8] = unsafe { &*buffer };
        let process = world.process_at_rank(to);
        let pieces = shared.chunks(PIECE).count().max(1);
        let requests = (0..pieces)
            .map(|i| {
                let piece = &shared[(i * PIECE).min(shared.len())..((i + 1) * PIECE).min(shared.len())];
                let tag = if i + 1 < pieces { MORE } else { tag };
                process.immediate_send_with_tag(StaticScope, piece, tag)
            })
            .collect();
        self.pending.push(Pending { requests, buffer });
        Ok(())
    }

    /// Completes the sends that MPI has finished with (and frees their buffers).
    pub fn progress(&mut self) {
        for Pending { requests, buffer } in std::mem::take(&mut self.pending) {
            let left: Vec<_> = requests.into_iter().filter_map(|r| r.test().err()).collect();
            if left.is_empty() {
                // SAFETY: every request that read `buffer` completed and was consumed by
                // `test`, so neither MPI nor any reference reads it any more; it came from
                // `Box::into_raw` in `send` and is freed only here, once.
                drop(unsafe { Box::from_raw(buffer) });
            } else {
                self.pending.push(Pending { requests: left, buffer });
            }
        }
    }

    /// Whether every send has completed.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        // Only on an error (the engine returns with sends in flight; the world is about
        // to be aborted): MPI may still read the buffers, so they are leaked, and the
        // requests too (dropping a pending rsmpi request panics).
        for Pending { requests, .. } in self.pending.drain(..) {
            std::mem::forget(requests);
        }
    }
}

/// Receives this node's messages, one at a time, each node's in a buffer kept between
/// them (where its pieces gather).
#[derive(Default)]
pub struct Inbox {
    buffers: Vec<Vec<u8>>,
    /// The node whose buffer holds the message handed over last: emptied at the next
    /// call.
    last: Option<usize>,
}

impl Inbox {
    /// The next whole message that has arrived from any node, if one has: its sender's
    /// world rank, its tag and its bytes (valid until the next call).
    pub fn receive(&mut self, world: &SimpleCommunicator) -> Option<(usize, Tag, &[u8])> {
        if let Some(node) = self.last.take() {
            self.buffers[node].clear();
        }
        loop {
            let (message, status) = world.any_process().immediate_matched_probe()?;
            let len =
                usize::try_from(status.count(u8::equivalent_datatype())).expect("a byte count is defined");
            let from = usize::try_from(status.source_rank()).expect("a probed message has a source");
            if self.buffers.len() <= from {
                self.buffers.resize_with(from + 1, Vec::new);
            }
            let buffer = &mut self.buffers[from];
            let start = buffer.len();
            // Never an empty allocation: an empty Vec's dangling pointer is 1, which Open
            // MPI may take for MPI_IN_PLACE.
            buffer.reserve((start + len).max(64) - start);
            buffer.resize(start + len, 0);
            message.matched_receive_into(&mut buffer[start..]);
            if status.tag() != MORE {
                self.last = Some(from);
                return Some((from, status.tag(), &self.buffers[from][..]));
            }
        }
    }
}
