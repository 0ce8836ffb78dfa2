//! Jobs from Rust code: run a function as every core of an N-core job.
//!
//! [`Job::run`] starts N real processes by re-executing the current binary through the
//! launcher, so tests, benches and examples get the same segment, pinning and
//! fail-stop handling as `sccrun`. Each child runs `entry(&core, arg)` and sends its
//! result back over a pipe; the parent collects every rank's result.
//!
//! How a child finds the entry: the parent passes the entry's and a monomorphised
//! trampoline's addresses as offsets from a function of this crate. The child is the
//! same executable (checked by device, inode, size and mtime of `/proc/self/exe`), so
//! the offsets name the same functions. The child must reach [`init`] or a
//! `Job::run` call first: in a test binary the child re-runs the calling test
//! (libtest names each test's thread after the test) and dispatches at its first
//! `Job::run`; in a binary with its own `main`, the child re-runs `main` with the same
//! arguments, and `init()` at the top of `main` dispatches before anything else runs.
//! Arguments and results cross as JSON, so they must be `serde` types.

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use shm_layout::{ChannelKind, Config, Mesh, WaitPolicy};

use crate::core::facade::Core;
use crate::core::async_progress::ASYNC_PROGRESS_VAR;
use crate::job::launcher::{CHECK_VAR, JobReport, Launch, LaunchError, Output};
use crate::job::pump::Pump;
use crate::core::pin::{PinPolicy, available_cpu_count};

const ENTRY_VAR: &str = "SCCEMU_JOB_ENTRY";
const ARG_VAR: &str = "SCCEMU_JOB_ARG";
const EXE_VAR: &str = "SCCEMU_JOB_EXE";
const RESULT_FD_VAR: &str = "SCCEMU_JOB_RESULT_FD";

/// Jobs of one process run one at a time, so that concurrent tests do not
/// oversubscribe the machine further and time each other out.
static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A rank's entry point: a function or non-capturing closure.
pub type Entry<A, R, E> = fn(&Core, A) -> Result<R, E>;

type Trampoline = fn(&Core, usize, &str) -> Result<String, String>;

/// How one rank of a job failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankFailure {
    /// The entry returned this error (or panicked with this message).
    Returned(String),
    /// The process ended without a result: the launcher's diagnosis.
    Died(String),
}

impl fmt::Display for RankFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Returned(e) => write!(f, "returned an error: {e}"),
            Self::Died(why) => write!(f, "died: {why}"),
        }
    }
}

/// Why [`Job::run`] has no result for every rank.
#[derive(Debug)]
pub enum JobError {
    /// The job could not be started.
    Launch(LaunchError),
    /// The caller's executable cannot be re-run (no `/proc/self/exe`).
    NoExecutable(std::io::Error),
    /// A rank failed: the one whose failure aborted the job, else the lowest that failed.
    Rank {
        /// The failed rank.
        rank: u32,
        /// How it failed.
        failure: RankFailure,
    },
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Launch(e) => e.fmt(f),
            Self::NoExecutable(e) => write!(f, "cannot find the current executable: {e}"),
            Self::Rank { rank, failure } => write!(f, "rank {rank} {failure}"),
        }
    }
}

impl std::error::Error for JobError {}

/// Every rank's result and how the job ended.
#[derive(Debug)]
pub struct JobOutcome<R> {
    /// Each rank's result, by rank.
    pub ranks: Vec<Result<R, RankFailure>>,
    /// How the processes ended.
    pub report: JobReport,
}

/// A job to run from Rust: builder options mirror `sccrun`'s.
///
/// # Examples
///
/// Each of four cores returns its mesh tile; a rank that fails fails the job with its
/// error:
///
/// ```
/// use sccemu::{ChannelKind, Core, Job, JobError, WaitPolicy};
///
/// fn tile(core: &Core, offset: u32) -> Result<u32, String> {
///     core.barrier().map_err(|e| e.to_string())?;
///     Ok(core.tile() + offset)
/// }
///
/// fn fail_on_two(core: &Core, _: ()) -> Result<(), String> {
///     if core.rank() == 2 { Err("rank 2 gives up".into()) } else { Ok(()) }
/// }
///
/// fn main() {
///     sccemu::job::init(); // children of `run` dispatch here
///     let job = Job::new(4).wait(WaitPolicy::Block).channel(ChannelKind::PerPeer);
///     assert_eq!(job.run(&100, tile).unwrap(), vec![100, 100, 101, 101]); // 2 cores a tile
///     match Job::new(3).run(&(), fail_on_two) {
///         Err(JobError::Rank { rank, failure }) => {
///             assert_eq!(rank, 2);
///             assert!(failure.to_string().contains("rank 2 gives up"));
///         }
///         other => panic!("expected rank 2 to fail: {other:?}"),
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Job {
    config: Config,
    wait: Option<WaitPolicy>,
    pin: PinPolicy,
    core_ids: Option<Vec<u32>>,
    check: Option<bool>,
    async_progress: Option<bool>,
    timing: Option<crate::job::vtime::VirtualTime>,
}

impl Job {
    /// `cores` cores with the SCC's defaults, `--wait auto` and compact pinning.
    pub fn new(cores: u32) -> Job {
        Job { config: Config::new(cores), wait: None, pin: PinPolicy::Compact, core_ids: None, check: None, async_progress: None, timing: None }
    }

    /// How cores wait (default: `Adaptive`, or `Block` with more cores than CPUs).
    pub fn wait(mut self, policy: WaitPolicy) -> Job {
        self.wait = Some(policy);
        self
    }

    /// Which CPUs the cores are pinned to.
    pub fn pin(mut self, pin: PinPolicy) -> Job {
        self.pin = pin;
        self
    }

    /// Bytes of each core's MPB (the SCC's: 8 KiB).
    pub fn mpb_bytes(mut self, bytes: u32) -> Job {
        self.config.mpb_bytes = bytes;
        self
    }

    /// Bytes of the shared heap that windows, channels and communicators come from.
    pub fn heap_bytes(mut self, bytes: u64) -> Job {
        self.config.heap_bytes = bytes;
        self
    }

    /// Bytes of each core's receive ring in DRAM (a power of two).
    pub fn ring_bytes(mut self, bytes: u32) -> Job {
        self.config.ring_bytes = bytes;
        self
    }

    /// Places rank `r` on the chip's core `ids[r]` (as RCCE's host files do).
    pub fn core_ids(mut self, ids: Vec<u32>) -> Job {
        self.core_ids = Some(ids);
        self
    }

    /// The mesh of tiles the cores are placed on.
    pub fn mesh(mut self, mesh: Mesh) -> Job {
        self.config.mesh = mesh;
        self
    }

    /// The two-sided channel protocol (`srb` or `perpeer`).
    pub fn channel(mut self, channel: ChannelKind) -> Job {
        self.config.channel = channel as u32;
        self
    }

    /// Checking mode for every rank (`sccrun --check`): collectives and collective
    /// allocations compare their arguments across the cores and refuse, on every core,
    /// a call whose arguments disagree (see `CoreContext::checking`). Without this call
    /// the ranks inherit `SCCEMU_CHECK` from this process's environment.
    pub fn check(mut self, on: bool) -> Job {
        self.check = Some(on);
        self
    }

    /// Asynchronous progress for every rank (`sccrun --async-progress`): a thread per
    /// core moves its messages while the program computes (see
    /// `core::async_progress`). Without this call the ranks inherit
    /// `SCCEMU_ASYNC_PROGRESS` from this process's environment.
    pub fn async_progress(mut self, on: bool) -> Job {
        self.async_progress = Some(on);
        self
    }

    /// Runs the job in virtual time (`sccrun --timing`): `Core::wtime` gives virtual
    /// seconds, and the outcome's report each core's virtual times.
    pub fn timing(mut self, timing: crate::job::vtime::VirtualTime) -> Job {
        self.timing = Some(timing);
        self
    }

    /// The config the job will run with (`--wait auto` resolved).
    pub fn config(&self) -> Config {
        let auto = resolve_wait(self.config.cores);
        Config { wait: self.wait.unwrap_or(auto) as u32, ..self.config }
    }

    /// Runs `entry(core, arg)` on every core; `Ok` only if every rank succeeded.
    pub fn run<A, R, E>(&self, arg: &A, entry: Entry<A, R, E>) -> Result<Vec<R>, JobError>
    where
        A: Serialize + DeserializeOwned,
        R: Serialize + DeserializeOwned,
        E: fmt::Display,
    {
        let outcome = self.run_outcome(arg, entry)?;
        let root_cause = outcome.report.failure.and_then(|f| f.rank);
        if let Some(rank) = root_cause.filter(|&r| outcome.ranks.get(r as usize).is_some_and(Result::is_err))
        {
            let failure =
                outcome.ranks.into_iter().nth(rank as usize).and_then(Result::err).expect("checked");
            return Err(JobError::Rank { rank, failure });
        }
        let mut results = Vec::with_capacity(outcome.ranks.len());
        for (rank, result) in outcome.ranks.into_iter().enumerate() {
            results.push(result.map_err(|failure| JobError::Rank { rank: rank as u32, failure })?);
        }
        Ok(results)
    }

    /// Like [`Job::run`], but returns every rank's result even when some failed.
    pub fn run_outcome<A, R, E>(&self, arg: &A, entry: Entry<A, R, E>) -> Result<JobOutcome<R>, JobError>
    where
        A: Serialize + DeserializeOwned,
        R: Serialize + DeserializeOwned,
        E: fmt::Display,
    {
        init();
        let _one_at_a_time = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let exe = std::fs::read_link("/proc/self/exe").map_err(JobError::NoExecutable)?;
        let cores = self.config.cores as usize;
        // A result pipe's two ends (one closes as its rank starts), two output pipes and
        // a pidfd per rank.
        crate::job::limits::check(cores, 5, cores, true).map_err(|e| JobError::Launch(LaunchError::Limits(e)))?;
        let mut readers = Vec::with_capacity(cores);
        let mut writers = Vec::with_capacity(cores);
        for _ in 0..cores {
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| JobError::Launch(LaunchError::Spawn { rank: 0, error: e.into() }))?;
            readers.push(r);
            writers.push(w);
        }
        let arg_json = serde_json::to_string(arg).expect("job arguments serialize to JSON");
        let mut launch = Launch::new(self.config(), exe);
        launch.args = rerun_args();
        launch.pin = self.pin.clone();
        launch.output = Output::Forward;
        launch.rank_fds = Some((RESULT_FD_VAR, writers));
        launch.core_ids = self.core_ids.clone();
        launch.timing = self.timing.clone();
        launch.env = vec![
            (ENTRY_VAR.into(), encode_entry::<A, R, E>(entry).into()),
            (ARG_VAR.into(), arg_json.into()),
            (EXE_VAR.into(), exe_identity().unwrap_or_default().into()),
        ];
        for (var, on) in [(CHECK_VAR, self.check), (ASYNC_PROGRESS_VAR, self.async_progress)] {
            if let Some(on) = on {
                launch.env.push((var.into(), if on { "1" } else { "0" }.into()));
            }
        }
        let running = launch.spawn().map_err(JobError::Launch)?;
        // One thread reads every rank's result (see `pump`).
        let texts = Arc::new(Mutex::new(vec![Vec::new(); cores]));
        let mut pump = Pump::new();
        for (rank, reader) in readers.into_iter().enumerate() {
            let texts = texts.clone();
            pump.add(
                reader,
                Box::new(move |chunk| {
                    if let Some(bytes) = chunk {
                        texts.lock().unwrap_or_else(|e| e.into_inner())[rank].extend_from_slice(bytes);
                    }
                }),
            );
        }
        let report = running.wait();
        pump.finish();
        let texts = std::mem::take(&mut *texts.lock().unwrap_or_else(|e| e.into_inner()));
        let ranks = texts
            .into_iter()
            .zip(&report.exits)
            .enumerate()
            .map(|(rank, (text, status))| {
                let text = String::from_utf8_lossy(&text);
                match serde_json::from_str::<Result<String, String>>(&text) {
                    Ok(Ok(json)) => {
                        serde_json::from_str(&json).map_err(|e| RankFailure::Returned(e.to_string()))
                    }
                    Ok(Err(e)) => Err(RankFailure::Returned(e)),
                    Err(_) => Err(RankFailure::Died(died(rank, status, &report))),
                }
            })
            .collect();
        Ok(JobOutcome { ranks, report })
    }
}

fn died(rank: usize, status: &std::process::ExitStatus, report: &JobReport) -> String {
    match report.failure {
        Some(f) if f.rank == Some(rank as u32) => f.to_string(),
        _ => format!("rank {rank} ended with {status} and no result"),
    }
}

/// `--wait auto`: block when the job has more cores than the machine has CPUs.
pub fn resolve_wait(cores: u32) -> WaitPolicy {
    if cores as usize > available_cpu_count() { WaitPolicy::Block } else { WaitPolicy::Adaptive }
}

/// Arguments that make the child reach the same `Job::run` call.
fn rerun_args() -> Vec<OsString> {
    match std::thread::current().name() {
        // A libtest thread: run exactly this test, without output capture.
        Some(test) if test != "main" => {
            [test, "--exact", "--nocapture", "--test-threads=1", "-q"].map(OsString::from).to_vec()
        }
        _ => std::env::args_os().skip(1).collect(),
    }
}

/// The anchor that entry offsets are measured from. A static, not a function: Rust
/// functions have no significant address (optimised builds may hold several copies),
/// while a static has exactly one, at a fixed distance from all code of the image.
static ANCHOR: u8 = 0;

fn anchor() -> usize {
    &ANCHOR as *const u8 as usize
}

fn encode_entry<A, R, E>(entry: Entry<A, R, E>) -> String
where
    A: DeserializeOwned,
    R: Serialize,
    E: fmt::Display,
{
    let base = anchor();
    let trampoline = trampoline::<A, R, E> as Trampoline as usize;
    format!("{}:{}", trampoline.wrapping_sub(base), (entry as usize).wrapping_sub(base))
}

fn trampoline<A, R, E>(core: &Core, entry: usize, arg: &str) -> Result<String, String>
where
    A: DeserializeOwned,
    R: Serialize,
    E: fmt::Display,
{
    // SAFETY: `entry` is the address of an `Entry<A, R, E>` in this same executable
    // (`init` checked the identity of the executable and rebased the offset), and this
    // trampoline was instantiated with the same A, R, E by `encode_entry`.
    let entry = unsafe { std::mem::transmute::<usize, Entry<A, R, E>>(entry) };
    let arg: A = serde_json::from_str(arg).map_err(|e| format!("bad job argument: {e}"))?;
    let result = entry(core, arg).map_err(|e| e.to_string())?;
    serde_json::to_string(&result).map_err(|e| e.to_string())
}

fn exe_identity() -> Option<String> {
    let meta = std::fs::metadata("/proc/self/exe").ok()?;
    Some(format!(
        "{}:{}:{}:{}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime_nsec() + meta.mtime() * 1_000_000_000
    ))
}

/// If this process is a child started by [`Job::run`], runs its entry and exits;
/// otherwise returns at once. Call it first thing in `main` of benches and examples
/// that use `Job` (tests need not: `Job::run` calls it).
pub fn init() {
    let Ok(encoded) = std::env::var(ENTRY_VAR) else { return };
    let result = run_child(&encoded);
    let ok = matches!(result, Ok(Ok(_)));
    if let Ok(Ok(fd)) = std::env::var(RESULT_FD_VAR).map(|v| v.parse::<i32>()) {
        // SAFETY: the launcher handed this fd to this process alone for its result.
        let mut pipe = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let report = result.unwrap_or_else(Err);
        let _ = pipe.write_all(serde_json::to_string(&report).unwrap_or_default().as_bytes());
    }
    std::process::exit(if ok { 0 } else { 1 });
}

/// Attaches, runs the entry and finalizes; the outer error is a setup failure.
fn run_child(encoded: &str) -> Result<Result<String, String>, String> {
    if std::env::var(EXE_VAR).ok() != exe_identity() {
        return Err("job child is not the parent's executable".into());
    }
    let (trampoline, entry) = encoded
        .split_once(':')
        .and_then(|(t, e)| Some((t.parse::<usize>().ok()?, e.parse::<usize>().ok()?)))
        .ok_or("malformed job entry")?;
    let base = anchor();
    // SAFETY: the same executable (checked above) maps `base + offset` to the function
    // the parent encoded, a `Trampoline` built by `encode_entry`.
    let trampoline = unsafe { std::mem::transmute::<usize, Trampoline>(base.wrapping_add(trampoline)) };
    let arg = std::env::var(ARG_VAR).map_err(|_| "job argument missing")?;
    let core = Core::attach().map_err(|e| e.to_string())?;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        trampoline(&core, base.wrapping_add(entry), &arg)
    }))
    .unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned());
        Err(format!("panicked: {}", msg.unwrap_or_default()))
    });
    drop(core);
    Ok(result)
}
