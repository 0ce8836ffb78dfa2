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
//! the host interleaved a core's sends with its other calls. Messages to one
//! destination leave in the order of their calls, so their times queue per destination
//! ([`message_sent`] under the engine's lock, [`fragment_sent`] in the same order). Not
//! modelled: a full channel holding the sender back (its clock does not wait for the
//! receiver to make room). Off virtual time, each of these is one branch.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

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

/// Per destination, the messages whose fragments have not all left: bytes still to
/// go, and the message's time.
type Outgoing = HashMap<u32, VecDeque<(usize, Ps)>>;

static OUTGOING: Mutex<Option<Outgoing>> = Mutex::new(None);

/// A message of `len` bytes to `dest` is sent (inside its send call, under the engine's
/// lock): charges its copy into the channel and queues its time for its fragments.
pub(crate) fn message_sent(dest: u32, len: usize, into: Into) {
    let Some(mut op) = timing::begin(Category::Send, "message") else { return };
    let c = op.clock();
    let line = match into {
        Into::Dram => c.dram_line_ps(dest),
        Into::Mpb => c.mpb_line_ps(dest),
    };
    op.charge(c.lines(len) * (c.private_line_ps(len) + line));
    let (me, now) = (c.rank(), c.now());
    op.flow(flow_id(me, now), true);
    let mut outgoing = OUTGOING.lock().unwrap_or_else(|e| e.into_inner());
    outgoing.get_or_insert_with(HashMap::new).entry(dest).or_default().push_back((len, now));
}

/// A fragment of `bytes` to `dest` leaves: stamps `word` with its message's time. Call
/// before the channel's publishing store.
pub(crate) fn fragment_sent(dest: u32, bytes: usize, word: impl FnOnce(&Clock) -> Option<&AtomicU64>) {
    let Some(c) = timing::clock() else { return };
    let mut outgoing = OUTGOING.lock().unwrap_or_else(|e| e.into_inner());
    let queue = outgoing.get_or_insert_with(HashMap::new).entry(dest).or_default();
    let Some((left, stamp)) = queue.front_mut() else { return };
    let stamp = *stamp;
    *left = left.saturating_sub(bytes);
    if *left == 0 {
        queue.pop_front();
    }
    if let Some(w) = word(c) {
        // Relaxed: published by the channel's Release store that follows. A plain
        // store: one sender writes a ring position (or a pair's word) until its reader
        // has read it.
        w.store(stamp, Ordering::Relaxed);
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

/// The trace's arrow from a message's send to its receive: a sender's messages have
/// distinct times (each send call costs something), which both sides know.
fn flow_id(source: u32, time: Ps) -> u64 {
    u64::from(source) << 48 ^ time
}
