//! Centralised counting barrier with a generation word.
//!
//! Protocol, for `n` participants:
//! 1. read `generation` (this phase's number; it cannot advance before we arrive);
//! 2. `arrived.fetch_add(1, AcqRel)`: Release publishes our writes before the barrier,
//!    and the last arriver's Acquire collects everyone's (the adds form one release
//!    sequence);
//! 3. the last arriver resets `arrived` to 0 and stores `generation + 1` with Release,
//!    then rings the home doorbell; everyone else waits for `generation` to change,
//!    loading it with Acquire, so all pre-barrier writes are visible after the barrier.
//!
//! The reset of `arrived` happens before the Release store of the new generation, and
//! every next-phase arrival happens after an Acquire load of that generation, so no
//! next-phase add can be lost to the reset.
//!
//! Why central rather than a tree: on 2 CPUs the cost is dominated by sleeping and
//! waking, and here all waiters sleep on one futex and one wake releases them all;
//! a tree would chain log(n) wake-ups, each a context switch. On an undersubscribed
//! job it costs one contended add per core and one line transfer to release.

use crossbeam_utils::CachePadded;

use crate::abort::JobAborted;
use crate::sync::{AtomicU32, Ordering};
use crate::waiter::{Doorbell, Waiter};

/// A barrier's shared words. Lives in the segment's sync region for the world barrier.
#[repr(C)]
#[derive(Default)]
pub struct BarrierState {
    arrived: CachePadded<AtomicU32>,
    generation: CachePadded<AtomicU32>,
}

impl BarrierState {
    pub fn new() -> BarrierState {
        BarrierState::default()
    }

    /// Waits until all `parties` participants have called `wait` for this phase.
    /// Waiters sleep on `home`, the doorbell of the core that owns this barrier.
    pub fn wait(&self, parties: u32, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        // Relaxed: coherence alone gives the current phase (module docs, step 1).
        let phase = self.generation.load(Ordering::Relaxed);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == parties {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(phase.wrapping_add(1), Ordering::Release);
            home.ring();
            return waiter.job().check();
        }
        waiter.wait_until(home, || (self.generation.load(Ordering::Acquire) != phase).then_some(()))
    }
}
