//! Running an outside program (apt-get, mpicc, mpirun) with a time limit, so that the
//! harness never hangs.
//!
//! The child leads its own process group. On timeout the whole group gets SIGTERM (so
//! mpirun can tear its ranks down), then SIGKILL after a grace period; after a normal
//! exit, stragglers of the group (daemons, orphaned ranks) get SIGKILL. The group is
//! only ever signalled while its leader is alive or an unreaped zombie, so its id
//! cannot have been reused by an unrelated process. Output goes to files, not pipes: a
//! rank that escaped the group can never block the harness on a pipe that stays open.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

/// How a timed program ended.
#[derive(Debug)]
pub struct Finished {
    /// `None` when it was killed for running out of time.
    pub status: Option<ExitStatus>,
    /// Until it exited, or until it was given up.
    pub elapsed: Duration,
}

impl Finished {
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }
}

/// Grace between SIGTERM and SIGKILL to the group.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// Longest pause between two looks at a running child.
const MAX_POLL: Duration = Duration::from_millis(50);

/// Waits until `pid` has exited, without reaping it; false if `limit` passed first.
fn exited_within(pid: Pid, limit: Duration) -> std::io::Result<bool> {
    let deadline = Instant::now() + limit;
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    let mut pause = Duration::from_millis(1);
    loop {
        if !matches!(waitid(Id::Pid(pid), flags)?, WaitStatus::StillAlive) {
            return Ok(true);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Runs `command` with stdout and stderr into the given files, for at most `limit`.
pub fn run_with_timeout(
    command: &mut Command,
    stdout: &Path,
    stderr: &Path,
    limit: Duration,
) -> std::io::Result<Finished> {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(File::create(stdout)?)
        .stderr(File::create(stderr)?)
        .process_group(0)
        .spawn()?;
    let leader = Pid::from_raw(child.id() as i32);
    let in_time = exited_within(leader, limit)?;
    // When it ran out of time, the moment it was given up, not the end of the teardown.
    let elapsed = start.elapsed();
    if !in_time {
        let _ = killpg(leader, Signal::SIGTERM);
        exited_within(leader, TERM_GRACE)?;
    }
    // The leader is alive or a zombie: the group id is still ours to signal.
    let _ = killpg(leader, Signal::SIGKILL);
    let status = child.wait()?;
    Ok(Finished { status: in_time.then_some(status), elapsed })
}

/// The last non-empty line of a log, for one-line diagnoses.
pub fn last_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.chars().all(|c| c == '-'))
        .unwrap_or("")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_past_its_time_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        // The background sleep is a straggler in the same group, like an mpirun rank.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & echo started; sleep 30"]);
        let finished = run_with_timeout(&mut command, &out, &err, Duration::from_millis(300)).unwrap();
        assert!(finished.timed_out());
        assert!(finished.elapsed < Duration::from_secs(10));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "started\n");
    }

    #[test]
    fn a_quick_program_keeps_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        let mut command = Command::new("sh");
        command.args(["-c", "echo oops >&2; exit 3"]);
        let finished = run_with_timeout(&mut command, &out, &err, Duration::from_secs(10)).unwrap();
        assert_eq!(finished.status.and_then(|s| s.code()), Some(3));
        assert_eq!(last_line(&err), "oops");
    }
}
