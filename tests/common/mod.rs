//! Helpers shared by the multi-process test files: job entries return
//! `Result<_, String>`, so that a failed check names what failed on which rank.
#![allow(dead_code)]

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use sccemu::{Comm, Core};

/// How long a rank may take in [`bounded`] before its watchdog declares a hang.
pub const LIMIT: Duration = Duration::from_secs(20);

/// `?` on any displayable error inside a job entry.
pub trait OrString<T> {
    fn s(self) -> Result<T, String>;
}

impl<T, E: std::fmt::Display> OrString<T> for Result<T, E> {
    fn s(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

/// `Err(what())` unless `cond` holds.
pub fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(what()) }
}

/// Runs `body`, aborting the whole job if it has not returned within [`LIMIT`]: the
/// watchdog exits this process, and fail-stop wakes the other ranks with an error, so a
/// hang fails the test with a diagnosis instead of stalling it.
pub fn bounded<R>(core: &Core, body: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    let (done, finished) = channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            if finished.recv_timeout(LIMIT) == Err(RecvTimeoutError::Timeout) {
                eprintln!("rank {} still blocked after {LIMIT:?}: no progress", core.rank());
                core.abort(3);
            }
        });
        let result = body();
        drop(done);
        result
    })
}

/// The job's world and this core's half of it: the even world ranks in world order,
/// or the odd ones in reverse world order (so an odd team's rank r is not the r-th
/// odd core).
pub fn halves<'c>(core: &'c Core) -> Result<(Comm<'c>, Comm<'c>), String> {
    let world = core.world().s()?;
    let me = core.rank();
    let key = if me % 2 == 0 { me as i32 } else { -(me as i32) };
    let team = world.split(Some(me % 2), key).s()?.ok_or("every core has a colour")?;
    Ok((world, team))
}

/// `len` bytes that differ with `seed` and along the message.
pub fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2654435761).wrapping_add(seed).to_le_bytes()[1]).collect()
}

/// Makes this process unreadable by its peers: not dumpable, and no CAP_SYS_PTRACE (so
/// their single copies out of it are refused).
pub fn refuse_readers() -> Result<(), String> {
    use rustix::process::{DumpableBehavior, set_dumpable_behavior};
    use rustix::thread::{CapabilitySet, capabilities, set_capabilities};
    set_dumpable_behavior(DumpableBehavior::NotDumpable).map_err(|e| e.to_string())?;
    let mut caps = capabilities(None).map_err(|e| e.to_string())?;
    caps.effective.remove(CapabilitySet::SYS_PTRACE);
    set_capabilities(None, caps).map_err(|e| e.to_string())
}
