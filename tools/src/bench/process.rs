//! Running an outside program (apt-get, mpicc, mpirun) with a time limit, so that the
//! harness never hangs.
//!
//! The child leads its own process group; on timeout the whole group gets SIGTERM (so
//! mpirun can tear its ranks down), then SIGKILL. Output goes to files, not pipes: a
//! rank that escaped the group can never block the harness on a pipe that stays open.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

/// How a timed program ended.
#[derive(Debug)]
pub struct Finished {
    /// `None` when it was killed for running out of time.
    pub status: Option<ExitStatus>,
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
    let group = Pid::from_raw(child.id() as i32);
    let status = match child.wait_timeout(limit)? {
        Some(status) => Some(status),
        None => {
            let _ = killpg(group, Signal::SIGTERM);
            if child.wait_timeout(TERM_GRACE)?.is_none() {
                let _ = killpg(group, Signal::SIGKILL);
                child.wait()?;
            }
            None
        }
    };
    // Stragglers of a finished launcher (daemons, ranks) go with it.
    let _ = killpg(group, Signal::SIGKILL);
    Ok(Finished { status, elapsed: start.elapsed() })
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
