//! How a job ended: every rank's exit, the first failure, and the launcher's exit code
//! and one-line diagnosis from them.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use crate::protocol::abort::{AbortCause, JobAborted};

/// How a job ended.
#[derive(Clone, Debug)]
pub struct JobReport {
    /// The rank of `exits[0]` (0 unless the job spans nodes: then this node's first).
    pub first_rank: u32,
    /// Exit status of every rank started here.
    pub exits: Vec<ExitStatus>,
    /// The first failure, if any.
    pub failure: Option<JobAborted>,
    /// Wall time from spawn until every rank was reaped.
    pub elapsed: Duration,
    /// In virtual-time mode, each rank's virtual times (see
    /// [`crate::job::vtime::report`]).
    pub vtimes: Option<Vec<crate::job::vtime::CoreTimes>>,
}

impl JobReport {
    /// Whether every rank exited 0 and nothing aborted the job.
    pub fn success(&self) -> bool {
        self.failure.is_none() && self.exits.iter().all(ExitStatus::success)
    }

    /// One line saying why the job failed, e.g. `rank 5 killed by SIGKILL`.
    pub fn diagnosis(&self) -> Option<String> {
        if let Some(failure) = &self.failure {
            return Some(failure.to_string());
        }
        let (rank, status) = self.exits.iter().enumerate().find(|(_, s)| !s.success())?;
        Some(format!("rank {} {}", self.first_rank as usize + rank, describe(status)))
    }

    /// The launcher's exit code, as mpirun's: 0 only if every rank exited 0; otherwise
    /// the first failure's own number where it has one (`MPI_Abort`'s error code, a
    /// rank's exit status, 128 + a signal), else 1. Only its low 8 bits reach a shell,
    /// and a failure never reads as 0 there.
    pub fn exit_code(&self) -> u8 {
        if self.success() {
            return 0;
        }
        let code = match self.failure.map(|f| f.cause) {
            Some(AbortCause::UserAbort(code) | AbortCause::Exited(code)) => code,
            Some(AbortCause::Signaled(sig) | AbortCause::Interrupted(sig)) => 128 + sig,
            Some(_) => 1,
            None => self.exits.iter().find(|s| !s.success()).map_or(1, |s| {
                s.code().or(s.signal().map(|sig| 128 + sig)).unwrap_or(1)
            }),
        };
        match (code & 0xff) as u8 {
            0 => 1,
            c => c,
        }
    }
}

fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("killed by {}", crate::protocol::abort::signal_name(sig)),
        _ => "ended".to_owned(),
    }
}

/// Writes `text` to stderr in one write. `eprintln!` writes each formatted piece on its
/// own (stderr is unbuffered), so the lines of ranks or nodes that fail together would
/// interleave mid-line in the job's output.
pub fn say(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
