//! The gateway's end of its node's request channel (`rma::remote::channel`): the window
//! and MPB requests this node's ranks send to other nodes.
//!
//! At each collect the gateway takes every entry of the channel, in order, and appends
//! it to the batch for its destination's node as a frame for the destination (the
//! entry's tag) with the request tag, which that node's gateway applies on arrival
//! (`serve`). Requests spend no credit and nothing holds them back: a request waits for
//! no two-sided message, and the gateway keeps nothing of it (what one collect appends
//! is at most a ring's worth). It then publishes what it consumed to the senders waiting
//! for room (`srb::space`), as a stand-in ring's consumer does.
//!
//! Order with two-sided messages: a collect drains the channel after the stand-in
//! channels, and first notes the channel's producer counter (`mark`): every request
//! written before a message the collect took (by the message's sender, or by anyone
//! before it causally: the message's publication, which the drain acquired, follows
//! the request's reservation) is reserved below it. If the drain reaches the mark, all
//! those requests are in this collect's batches, and the receiving gateway applies a
//! batch's requests as it decodes it, before it publishes the batch's messages. If not
//! (another sender is still writing an earlier entry), the messages this collect took
//! wait in the gateway ([`Requests::defer`], at most one collect's worth, already
//! counted in their flows' credit) until the drain reaches the mark, and no stand-in
//! channel is drained meanwhile. So a one-way request (a flag, a put) followed by a
//! message, or by a barrier over messages or flags, is in place when that arrives.
//!
//! Trusts nothing: an entry whose source is not a rank of this node, whose destination
//! is not a rank of another node, or that is not a data fragment is corruption, and the
//! job aborts.

use crate::job::node::NodeSpec;
use crate::protocol::ring::frag::{FragHeader, FragKind};
use crate::rma::remote::channel;
use crate::rma::remote::wire::REQUEST_TAG;
use crate::segment::mapping::Segment;

use super::frame;

/// The consumer's side of this node's request channel, and the two-sided bytes waiting
/// for it (module docs).
pub(super) struct Requests {
    /// The consumer position, and the last one published.
    pos: u32,
    published: u32,
    /// Two-sided bytes taken for each node, waiting until the drain reaches `mark`.
    deferred: Vec<Vec<u8>>,
    mark: u32,
}

impl Requests {
    pub(super) fn new(spec: &NodeSpec) -> Requests {
        Requests { pos: 0, published: 0, deferred: vec![Vec::new(); spec.nodes as usize], mark: 0 }
    }

    /// Whether two-sided bytes wait for requests written before them: the stand-in
    /// channels are not drained meanwhile.
    pub(super) fn deferring(&self) -> bool {
        self.deferred.iter().any(|d| !d.is_empty())
    }

    /// The channel's producer counter now: call it after the stand-in channels are
    /// drained, before [`Requests::drain`].
    pub(super) fn mark(&self, seg: &Segment) -> u32 {
        channel::ring(seg).map_or(0, |ring| ring.reserved())
    }

    /// Moves every request in the channel into the batches for its destinations' nodes;
    /// true if any moved.
    pub(super) fn drain(&mut self, seg: &Segment, spec: &NodeSpec, out: &mut [Vec<u8>]) -> Result<bool, String> {
        let ring = channel::ring(seg).ok_or("no request channel in a segment across nodes")?;
        let mut any = false;
        while let Some(entry) = ring.peek(self.pos).map_err(|e| e.to_string())? {
            let (h, dest) = (entry.header, entry.header.tag);
            if !spec.is_local(h.src) || h.kind != FragKind::Data || dest >= spec.cores || spec.is_local(dest) {
                return Err(format!("the request channel holds a {:?} fragment from {} to {dest}", h.kind, h.src));
            }
            let header = FragHeader { tag: REQUEST_TAG, ..h };
            frame::encode_with(&mut out[spec.node_of(dest) as usize], (dest, &header, 0), |p| ring.read(&entry, 0, p));
            self.pos = entry.next();
            ring.release(entry);
            any = true;
        }
        if ring.free_consumed(self.pos, &mut self.published, true) {
            seg.ring_all();
        }
        Ok(any)
    }

    /// After [`Requests::drain`]: the two-sided bytes this collect took (each batch of
    /// `out` from `starts`) stay in the batches if the drain reached `mark`, and wait
    /// otherwise; bytes that waited go out once it has. True if any went out.
    pub(super) fn defer(&mut self, out: &mut [Vec<u8>], starts: &[usize], mark: u32) -> bool {
        if self.deferring() {
            if self.reached(self.mark) {
                for (batch, waited) in out.iter_mut().zip(&mut self.deferred) {
                    batch.append(waited);
                }
                return true;
            }
            return false;
        }
        if !self.reached(mark) {
            for ((batch, &start), waiting) in out.iter_mut().zip(starts).zip(&mut self.deferred) {
                *waiting = batch.split_off(start);
            }
            self.mark = mark;
        }
        false
    }

    /// Whether the consumer position has reached counter value `mark`.
    fn reached(&self, mark: u32) -> bool {
        // Counters wrap: the position is at most a ring ahead of any mark still pending.
        mark.wrapping_sub(self.pos) as i32 <= 0
    }
}

#[cfg(test)]
mod tests {
    use shm_layout::{Config, WaitPolicy};

    use super::*;
    use crate::protocol::ring::srb;
    use crate::protocol::waiter::Waiter;

    /// A 4-rank job's segment as node 0 of 2 sees it (ranks 0 and 1 are its own).
    fn node() -> (Segment, NodeSpec) {
        let config = Config { heap_bytes: 1 << 20, node_first: 0, node_cores: 2, ..Config::new(4) };
        (Segment::create(config).unwrap(), NodeSpec::block(4, 2, 0).unwrap())
    }

    fn message(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    /// Drains until `want` bytes of requests went to node 1; their frames, in order.
    fn drain_until(requests: &mut Requests, seg: &Segment, spec: &NodeSpec, want: usize) -> Vec<frame::Frame> {
        let mut frames = Vec::new();
        while frames.iter().map(|f: &frame::Frame| f.payload.len()).sum::<usize>() < want {
            let mut out = vec![Vec::new(); 2];
            requests.drain(seg, spec, &mut out).unwrap();
            assert!(out[0].is_empty(), "nothing for this node");
            frames.extend(frame::decode(&out[1], u32::MAX).unwrap());
            // As the gateway's loop paces its polls (`nodes::engine::Pace`): a sender
            // rings nothing when it publishes, since the real gateway waits on MPI too,
            // and the channel has no doorbell of its own to wait on.
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        frames
    }

    #[test]
    fn requests_leave_in_order_with_the_request_tag_and_wait_for_room() {
        let (seg, spec) = node();
        let mut requests = Requests::new(&spec);
        // Three requests of rank 1 to rank 3, the last longer than the 64 KiB ring: its
        // sender waits for the drain to make room.
        let sent = [message(100), message(10_000), message(100_000)];
        std::thread::scope(|s| {
            s.spawn(|| {
                let waiter = Waiter::new(WaitPolicy::Block, seg.job());
                for msg in &sent {
                    channel::send(&seg, &waiter, (1, 3), msg).unwrap();
                }
            });
            let frames = drain_until(&mut requests, &seg, &spec, sent.iter().map(Vec::len).sum());
            let mut got: Vec<Vec<u8>> = Vec::new();
            for f in frames {
                assert_eq!((f.dest, f.header.src, f.header.tag, f.header.kind), (3, 1, REQUEST_TAG, FragKind::Data));
                match f.header.first {
                    true => got.push(f.payload),
                    false => got.last_mut().expect("a first fragment").extend_from_slice(&f.payload),
                }
            }
            assert_eq!(got, sent, "whole and in order");
        });
    }

    #[test]
    fn a_request_for_this_node_is_refused() {
        let (seg, spec) = node();
        let waiter = Waiter::new(WaitPolicy::Block, seg.job());
        channel::send(&seg, &waiter, (1, 0), &message(8)).unwrap();
        let err = Requests::new(&spec).drain(&seg, &spec, &mut [Vec::new(), Vec::new()]).unwrap_err();
        assert!(err.contains("to 0"), "{err}");
    }

    #[test]
    fn messages_wait_for_the_requests_reserved_before_them() {
        let (seg, spec) = node();
        let mut requests = Requests::new(&spec);
        let ring = channel::ring(&seg).unwrap();
        // Rank 0 is still writing a request when rank 1 writes one, and then a message
        // that the stand-in drain took (here: bytes in the batch after `starts`).
        let slow = ring.reserve(srb::entry_len(8));
        channel::send(&seg, &Waiter::new(WaitPolicy::Block, seg.job()), (1, 3), &message(8)).unwrap();
        let mut out = vec![Vec::new(), b"two-sided".to_vec()];
        let starts = [0, 0];
        let mark = requests.mark(&seg);
        let mut sent = vec![Vec::new(); 2];
        assert!(!requests.drain(&seg, &spec, &mut sent).unwrap(), "nothing past the slow entry");
        assert!(!requests.defer(&mut out, &starts, mark) && requests.deferring());
        assert!(out[1].is_empty(), "the message waits");
        // Until the slow request is written and drained: both requests go, then the
        // message (no stand-in channel is drained meanwhile).
        ring.publish(slow, &FragHeader::data(0, 2, 8, 8, true), &message(8));
        assert!(requests.drain(&seg, &spec, &mut sent).unwrap());
        assert_eq!(frame::decode(&sent[1], u32::MAX).unwrap().len(), 2);
        assert!(requests.defer(&mut out, &[0, 0], requests.mark(&seg)) && !requests.deferring());
        assert_eq!(out[1], b"two-sided");
    }
}
