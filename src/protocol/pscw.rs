//! Post-start-complete-wait (generalized active target) counters.
//!
//! Each ordered pair (origin o, target t) of a window owns one 8-byte [`PairWords`] slot,
//! in o's row of the window's control block: `posts` (exposure epochs t opened to o,
//! written by t) and `completes` (access epochs o closed at t, written by o). Only group
//! members touch each other's slots, so an epoch costs O(|group|) atomics, whatever the
//! job size. Keeping both directions of a pair in one cache line means each handshake
//! moves that line between two caches that already share it, instead of fetching a
//! second line (2 cores, a start/put/complete against post/wait loop: 0.125 -> 0.10 µs
//! per epoch).
//!
//! - `post(G)` by target t: for each origin o in G, `posts += 1` (Release) and ring o's
//!   doorbell; t counts, per origin, the posts it made (the completions it will expect).
//! - `start(H)` by origin o: for each target t in H, wait until `posts` passes the
//!   number of t's posts o has consumed (Acquire), and consume one.
//! - `complete()` by o: for each t in H, `completes += 1` (Release), ring t's doorbell.
//! - `wait()` / `test()` by t: every origin o of the post group has `completes` equal to
//!   the posts t made to o (Acquire).
//!
//! Invariants: a pair's counters match each start with the post that names this
//! origin, and each wait with the completions of the epochs those posts opened (a post
//! meant for a later epoch can never satisfy an earlier start, and an origin completes
//! epoch k+1 only after consuming post k+1, which the target makes after its wait of
//! epoch k). Release/Acquire pairs give: t's accesses before post happen-before o's
//! RMA after start, and o's RMA before complete happen-before t's accesses after wait.
//! Counters are compared with wrapping arithmetic.
//! NOCHECK: the user guarantees the matching post already happened; start skips the
//! wait and post skips the signal (both sides must assert it, as in MPI).

use crate::protocol::abort::JobAborted;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, Ordering};

/// One ordered pair's handshake counters (module docs).
#[repr(C)]
#[derive(Default)]
pub struct PairWords {
    posts: AtomicU32,
    completes: AtomicU32,
}

impl PairWords {
    /// Nothing posted or completed yet.
    pub fn new() -> PairWords {
        PairWords::default()
    }

    /// Target side of the post handshake; `origin_bell` is the origin's doorbell.
    pub fn post(&self, origin_bell: &Doorbell) {
        // Release: the target's accesses before post happen-before the origin's RMA.
        self.posts.fetch_add(1, Ordering::Release);
        origin_bell.ring_after_rmw();
    }

    /// Whether the target has posted more than the `consumed` epochs this origin
    /// already started with it.
    pub fn posted(&self, consumed: u32) -> bool {
        // Acquire: pairs with `post`'s Release.
        self.posts.load(Ordering::Acquire) != consumed
    }

    /// Origin side: waits for the target's post for epoch `consumed + 1`. `my_bell` is
    /// this origin's doorbell.
    pub fn wait_post(
        &self,
        consumed: u32,
        waiter: &Waiter<'_>,
        my_bell: &Doorbell,
    ) -> Result<(), JobAborted> {
        waiter.wait_until(my_bell, || self.posted(consumed).then_some(()))
    }

    /// Origin: ends its access epoch at this target; `target_bell` is the target's.
    pub fn complete(&self, target_bell: &Doorbell) {
        // Release: the origin's RMA happens-before the target's Acquire in `completed`.
        self.completes.fetch_add(1, Ordering::Release);
        target_bell.ring_after_rmw();
    }

    /// Target: whether the origin has completed `expected` epochs in total.
    pub fn completed(&self, expected: u32) -> bool {
        // Acquire: pairs with `complete`'s Release.
        crate::protocol::flag::count_reached(self.completes.load(Ordering::Acquire), expected)
    }
}
