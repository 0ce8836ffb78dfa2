//! Last one out: the members of a shared structure count themselves out when they are
//! done with it, and the one that counts last returns its memory.
//!
//! Protocol: a zeroed `left` counter lives in the structure (or beside it). Each of
//! the `members` members, after its last access, adds one to it with AcqRel; the member
//! whose add brings it to `members` is the last, and owns the structure from then on
//! (it frees it, and the allocator may hand it to anyone).
//!
//! Invariants and happens-before edges:
//! - Release on each add orders that member's accesses before it; the adds are RMWs of
//!   one location, so each continues the release sequence of every earlier add, and the
//!   last member's Acquire reads it: every member's accesses happen before whatever the
//!   last member does next (checked by the loom model `last_out`);
//! - each member counts itself out exactly once, whether it leaves through a collective
//!   free or by dropping its handle: one count too many would hand the structure back
//!   while a member still uses it; one too few would leak it.
//!
//! Users: a communicator's shared area (`coll::comm`, dropped or freed) and a window
//! over a communicator's control block and memory (`rma::team`).

use crate::sync::{AtomicU32, Ordering};

/// Counts the calling member out of `left`, for a structure of `members` members;
/// `true` for the last, which may then return the structure.
///
/// # Examples
///
/// ```
/// use sccemu::protocol::last_out::count_out;
/// use std::sync::atomic::AtomicU32;
///
/// let left = AtomicU32::new(0);
/// assert!(!count_out(&left, 2));
/// assert!(count_out(&left, 2));
/// ```
pub fn count_out(left: &AtomicU32, members: u32) -> bool {
    // AcqRel: see the module docs (the release sequence the last member acquires).
    left.fetch_add(1, Ordering::AcqRel) + 1 == members
}
