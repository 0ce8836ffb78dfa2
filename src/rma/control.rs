//! A window's control block in the shared heap: its protocol words and where they lie.
//!
//! `n` is the window's team size and every index a team rank (`team`). The block holds,
//! in order: the window-wide words ([`WindowCtl`]: the fence barrier and the `lock_all`
//! word, home team rank 0); the team words ([`TeamCtl`]: the leader's publications and
//! the count of members that released the window, used by windows over a communicator
//! only); the size table (n x u64, each member's part length, reused at `free` for the
//! votes); n [`TargetCtl`]s (each target's ticket lock, owned by the target); n rows of
//! n PSCW pair words (origin o's row holds, per target t, t's post count for o and o's
//! completion count at t); and, in virtual time only, the stamps of
//! those protocols (see `timed`: the window-wide ones, then a line of each rank's, then
//! n rows of n pair stamps). Every element starts on a 128-byte line ([`lines`]), so no
//! two cores' hot words share one, and every word is valid as zero bytes: creation
//! zeroes the block.

use crossbeam_utils::CachePadded;
use shm_layout::LINE;

use crate::protocol::fence::FenceState;
use crate::protocol::pscw::PairWords;
use crate::protocol::lock_all::AllLock;
use crate::protocol::rwlock::TicketRwLock;
use crate::segment::view::AtomicsOnly;
use crate::sync::{AtomicU32, AtomicU64};

/// Window-wide protocol words (home: rank 0).
#[repr(C)]
#[derive(Default)]
pub struct WindowCtl {
    /// The barrier of every fence on the window.
    pub fence: FenceState,
    /// `lock_all` holders against exclusive lockers of any target, in one word.
    pub all: AllLock,
}

/// The words of a window over a communicator (`team`): its leader's allocations
/// published to the members, its window-table entry, and its release count. On a line
/// of their own, touched only at creation and release.
#[repr(C)]
#[derive(Default)]
pub struct TeamCtl {
    /// The leader's allocation results, by the allocation's parity (`encode_result`).
    pub published: [AtomicU64; 2],
    /// The window-table entry plus one (0: not listed).
    pub entry: AtomicU64,
    /// Members that have released the window (freed or dropped it).
    pub left: AtomicU32,
}

/// One target's protocol words (owned by the target): its lock, on a line of its own.
#[repr(C)]
#[derive(Default)]
pub struct TargetCtl {
    /// The target's reader-writer lock, for lock epochs on its part.
    pub lock: CachePadded<TicketRwLock>,
}

// SAFETY: made of atomics only (through BarrierState, AllLock), valid as zero bytes
// (AllLock: no holders, writers or sticky targets).
unsafe impl AtomicsOnly for WindowCtl {}
// SAFETY: atomic words only, valid as zero bytes (nothing published or listed, nobody left).
unsafe impl AtomicsOnly for TeamCtl {}
// SAFETY: made of atomics only (TicketRwLock), valid as zero bytes.
unsafe impl AtomicsOnly for TargetCtl {}
// SAFETY: two atomic words, valid as zero bytes.
unsafe impl AtomicsOnly for PairWords {}

/// `bytes` rounded up to whole lines (128 B), so that no two cores' words share one.
pub(crate) fn lines(bytes: usize) -> usize {
    bytes.div_ceil(LINE) * LINE
}

/// Offsets within the control block, a pure function of the team size and the mode.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CtlLayout {
    /// The [`TeamCtl`].
    pub(crate) team: usize,
    /// The size table: each core's part length and, over existing memory, heap offset
    /// (n x 2 u64; see [`CtlLayout::size_entry`]).
    pub(crate) sizes: usize,
    /// Each target's [`TargetCtl`].
    pub(crate) targets: usize,
    /// Each origin's row of PSCW pair words.
    pub(crate) posts: usize,
    /// Bytes of one row.
    pub(crate) post_stride: usize,
    /// In virtual time, where the stamps start (see `timed::StampLayout`).
    pub(crate) stamps: Option<usize>,
    /// Bytes of the whole block.
    pub(crate) total: usize,
}

impl CtlLayout {
    /// The layout for `n` members, with room for stamps if `timed`.
    pub(crate) fn new(n: usize, timed: bool) -> CtlLayout {
        let team = lines(size_of::<WindowCtl>());
        let sizes = team + lines(size_of::<TeamCtl>());
        let targets = sizes + lines(n * 16);
        let posts = targets + n * lines(size_of::<TargetCtl>());
        let post_stride = lines(n * size_of::<PairWords>());
        let end = posts + n * post_stride;
        let stamps = timed.then_some(end);
        let total = end + if timed { crate::rma::timed::StampLayout::bytes(n) } else { 0 };
        CtlLayout { team, sizes, targets, posts, post_stride, stamps, total }
    }

    /// Where `rank`'s size-table entry starts: its part length, then its heap offset.
    pub(crate) fn size_entry(&self, rank: u32) -> usize {
        self.sizes + rank as usize * 16
    }
}

