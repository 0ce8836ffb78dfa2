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

use mpi::Tag;
use mpi::datatype::Equivalence;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination, Source};

/// One send in flight: its request, and the buffer it reads, owned here.
struct Pending {
    request: Request<'static, [u8]>,
    /// From `Box::into_raw`; freed once `request` has completed.
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
        let request = world.process_at_rank(to).immediate_send_with_tag(StaticScope, shared, tag);
        self.pending.push(Pending { request, buffer });
        Ok(())
    }

    /// Completes the sends that MPI has finished with (and frees their buffers).
    pub fn progress(&mut self) {
        for Pending { request, buffer } in std::mem::take(&mut self.pending) {
            match request.test() {
                // SAFETY: the request completed and was consumed by `test`, so neither MPI
                // nor any reference reads `buffer` any more; it came from `Box::into_raw`
                // in `send` and is freed only here, once.
                Ok(_) => drop(unsafe { Box::from_raw(buffer) }),
                Err(request) => self.pending.push(Pending { request, buffer }),
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
        for Pending { request, .. } in self.pending.drain(..) {
            std::mem::forget(request);
        }
    }
}

/// Receives this node's messages, one at a time, in a buffer kept between them.
pub struct Inbox {
    buffer: Vec<u8>,
}

impl Default for Inbox {
    fn default() -> Inbox {
        // Never an empty allocation: an empty Vec's dangling pointer is 1, which Open MPI
        // may take for MPI_IN_PLACE.
        Inbox { buffer: vec![0; 64] }
    }
}

impl Inbox {
    /// The next message that has arrived from any node, if one has: its sender's world
    /// rank, its tag and its bytes (valid until the next call).
    pub fn receive(&mut self, world: &SimpleCommunicator) -> Option<(usize, Tag, &[u8])> {
        let (message, status) = world.any_process().immediate_matched_probe()?;
        let len = usize::try_from(status.count(u8::equivalent_datatype())).expect("a byte count is defined");
        if self.buffer.len() < len {
            self.buffer.resize(len, 0);
        }
        message.matched_receive_into(&mut self.buffer[..len]);
        let from = usize::try_from(status.source_rank()).expect("a probed message has a source");
        Some((from, status.tag(), &self.buffer[..len]))
    }
}
