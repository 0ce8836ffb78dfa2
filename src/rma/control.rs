//! A window's control block in the shared heap: its protocol words and where they lie.
//!
//! The block holds, in order: the window-wide words ([`WindowCtl`]: the fence barrier
//! and the `lock_all` word, home rank 0); the size table (n x u64, each core's part
//! length, reused at `free` for the votes); n [`TargetCtl`]s (each target's ticket lock,
//! owned by the target); and n rows of n PSCW pair words (origin o's row holds, per
//! target t, t's post count for o and o's completion count at t); and, in virtual time
//! only, the stamps of those protocols (see `timed`: the window-wide ones, then a line
//! of each rank's, then n rows of n pair stamps). Every element starts on a 128-byte
//! line ([`lines`]), so no two cores' hot words share one, and every word is valid as
//! zero bytes: creation zeroes the block.

use crossbeam_utils::CachePadded;
use shm_layout::LINE;

use crate::protocol::fence::FenceState;
use crate::protocol::pscw::PairWords;
use crate::protocol::lock_all::AllLock;
use crate::protocol::rwlock::TicketRwLock;
use crate::segment::view::AtomicsOnly;

/// Window-wide protocol words (home: rank 0).
#[repr(C)]
#[derive(Default)]
pub struct WindowCtl {
    /// The barrier of every fence on the window.
    pub fence: FenceState,
    /// `lock_all` holders against exclusive lockers of any target, in one word.
    pub all: AllLock,
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
// SAFETY: made of atomics only (TicketRwLock), valid as zero bytes.
unsafe impl AtomicsOnly for TargetCtl {}
// SAFETY: two atomic words, valid as zero bytes.
unsafe impl AtomicsOnly for PairWords {}

/// `bytes` rounded up to whole lines (128 B), so that no two cores' words share one.
pub(crate) fn lines(bytes: usize) -> usize {
    bytes.div_ceil(LINE) * LINE
}

/// Offsets within the control block, a pure function of the job size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CtlLayout {
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
    /// The layout for `n` cores, with room for stamps if `timed`.
    pub(crate) fn new(n: usize, timed: bool) -> CtlLayout {
        let sizes = lines(size_of::<WindowCtl>());
        let targets = sizes + lines(n * 16);
        let posts = targets + n * lines(size_of::<TargetCtl>());
        let post_stride = lines(n * size_of::<PairWords>());
        let end = posts + n * post_stride;
        let stamps = timed.then_some(end);
        let total = end + if timed { crate::rma::timed::StampLayout::bytes(n) } else { 0 };
        CtlLayout { sizes, targets, posts, post_stride, stamps, total }
    }

    /// Where `rank`'s size-table entry starts: its part length, then its heap offset.
    pub(crate) fn size_entry(&self, rank: u32) -> usize {
        self.sizes + rank as usize * 16
    }
}

