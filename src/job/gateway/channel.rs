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
//! A large message's announcement ([`FragKind::Rendezvous`]) in a channel to another
//! node is not forwarded: the gateway reads the message out of its sender and forwards
//! its bytes, and answers the sender itself (`pull`). No answer to an announcement
//! ([`FragKind::Done`], [`FragKind::Refused`]) is forwarded either: every announcement
//! this node's ranks receive from another node's comes from this gateway (`lend`),
//! which takes the answers.
//!
//! Window and MPB requests do not pass here: they have channels of their own
//! (`requests`).
//!
//! Flow control (`credit`): a fragment that would take its flow past its credit stays
//! in its stand-in channel. Free fragments (answers) behind it in a stand-in ring are
//! taken ahead, out of order: the ring keeps its consumer position before the
//! entry held back, and remembers what it took past it ([`StandIn`]'s `ahead`). That walk
//! ends where the ring does, one lap past the consumer position: beyond it `peek`
//! would see the same entries again. A pair's
//! per-peer channel holds one fragment, so what follows one held back waits with it.
//!
//! In virtual time the stamp word of each fragment (by ring position, or by pair) is
//! read before the fragment is released and written before it is published, as the
//! two-sided protocol's own ends do (`p2p::timed`).

use std::collections::HashMap;

use shm_layout::ChannelKind;

use super::credit::{self, Credit};
use super::frame::{self, Frame};
use super::pull::{self, Pulled};
use crate::job::node::NodeSpec;
use crate::p2p::channel::Placement;
use crate::protocol::payload::Payload;
use crate::protocol::ring::perpeer::PerPeer;
use crate::protocol::ring::frag::{FragHeader, FragKind, RENDEZVOUS_BYTES, Rendezvous};
use crate::protocol::ring::srb::{Reservation, entry_len};
use crate::segment::mapping::Segment;
use crate::sync::{AtomicU64, Ordering};
use crate::timing::clock::{pair_stamp, ring_stamp};

/// The consumer's side of a stand-in ring.
#[derive(Clone, Default)]
struct StandIn {
    pos: u32,
    published: u32,
    /// Entries past `pos` already taken (read ahead of entries the credit holds back):
    /// by position, the position after each. The in-order pass skips them.
    ahead: HashMap<u32, u32>,
}

/// The gateway's channel ends (module docs).
pub(super) struct Ends {
    kind: ChannelKind,
    place: Placement,
    /// Whether fragments carry virtual-time stamps.
    timed: bool,
    /// Shared receive buffer: per rank, used for other nodes' ranks.
    stand_ins: Vec<StandIn>,
    /// Bytes already read of the announced message at the head of a pair's channel,
    /// by (source, destination), while it is partly read (`pull`).
    pulled: HashMap<(u32, u32), u32>,
    /// Whether the last drain left entries the credit held back.
    held_back: bool,
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
        let stand_ins = vec![StandIn::default(); cores as usize];
        Ends { kind, place, timed, stand_ins, pulled: HashMap::new(), held_back: false }
    }

    /// Whether the last drain left entries in a stand-in channel for want of credit.
    pub fn held_back(&self) -> bool {
        self.held_back
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

    /// Moves the fragments this node's ranks sent to other nodes' ranks into the batch
    /// for the destination's node, each flow's within its credit (`credit`: what it
    /// holds back stays in its channel, and free fragments behind it are read ahead),
    /// reading announced messages out of their senders (`pull`, at most
    /// [`pull::PULL_BYTES`] of each per call) and appending the answers they get to
    /// `answers`; the answers to this gateway's own announcements go to `heard`, as
    /// frames for the announced message's source. True if anything moved.
    pub fn drain(
        &mut self,
        seg: &Segment,
        spec: &NodeSpec,
        (out, credit): (&mut [Vec<u8>], &mut Credit),
        (answers, heard): (&mut Vec<Frame>, &mut Vec<Frame>),
    ) -> Result<bool, String> {
        let mut any = false;
        self.held_back = false;
        let remote = (0..spec.cores).filter(|&r| !spec.is_local(r));
        let max_payload = self.max_payload(seg, spec);
        match self.kind {
            ChannelKind::Srb => {
                // Every stand-in ring has the job's ring size (`p2p::channel`).
                let lap = seg.config().ring_bytes;
                for rank in remote {
                    let ring = self.place.srb(seg, rank);
                    let stand_in = &mut self.stand_ins[rank as usize];
                    let batch = &mut out[spec.node_of(rank) as usize];
                    let key = credit.key(spec, spec.first, rank);
                    // Whether an entry before `at` stays: what is taken from there on
                    // is taken ahead, out of order.
                    let mut behind = false;
                    let mut at = stand_in.pos;
                    loop {
                        // `peek` finds an entry by its offset in the ring: a lap past the
                        // consumer position it would find the entries already passed
                        // again, and a ring full of entries the credit holds back would
                        // keep this walk going round it forever.
                        if at.wrapping_sub(stand_in.pos) >= lap {
                            break;
                        }
                        if let Some(&next) = stand_in.ahead.get(&at) {
                            if !behind {
                                stand_in.ahead.remove(&at);
                                stand_in.pos = next;
                            }
                            at = next;
                            continue;
                        }
                        let Some(entry) = ring.peek(at).map_err(|e| e.to_string())? else { break };
                        let free = credit::is_free(&entry.header);
                        if !free && (behind || !credit.open(key)) {
                            behind = true;
                            at = entry.next();
                            continue;
                        }
                        let stamp = if self.timed { stamp_of(ring_stamp(seg, rank, entry.pos())) } else { 0 };
                        any = true;
                        let start = batch.len();
                        if entry.header.kind == FragKind::Rendezvous {
                            let mut rv = [0u8; RENDEZVOUS_BYTES as usize];
                            ring.read(&entry, 0, &mut rv);
                            let done = self.pulled.entry((entry.header.src, rank)).or_default();
                            let pulled = pull::pull(seg, (rank, &entry.header, stamp), Rendezvous::from_bytes(&rv), done, (max_payload, batch))?;
                            if !free {
                                credit.spend(key, (batch.len() - start) as u64);
                            }
                            match pulled {
                                Pulled::Whole(answer) => answers.push(answer),
                                // A partly read request keeps the requests behind it
                                // waiting: they apply in order.
                                Pulled::Part if !free => {
                                    behind = true;
                                    at = entry.next();
                                    continue;
                                }
                                Pulled::Part | Pulled::Gone => break,
                            }
                            self.pulled.remove(&(entry.header.src, rank));
                        } else if is_answer(&entry.header) {
                            heard.push(answer_frame(rank, entry.header));
                        } else {
                            frame::encode_with(batch, (rank, &entry.header, stamp), |p| ring.read(&entry, 0, p));
                            if !free {
                                credit.spend(key, (batch.len() - start) as u64);
                            }
                        }
                        let next = entry.next();
                        ring.release(entry);
                        if behind {
                            stand_in.ahead.insert(at, next);
                        } else {
                            stand_in.pos = next;
                        }
                        at = next;
                    }
                    self.held_back |= behind;
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
                        let key = credit.key(spec, src, rank);
                        while let Some(incoming) = ch.peek().map_err(|e| e.to_string())? {
                            let (header, stamp) = (incoming.header, if self.timed { stamp_of(pair_stamp(seg, rank, src)) } else { 0 });
                            let free = credit::is_free(&header);
                            if !free && !credit.open(key) {
                                // The pair's channel holds one fragment: what follows
                                // it waits (module docs of `credit`).
                                self.held_back = true;
                                break;
                            }
                            any = true;
                            let start = batch.len();
                            if header.kind == FragKind::Rendezvous {
                                let mut rv = [0u8; RENDEZVOUS_BYTES as usize];
                                read_fragment(&ch, &header, incoming.in_dram, &mut rv);
                                let done = self.pulled.entry((src, rank)).or_default();
                                let pulled = pull::pull(seg, (rank, &header, stamp), Rendezvous::from_bytes(&rv), done, (max_payload, batch))?;
                                if !free {
                                    credit.spend(key, (batch.len() - start) as u64);
                                }
                                match pulled {
                                    Pulled::Whole(answer) => answers.push(answer),
                                    Pulled::Part | Pulled::Gone => break,
                                }
                                self.pulled.remove(&(src, rank));
                            } else if is_answer(&header) {
                                heard.push(answer_frame(rank, header));
                            } else {
                                frame::encode_with(batch, (rank, &header, stamp), |p| read_fragment(&ch, &header, incoming.in_dram, p));
                                if !free {
                                    credit.spend(key, (batch.len() - start) as u64);
                                }
                            }
                            ch.take();
                            if incoming.in_dram {
                                ch.free_dram(header.len as usize);
                            }
                            seg.slot(src).bell.ring();
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

/// Copies the payload of the fragment in a per-peer slot (`header.len` bytes into
/// `dst`), inline or from the pair's DRAM ring.
fn read_fragment<B: Payload>(ch: &PerPeer<'_, B>, header: &FragHeader, in_dram: bool, dst: &mut [u8]) {
    debug_assert_eq!(dst.len(), header.len as usize);
    if in_dram { ch.read_dram(0, dst) } else { ch.read_inline(0, dst) }
}

/// Whether a fragment answers an announcement.
fn is_answer(header: &FragHeader) -> bool {
    matches!(header.kind, FragKind::Done | FragKind::Refused)
}

/// An answer (no payload) to rank `dest`, the announced message's source.
fn answer_frame(dest: u32, header: FragHeader) -> Frame {
    Frame { dest, header, stamp: 0, whole: false, payload: Vec::new(), charge: 0 }
}
