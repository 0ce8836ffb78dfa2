//! Whether this machine lets the launcher start a job of N processes, checked before
//! anything starts, so that a job too large for it fails at once with the limit named
//! rather than part-way through (or, for want of fds, by hanging on a half-started job).
//!
//! - Processes: the kernel's `pid_max` and `threads-max` bound every task of the machine
//!   (threads included; `/proc/loadavg` counts them all), and `RLIMIT_NPROC` (`ulimit
//!   -u`) the tasks of this user, unless it is root.
//! - Files: the launcher holds a pidfd per rank while the job runs (`reaper`), and two
//!   pipes per rank when it relays their output, plus any per-rank fds of the caller.
//!   If the soft `RLIMIT_NOFILE` (`ulimit -n`) is too low but the hard limit allows, the
//!   soft limit is raised (as Go's runtime does); otherwise the job is refused if it
//!   needs the pipes, and without pipes the reaper falls back to a thread per rank.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Tasks and fds kept free for everything else.
const SPARE: u64 = 64;

/// Checks the process limits for `ranks` more processes, and makes room for
/// `fds_per_rank` more fds per rank in this process, of which `released` fds open now
/// will be closed first. `Err` names the limit in the way; the fds are only a must if
/// `fds_needed` (else the reaper does without).
pub(crate) fn check(ranks: usize, fds_per_rank: usize, released: usize, fds_needed: bool) -> Result<(), String> {
    let ranks = ranks as u64;
    let tasks = running_tasks().unwrap_or(0);
    for (name, limit) in [("kernel.pid_max", "/proc/sys/kernel/pid_max"), ("kernel.threads-max", "/proc/sys/kernel/threads-max")] {
        if let Some(max) = read_u64(limit)
            && tasks + ranks + SPARE > max
        {
            return Err(format!(
                "{ranks} processes do not fit {name} = {max} with {tasks} tasks running (raise it with sysctl)"
            ));
        }
    }
    let nproc = getrlimit(Resource::Nproc).current;
    if let Some(max) = nproc.filter(|_| !rustix::process::geteuid().is_root())
        && ranks + SPARE > max
    {
        return Err(format!("{ranks} processes exceed this user's process limit (ulimit -u) of {max}"));
    }
    let want = ranks * fds_per_rank as u64;
    let total = (open_fds() + want + SPARE).saturating_sub(released as u64);
    let files = getrlimit(Resource::Nofile);
    if files.current.is_some_and(|soft| soft < total) {
        let raised = files.maximum.map_or(total, |hard| hard.min(total));
        let _ = setrlimit(Resource::Nofile, Rlimit { current: Some(raised), maximum: files.maximum });
        let now = getrlimit(Resource::Nofile).current;
        if fds_needed && now.is_some_and(|soft| soft < total) {
            return Err(format!(
                "{ranks} processes need {total} open files in the launcher; the limit (ulimit -n) is {} and its hard limit {}",
                now.unwrap_or(0),
                files.maximum.map_or("unlimited".into(), |h| h.to_string())
            ));
        }
    }
    Ok(())
}

/// What to add to a failure to start a process that the kernel refused for want of
/// tasks (`EAGAIN`): the limits that may be in the way.
pub(crate) fn task_limits() -> String {
    let read = |path: &str| read_u64(path).map_or("?".into(), |v| v.to_string());
    let nproc = getrlimit(Resource::Nproc).current.map_or("unlimited".into(), |v| v.to_string());
    format!(
        "out of processes: ulimit -u {nproc}, kernel.pid_max {}, kernel.threads-max {}, {} tasks running",
        read("/proc/sys/kernel/pid_max"),
        read("/proc/sys/kernel/threads-max"),
        running_tasks().map_or("?".into(), |t| t.to_string())
    )
}

/// Tasks (threads) on the machine: the fourth field of `/proc/loadavg`, `running/total`.
fn running_tasks() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok()
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
