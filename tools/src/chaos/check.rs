//! One run of the campaign: the seed's job under a watchdog, then the checks of how it
//! ended (every survivor's error names the victim, no hang, no process or segment
//! left, no wrong data).
//!
//! Leftover processes are found two ways: any process whose parent is this one (the
//! launcher's children, reaped or not) and any process whose environment carries the
//! run's token (the job argument holds it, so a rank's descendant that escaped would
//! be found too). Leftover segments: `/memfd:sccemu` fds or mappings of this process
//! beyond those before the run (the segment is a memfd made by the launcher, which is
//! this process), and new `/dev/shm` entries named for sccemu (other programs on a
//! shared machine come and go there, so only sccemu's names are counted).

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use sccemu::{ChannelKind, Job, JobOutcome, RankFailure, WaitPolicy};

use super::plan::Plan;
use super::program::{WRONG, rank_main};

/// How one run ended, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Hang,
    WrongData,
    Leftover,
    Other,
    Clean,
}

impl Outcome {
    pub const ALL: [Outcome; 5] =
        [Outcome::Clean, Outcome::Hang, Outcome::Leftover, Outcome::WrongData, Outcome::Other];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Clean => "clean",
            Outcome::Hang => "hang",
            Outcome::Leftover => "leftover",
            Outcome::WrongData => "wrong data",
            Outcome::Other => "other",
        }
    }
}

/// One run's plan, outcome and what was wrong (empty when clean).
pub struct RunResult {
    pub plan: Plan,
    pub outcome: Outcome,
    pub detail: String,
    pub elapsed: Duration,
}

/// What this process holds of sccemu segments, and what `/dev/shm` holds.
#[derive(Debug, PartialEq, Eq)]
struct Resources {
    memfd_fds: usize,
    memfd_maps: usize,
    dev_shm: BTreeSet<String>,
}

impl Resources {
    fn now() -> Resources {
        let memfd_fds = std::fs::read_dir("/proc/self/fd")
            .map(|dir| {
                dir.flatten()
                    .filter_map(|e| std::fs::read_link(e.path()).ok())
                    .filter(|target| target.to_string_lossy().starts_with("/memfd:sccemu"))
                    .count()
            })
            .unwrap_or(0);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        // Only sccemu's names: the machine is shared, and other programs (MPI runs)
        // create and remove their own entries there at any time.
        let dev_shm = std::fs::read_dir("/dev/shm")
            .map(|dir| {
                dir.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.contains("sccemu"))
                    .collect()
            })
            .unwrap_or_default();
        Resources {
            memfd_fds,
            memfd_maps: maps.lines().filter(|l| l.contains("/memfd:sccemu")).count(),
            dev_shm,
        }
    }

    /// What is held now that was not before.
    fn leaked_since(&self, before: &Resources) -> Option<String> {
        let new_shm: Vec<&String> = self.dev_shm.difference(&before.dev_shm).collect();
        let leaked =
            self.memfd_fds > before.memfd_fds || self.memfd_maps > before.memfd_maps || !new_shm.is_empty();
        leaked.then(|| {
            format!(
                "segment left: {} memfd fds and {} mappings (before {}, {}), new in /dev/shm {new_shm:?}",
                self.memfd_fds, self.memfd_maps, before.memfd_fds, before.memfd_maps
            )
        })
    }
}

/// Processes that are children of this one, or carry `token` in their environment.
fn processes_left(token: &str) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let Ok(proc) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry in proc.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        if pid == me {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // Fields after the parenthesised command name: state, ppid, ...
        let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("?").to_owned();
        let ppid = fields.next().and_then(|p| p.parse::<i32>().ok());
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let marked = environ.windows(token.len()).any(|w| w == token.as_bytes());
        if ppid == Some(me) || marked {
            found.push((pid, state));
        }
    }
    found
}

/// Runs `plan` as a job, killing it if it outlives `limit`. `Err` only when the job
/// cannot be ended at all (the campaign cannot go on).
pub fn run(plan: Plan, limit: Duration) -> Result<RunResult, String> {
    let before = Resources::now();
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    let job_plan = plan.clone();
    // Same thread name: a job's children re-run the caller by its thread's name.
    let mut builder = std::thread::Builder::new();
    if let Some(name) = std::thread::current().name() {
        builder = builder.name(name.to_owned());
    }
    let job = builder
        .spawn(move || {
            let channel = if job_plan.perpeer { ChannelKind::PerPeer } else { ChannelKind::Srb };
            let mut job = Job::new(job_plan.cores).channel(channel);
            if job_plan.block {
                job = job.wait(WaitPolicy::Block);
            }
            let outcome = job.run_outcome(&job_plan, rank_main);
            let _ = tx.send(outcome.map_err(|e| e.to_string()));
        })
        .map_err(|e| format!("cannot start the job thread: {e}"))?;
    let (outcome, hung) = match rx.recv_timeout(limit) {
        Ok(outcome) => (outcome, false),
        Err(_) => {
            for (pid, _) in processes_left(&plan.token) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            let outcome = rx.recv_timeout(Duration::from_secs(15)).map_err(|_| {
                format!("seed {}: the job did not end even after SIGKILL to its processes", plan.seed)
            })?;
            (outcome, true)
        }
    };
    let _ = job.join();
    let elapsed = started.elapsed();
    let mut problems: Vec<(Outcome, String)> = Vec::new();
    if hung {
        problems.push((Outcome::Hang, format!("job still running after {limit:?}; killed")));
    }
    let left = processes_left(&plan.token);
    if !left.is_empty() {
        problems.push((Outcome::Leftover, format!("processes left (pid, state): {left:?}")));
        for (pid, _) in &left {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
    }
    if let Some(leak) = Resources::now().leaked_since(&before) {
        problems.push((Outcome::Leftover, leak));
    }
    match outcome {
        Ok(outcome) => problems.extend(judge(&plan, &outcome)),
        Err(e) => problems.push((Outcome::Other, format!("job did not run: {e}"))),
    }
    problems.sort_by_key(|p| p.0);
    let outcome = problems.first().map_or(Outcome::Clean, |p| p.0);
    let detail = problems.into_iter().map(|p| p.1).collect::<Vec<_>>().join("; ");
    Ok(RunResult { plan, outcome, detail, elapsed })
}

/// The ranks' results against what fail-stop promises.
fn judge(plan: &Plan, outcome: &JobOutcome<usize>) -> Vec<(Outcome, String)> {
    let victim = plan.fault.victim;
    let named = format!("rank {victim} {}", plan.fault.kind.diagnosis());
    let mut problems = Vec::new();
    match outcome.report.failure {
        Some(f) if f.to_string() == named => {}
        other => {
            problems.push((Outcome::Other, format!("launcher reported {other:?}, expected \"{named}\"")))
        }
    }
    for (rank, result) in outcome.ranks.iter().enumerate() {
        let msg = match result {
            Ok(_) => Some("finished without an error".to_owned()),
            Err(RankFailure::Returned(e)) if e.starts_with(WRONG) => {
                problems.push((Outcome::WrongData, format!("rank {rank}: {e}")));
                None
            }
            Err(_) if rank as u32 == victim => None,
            Err(RankFailure::Returned(e)) if e.contains(&named) => None,
            Err(failure) => Some(format!("{failure}")),
        };
        if let Some(msg) = msg {
            problems
                .push((Outcome::Other, format!("rank {rank} {msg} (expected an error naming \"{named}\")")));
        }
    }
    problems
}
