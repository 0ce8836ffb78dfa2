//! A node's gateway: what crosses between this node's segment and the other nodes.
//!
//! The segment of a node is laid out for the whole job, so every rank has a control
//! slot, an MPB and a receive ring in it; only this node's ranks attach. The ring of a
//! rank on another node is a *stand-in*: this node's ranks send to that rank exactly
//! as to a local one (reserve, write, publish, ring), and the gateway is its consumer.
//! Each time the engine asks ([`NodeSide::collect`]) it drains every stand-in ring into the batch for the
//! rank's node. The gateway of that node is then a sender like any other into the
//! destination's real ring, with the fragment's original source in its header. So the
//! two-sided protocol runs unchanged on both sides: matching, synchronous
//! acknowledgements and flow control never learn that a peer is remote. The per-peer
//! channel crosses the same way, through the stand-in slots of the pairs (`channel`).
//!
//! Invariants:
//! - fragments of one source to one destination keep their order: a stand-in ring is
//!   drained in order, a batch keeps it, the engine delivers one node's batches in order,
//!   and the receiving gateway queues per destination and publishes in queue order.
//!   Requests travel apart (below), in causal order among themselves, and never behind
//!   a two-sided message sent after them: a collect drains the request channel after
//!   the stand-in channels and sends the messages it took only once every request
//!   reserved before them is drained too, and the receiving gateway applies a batch's
//!   requests as it decodes it, before it publishes the batch's messages (`requests`).
//!   A request may pass data sent before it;
//! - what a gateway holds for delivery to its node is bounded (`credit`): at most
//!   [`Gateway::flow_bound`] bytes of each flow into it (one per other node and rank of
//!   this node under the shared receive buffer, one per pair per peer), counted as they
//!   came in their batches, plus the answers of its request service. A flow's sending
//!   gateway collects only within its credit, and what it does not collect stays in the
//!   stand-in channel, whose senders wait for room as for a full ring;
//! - the gateway never waits on a channel: a frame that does not fit yet stays queued
//!   (a shared-receive-buffer reservation with it, counted as a space waiter so the
//!   receiver publishes what it consumed), and the next call tries again;
//! - only data and answer fragments cross, never a rendezvous: a large message's
//!   announcement to another node's rank is read by this node's gateway, which copies
//!   the message out of its sender into the batch as data fragments and answers the
//!   sender itself (`pull`); the announcement keeps its place in its channel until
//!   every byte is in a batch, so the pair's order holds;
//! - the world barrier counts this node's ranks and the gateway. The gateway reports
//!   how many barriers its ranks have all entered, and arrives (last, so at once) in
//!   barrier `g` once every node reports at least `g + 1`: nobody leaves a barrier
//!   before every rank of the job has entered it. Two-sided data that flow control
//!   holds back may reach its receiver after a barrier its sender entered later (a
//!   barrier orders no message); a node says its ranks `finished` only once it holds
//!   nothing back;
//! - the first failure any node reports aborts every node's segment with the same
//!   rank and cause, so every surviving rank's error names the dead one; after it
//!   nothing more crosses.
//!
//! Virtual time: a fragment's stamp (its message's time, `p2p::timed`) travels with it
//! and arrives later by the chip's link ([`Chip::link_ps`]: its latency plus the
//! message's bytes so far at the link's bandwidth); an arrival at a barrier reaches the
//! other nodes one link latency later (each node reports its latest arrival, and the
//! gateway writes it as every remote rank's arrival stamp before it releases the
//! barrier). So a program that only communicates runs the same virtual times on one
//! node and on several, but for the link.
//!
//! Windows: a request of an origin (`rma::remote`) leaves its node through the node's
//! request channel, which the gateway drains at every collect whatever the credit
//! (`requests`), so it never waits behind two-sided data; it travels as a frame to one of
//! the target node's ranks with the request tag. That node's gateway keeps it out of the
//! rank's ring and applies it to the segment itself, as local copies, CPU atomics and
//! combines under the target part's stripe locks (`combine`), and sends the answers back
//! as two-sided messages (`serve`).
//!
//! Two-sided messages, world barriers, communicators (with their collectives, over
//! two-sided messages: `coll::over_p2p`), windows, MPBs and flags (through `Core`:
//! `core::remote_mpb`) cross nodes; the shared heap (`AllocError::AcrossNodes`) does
//! not.

mod channel;
mod combine;
mod credit;
mod frame;
mod lend;
mod pull;
mod requests;
mod serve;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use shm_layout::{ChannelKind, WaitPolicy};

use crate::job::launcher::Running;
use crate::job::node::{NodeSide, NodeSpec, NodeStatus};
use crate::p2p::channel::Placement;
use crate::protocol::abort::AbortCause;
use crate::protocol::alloc::freelist::FreeList;
use crate::protocol::ring::srb::Reservation;
use crate::protocol::waiter::Waiter;
use crate::rma::remote::wire::REQUEST_TAG;
use crate::segment::mapping::{AttachError, Segment, slot_state};
use crate::segment::mpb::MPB_GRANULE;
use crate::sync::Ordering;
use crate::timing::Chip;
use crate::timing::clock::barrier_stamp;
use channel::Ends;
use credit::Credit;
use frame::Frame;
use lend::Lender;
use requests::Requests;
use serve::Serve;

/// Why a gateway could not be set up.
#[derive(Debug)]
pub enum GatewayError {
    /// The job does not span nodes ([`crate::job::launcher::Launch::node`] was `None`).
    OneNode,
    /// The channels could not be placed, or the segment not mapped again.
    Setup(String),
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OneNode => write!(f, "the job runs on one node: it has no gateway"),
            Self::Setup(why) => write!(f, "cannot set up the gateway: {why}"),
        }
    }
}

impl std::error::Error for GatewayError {}

impl From<AttachError> for GatewayError {
    fn from(e: AttachError) -> Self {
        GatewayError::Setup(e.to_string())
    }
}

/// Fragments for one of this node's ranks, waiting for room in its ring.
#[derive(Default)]
struct Inbound {
    queue: VecDeque<Frame>,
    /// Space reserved for the front frame that did not fit yet.
    held: Option<Reservation>,
}

/// One node's gateway (module docs).
pub struct Gateway {
    /// Shared with the threads that wait for locks (`serve`).
    segment: Arc<Segment>,
    spec: NodeSpec,
    ends: Ends,
    /// Indexed by this node's ranks, from its first.
    inbound: Vec<Inbound>,
    /// World barriers released so far.
    released: u64,
    finished: bool,
    /// Whether the last collect or delivery moved anything.
    moved: bool,
    /// The chip, in virtual time.
    chip: Option<Chip>,
    /// In virtual time, the bytes so far and the bytes still to come of the message
    /// each (source, destination) is receiving through this gateway, while it is
    /// incomplete: the link carries a message's fragments one after another.
    on_link: HashMap<(u32, u32), (u64, u64)>,
    /// The request channel of this node's ranks to other nodes (`requests`).
    requests: Requests,
    /// The requests of windows across nodes.
    serve: Serve,
    /// Large messages lent to this node's receivers (`lend`).
    lender: Lender,
    /// Flow control, as sender and as receiver (`credit`).
    credit: Credit,
}

impl Gateway {
    /// The gateway of the node `running` was started for, over a mapping of its own of
    /// the job's segment.
    pub fn new(running: &Running) -> Result<Gateway, GatewayError> {
        let spec = running.node().ok_or(GatewayError::OneNode)?;
        let fd = running.segment().fd().try_clone_to_owned().map_err(|e| GatewayError::Setup(e.to_string()))?;
        let segment = Segment::attach(fd)?;
        let config = *segment.config();
        if !config.spans_nodes() {
            return Err(GatewayError::OneNode);
        }
        let kind = ChannelKind::from_u32(config.channel).unwrap_or(ChannelKind::Srb);
        // The same first symmetric MPB allocation as every core's (`p2p::channel`).
        let mut mpb = FreeList::new(config.mpb_bytes as usize, MPB_GRANULE);
        let place = Placement::setup(&config, &mut mpb).map_err(|e| GatewayError::Setup(e.to_string()))?;
        let lender = Lender::new(&segment, &spec);
        Ok(Gateway {
            lender,
            segment: Arc::new(segment),
            spec: spec.clone(),
            ends: Ends::new(kind, place, config.timing != 0, spec.cores),
            inbound: (0..spec.count).map(|_| Inbound::default()).collect(),
            released: 0,
            finished: false,
            moved: false,
            chip: (config.timing != 0).then(|| running.chip().cloned().unwrap_or_default()),
            on_link: HashMap::new(),
            requests: Requests::new(&spec),
            serve: Serve::default(),
            credit: Credit::new(kind),
        })
    }

    /// Bytes this gateway holds now for delivery to its node's ranks (queued or lent,
    /// as they came in their batches), and the most it has held.
    pub fn held(&self) -> (u64, u64) {
        self.credit.held()
    }

    /// The most this gateway holds of one flow into its node (`credit`: one per other
    /// node and rank of this node under the shared receive buffer, one per pair of a
    /// rank of another node and a rank of this one per peer), but for the answers of its
    /// request service: the credit window and one collect step of the sending gateway.
    pub fn flow_bound(&self) -> u64 {
        credit::WINDOW + credit::step_max(self.ends.max_payload(&self.segment, &self.spec))
    }

    /// Marks every rank of this node as exited: from now on the node only waits for the
    /// others ([`NodeStatus::finished`]).
    pub fn set_finished(&mut self) {
        self.finished = true;
    }

    fn aborted(&self) -> bool {
        self.segment.job().check().is_err()
    }

    /// Whether every rank of this node has entered the current world barrier.
    fn all_arrived(&self) -> bool {
        self.segment.sync_area().world_barrier.phase().1 == self.spec.count
    }

    /// In virtual time, the latest of this node's arrivals at the current barrier (its
    /// ranks stamp them before they arrive); meaningful once they all have.
    fn latest_arrival(&self) -> u64 {
        if self.chip.is_none() {
            return 0;
        }
        let parity = (self.released % 2) as u32;
        let ranks = self.spec.first..self.spec.first + self.spec.count;
        // Relaxed: each rank stored its stamp before its Release add to the barrier,
        // which `all_arrived`'s Acquire load saw once they all had.
        let stamps = ranks.filter_map(|r| barrier_stamp(&self.segment, r, parity)).map(|w| w.load(Ordering::Relaxed));
        stamps.max().unwrap_or(0)
    }

    /// In virtual time, writes each remote rank's arrival at the barrier about to be
    /// released: its node's latest, one link latency later.
    fn stamp_remote_arrivals(&self, all: &[NodeStatus]) {
        let Some(chip) = &self.chip else { return };
        let parity = (self.released % 2) as u32;
        for rank in (0..self.spec.cores).filter(|&r| !self.spec.is_local(r)) {
            if let Some(word) = barrier_stamp(&self.segment, rank, parity) {
                // Relaxed: the barrier's Release store publishes it to the leaving ranks.
                word.store(all[self.spec.node_of(rank) as usize].barrier_vtime + chip.link_ps(0), Ordering::Relaxed);
            }
        }
    }

    /// Publishes the queued frames that fit, in order, per destination; a whole frame
    /// is announced (lent) or cut (`lend`), and a pair with a loan waits for its answer.
    fn push_inbound(&mut self) {
        let max_payload = self.ends.max_payload(&self.segment, &self.spec);
        for (i, inbound) in self.inbound.iter_mut().enumerate() {
            let dest = self.spec.first + i as u32;
            if inbound.queue.is_empty() {
                continue;
            }
            // Acquire: pairs with the Release of the rank's `leave`; a rank that left
            // reads nothing more.
            if self.segment.slot(dest).state.load(Ordering::Acquire) == slot_state::FINALIZED {
                for frame in inbound.queue.drain(..).chain(self.lender.forget(dest)) {
                    self.credit.left(self.credit.key(&self.spec, frame.header.src, dest), frame.charge);
                }
                continue;
            }
            while let Some(front) = inbound.queue.front() {
                if self.lender.waits(front.header.src, dest) {
                    break;
                }
                // A frame holding a reservation goes as it was reserved for.
                if front.whole && !self.lender.readable() && inbound.held.is_none() {
                    let whole = inbound.queue.pop_front().expect("a front");
                    for part in lend::cut(whole, max_payload).into_iter().rev() {
                        inbound.queue.push_front(part);
                    }
                    continue;
                }
                if front.whole {
                    let (announcement, token) = self.lender.announcement(front);
                    if !self.ends.publish(&self.segment, dest, &announcement, &mut inbound.held) {
                        break;
                    }
                    self.lender.lend(inbound.queue.pop_front().expect("a front"), token);
                } else {
                    if !self.ends.publish(&self.segment, dest, front, &mut inbound.held) {
                        break;
                    }
                    let (src, charge) = (front.header.src, front.charge);
                    self.credit.left(self.credit.key(&self.spec, src, dest), charge);
                    inbound.queue.pop_front();
                }
                self.moved = true;
            }
        }
    }

    /// Takes the receivers' answers to this gateway's announcements; a refused one's
    /// continuations go first in their destination's queue (behind a frame holding a
    /// reservation, which is another pair's).
    fn take_answers(&mut self, heard: Vec<Frame>) -> Result<(), String> {
        let max_payload = self.ends.max_payload(&self.segment, &self.spec);
        for answer in heard {
            let dest = answer.header.src;
            if !self.spec.is_local(dest) {
                return Err(format!("an answer from rank {dest}, which this node does not run"));
            }
            let (rest, freed) = self.lender.answered(&answer, max_payload)?;
            // The answer names the announced message's source as its destination.
            self.credit.left(self.credit.key(&self.spec, answer.dest, dest), freed);
            let inbound = &mut self.inbound[(dest - self.spec.first) as usize];
            let at = usize::from(inbound.held.is_some()).min(inbound.queue.len());
            for (k, frame) in rest.into_iter().enumerate() {
                inbound.queue.insert(at + k, frame);
            }
            self.moved = true;
        }
        Ok(())
    }
}

impl NodeSide for Gateway {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        self.moved = false;
        if self.aborted() {
            return;
        }
        let max_payload = self.ends.max_payload(&self.segment, &self.spec);
        self.moved |= self.serve.answer(&self.spec, max_payload, (out, &mut self.credit));
        let (mut answers, mut heard) = (Vec::new(), Vec::new());
        // The request channel after the stand-in channels, whose bytes wait unless every
        // request reserved before them is drained too (`requests`).
        let starts: Vec<usize> = out.iter().map(Vec::len).collect();
        let drained = match self.requests.deferring() {
            true => Ok(false),
            false => self.ends.drain(&self.segment, &self.spec, (out, &mut self.credit), (&mut answers, &mut heard)),
        };
        let mark = self.requests.mark(&self.segment);
        let mut requests = vec![Vec::new(); out.len()];
        let drained = drained.and_then(|d| Ok(self.requests.drain(&self.segment, &self.spec, &mut requests)? | d));
        let taken = drained.and_then(|any| self.take_answers(heard).map(|()| any));
        match taken {
            Ok(any) => self.moved |= any,
            Err(e) => {
                eprintln!("sccemu: gateway of node {}: {e}", self.spec.node);
                self.segment.abort(None, AbortCause::Corrupted);
                return;
            }
        }
        self.moved |= self.requests.defer(out, &starts, mark);
        for (batch, requests) in out.iter_mut().zip(&mut requests) {
            batch.append(requests);
        }
        // The answers to announcements this collect read, for this node's ranks: queued
        // behind what already waits for them (answers need no order).
        for answer in answers {
            self.inbound[(answer.dest - self.spec.first) as usize].queue.push_back(answer);
        }
        self.push_inbound();
        self.credit.grant(&self.spec, out);
    }

    fn deliver(&mut self, from: u32, batch: &[u8]) -> Result<(), String> {
        let max_payload = self.ends.max_payload(&self.segment, &self.spec);
        for frame in frame::decode(batch, max_payload)? {
            if frame.dest == credit::GRANT {
                self.credit.take_grant(&self.spec, from, &frame)?;
                continue;
            }
            let (dest, src) = (frame.dest, frame.header.src);
            if !self.spec.is_local(dest) {
                return Err(format!("node {from} sent a fragment for rank {dest}, which node {} does not run", self.spec.node));
            }
            if src >= self.spec.cores || self.spec.node_of(src) != from {
                return Err(format!("node {from} sent a fragment from rank {src}, which it does not run"));
            }
            // A request spends no credit (`credit::is_free`).
            if frame.header.tag == REQUEST_TAG {
                self.serve.take(&self.segment, &self.spec, frame)?;
                self.moved = true;
                continue;
            }
            let mut frame = frame;
            if let Some(chip) = &self.chip {
                let len = u64::from(frame.header.len);
                let (sent, left) = match self.on_link.remove(&(src, dest)) {
                    Some((sent, left)) if !frame.header.first => (sent + len, left.saturating_sub(len)),
                    _ => (len, u64::from(frame.header.total).saturating_sub(len)),
                };
                frame.stamp += chip.link_ps(sent);
                if left > 0 {
                    self.on_link.insert((src, dest), (sent, left));
                }
            }
            self.credit.arrived(self.credit.key(&self.spec, src, dest), frame.charge);
            self.inbound[(dest - self.spec.first) as usize].queue.push_back(frame);
            self.moved = true;
        }
        if !self.aborted() {
            self.push_inbound();
        }
        Ok(())
    }

    fn status(&mut self) -> NodeStatus {
        if !self.aborted() {
            // Room may have appeared since the frames were queued.
            self.push_inbound();
        }
        NodeStatus {
            barriers: self.released + u64::from(self.all_arrived()),
            failure: self.segment.job().check().err().map(|e| (e.rank, e.cause)),
            // Not while entries wait for credit: a node that says it finished has
            // nothing left to send (`credit`). After an abort nothing more crosses, and
            // nothing is collected: what waited is moot.
            finished: self.finished && (!(self.ends.held_back() || self.requests.deferring()) || self.aborted()),
            barrier_vtime: self.latest_arrival(),
        }
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        if let Some((rank, cause)) = all.iter().find_map(|s| s.failure) {
            if !self.aborted() {
                self.segment.abort(rank, cause);
            }
            return;
        }
        let next = self.released + 1;
        if self.all_arrived() && all.iter().all(|s| s.barriers >= next) {
            // Every other party has arrived, so this arrival completes the phase and
            // returns at once.
            self.stamp_remote_arrivals(all);
            let waiter = Waiter::new(WaitPolicy::Spin, self.segment.job());
            let parties = self.spec.count + 1;
            if self.segment.sync_area().world_barrier.wait(parties, &waiter, &self.segment.slot(0).bell).is_ok() {
                self.released = next;
                self.moved = true;
            }
        }
    }

    fn busy(&self) -> bool {
        self.moved
            || self.serve.pending()
            || self.lender.lending()
            || self.requests.deferring()
            || self.inbound.iter().any(|i| !i.queue.is_empty())
    }
}
