//! Flow control between gateways: what a gateway may hold for delivery to its node is
//! bounded by credit its peers spend and it grants back.
//!
//! A *flow* is what one node sends towards one rank of another node through one of the
//! gateway's channels ([`Key`]): under the shared receive buffer, everything from the
//! sending node to that rank (the rank's one ring is what senders share on one node
//! too); per peer, one sending rank's channel to that rank (each pair has its own on one
//! node). Both gateways count a flow's bytes as they travel in batches: a frame's
//! header and payload ([`frame::HEADER`] plus its length).
//!
//! Protocol:
//! - the sending gateway counts what it collected of each flow (`sent`), and collects a
//!   stand-in entry of the flow only while `sent - granted` is below [`WINDOW`]; what it
//!   leaves stays in the stand-in channel, whose senders then wait for room as they
//!   would for a full ring on one node;
//! - the receiving gateway counts a flow's frames as they arrive and as they leave its
//!   memory (published into the destination's channel, copied by the receiver out of a
//!   loan, or dropped for a rank that left), and sends back the bytes drained so far in
//!   a grant frame ([`GRANT`] in a batch) once they grew by [`QUANTUM`] since its last
//!   grant, or as soon as the flow holds nothing;
//! - answers to announcements (which never cross) spend nothing and are collected
//!   whatever the credit, reading on past entries the credit holds back. Remote
//!   requests are not in any flow: they leave through their node's request channel
//!   (`rma::remote::channel`, drained by `requests` whatever the credit) and are applied
//!   at delivery, never held (a fragment with the request tag in a stand-in channel
//!   would be free too, but none is sent there). The answers of this gateway's request
//!   service are counted but never held back: each answers a request its origin waits
//!   for.
//!
//! Invariants:
//! - `granted <= drained <= arrived <= sent` for each flow (grants are checked: a grant
//!   that goes back or past what was sent is refused, and the job aborts);
//! - the bytes a gateway holds of one flow (queued, lent, or in flight towards it) are
//!   below [`WINDOW`] plus one collect step of the flow ([`step_max`]) plus the answers
//!   of its request service: an entry is collected only while the flow's account is
//!   below the window, and one entry adds at most a step. So a gateway holds at most
//!   that much for each flow into its node: with the shared receive buffer, (nodes - 1)
//!   flows per rank; per peer, one per rank of another node and rank of this one;
//! - no deadlock of the credit alone: a flow that holds nothing is granted exactly, so
//!   its sender's account falls below the window and its next entry goes, whatever its
//!   size. A flow held back waits for its receiver to take messages, as a sender to a
//!   full ring does on one node; and the world barrier's count is reported whatever is
//!   held back (the data may reach its receiver after the barrier: a barrier orders no
//!   message), since a receiver that takes nothing before a barrier would otherwise
//!   hold the barrier forever. A node's `finished` waits until nothing is held back.
//!
//! Limit: what the credit holds back waits for its receiver only. A window or MPB
//! request never waits behind it (issue 23): not behind its own sender's messages (its
//! send queue, a per-peer pair's one-fragment channel), nor behind anyone's that fill a
//! stand-in ring, since it never enters a stand-in channel. Its answer is a two-sided
//! message to the origin, counted in the flow from the target's rank but never held
//! back at the sending gateway; at the origin's gateway it is published in order with
//! what that rank receives, which the origin takes while it waits for the answer. The
//! other way round, a sending gateway keeps the two-sided bytes one collect took (already
//! spent) while a request reserved before them is still being written, so that every
//! request is applied before the messages sent after it (`requests`).

use std::collections::HashMap;

use shm_layout::ChannelKind;

use super::frame::{self, Frame, HEADER};
use super::pull::PULL_BYTES;
use crate::job::node::NodeSpec;
use crate::protocol::ring::frag::{FragHeader, FragKind};
use crate::rma::remote::wire::REQUEST_TAG;

/// Bytes of a flow that may be outstanding before its sending gateway stops collecting.
pub const WINDOW: u64 = 1 << 20;

/// A receiving gateway grants once a flow drained this much more since its last grant.
pub(super) const QUANTUM: u64 = WINDOW / 8;

/// The destination of a grant frame (no rank has it).
pub(super) const GRANT: u32 = u32::MAX;

/// A flow (module docs): `origin` is the sending node under the shared receive buffer,
/// the sending rank per peer; `dest` the receiving rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Key {
    origin: u32,
    dest: u32,
}

/// Whether a fragment spends no credit (module docs): an answer to an announcement, or
/// a remote request (which its origin sends through the request channel, never here).
pub(super) fn is_free(header: &FragHeader) -> bool {
    header.tag == REQUEST_TAG || matches!(header.kind, FragKind::Done | FragKind::Refused)
}

/// The most bytes one collect step appends for one stand-in entry: a whole frame (at
/// most [`PULL_BYTES`]), or one pull of a longer message (up to [`PULL_BYTES`] and one
/// fragment more, in fragments of at most `max_payload` bytes, each with its header).
pub fn step_max(max_payload: u32) -> u64 {
    let payload = u64::from(max_payload.max(1));
    let fragments = u64::from(PULL_BYTES) / payload + 2;
    u64::from(PULL_BYTES) + payload + fragments * HEADER as u64
}

/// One flow's account at the sending gateway.
#[derive(Clone, Copy, Default)]
struct Sending {
    sent: u64,
    granted: u64,
}

/// One flow's account at the receiving gateway.
#[derive(Clone, Copy, Default)]
struct Receiving {
    arrived: u64,
    drained: u64,
    reported: u64,
}

/// A gateway's credit, both as a sender and as a receiver (module docs).
pub(super) struct Credit {
    kind: ChannelKind,
    sending: HashMap<Key, Sending>,
    receiving: HashMap<Key, Receiving>,
    /// Bytes held now for delivery to this node, and the most ever held.
    held: u64,
    high_water: u64,
}

impl Credit {
    pub(super) fn new(kind: ChannelKind) -> Credit {
        Credit { kind, sending: HashMap::new(), receiving: HashMap::new(), held: 0, high_water: 0 }
    }

    /// The flow of a fragment from rank `src` to rank `dest`.
    pub(super) fn key(&self, spec: &NodeSpec, src: u32, dest: u32) -> Key {
        match self.kind {
            ChannelKind::Srb => Key { origin: spec.node_of(src), dest },
            ChannelKind::PerPeer => Key { origin: src, dest },
        }
    }

    /// Sender: whether the flow may have another entry collected.
    pub(super) fn open(&self, key: Key) -> bool {
        let a = self.sending.get(&key).copied().unwrap_or_default();
        a.sent - a.granted < WINDOW
    }

    /// Sender: `bytes` of the flow went into a batch.
    pub(super) fn spend(&mut self, key: Key, bytes: u64) {
        self.sending.entry(key).or_default().sent += bytes;
    }

    /// Sender: takes a grant frame from node `from` (an error if it is not one this
    /// node can have been sent).
    pub(super) fn take_grant(&mut self, spec: &NodeSpec, from: u32, grant: &Frame) -> Result<(), String> {
        let (dest, origin) = (grant.header.src, grant.header.tag);
        let ours = match self.kind {
            ChannelKind::Srb => origin == spec.node,
            ChannelKind::PerPeer => spec.is_local(origin),
        };
        let bytes: [u8; 8] = grant.payload.as_slice().try_into().map_err(|_| "a grant of another length".to_owned())?;
        let drained = u64::from_le_bytes(bytes);
        let bad = || format!("node {from} granted {drained} bytes of the flow from {origin} to rank {dest}");
        if dest >= spec.cores || spec.node_of(dest) != from || !ours {
            return Err(bad());
        }
        let a = self.sending.entry(Key { origin, dest }).or_default();
        if drained < a.granted || drained > a.sent {
            return Err(bad());
        }
        a.granted = drained;
        Ok(())
    }

    /// Receiver: a frame of `charge` bytes of the flow arrived and is held.
    pub(super) fn arrived(&mut self, key: Key, charge: u32) {
        self.receiving.entry(key).or_default().arrived += u64::from(charge);
        self.held += u64::from(charge);
        self.high_water = self.high_water.max(self.held);
    }

    /// Receiver: a frame of `charge` bytes of the flow left this gateway's memory.
    pub(super) fn left(&mut self, key: Key, charge: u32) {
        if charge > 0 {
            self.receiving.entry(key).or_default().drained += u64::from(charge);
            debug_assert!(self.held >= u64::from(charge), "a frame left that never arrived");
            self.held = self.held.saturating_sub(u64::from(charge));
        }
    }

    /// Receiver: appends the grants due (module docs) to the batches of the flows'
    /// sending nodes.
    pub(super) fn grant(&mut self, spec: &NodeSpec, out: &mut [Vec<u8>]) {
        for (key, a) in &mut self.receiving {
            let drained = a.drained - a.reported;
            if drained >= QUANTUM || (drained > 0 && a.drained == a.arrived) {
                let node = match self.kind {
                    ChannelKind::Srb => key.origin,
                    ChannelKind::PerPeer => spec.node_of(key.origin),
                };
                let header = FragHeader::data(key.dest, key.origin, 8, 8, true);
                frame::encode_with(&mut out[node as usize], (GRANT, &header, 0), |p| {
                    p.copy_from_slice(&a.drained.to_le_bytes())
                });
                a.reported = a.drained;
            }
        }
    }

    /// Receiver: bytes held now, and the most held since the start.
    pub(super) fn held(&self) -> (u64, u64) {
        (self.held, self.high_water)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(credit: &mut Credit, spec: &NodeSpec) -> Vec<Frame> {
        let mut out = vec![Vec::new(); spec.nodes as usize];
        credit.grant(spec, &mut out);
        out.iter().flat_map(|b| frame::decode(b, 64).unwrap()).collect()
    }

    #[test]
    fn a_flow_closes_at_the_window_and_opens_with_its_grant() {
        // Node 0 runs ranks 0..2, node 1 ranks 2..4.
        let (a, b) = (NodeSpec::block(4, 2, 0).unwrap(), NodeSpec::block(4, 2, 1).unwrap());
        let (mut sender, mut receiver) = (Credit::new(ChannelKind::Srb), Credit::new(ChannelKind::Srb));
        let key = sender.key(&a, 1, 3);
        assert_eq!(key, sender.key(&a, 0, 3), "one flow per node and rank");
        assert_eq!(receiver.key(&b, 1, 3), key);
        sender.spend(key, WINDOW - 1);
        assert!(sender.open(key), "below the window");
        sender.spend(key, 4 << 20);
        assert!(!sender.open(key));

        receiver.arrived(key, (WINDOW - 1) as u32);
        receiver.arrived(key, 4 << 20);
        assert_eq!(receiver.held(), (WINDOW - 1 + (4 << 20), WINDOW - 1 + (4 << 20)));
        assert!(grants(&mut receiver, &b).is_empty(), "nothing drained");
        receiver.left(key, (QUANTUM - 1) as u32);
        assert!(grants(&mut receiver, &b).is_empty(), "less than a quantum");
        receiver.left(key, 1);
        let due = grants(&mut receiver, &b);
        assert_eq!(due.len(), 1);
        assert_eq!((due[0].dest, due[0].payload.as_slice()), (GRANT, &QUANTUM.to_le_bytes()[..]));
        sender.take_grant(&a, 1, &due[0]).unwrap();
        assert!(!sender.open(key), "still past the window");
        // The rest drains: held nothing, the flow is granted exactly though less than a
        // quantum drained since.
        receiver.left(key, (WINDOW - 1 + (4 << 20) - QUANTUM) as u32);
        assert_eq!(receiver.held(), (0, WINDOW - 1 + (4 << 20)));
        let due = grants(&mut receiver, &b);
        sender.take_grant(&a, 1, &due[0]).unwrap();
        assert!(sender.open(key));
        assert!(grants(&mut receiver, &b).is_empty(), "granted once");
    }

    #[test]
    fn per_peer_flows_are_pairs_and_bad_grants_are_refused() {
        let (a, b) = (NodeSpec::block(4, 2, 0).unwrap(), NodeSpec::block(4, 2, 1).unwrap());
        let (mut sender, mut receiver) = (Credit::new(ChannelKind::PerPeer), Credit::new(ChannelKind::PerPeer));
        assert_ne!(sender.key(&a, 0, 3), sender.key(&a, 1, 3));
        let key = sender.key(&a, 1, 3);
        sender.spend(key, 100);
        receiver.arrived(key, 100);
        receiver.left(key, 60);
        assert!(grants(&mut receiver, &b).is_empty(), "less than a quantum, and 40 bytes held");
        receiver.left(key, 40);
        let good = grants(&mut receiver, &b).pop().unwrap();
        let mut bad = good.clone();
        bad.payload = 101u64.to_le_bytes().to_vec();
        assert!(sender.take_grant(&a, 1, &bad).is_err(), "past what was sent");
        assert!(sender.take_grant(&a, 0, &good).is_err(), "from another node than the rank's");
        bad = good.clone();
        bad.header.tag = 2;
        assert!(sender.take_grant(&a, 1, &bad).is_err(), "a flow of another node");
        sender.take_grant(&a, 1, &good).unwrap();
        bad.header.tag = 1;
        bad.payload = 59u64.to_le_bytes().to_vec();
        assert!(sender.take_grant(&a, 1, &bad).is_err(), "going back");
    }

    #[test]
    fn free_fragments_and_the_step_bound() {
        assert!(is_free(&FragHeader::data(0, REQUEST_TAG, 4, 4, true)));
        assert!(!is_free(&FragHeader::data(0, 7, 4, 4, true)));
        let done = FragHeader { src: 0, tag: 3, len: 0, total: 0, first: true, kind: FragKind::Done };
        assert!(is_free(&done));
        // A whole frame fits a step; a pull of a longer message in 1 KiB fragments too.
        let m = step_max(1024);
        assert!(m >= u64::from(PULL_BYTES) + HEADER as u64);
        let fragments = u64::from(PULL_BYTES).div_ceil(1024) + 1;
        assert!(m >= u64::from(PULL_BYTES) + 1023 + fragments * HEADER as u64);
    }
}
