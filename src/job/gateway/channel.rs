//! The gateway's ends of the job's two-sided channel: the consumer of every channel
//! into another node's rank, and a producer into every channel of this node's ranks.
//!
//! - Shared receive buffer: another node's rank has a stand-in ring here; the gateway
//!   consumes it like its owner would (its own position, publishing what it consumed,
//!   ringing the space waiters) and, towards this node's ranks, reserves and publishes
//!   like any sender, holding a reservation that does not fit yet.
//! - Per-peer: the channel from this node's rank `s` to another node's rank `r` is the
//!   pair's slot in `r`'s stand-in MPB (and their DRAM ring); the gateway takes its
//!   fragments as `r` would, writing the acknowledgements into `s`'s MPB and ringing
//!   `s`. Towards this node's rank `r`, the gateway is every remote sender `s`: it
//!   publishes into the slot of `s` in `r`'s MPB once `r` has taken the last fragment,
//!   inline or through the pair's DRAM ring, and reads `r`'s acknowledgements from the
//!   stand-in MPB of `s`.
//!
//! In virtual time the stamp word of each fragment (by ring position, or by pair) is
//! read before the fragment is released and written before it is published, as the
//! two-sided protocol's own ends do (`p2p::timed`).

use shm_layout::ChannelKind;

use super::frame::{self, Frame};
use crate::job::node::NodeSpec;
use crate::p2p::channel::Placement;
use crate::protocol::ring::frag::CorruptError;
use crate::protocol::ring::srb::{Reservation, entry_len};
use crate::segment::mapping::Segment;
use crate::sync::{AtomicU64, Ordering};
use crate::timing::clock::{pair_stamp, ring_stamp};

/// The consumer's side of a stand-in ring.
#[derive(Clone, Copy, Default)]
struct StandIn {
    pos: u32,
    published: u32,
}

/// The gateway's channel ends (module docs).
pub(super) struct Ends {
    kind: ChannelKind,
    place: Placement,
    /// Whether fragments carry virtual-time stamps.
    timed: bool,
    /// Shared receive buffer: per rank, used for other nodes' ranks.
    stand_ins: Vec<StandIn>,
}

/// A stamp word's value (Relaxed: the fragment's publication, which the caller's
/// Acquire saw, ordered the sender's store before it).
fn stamp_of(word: Option<&AtomicU64>) -> u64 {
    word.map_or(0, |w| w.load(Ordering::Relaxed))
}

/// Sets a stamp word (Relaxed: the publication that follows orders it).
fn set_stamp(word: Option<&AtomicU64>, stamp: u64) {
    if let Some(w) = word {
        w.store(stamp, Ordering::Relaxed);
    }
}

impl Ends {
    pub fn new(kind: ChannelKind, place: Placement, timed: bool, cores: u32) -> Ends {
        Ends { kind, place, timed, stand_ins: vec![StandIn::default(); cores as usize] }
    }

    /// The largest payload a frame may carry into this node's channels.
    pub fn max_payload(&self, seg: &Segment, spec: &NodeSpec) -> u32 {
        match self.kind {
            ChannelKind::Srb => self.place.srb(seg, spec.first).max_payload(),
            ChannelKind::PerPeer => {
                let ch = self.place.perpeer(seg, spec.first, spec.first);
                ch.inline_capacity().max(ch.dram_capacity()) as u32
            }
        }
    }

    /// Moves every fragment this node's ranks sent to other nodes' ranks into the
    /// batch for the destination's node; true if there were any.
    pub fn drain(&mut self, seg: &Segment, spec: &NodeSpec, out: &mut [Vec<u8>]) -> Result<bool, CorruptError> {
        let mut any = false;
        let remote = (0..spec.cores).filter(|&r| !spec.is_local(r));
        match self.kind {
            ChannelKind::Srb => {
                for rank in remote {
                    let ring = self.place.srb(seg, rank);
                    let stand_in = &mut self.stand_ins[rank as usize];
                    let batch = &mut out[spec.node_of(rank) as usize];
                    while let Some(entry) = ring.peek(stand_in.pos)? {
                        let stamp = if self.timed { stamp_of(ring_stamp(seg, rank, entry.pos())) } else { 0 };
                        frame::encode_with(batch, (rank, &entry.header, stamp), |p| ring.read(&entry, 0, p));
                        stand_in.pos = entry.next();
                        ring.release(entry);
                        any = true;
                    }
                    if ring.free_consumed(stand_in.pos, &mut stand_in.published, true) {
                        seg.ring_all();
                    }
                }
            }
            ChannelKind::PerPeer => {
                for rank in remote {
                    let batch = &mut out[spec.node_of(rank) as usize];
                    for src in spec.first..spec.first + spec.count {
                        let ch = self.place.perpeer(seg, src, rank);
                        while let Some(incoming) = ch.peek()? {
                            let (header, stamp) = (incoming.header, if self.timed { stamp_of(pair_stamp(seg, rank, src)) } else { 0 });
                            if incoming.in_dram {
                                frame::encode_with(batch, (rank, &header, stamp), |p| ch.read_dram(0, p));
                                ch.take();
                                ch.free_dram(header.len as usize);
                            } else {
                                frame::encode_with(batch, (rank, &header, stamp), |p| ch.read_inline(0, p));
                                ch.take();
                            }
                            seg.slot(src).bell.ring();
                            any = true;
                        }
                    }
                }
            }
        }
        Ok(any)
    }

    /// Publishes `frame` into the channel to this node's rank `dest` if it fits now;
    /// `held` keeps a shared-receive-buffer reservation that does not fit yet.
    pub fn publish(&self, seg: &Segment, dest: u32, frame: &Frame, held: &mut Option<Reservation>) -> bool {
        match self.kind {
            ChannelKind::Srb => {
                let ring = self.place.srb(seg, dest);
                let reservation = match held.take() {
                    Some(r) if ring.fits(&r) => {
                        ring.remove_space_waiter(false);
                        r
                    }
                    Some(r) => {
                        *held = Some(r);
                        return false;
                    }
                    None => match ring.try_reserve(entry_len(frame.header.len)) {
                        Some((r, true)) => r,
                        Some((r, false)) => {
                            // Counted, the receiver publishes what it consumed instead of
                            // waiting for a quarter of its ring (`srb::space`).
                            ring.add_space_waiter(false);
                            *held = Some(r);
                            return false;
                        }
                        None => return false,
                    },
                };
                if self.timed {
                    set_stamp(ring_stamp(seg, dest, reservation.pos()), frame.stamp);
                }
                ring.publish(reservation, &frame.header, &frame.payload);
            }
            ChannelKind::PerPeer => {
                let ch = self.place.perpeer(seg, frame.header.src, dest);
                let len = frame.payload.len();
                let inline = len <= ch.inline_capacity();
                if !ch.is_free() || !(inline || ch.dram_fits(len)) {
                    return false;
                }
                if self.timed {
                    set_stamp(pair_stamp(seg, dest, frame.header.src), frame.stamp);
                }
                if inline {
                    ch.send_inline(&frame.header, &frame.payload);
                } else {
                    ch.send_dram(&frame.header, &frame.payload);
                }
            }
        }
        seg.slot(dest).bell.ring();
        true
    }
}
