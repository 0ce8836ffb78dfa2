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
