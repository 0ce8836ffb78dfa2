//! Meetings in virtual time: barriers, fences and rendezvous, where every member waits
//! for every other.
//!
//! Each member stamps its own word with its arrival time (plus the cost of arriving)
//! before the meeting's publishing store, and, once the meeting is over, leaves at the
//! latest arrival plus the cost of learning it. So a meeting's cost is the chip's:
//! `max over members (arrival + arrive cost) + leave cost`, whatever order the host ran
//! the members in. The words are keyed by the meeting's parity, like the protocols'
//! own: a member cannot reach the meeting after next before every member has left
//! this one (it needs them all at the next), so a word is never rewritten early.

use crate::sync::AtomicU64;
use crate::timing::clock::{Op, Ps};

/// Arrives: charges `cost` and stamps `own` (call before the meeting's own arrival).
pub fn arrive(op: &Op<'_>, own: Option<&AtomicU64>, cost: Ps) {
    op.charge(cost);
    if let Some(w) = own {
        // Relaxed: published by the meeting's Release (module docs of `clock`); a plain
        // store, since a member's word holds its latest arrival only.
        w.store(op.clock().now(), crate::sync::Ordering::Relaxed);
    }
}

/// Leaves: the clock moves to the latest of `arrivals`, plus `cost` (call after the
/// meeting's own wait).
pub fn leave<'a>(op: &Op<'_>, arrivals: impl Iterator<Item = Option<&'a AtomicU64>>, cost: Ps) {
    // Relaxed: ordered by the meeting's Acquire.
    let latest = arrivals.flatten().map(|w| w.load(crate::sync::Ordering::Relaxed)).max().unwrap_or(0);
    op.observe(latest, cost);
}
