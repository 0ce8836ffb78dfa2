//! Where an owner-computes window's accumulate block puts each rank's share: its
//! request queue, its completion words as an origin, its stripe locks and its staging
//! buffers. One place computes every offset, so that origins and agents (in other
//! processes) agree on them. Ranks are the window's team ranks; the block knows the
//! world rank of each (`members`) for the doorbells, which are the cores'.

use std::sync::Arc;

use crossbeam_utils::CachePadded;
use shm_layout::{LINE, Region};

use crate::protocol::atomic::acc_queue::{Bells, Queue, QueueCtl};
use crate::protocol::atomic::stripes::{MAX_STRIPES, Stripe};
use crate::protocol::payload::Payload;
use crate::protocol::waiter::Doorbell;
use crate::rma::acc_view::{stripes_at, u64s_at};
use crate::segment::mapping::{Segment, SharedBytes};
use crate::segment::view::atomics_at;
use crate::sync::{AtomicU32, AtomicU64};

use super::{CAP, HALF_BYTES, HALVES, SLOT_BYTES};

/// An origin's completion words (owned by the origin).
#[repr(C)]
#[derive(Default)]
pub struct OriginCtl {
    pub(super) applied: CachePadded<AtomicU64>,
    pub(super) busy: [CachePadded<AtomicU32>; HALVES],
    /// Nonzero while the origin waits for a completion: agents ring its doorbell only
    /// then (a Dekker pair of SeqCst fences, as in the queue's flow control), so that
    /// streams of accumulates do not wake whatever else sleeps on that doorbell.
    pub(super) waiting: CachePadded<AtomicU32>,
    /// Set by this rank's agent once its thread is set up (`agent`): its creator waits
    /// for it before it returns.
    pub(super) agent_ready: CachePadded<AtomicU32>,
}

const fn lines(bytes: usize) -> usize {
    bytes.div_ceil(LINE) * LINE
}

/// Offsets of each rank's share of the block. On one node the block is `n` shares in
/// rank order ([`OwnerBlock::packed`]); across nodes each node holds its members'
/// shares, and this node's agents and origins only ever reach those.
#[derive(Clone, Debug)]
pub struct OwnerBlock {
    /// Where each rank's share starts, absolute in its node's segment.
    pub shares: Arc<[usize]>,
    /// Whether each rank's share lies in this node's segment (every one on one node).
    pub here: Arc<[bool]>,
    /// The world rank of each of the window's ranks.
    pub members: Arc<[u32]>,
}

impl OwnerBlock {
    const SEQS: usize = lines(size_of::<QueueCtl>());
    const SLOTS: usize = Self::SEQS + lines(CAP * 8);
    const ORIGIN: usize = Self::SLOTS + CAP * SLOT_BYTES;
    const STRIPES: usize = Self::ORIGIN + lines(size_of::<OriginCtl>());
    const STAGING: usize = Self::STRIPES + MAX_STRIPES * size_of::<CachePadded<Stripe>>();
    /// Bytes of one rank's share: its queue, completion words and staging.
    pub const STRIDE: usize = Self::STAGING + HALVES * HALF_BYTES;

    /// Bytes of the block for a window of `n` cores.
    pub fn bytes(n: usize) -> usize {
        n * Self::STRIDE
    }

    /// The block of a window on one node: `abs` holds the shares in rank order.
    pub fn packed(abs: Region, members: Arc<[u32]>) -> OwnerBlock {
        let n = members.len();
        OwnerBlock { shares: (0..n).map(|r| abs.offset + r * Self::STRIDE).collect(), here: vec![true; n].into(), members }
    }

    /// Whether `rank` is a rank of the window whose share lies on this node.
    pub fn reaches(&self, rank: u32) -> bool {
        self.here.get(rank as usize) == Some(&true)
    }

    /// Where `rank`'s stripe locks lie, absolute in its node's segment.
    pub fn stripes_offset(&self, rank: u32) -> usize {
        self.shares[rank as usize] + Self::STRIPES
    }

    /// The doorbell of the core that plays `rank` (checked by the caller).
    pub fn bell<'s>(&self, seg: &'s Segment, rank: u32) -> &'s Doorbell {
        &seg.slot(self.members[rank as usize]).bell
    }

    fn share<'s>(&self, seg: &'s Segment, rank: u32) -> SharedBytes<'s> {
        seg.bytes(Region { offset: self.shares[rank as usize], len: Self::STRIDE })
    }

    /// `rank`'s request queue, which its agent consumes.
    pub fn queue<'s>(&self, seg: &'s Segment, rank: u32) -> Queue<'s, SharedBytes<'s>> {
        let b = self.share(seg, rank);
        let ctl: &QueueCtl = atomics_at(b, 0);
        let seqs = u64s_at(b, Self::SEQS, CAP);
        let slots_abs = Region {
            offset: self.shares[rank as usize] + Self::SLOTS,
            len: CAP * SLOT_BYTES,
        };
        // `space` on the owner's slot doorbell, which the abort protocol rings (see `Bells`).
        let bells = Bells { work: ctl.work_bell(), space: self.bell(seg, rank) };
        Queue::new(ctl, bells, seqs, seg.bytes(slots_abs), SLOT_BYTES)
    }

    /// `rank`'s queue as absolute regions: control words, `seq` words, slots.
    pub fn regions(&self, rank: u32) -> [Region; 3] {
        let at = |offset: usize, len: usize| Region { offset: self.shares[rank as usize] + offset, len };
        [at(0, Self::SEQS), at(Self::SEQS, CAP * 8), at(Self::SLOTS, CAP * SLOT_BYTES)]
    }

    pub(super) fn origin<'s>(&self, seg: &'s Segment, rank: u32) -> &'s OriginCtl {
        atomics_at(self.share(seg, rank), Self::ORIGIN)
    }

    /// `rank`'s stripe locks, which guard its part (zeroed by `init`).
    pub fn stripes<'s>(&self, seg: &'s Segment, rank: u32) -> &'s [CachePadded<Stripe>] {
        stripes_at(self.share(seg, rank), Self::STRIPES, MAX_STRIPES)
    }

    pub(super) fn staging<'s>(&self, seg: &'s Segment, rank: u32, half: usize) -> SharedBytes<'s> {
        let offset = self.shares[rank as usize] + Self::STAGING + half * HALF_BYTES;
        seg.bytes(Region { offset, len: HALF_BYTES })
    }

    /// Zeroes and initialises `rank`'s share (by `rank`, before a barrier).
    pub fn init(&self, seg: &Segment, rank: u32) {
        self.share(seg, rank).zero(0, Self::STAGING);
        self.queue(seg, rank).init();
    }
}
