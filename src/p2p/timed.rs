//! Two-sided messages in virtual time (see `crate::timing`).
//!
//! A sender charges each fragment it puts in a channel (a 32-byte line at a time: out
//! of its private buffer, into the receiver's ring in DRAM near the receiver, or into
//! the receiver's MPB for a per-peer inline slot) and stamps the fragment's stamp word
//! (by ring position, or by per-peer slot) before publishing it. The receiver reads the
//! stamp after the Acquire that saw the fragment; a message's time is its latest
//! fragment's ([`crate::p2p::Status::vtime`]). A receive completes at the later of the
//! receiver's time and the message's, plus the copy out of the channel. Off virtual
//! time, each of these is one branch.

use crate::p2p::endpoint::Status;
use crate::sync::{AtomicU64, Ordering};
use crate::timing::{self, Category, Clock};

/// Where a fragment goes.
#[derive(Clone, Copy)]
pub(crate) enum Into {
    /// The receiver's ring or a per-peer DRAM ring: DRAM near the receiver.
    Dram,
    /// A per-peer slot in the receiver's MPB.
    Mpb,
}

/// A fragment of `bytes` (of a message of `total`) goes to `dest`: charges the copy
/// and stamps `word` (given the clock). Call before the channel's publishing store.
pub(crate) fn fragment_sent(dest: u32, bytes: usize, total: usize, into: Into, word: impl FnOnce(&Clock) -> Option<&AtomicU64>) {
    let Some(op) = timing::begin(Category::Send, "fragment") else { return };
    let c = op.clock();
    let line = match into {
        Into::Dram => c.dram_line_ps(dest),
        Into::Mpb => c.mpb_line_ps(dest),
    };
    op.charge(c.lines(bytes) * (c.private_line_ps(total) + line));
    op.stamp(word(c));
}

/// The stamp of a fragment just seen (0 outside virtual time).
pub(crate) fn stamp(word: impl FnOnce(&Clock) -> Option<&AtomicU64>) -> u64 {
    // Relaxed: read after the channel's Acquire that saw the fragment.
    timing::clock().and_then(word).map_or(0, |w| w.load(Ordering::Relaxed))
}

/// A receive completed with `status`: the receiver reaches the message's time and
/// pays the copy out of its channel.
pub(crate) fn received(status: &Status) {
    let Some(op) = timing::begin(Category::Recv, "receive") else { return };
    let c = op.clock();
    let me = c.rank();
    op.observe(status.vtime, c.lines(status.len) * (c.dram_line_ps(me) + c.private_line_ps(status.len)));
}
