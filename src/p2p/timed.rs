//! Two-sided messages in virtual time (see `crate::timing`).
//!
//! A send call charges its whole message's copy into the channel (a 32-byte line at a
//! time: out of the sender's private buffer, into the receiver's ring in DRAM near the
//! receiver, or into the receiver's MPB for a per-peer message that fits its inline
//! slot), and the message's time is the sender's clock after that. Its fragments,
//! whenever the progress engine sends them, carry that time: each stamps its stamp
//! word (by ring position, or by per-peer pair) before it is published, and the
//! receiver reads the stamp after the Acquire that saw the fragment; a message's time
//! is its latest fragment's ([`crate::p2p::Status::vtime`]). A receive completes at the
//! later of the receiver's time and the message's, plus the copy out of the channel.
//!
//! Charging at the call, not as fragments leave, keeps virtual time independent of how
//! the host interleaved a core's sends with its other calls; each fragment carries its
//! message's [`Model`]. The host's path does not matter either: a large message the
//! receiver copied straight out of the sender's memory (`cma`) is charged as the chip
//! would move it, through the channel, and its announcement carries its time. Not
//! modelled: a full channel holding the sender back (its clock does not wait for the
//! receiver to make room). Off virtual time, each of these is one branch.

use crate::p2p::endpoint::Status;
use crate::sync::{AtomicU64, Ordering};
use crate::timing::{self, Category, Clock, Ps};

/// Where a message goes.
#[derive(Clone, Copy)]
pub(crate) enum Into {
    /// The receiver's ring or a per-peer DRAM ring: DRAM near the receiver.
    Dram,
    /// A per-peer slot in the receiver's MPB.
    Mpb,
}

/// How a message's fragments are stamped.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Model {
    /// A message sent at virtual time `at`: each fragment carries it.
    Timed {
        /// The sender's clock once the send call charged the message.
        at: Ps,
    },
    /// Not stamped: outside virtual time, and the single-copy path's answers (the
    /// modelled sender does not wait for them; it waits for a synchronous message's
    /// acknowledgement, which is timed).
    Untimed,
}

/// A message of `len` bytes to `dest` is sent (inside its send call): charges its copy
/// into the channel and gives the time its fragments carry.
pub(crate) fn message_sent(dest: u32, len: usize, into: Into) -> Model {
    let Some(mut op) = timing::begin(Category::Send, "message") else { return Model::Untimed };
    let c = op.clock();
    let line = match into {
        Into::Dram => c.dram_line_ps(dest),
        Into::Mpb => c.mpb_line_ps(dest),
    };
    op.charge(c.lines(len) * (c.private_line_ps(len) + line));
    let (me, at) = (c.rank(), c.now());
    op.flow(flow_id(me, at), true);
    Model::Timed { at }
}

/// A fragment of a message sent as `model` leaves: stamps `word` with the message's
/// time. Call before the channel's publishing store.
pub(crate) fn fragment_sent(model: Model, word: impl FnOnce(&Clock) -> Option<&AtomicU64>) {
    let Model::Timed { at } = model else { return };
    if let Some(w) = timing::clock().and_then(word) {
        // Relaxed: published by the channel's Release store that follows. A plain
        // store: one sender writes a ring position (or a pair's word) until its reader
        // has read it.
        w.store(at, Ordering::Relaxed);
    }
}

/// The stamp of a fragment just seen (0 outside virtual time).
pub(crate) fn stamp(word: impl FnOnce(&Clock) -> Option<&AtomicU64>) -> u64 {
    // Relaxed: read after the channel's Acquire that saw the fragment.
    timing::clock().and_then(word).map_or(0, |w| w.load(Ordering::Relaxed))
}

/// A receive completed with `status`: the receiver reaches the message's time and
/// pays the copy out of its channel.
pub(crate) fn received(status: &Status) {
    let Some(mut op) = timing::begin(Category::Recv, "receive") else { return };
    let c = op.clock();
    let me = c.rank();
    op.observe(status.vtime, c.lines(status.len) * (c.dram_line_ps(me) + c.private_line_ps(status.len)));
    if status.source != me {
        op.flow(flow_id(status.source, status.vtime), false);
    }
}

/// A receive matched a synchronous message of time `vtime`: the time its
/// acknowledgement carries, the receiver's now (not earlier than the message's).
pub(crate) fn acknowledgement(vtime: Ps) -> Model {
    match timing::clock() {
        Some(c) => Model::Timed { at: c.now().max(vtime) },
        None => Model::Untimed,
    }
}

/// A synchronous send completes on its acknowledgement, of time `at`: the sender
/// reaches that time, and reads the acknowledgement out of its channel.
pub(crate) fn acknowledged(at: Ps) {
    let Some(op) = timing::begin(Category::Send, "acknowledgement") else { return };
    let c = op.clock();
    op.observe(at, c.dram_line_ps(c.rank()));
}

/// The trace's arrow from a message's send to its receive: a sender's messages have
/// distinct times (each send call costs something), which both sides know.
fn flow_id(source: u32, time: Ps) -> u64 {
    u64::from(source) << 48 ^ time
}
