//! A node's gateway: what crosses between this node's segment and the other nodes.
//!
//! The segment of a node is laid out for the whole job, so every rank has a control
//! slot, an MPB and a receive ring in it; only this node's ranks attach. The ring of a
//! rank on another node is a *stand-in*: this node's ranks send to that rank exactly
//! as to a local one (reserve, write, publish, ring), and the gateway is its consumer.
//! Each round ([`NodeSide`]) it drains every stand-in ring into the batch for the
//! rank's node. The gateway of that node is then a sender like any other into the
//! destination's real ring, with the fragment's original source in its header. So the
//! two-sided protocol runs unchanged on both sides: matching, synchronous
//! acknowledgements and flow control never learn that a peer is remote.
//!
//! Invariants:
//! - fragments of one source to one destination keep their order: a stand-in ring is
//!   drained in order, a batch keeps it, the engine delivers batches in round order,
//!   and the receiving gateway queues per destination and publishes in queue order;
//! - the gateway never waits on a ring: a frame that does not fit yet stays queued
//!   (with its reservation, counted as a space waiter so the receiver publishes what it
//!   consumed), and the next round tries again;
//! - large messages never take the single-copy path to another node (`p2p::send`
//!   checks [`CoreContext::is_local`](crate::segment::CoreContext::is_local)): only
//!   channel fragments cross, never a rendezvous;
//! - the world barrier counts this node's ranks and the gateway. The gateway reports
//!   how many barriers its ranks have all entered, and arrives (last, so at once) in
//!   barrier `g` once every node reports at least `g + 1`: nobody leaves a barrier
//!   before every rank of the job has entered it;
//! - the first failure any node reports aborts every node's segment with the same
//!   rank and cause, so every surviving rank's error names the dead one; after it
//!   nothing more crosses.
//!
//! Only the shared receive buffer crosses nodes, as yet, and what runs over it:
//! communicators and their collectives do (`coll::over_p2p`: over two-sided messages
//! with the library's reserved tags), but windows and the heap
//! (`AllocError::AcrossNodes`), MPBs and flags (`MpbError::OnOtherNode`), the per-peer
//! channel and virtual time do not.

mod frame;

use std::collections::VecDeque;
use std::fmt;

use shm_layout::{ChannelKind, WaitPolicy};

use crate::job::launcher::Running;
use crate::job::node::{NodeSide, NodeSpec, NodeStatus};
use crate::p2p::channel::Placement;
use crate::protocol::abort::AbortCause;
use crate::protocol::alloc::freelist::FreeList;
use crate::protocol::ring::srb::{Reservation, entry_len};
use crate::protocol::waiter::Waiter;
use crate::segment::mapping::{AttachError, Segment, slot_state};
use crate::segment::mpb::MPB_GRANULE;
use crate::sync::Ordering;
use frame::Frame;

/// Why a gateway could not be set up.
#[derive(Debug)]
pub enum GatewayError {
    /// The job does not span nodes ([`crate::job::launcher::Launch::node`] was `None`).
    OneNode,
    /// The job's channel does not cross nodes yet (only the shared receive buffer does).
    Channel(ChannelKind),
    /// The channels could not be placed, or the segment not mapped again.
    Setup(String),
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OneNode => write!(f, "the job runs on one node: it has no gateway"),
            Self::Channel(kind) => write!(f, "the {kind} channel does not cross nodes yet (use srb)"),
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

/// The consumer's side of a stand-in ring.
#[derive(Clone, Copy, Default)]
struct StandIn {
    pos: u32,
    published: u32,
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
    segment: Segment,
    spec: NodeSpec,
    place: Placement,
    /// Indexed by rank; used for the other nodes' ranks.
    stand_ins: Vec<StandIn>,
    /// Indexed by this node's ranks, from its first.
    inbound: Vec<Inbound>,
    /// World barriers released so far.
    released: u64,
    finished: bool,
    /// Whether the last round moved anything.
    moved: bool,
}

impl Gateway {
    /// The gateway of the node `running` was started for, over a mapping of its own of
    /// the job's segment.
    pub fn new(running: &Running) -> Result<Gateway, GatewayError> {
        let spec = running.node().ok_or(GatewayError::OneNode)?;
        let fd = running.segment().fd().try_clone_to_owned().map_err(|e| GatewayError::Setup(e.to_string()))?;
        let segment = Segment::attach(fd)?;
        let config = *segment.config();
        let kind = ChannelKind::from_u32(config.channel).unwrap_or(ChannelKind::Srb);
        if kind != ChannelKind::Srb {
            return Err(GatewayError::Channel(kind));
        }
        // The same first symmetric MPB allocation as every core's (`p2p::channel`).
        let mut mpb = FreeList::new(config.mpb_bytes as usize, MPB_GRANULE);
        let place = Placement::setup(&config, &mut mpb).map_err(|e| GatewayError::Setup(e.to_string()))?;
        Ok(Gateway {
            segment,
            spec,
            place,
            stand_ins: vec![StandIn::default(); spec.cores as usize],
            inbound: (0..spec.count).map(|_| Inbound::default()).collect(),
            released: 0,
            finished: false,
            moved: false,
        })
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

    /// Publishes the queued frames that fit, in order, per destination.
    fn push_inbound(&mut self) {
        for (i, inbound) in self.inbound.iter_mut().enumerate() {
            let dest = self.spec.first + i as u32;
            if inbound.queue.is_empty() {
                continue;
            }
            // Acquire: pairs with the Release of the rank's `leave`; a rank that left
            // reads nothing more.
            if self.segment.slot(dest).state.load(Ordering::Acquire) == slot_state::FINALIZED {
                inbound.queue.clear();
                continue;
            }
            let ring = self.place.srb(&self.segment, dest);
            while let Some(front) = inbound.queue.front() {
                let reservation = match inbound.held.take() {
                    Some(r) if ring.fits(&r) => {
                        ring.remove_space_waiter(false);
                        r
                    }
                    Some(r) => {
                        inbound.held = Some(r);
                        break;
                    }
                    None => match ring.try_reserve(entry_len(front.header.len)) {
                        Some((r, true)) => r,
                        Some((r, false)) => {
                            // Counted, the receiver publishes what it consumed instead of
                            // waiting for a quarter of its ring (`srb::space`).
                            ring.add_space_waiter(false);
                            inbound.held = Some(r);
                            break;
                        }
                        None => break,
                    },
                };
                ring.publish(reservation, &front.header, &front.payload);
                self.segment.slot(dest).bell.ring();
                inbound.queue.pop_front();
                self.moved = true;
            }
        }
    }
}

impl NodeSide for Gateway {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        self.moved = false;
        if self.aborted() {
            return;
        }
        for rank in (0..self.spec.cores).filter(|&r| !self.spec.is_local(r)) {
            let ring = self.place.srb(&self.segment, rank);
            let stand_in = &mut self.stand_ins[rank as usize];
            let batch = &mut out[self.spec.node_of(rank) as usize];
            loop {
                match ring.peek(stand_in.pos) {
                    Ok(Some(entry)) => {
                        frame::encode_with(batch, rank, &entry.header, |payload| ring.read(&entry, 0, payload));
                        stand_in.pos = entry.next();
                        ring.release(entry);
                        self.moved = true;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        eprintln!("sccemu: gateway of node {}: {e}", self.spec.node);
                        self.segment.abort(None, AbortCause::Corrupted);
                        return;
                    }
                }
            }
            if ring.free_consumed(stand_in.pos, &mut stand_in.published, true) {
                self.segment.ring_all();
            }
        }
    }

    fn deliver(&mut self, from: u32, batch: &[u8]) -> Result<(), String> {
        let max_payload = self.place.srb(&self.segment, self.spec.first).max_payload();
        for frame in frame::decode(batch, max_payload)? {
            let (dest, src) = (frame.dest, frame.header.src);
            if !self.spec.is_local(dest) {
                return Err(format!("node {from} sent a fragment for rank {dest}, which node {} does not run", self.spec.node));
            }
            if src >= self.spec.cores || self.spec.node_of(src) != from {
                return Err(format!("node {from} sent a fragment from rank {src}, which it does not run"));
            }
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
            finished: self.finished,
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
            let waiter = Waiter::new(WaitPolicy::Spin, self.segment.job());
            let parties = self.spec.count + 1;
            if self.segment.sync_area().world_barrier.wait(parties, &waiter, &self.segment.slot(0).bell).is_ok() {
                self.released = next;
                self.moved = true;
            }
        }
    }

    fn busy(&self) -> bool {
        self.moved || self.inbound.iter().any(|i| !i.queue.is_empty())
    }
}
