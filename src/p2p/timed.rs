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
//!
//! Large messages ([`Model::Rendezvous`]: at least the single-copy threshold, see
//! `cma`) are charged as the single-copy path moves them, whichever way the host did
//! (announced and copied by the receiver, or through the channel because the host
//! refused the copy or the send was non-blocking): the sender pays one header line when
//! the send starts, every fragment of the message carries that time, and the receiver
//! pays the one copy (the same [`received`]). So a program's virtual time does not
//! depend on what the host allowed. Answers of the single-copy path are not charged:
//! the modelled sender does not wait for them.

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

/// How a message's fragments are charged (module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Model {
    /// Each fragment's copy, when it goes.
    Eager,
    /// The header was charged when the send started; every fragment carries `at`.
    Rendezvous {
        /// The sender's virtual time once the header was charged.
        at: u64,
    },
    /// Not charged nor stamped (the single-copy path's answers).
    Untimed,
}

impl Model {
    /// The model of a message of `total` bytes to `dest` whose first fragment goes
    /// `into`; a `rendezvous` one charges its header now.
    pub(crate) fn start(dest: u32, total: usize, into: Into, rendezvous: bool) -> Model {
        if !rendezvous {
            return Model::Eager;
        }
        let Some(op) = timing::begin(Category::Send, "rendezvous") else { return Model::Rendezvous { at: 0 } };
        let c = op.clock();
        let bytes = crate::protocol::ring::frag::RENDEZVOUS_BYTES as usize;
        op.charge(c.lines(bytes) * (c.private_line_ps(total) + line(c, dest, into)));
        Model::Rendezvous { at: c.now() }
    }
}

fn line(c: &Clock, dest: u32, into: Into) -> u64 {
    match into {
        Into::Dram => c.dram_line_ps(dest),
        Into::Mpb => c.mpb_line_ps(dest),
    }
}

/// A fragment of `bytes` (of a message of `total`) goes to `dest`: charges the copy
/// and stamps `word` (given the clock) as `model` says. Call before the channel's
/// publishing store.
pub(crate) fn fragment_sent(
    dest: u32,
    (bytes, total): (usize, usize),
    into: Into,
    model: Model,
    word: impl FnOnce(&Clock) -> Option<&AtomicU64>,
) {
    match model {
        Model::Eager => {}
        Model::Untimed => return,
        Model::Rendezvous { at } => {
            if let Some(w) = timing::clock().and_then(word) {
                // Relaxed: published by the channel's Release store that follows.
                w.fetch_max(at, Ordering::Relaxed);
            }
            return;
        }
    }
    let Some(op) = timing::begin(Category::Send, "fragment") else { return };
    let c = op.clock();
    op.charge(c.lines(bytes) * (c.private_line_ps(total) + line(c, dest, into)));
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
