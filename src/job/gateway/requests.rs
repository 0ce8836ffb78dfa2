//! The gateway's end of its node's request channels (`rma::remote::channel`): the
//! window and MPB requests this node's ranks send to other nodes.
//!
//! At each collect the gateway takes every entry of every rank's channel, in order, and
//! appends it to the batch for its destination's node as a frame for the destination
//! (the entry's tag) with the request tag, which that node's gateway applies on arrival
//! (`serve`). Requests spend no credit and nothing holds them back: a request waits for
//! no two-sided message, and the gateway keeps nothing of it (what one collect appends
//! is at most a ring's worth per rank). It then publishes what it consumed to the
//! senders waiting for room (`srb::space`), as a stand-in ring's consumer does.
//!
//! Trusts nothing: an entry whose source is not the channel's rank, whose destination
//! is not a rank of another node, or that is not a data fragment is corruption, and
//! the job aborts.

use crate::job::node::NodeSpec;
use crate::protocol::ring::frag::{FragHeader, FragKind};
use crate::rma::remote::channel;
use crate::rma::remote::wire::REQUEST_TAG;
use crate::segment::mapping::Segment;

use super::frame;

/// The consumer's positions in this node's request channels.
pub(super) struct Requests {
    /// By rank from the node's first: the consumer position and the last one published.
    rings: Vec<(u32, u32)>,
}

impl Requests {
    pub(super) fn new(spec: &NodeSpec) -> Requests {
        Requests { rings: vec![(0, 0); spec.count as usize] }
    }

    /// Moves every request in this node's channels into the batches for their
    /// destinations' nodes; true if any moved.
    pub(super) fn drain(&mut self, seg: &Segment, spec: &NodeSpec, out: &mut [Vec<u8>]) -> Result<bool, String> {
        let mut any = false;
        for (rank, (pos, published)) in (spec.first..).zip(&mut self.rings) {
            let ring = channel::ring(seg, rank).ok_or("no request channels in a segment across nodes")?;
            while let Some(entry) = ring.peek(*pos).map_err(|e| e.to_string())? {
                let (h, dest) = (entry.header, entry.header.tag);
                if h.src != rank || h.kind != FragKind::Data || dest >= spec.cores || spec.is_local(dest) {
                    return Err(format!("rank {rank}'s request channel holds a {:?} fragment from {} to {dest}", h.kind, h.src));
                }
                let header = FragHeader { tag: REQUEST_TAG, ..h };
                frame::encode_with(&mut out[spec.node_of(dest) as usize], (dest, &header, 0), |p| ring.read(&entry, 0, p));
                *pos = entry.next();
                ring.release(entry);
                any = true;
            }
            if ring.free_consumed(*pos, published, true) {
                seg.ring_all();
            }
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use shm_layout::{Config, WaitPolicy};

    use super::*;
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
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        frames
    }

    #[test]
    fn requests_leave_in_order_with_the_request_tag_and_wait_for_room() {
        let (seg, spec) = node();
        let mut requests = Requests::new(&spec);
        // Three requests of rank 1 to rank 3, the last longer than the 16 KiB ring: its
        // sender waits for the drain to make room.
        let sent = [message(100), message(10_000), message(40_000)];
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
}
