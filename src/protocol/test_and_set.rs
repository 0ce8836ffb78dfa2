//! A test-and-set lock word, as the SCC's test-and-set registers (RCCE's locks): a
//! `u32`, 0 when free, 1 when held.
//!
//! Taking is a test-and-test-and-set ([`try_take`]): a load, and a swap only if the word
//! looked free, so that waiters retrying do not bounce the line between cores. A taker
//! that finds it held waits on the doorbell of the word's owner (the core whose register
//! it is), and every release ([`release`]) rings that doorbell. The Acquire of a
//! successful swap pairs with the Release of the swap that freed the word: the next
//! holder sees whatever the previous one did while holding it. A release from another
//! node is the same swap made by that node's gateway (AcqRel, an accumulate's), which
//! rings the owner's doorbell after it.
//!
//! Invariant: at most one taker's swap returns 0 between two releases.

use crate::protocol::abort::JobAborted;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, Ordering};

/// Takes `word` if it is free; whether it did.
#[inline]
pub fn try_take(word: &AtomicU32) -> bool {
    // Relaxed test: only the swap's Acquire orders anything.
    word.load(Ordering::Relaxed) == 0 && word.swap(1, Ordering::Acquire) == 0
}

/// Takes `word`, waiting on `bell` (its owner's doorbell) while another holds it.
/// Fails only if the job aborts meanwhile.
pub fn take(word: &AtomicU32, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
    if try_take(word) {
        return Ok(());
    }
    waiter.wait_until(bell, || try_take(word).then_some(()))
}

/// Releases `word` and rings `bell` (its owner's doorbell), waking its waiters.
#[inline]
pub fn release(word: &AtomicU32, bell: &Doorbell) {
    // Release: publishes the holder's work to the next taker's Acquire swap. A swap,
    // not a store, so that the wake-up pairing (`Doorbell::ring_after_rmw`) rests on
    // an RMW, as a remote release's does. With a plain store and `ring`, loom 0.7 finds
    // a taker that sleeps through the release in the model `test_and_set`, an outcome
    // the C++ fence rules forbid (`waiter`'s Dekker pair); the flag protocol relies on
    // that pairing and its model passes, so this is taken as loom's modelling, not
    // settled.
    word.swap(0, Ordering::Release);
    bell.ring_after_rmw();
}
