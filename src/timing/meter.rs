//! The compute meter: what the calling thread did between two library calls, in host
//! units, and those units in virtual time.
//!
//! Three sources (`chip::ComputeSource`):
//! - **CPU time**: the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), in nanoseconds,
//!   less what the two reads around an interval add to it; virtual time is that times
//!   the chip's host-to-target factor, slowed by the tile's divider against the
//!   start-up one. Available everywhere; it moves with what the host's caches and
//!   scheduler do to the thread.
//! - **Instructions**: the thread's retired user-space instructions (a perf counter,
//!   one per thread, opened at its first interval), times the chip's cycles per
//!   instruction at the tile's frequency. Deterministic for deterministic code. Where
//!   the counter cannot be opened (no PMU, as in many virtual machines, or
//!   `perf_event_paranoid` above 2), the meter says why and falls back to CPU time
//!   for the whole process: one process never mixes units.
//! - **None**: compute is not charged (communication alone, exactly reproducible).
//!
//! Each thread keeps its own reading at the end of its last operation (`begin` and
//! `Op`'s drop in `clock`), so the threads of one core each count their own compute.

use std::cell::{Cell, RefCell};

use crate::timing::chip::{Chip, ComputeSource};
use crate::timing::clock::Ps;

thread_local! {
    /// The calling thread's reading when its last operation ended (`None` before its
    /// first: a thread's work before it calls the library is not the core's).
    static LAST: Cell<Option<u64>> = const { Cell::new(None) };
    /// The calling thread's instruction counter, once opened.
    static COUNTER: RefCell<Option<perf_event::Counter>> = const { RefCell::new(None) };
}

/// A process's compute meter (module docs).
#[derive(Debug)]
pub(crate) struct Meter {
    /// The source in use (after any fallback).
    source: ComputeSource,
    /// Units that two back-to-back readings add (not the program's compute).
    read_cost: u64,
}

impl Meter {
    /// The meter for `wanted`, and why it fell back to CPU time, if it did.
    pub(crate) fn new(wanted: ComputeSource) -> (Meter, Option<String>) {
        let (source, fallback) = match wanted {
            ComputeSource::Instructions => match open_counter() {
                Ok(()) => (ComputeSource::Instructions, None),
                Err(e) => (ComputeSource::CpuTime, Some(format!("no instruction counter ({e}): compute from CPU time"))),
            },
            other => (other, None),
        };
        let mut meter = Meter { source, read_cost: 0 };
        meter.read_cost = (0..64)
            .filter_map(|_| Some(meter.read()?.wrapping_neg().wrapping_add(meter.read()?)))
            .min()
            .unwrap_or(0);
        (meter, fallback)
    }

    /// The source in use.
    pub(crate) fn source(&self) -> ComputeSource {
        self.source
    }

    /// The calling thread's reading now (`None` without a source).
    fn read(&self) -> Option<u64> {
        match self.source {
            ComputeSource::None => None,
            ComputeSource::CpuTime => Some(thread_cpu_ns()),
            ComputeSource::Instructions => {
                if COUNTER.with_borrow(Option::is_none) && open_counter().is_err() {
                    return None;
                }
                COUNTER.with_borrow_mut(|c| c.as_mut().and_then(|c| c.read().ok()))
            }
        }
    }

    /// The calling thread's compute since its last operation ended, in virtual time
    /// at `divider` (0 before its first operation).
    pub(crate) fn since_last(&self, chip: &Chip, divider: u32) -> Ps {
        let (Some(now), Some(last)) = (self.read(), LAST.get()) else { return 0 };
        let units = now.saturating_sub(last).saturating_sub(self.read_cost);
        match self.source {
            ComputeSource::None => 0,
            ComputeSource::CpuTime => {
                let slower = f64::from(divider) / f64::from(chip.clocks.divider);
                (units as f64 * 1000.0 * chip.compute.host_to_target * slower) as Ps
            }
            ComputeSource::Instructions => chip.core_ps((units as f64 * chip.compute.cpi).round() as u64, divider),
        }
    }

    /// Marks the end of the calling thread's operation: its compute counts from here.
    pub(crate) fn mark(&self) {
        LAST.set(self.read());
    }
}

/// Opens the calling thread's instruction counter.
fn open_counter() -> std::io::Result<()> {
    let mut counter = perf_event::Builder::new(perf_event::events::Hardware::INSTRUCTIONS)
        .exclude_kernel(true)
        .exclude_hv(true)
        .build()?;
    counter.enable()?;
    COUNTER.set(Some(counter));
    Ok(())
}

fn thread_cpu_ns() -> u64 {
    use nix::time::{ClockId, clock_gettime};
    // Cannot fail on Linux for the calling thread; a zero would only skip one interval.
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, |t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}
