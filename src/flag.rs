//! RCCE-style flags: 32-bit words in a core's MPB, written by anyone, waited on by anyone.
//!
//! Handoff protocol: the producer copies its payload (into any MPB), then stores the
//! flag with `Release` and rings the doorbell of the flag's owner. The consumer waits,
//! through the waiter on the owner's doorbell, until an `Acquire` load of the flag shows
//! the expected value, and only then copies the payload out. The Release/Acquire pair
//! orders the payload copy before the read, so the consumer never sees a torn or stale
//! payload (checked by the loom model `flag_handoff`, which drives these functions).

use crate::abort::JobAborted;
use crate::sync::{AtomicU32, Ordering};
use crate::waiter::{Doorbell, Waiter};

/// Stores `value` and wakes whoever sleeps on the owner's doorbell.
pub fn write(flag: &AtomicU32, value: u32, owner: &Doorbell) {
    // Release: everything the writer stored before (the payload) happens-before any
    // Acquire load that reads this value.
    flag.store(value, Ordering::Release);
    owner.ring();
}

/// The flag's current value, with Acquire so that the payload it guards is visible.
pub fn read(flag: &AtomicU32) -> u32 {
    flag.load(Ordering::Acquire)
}

/// Whether `count`, on a 32-bit counter that only grows and may wrap, has reached
/// `target`: a wrapping comparison, valid while the two are less than 2^31 apart.
pub fn count_reached(count: u32, target: u32) -> bool {
    count.wrapping_sub(target) as i32 >= 0
}

/// Whether a flag used as a step counter has reached `value` (a writer may already be
/// further ahead).
pub fn reached(flag: &AtomicU32, value: u32) -> bool {
    count_reached(read(flag), value)
}

/// Waits until a step-counter flag has reached `value` (see [`reached`]).
pub fn wait_at_least(
    flag: &AtomicU32,
    value: u32,
    waiter: &Waiter<'_>,
    owner: &Doorbell,
) -> Result<(), JobAborted> {
    waiter.wait_until(owner, || reached(flag, value).then_some(()))
}

/// Waits until the flag holds `value`.
pub fn wait_until(
    flag: &AtomicU32,
    value: u32,
    waiter: &Waiter<'_>,
    owner: &Doorbell,
) -> Result<(), JobAborted> {
    waiter.wait_until(owner, || (read(flag) == value).then_some(()))
}
