//! RCCE-style flags: 32-bit words in a core's MPB, written by anyone, waited on by anyone.
//!
//! Handoff protocol: the producer copies its payload (into any MPB), then stores the
//! flag with `Release` and rings the doorbell of the flag's owner. The consumer waits,
//! through the waiter on the owner's doorbell, until an `Acquire` load of the flag shows
//! the expected value, and only then copies the payload out. The Release/Acquire pair
//! orders the payload copy before the read, so the consumer never sees a torn or stale
//! payload (checked by the loom model `flag_handoff`, which drives these functions).

use crate::protocol::abort::JobAborted;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, Ordering};

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

/// The rendezvous of round `call` among `n` members (see `coll`): member `me` raises
/// its own flag (`flag_of(me)`) to the call and rings every other member's doorbell
/// (`bell_of`), then waits on its own until every other member's flag has reached the
/// call. Release on the raise and Acquire in [`reached`]: what each member wrote before
/// its raise is visible to every member after the rendezvous. Only a member writes its
/// own flag, so the flag stays monotonic.
pub fn meet<'f>(
    n: u32,
    me: u32,
    call: u32,
    flag_of: impl Fn(u32) -> &'f AtomicU32,
    bell_of: impl Fn(u32) -> &'f Doorbell,
    waiter: &Waiter<'_>,
) -> Result<(), JobAborted> {
    let others = || (0..n).filter(move |&r| r != me);
    flag_of(me).store(call, Ordering::Release);
    others().for_each(|r| bell_of(r).ring());
    for r in others() {
        waiter.wait_until(bell_of(me), || reached(flag_of(r), call).then_some(()))?;
    }
    Ok(())
}
