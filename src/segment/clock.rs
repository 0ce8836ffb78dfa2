//! The job clock: `CLOCK_MONOTONIC`, which every process on the machine shares, so
//! timestamps taken on different cores are comparable. Zero is the job's launch.

use std::time::Duration;

use nix::time::{ClockId, clock_gettime};

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail on Linux; a zero would only make clocks start early.
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// Time since `start_ns` (a launch time from the segment header).
pub fn since(start_ns: u64) -> Duration {
    Duration::from_nanos(monotonic_ns().saturating_sub(start_ns))
}
