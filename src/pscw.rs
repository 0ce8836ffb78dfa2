//! Post-start-complete-wait (generalized active target) counters.
//!
//! Each core owns, per window, one `post` counter per possible target (written by
//! that target, read by this core as an origin) and one `complete` counter (written
//! by its origins, read by itself as a target). Only group members touch each other's
//! words, so an epoch costs O(|group|) atomics, whatever the job size.
//!
//! - `post(G)` by target t: for each origin o in G, `o.post[t] += 1` (Release) and ring
//!   o's doorbell; t then expects `|G|` more completions.
//! - `start(H)` by origin o: for each target t in H, wait until `o.post[t]` passes the
//!   number of t's posts o has consumed (Acquire), and consume one.
//! - `complete()` by o: for each t in H, `t.complete += 1` (Release), ring t's doorbell.
//! - `wait()` / `test()` by t: `t.complete` has reached the expected total (Acquire).
//!
//! Invariants: the per-pair post counters match each start with the post that names
//! this origin (a post meant for a later epoch can never satisfy an earlier start of
//! another group); a completion for epoch k+1 cannot arrive before t's wait of epoch
//! k, because the origin must first consume t's post of epoch k+1, made after that
//! wait. Release/Acquire pairs give: t's accesses before post happen-before o's RMA
//! after start, and o's RMA before complete happen-before t's accesses after wait.
//! Counters are compared with wrapping arithmetic.
//! NOCHECK: the user guarantees the matching post already happened; start skips the
//! wait and post skips the signal (both sides must assert it, as in MPI).

use crossbeam_utils::CachePadded;

use crate::abort::JobAborted;
use crate::sync::{AtomicU32, Ordering};
use crate::waiter::{Doorbell, Waiter};

/// A target's completion counter (its own cache line).
#[repr(C)]
#[derive(Default)]
pub struct PscwTarget {
    completes: CachePadded<AtomicU32>,
}

impl PscwTarget {
    pub fn new() -> PscwTarget {
        PscwTarget::default()
    }

    /// An origin ends its access epoch at this target. `bell` is the target's doorbell.
    pub fn complete(&self, bell: &Doorbell) {
        // Release: the origin's RMA happens-before the target's Acquire in `wait`.
        self.completes.fetch_add(1, Ordering::Release);
        bell.ring_after_rmw();
    }

    /// Whether `expected` completions have arrived in total (non-blocking `test`).
    pub fn test(&self, expected: u32) -> bool {
        // Acquire: pairs with `complete`'s Release.
        crate::flag::count_reached(self.completes.load(Ordering::Acquire), expected)
    }

    /// Waits until `expected` completions have arrived in total. `bell` is the
    /// target's (this core's) doorbell.
    pub fn wait(&self, expected: u32, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        if self.test(expected) {
            return Ok(());
        }
        waiter.wait_until(bell, || self.test(expected).then_some(()))
    }

    /// Completions so far (the base a fresh exposure counts from).
    pub fn count(&self) -> u32 {
        self.completes.load(Ordering::Relaxed)
    }
}

/// Target side of the post handshake: `post_word` is `origin.post[me]`, `origin_bell`
/// the origin's doorbell.
pub fn post(post_word: &AtomicU32, origin_bell: &Doorbell) {
    // Release: the target's accesses before post happen-before the origin's RMA.
    post_word.fetch_add(1, Ordering::Release);
    origin_bell.ring_after_rmw();
}

/// Whether the target behind `post_word` (`me.post[target]`) has posted more than the
/// `consumed` epochs this origin already started with it.
pub fn posted(post_word: &AtomicU32, consumed: u32) -> bool {
    // Acquire: pairs with `post`'s Release.
    post_word.load(Ordering::Acquire) != consumed
}

/// Origin side: waits for the target's post for epoch `consumed + 1`. `my_bell` is this
/// origin's doorbell (it owns `post_word`).
pub fn wait_post(
    post_word: &AtomicU32,
    consumed: u32,
    waiter: &Waiter<'_>,
    my_bell: &Doorbell,
) -> Result<(), JobAborted> {
    if posted(post_word, consumed) {
        return Ok(());
    }
    waiter.wait_until(my_bell, || posted(post_word, consumed).then_some(()))
}
