//! Virtual time: how long a program would take on the emulated chip, whatever the host.
//!
//! Owns the chip description and its cost model ([`chip`]), each core's virtual clock
//! ([`mod@clock`]: compute, communication and waiting, and the stamps that carry a
//! writer's time to whoever observes its write) and the trace ([`trace`]).
//!
//! Off by default (`Config::timing` is 0): then [`begin`] is one load of an empty
//! global and a branch, and nothing else runs. `sccrun --timing scc[=chip.toml]` (or
//! `rccerun -clock GHz`) turns it on for a job: the launcher puts the chip description
//! in [`CHIP_VAR`] (and the trace file in [`TRACE_VAR`]), and each core starts its
//! clock when it attaches ([`init`]).
//!
//! May use: [`crate::segment`] and [`crate::protocol`]. The mechanisms above (`p2p`,
//! `rma`, `coll`, and the C interfaces) call [`begin`] around each operation, charge
//! its modelled cost, and stamp and observe the shared words they synchronise on.

pub mod chip;
pub mod clock;
pub mod meet;
pub(crate) mod meter;
pub mod trace;

use std::cell::Cell;
use std::sync::OnceLock;

pub use chip::{Chip, ChipError};
pub use clock::{Clock, Op, Ps};
pub use trace::Category;

use crate::segment::CoreContext;
use crate::segment::mapping::{AttachError, Segment};

/// The environment variable with the chip description (TOML; empty: the SCC's).
pub const CHIP_VAR: &str = "SCCEMU_CHIP";
/// The environment variable with the trace file, if one is wanted.
pub const TRACE_VAR: &str = "SCCEMU_TRACE";

static CLOCK: OnceLock<Clock> = OnceLock::new();

thread_local! {
    /// Whether this thread's operations are untimed now ([`untimed`]).
    static UNTIMED: Cell<bool> = const { Cell::new(false) };
}

/// This core's clock, in virtual-time mode.
#[inline]
pub fn clock() -> Option<&'static Clock> {
    CLOCK.get()
}

/// Starts a timed operation (see [`Clock::begin`]); `None` when time is not virtual, or
/// inside `untimed` (the library's own traffic for an operation it charges itself).
#[inline]
pub fn begin(category: Category, name: &'static str) -> Option<Op<'static>> {
    clock().filter(|_| !UNTIMED.get()).map(|c| c.begin(category, name))
}

/// Runs `body` with no operation of this thread timed: the library's own traffic for
/// an operation whose cost its caller models itself (the messages that carry a window's
/// requests across nodes, `rma::remote`), so that the chip's cost is charged once, and
/// as the chip would pay it, not as messages.
pub(crate) fn untimed<R>(body: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNTIMED.set(self.0);
        }
    }
    let _restore = Restore(UNTIMED.replace(true));
    body()
}

/// Starts a library call (see [`begin`]) and charges its software cost
/// ([`Clock::call_ps`]); `None` when time is not virtual.
#[inline]
pub fn call(category: Category, name: &'static str) -> Option<Op<'static>> {
    let op = begin(category, name)?;
    op.charge(op.clock().call_ps());
    Some(op)
}

/// Runs `body` as a library call ([`call`]). Off virtual time `body` runs alone, with
/// no timing state live across it: an `Option<Op>` held over a hot path, with its
/// destructor, cost it nanoseconds (a 9 ns put 2 ns).
#[inline(always)]
pub fn in_call<R>(category: Category, name: &'static str, body: impl FnOnce() -> R) -> R {
    if clock().is_none() {
        return body();
    }
    // `body` stays inline here too: handed out of line, everything it captures would
    // live in memory on the fast path as well (see `Window::copy_call`).
    let op = timed_begin(category, name);
    let result = body();
    drop(op);
    result
}

#[cold]
#[inline(never)]
fn timed_begin(category: Category, name: &'static str) -> Option<Op<'static>> {
    call(category, name)
}

/// Virtual seconds now, in virtual-time mode (the compute since the last operation
/// counted first, as a clock read on the chip would see it).
pub fn wtime() -> Option<f64> {
    let op = begin(Category::Compute, "wtime")?;
    Some(op.clock().now() as f64 / 1e12)
}

/// Why virtual time could not start.
#[derive(Debug)]
pub enum TimingError {
    /// The chip description in [`CHIP_VAR`] was refused.
    Chip(ChipError),
    /// The clock's own mapping of the segment failed.
    Map(AttachError),
}

impl std::fmt::Display for TimingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Chip(e) => e.fmt(f),
            Self::Map(e) => write!(f, "virtual time: {e}"),
        }
    }
}

impl std::error::Error for TimingError {}

/// Starts this core's clock if its job runs in virtual time (the job's config says);
/// called once when the core attaches.
pub fn init(ctx: &CoreContext) -> Result<(), TimingError> {
    if ctx.segment().config().timing == 0 || CLOCK.get().is_some() {
        return Ok(());
    }
    let chip = match std::env::var(CHIP_VAR) {
        Ok(text) if !text.trim().is_empty() => Chip::from_toml(&text).map_err(TimingError::Chip)?,
        _ => Chip::default(),
    };
    let fd = ctx.segment().fd().try_clone_to_owned().map_err(|e| TimingError::Map(AttachError::Os(e)))?;
    let seg = Segment::attach(fd).map_err(TimingError::Map)?;
    let trace = std::env::var_os(TRACE_VAR).is_some();
    let _ = CLOCK.set(Clock::new(chip, seg, ctx.rank(), trace));
    // Attaching is the core's first operation: its compute counts from here.
    drop(begin(Category::Compute, "attach"));
    Ok(())
}

/// Ends this core's clock (counting the compute since its last operation) and writes
/// its part of the trace, if one is wanted; called when the core leaves.
pub fn finish(rank: u32) {
    // Leaving is the core's last operation: the compute since the previous one counts.
    drop(begin(Category::Compute, "exit"));
    let (Some(clock), Some(file)) = (clock(), std::env::var_os(TRACE_VAR)) else { return };
    if let Some(lines) = clock.trace_lines() {
        let part = trace::part_path(std::path::Path::new(&file), rank);
        if let Err(e) = std::fs::write(&part, lines) {
            eprintln!("sccemu: rank {rank}: cannot write {}: {e}", part.display());
        }
    }
}
