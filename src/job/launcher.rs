//! Starting a job's processes, watching them, and ending the job cleanly.
//!
//! [`Launch::spawn`] checks the machine's limits (`limits`), creates the segment, then
//! starts one process per rank (`spawn`). Between fork and exec each child clears
//! close-on-exec on the fds meant for it, asks for SIGKILL when the launcher dies (so no
//! core outlives its job), and pins itself. One thread relays the ranks' output
//! (`pump`).
//!
//! [`Running::wait`] is the fail-stop monitor. One thread reaps every child and reports
//! its exit (`reaper`). The first failure (nonzero status, a signal, or status 0
//! without finalizing) aborts the job through the segment, which wakes every blocked
//! core; survivors get a grace period to return their errors and exit, then SIGKILL.
//! An interrupt (SIGINT/SIGTERM forwarded by `sccrun`) is passed to every rank and
//! aborts the job the same way. When `wait` returns, every child has been reaped.

use std::ffi::OsString;
use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use shm_layout::Config;

use crate::protocol::abort::AbortCause;
use crate::core::pin::{self, PinError, PinPolicy};
use crate::segment::mapping::{CreateError, Segment, slot_state};
use crate::job::pump::{Pump, relay};
use crate::job::reaper::Reaper;
use crate::job::node::NodeSpec;
use crate::job::spawn;
pub use crate::job::report::JobReport;
use crate::segment::wait_mark::{Blocked, blocked_cores};
use crate::sync::Ordering;

/// The environment variable that turns on checking mode (`sccrun --check`): interfaces
/// compare what both sides of a call must agree on (read at attach by
/// [`crate::segment::CoreContext::checking`]).
pub const CHECK_VAR: &str = crate::segment::context::CHECK_VAR;

/// `program` as a path to run: itself if it names a directory, else the first
/// executable of that name on `PATH`.
pub fn find_program(program: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let executable = |p: &std::path::Path| {
        nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok() && p.metadata().is_ok_and(|m| m.is_file())
    };
    let found = if program.components().count() > 1 {
        executable(program).then(|| program.to_path_buf())
    } else {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| executable(p)))
            .unwrap_or_default()
    };
    found.ok_or_else(|| format!("program {} not found or not executable", program.display()))
}

/// What happens to the ranks' stdout and stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Output {
    /// Straight to the launcher's.
    #[default]
    Inherit,
    /// Every line prefixed with `[rank] `.
    Tagged,
    /// Through `print!`/`eprint!`, so a test harness captures it.
    Forward,
}

/// Why a job could not be started.
#[derive(Debug)]
pub enum LaunchError {
    /// The segment could not be created (a bad config, or the OS refused).
    Segment(CreateError),
    /// The pinning policy could not be planned on this machine.
    Pin(PinError),
    /// The core IDs given do not place every rank on the mesh once.
    CoreIds(String),
    /// The machine's or the process's limits do not allow this many ranks (which one,
    /// and how far).
    Limits(String),
    /// The program could not be started for `rank`.
    Spawn {
        /// The rank that did not start.
        rank: u32,
        /// Why `exec` (or the setup before it) failed.
        error: std::io::Error,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Segment(e) => e.fmt(f),
            Self::Pin(e) => e.fmt(f),
            Self::CoreIds(why) => write!(f, "bad core placement: {why}"),
            Self::Limits(why) => write!(f, "cannot start the job: {why}"),
            Self::Spawn { rank, error } if error.raw_os_error() == Some(rustix::io::Errno::AGAIN.raw_os_error()) => {
                write!(f, "cannot start rank {rank}: {error} ({})", crate::job::limits::task_limits())
            }
            Self::Spawn { rank, error } => write!(f, "cannot start rank {rank}: {error}"),
        }
    }
}

impl std::error::Error for LaunchError {}

/// A job to start.
pub struct Launch {
    /// The job's configuration, which sizes the segment.
    pub config: Config,
    /// The program every rank runs.
    pub program: OsString,
    /// Its arguments (without the program name).
    pub args: Vec<OsString>,
    /// Which CPU each rank is pinned to.
    pub pin: PinPolicy,
    /// Where the ranks' output goes.
    pub output: Output,
    /// Extra environment for every rank.
    pub env: Vec<(OsString, OsString)>,
    /// One fd per rank, handed to that rank alone under this variable name.
    pub rank_fds: Option<(&'static str, Vec<OwnedFd>)>,
    /// How long survivors of an abort may take to exit before SIGKILL.
    pub grace: Duration,
    /// The chip's core each rank plays (rank `r` plays `core_ids[r]`); the ranks' own
    /// numbers when `None`. Distinct, and inside the mesh.
    pub core_ids: Option<Vec<u32>>,
    /// How long every live core must stay blocked, marked and unchanged, before the job
    /// is declared deadlocked (see `segment::wait_mark`); never when `None`.
    pub deadlock_after: Option<Duration>,
    /// Virtual time (`sccrun --timing`): the chip and where the trace goes; real time
    /// when `None`.
    pub timing: Option<crate::job::vtime::VirtualTime>,
    /// When the job spans several nodes, this node's block: only those ranks start
    /// here, numbered as in the whole job, over a segment of this node's own
    /// (`job::node`). The whole job when `None`.
    pub node: Option<NodeSpec>,
    /// When other launches of the same job share this machine (nodes of one job on one
    /// host), `(before, total)`: the pinning plan places the host's `total` ranks
    /// together and this launch's are ranks `before..` of them, so that the nodes do
    /// not all start at the same CPU. `None`: this launch's ranks alone.
    pub host_share: Option<(usize, usize)>,
}

/// How long survivors of an abort may take to return their errors and exit: a second,
/// plus 25 ms per core beyond one per CPU, since oversubscribed survivors wake and exit
/// one CPU slice at a time (48 cores on 2 CPUs: 2.15 s). Only a survivor that does not
/// react waits this long before SIGKILL.
pub fn default_grace(cores: u32) -> Duration {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    Duration::from_secs(1) + Duration::from_millis(25) * cores.saturating_sub(cpus)
}

impl Launch {
    /// A job of `program` under `config`: no arguments, compact pinning, inherited
    /// output, the default grace ([`default_grace`]).
    pub fn new(config: Config, program: impl Into<OsString>) -> Launch {
        let grace = default_grace(config.cores);
        Launch {
            config,
            program: program.into(),
            args: Vec::new(),
            pin: PinPolicy::default(),
            output: Output::default(),
            env: Vec::new(),
            rank_fds: None,
            grace,
            core_ids: None,
            deadlock_after: Some(Duration::from_secs(1)),
            timing: None,
            node: None,
            host_share: None,
        }
    }

    fn place(&self, segment: &Segment) -> Result<(), LaunchError> {
        let Some(ids) = &self.core_ids else { return Ok(()) };
        let capacity = self.config.mesh.capacity();
        let mut seen = std::collections::BTreeSet::new();
        if ids.len() != self.config.cores as usize {
            return Err(LaunchError::CoreIds(format!("{} core IDs for {} ranks", ids.len(), self.config.cores)));
        }
        for (rank, &id) in ids.iter().enumerate() {
            if u64::from(id) >= capacity || !seen.insert(id) {
                let why = if seen.contains(&id) { "is listed twice" } else { "is outside the mesh" };
                return Err(LaunchError::CoreIds(format!("core ID {id} {why} ({} mesh)", self.config.mesh)));
            }
            segment.slot(rank as u32).core_id.store(id, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Creates the segment and starts every rank.
    pub fn spawn(mut self) -> Result<Running, LaunchError> {
        let first = self.node.as_ref().map_or(0, |n| n.first);
        if let Some(node) = &self.node {
            // Any split over the nodes will do (`NodeSpec::split`), as long as the spec
            // is one of its blocks, of this job.
            if node.cores != self.config.cores || !node.is_consistent() {
                return Err(LaunchError::Limits(format!("{node:?} is not a block of a {}-core job", self.config.cores)));
            }
            self.config.node_first = node.first;
            self.config.node_cores = node.count;
            // A core blocked on another node's rank is not stuck: only the whole job
            // could tell, and no node sees it.
            self.deadlock_after = None;
        }
        let cores = self.node.as_ref().map_or(self.config.cores, |n| n.count) as usize;
        let cpus = match self.host_share {
            None => pin::plan(&self.pin, cores).map_err(LaunchError::Pin)?,
            Some((before, total)) if before + cores <= total => {
                pin::plan(&self.pin, total).map_err(LaunchError::Pin)?[before..before + cores].to_vec()
            }
            Some((before, total)) => {
                return Err(LaunchError::Limits(format!("{cores} ranks from {before} of a host's {total}")));
            }
        };
        // A pidfd per rank and a pipe per relayed stream, while the caller's per-rank fds
        // (open now) close as the ranks start.
        let piped = self.output != Output::Inherit;
        let released = self.rank_fds.as_ref().map_or(0, |(_, fds)| fds.len());
        crate::job::limits::check(cores, 1 + 2 * usize::from(piped), released, piped).map_err(LaunchError::Limits)?;
        if let Some(timing) = &self.timing {
            self.config.timing = 1;
            self.env.extend(timing.env());
        }
        let segment = Segment::create(self.config).map_err(LaunchError::Segment)?;
        // Relaxed stores: the children inherit them through fork and exec.
        self.place(&segment)?;
        let (events, receiver) = mpsc::channel();
        let reaper = Reaper::new(cores, {
            let events = events.clone();
            move |rank, status| {
                let _ = events.send(Event::Exited(rank, status));
            }
        });
        let chip = self.timing.as_ref().map(|t| t.chip());
        let mut running = Running {
            reaper: Some(reaper),
            starters: None,
            segment,
            pids: Vec::with_capacity(cores),
            exits: vec![None; cores],
            events,
            receiver,
            pump: (self.output != Output::Inherit).then(Pump::new),
            grace: self.grace,
            started: Instant::now(),
            deadlock_after: self.deadlock_after,
            trace: self.timing.and_then(|t| t.trace),
            first,
            node: self.node,
            chip,
        };
        let plan = spawn::Plan {
            program: self.program,
            args: self.args,
            env: self.env,
            seg_fd: running.segment.fd().as_raw_fd(),
            cpus,
            first,
            size: self.config.cores,
            piped: self.output != Output::Inherit,
            rank_fds: self.rank_fds,
        };
        let (children, starters) = match spawn::start_all(plan) {
            Ok(started) => started,
            Err(failed) => {
                // `start_all` killed and reaped the ranks it had started; waiting for
                // an empty job ends the reaper's and the pump's threads.
                let _ = running.wait();
                return Err(LaunchError::Spawn { rank: failed.rank, error: failed.error });
            }
        };
        running.starters = starters;
        for (rank, child) in children.into_iter().enumerate() {
            running.watch(first + rank as u32, child, self.output, self.config.cores as usize);
        }
        running.reap_all();
        Ok(running)
    }
}

enum Event {
    Exited(u32, ExitStatus),
    Interrupt(Signal),
    /// Time to sample the wait marks (no event came for a while).
    Sample,
}

/// Forwards a signal to a running job (from a signal-handling thread).
#[derive(Clone)]
pub struct Interrupter(Sender<Event>);

impl Interrupter {
    /// Sends `signal` to every rank and aborts the job.
    pub fn interrupt(&self, signal: Signal) {
        let _ = self.0.send(Event::Interrupt(signal));
    }
}

/// A started job.
pub struct Running {
    segment: Segment,
    /// Reports each child's exit (taken when the job ends).
    reaper: Option<Reaper>,
    /// The threads that started the ranks, if not the caller's (see `spawn`).
    starters: Option<spawn::Starters>,
    pids: Vec<Pid>,
    exits: Vec<Option<ExitStatus>>,
    events: Sender<Event>,
    receiver: mpsc::Receiver<Event>,
    /// Relays the ranks' output unless they inherit the launcher's.
    pump: Option<Pump>,
    grace: Duration,
    started: Instant,
    deadlock_after: Option<Duration>,
    /// Where the ranks' trace parts are merged, in virtual-time mode.
    trace: Option<std::path::PathBuf>,
    /// The first rank started here: `pids`, `exits` and the reaper count from it.
    first: u32,
    /// This node's block, when the job spans nodes.
    node: Option<NodeSpec>,
    /// The chip, in virtual time.
    chip: Option<crate::timing::Chip>,
}

/// The first of a run of identical samples in which every live core was blocked.
#[derive(Default)]
struct DeadlockWatch {
    since: Option<(Instant, Blocked)>,
}

/// How often the monitor samples the slots for a deadlock.
const DEADLOCK_SAMPLE: Duration = Duration::from_millis(200);

impl Running {
    /// The job's segment, as mapped by the launcher.
    pub fn segment(&self) -> &Segment {
        &self.segment
    }

    /// This node's block of ranks, when the job spans nodes ([`Launch::node`]).
    pub fn node(&self) -> Option<NodeSpec> {
        self.node.clone()
    }

    /// The chip the job runs in virtual time, if it does.
    pub fn chip(&self) -> Option<&crate::timing::Chip> {
        self.chip.as_ref()
    }

    /// A handle that forwards signals to this job from another thread.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter(self.events.clone())
    }

    fn watch(&mut self, rank: u32, mut child: Child, output: Output, cores: usize) {
        self.pids.push(Pid::from_raw(child.id() as i32));
        let width = (cores.max(2) - 1).to_string().len();
        let tag = format!("[{rank:>width$}] ");
        let Some(pump) = &mut self.pump else { return };
        if let Some(out) = child.stdout.take() {
            pump.add(out.into(), relay(tag.clone(), output, false));
        }
        if let Some(err) = child.stderr.take() {
            pump.add(err.into(), relay(tag, output, true));
        }
    }

    /// Hands every child started so far to the reaper. Called once the children are
    /// all started, not as each one starts: the reaper holds a pidfd per child, and
    /// every later child would inherit all of them across fork only to close them at
    /// exec, an O(N) cost per child (5% of `sccrun -n 1024 hello`'s CPU time when
    /// they were opened as the children started). A child that dies early is still
    /// reported: until it is reaped here, its pidfd opens and reads as exited.
    fn reap_all(&mut self) {
        let Some(reaper) = &mut self.reaper else { return };
        for (rank, pid) in self.pids.iter().enumerate().skip(reaper.watched()) {
            reaper.watch(rank as u32, pid.as_raw() as u32);
        }
    }

    fn failure_cause(&self, rank: u32, status: ExitStatus) -> Option<AbortCause> {
        match (status.code(), status.signal()) {
            (_, Some(sig)) => Some(AbortCause::Signaled(sig)),
            (Some(0), _) => (self.segment.slot(self.first + rank).state.load(Ordering::Acquire) == slot_state::ATTACHED)
                .then_some(AbortCause::NoFinalize),
            (Some(code), _) => Some(AbortCause::Exited(code)),
            (None, None) => Some(AbortCause::Exited(-1)),
        }
    }

    fn kill_all(&self) {
        for (rank, pid) in self.pids.iter().enumerate() {
            // Only ranks not yet reported: a reaped pid could belong to someone else.
            if self.exits[rank].is_none() {
                let _ = kill(*pid, Signal::SIGKILL);
            }
        }
    }

    /// Samples the wait marks; aborts the job with a report once every live core has
    /// stayed blocked, unchanged, for `deadlock_after`.
    fn check_deadlock(&self, watch: &mut DeadlockWatch) {
        let Some(after) = self.deadlock_after else { return };
        let sample = blocked_cores(&self.segment, |rank| self.exits[rank as usize].is_some());
        let Some(sample) = sample else {
            watch.since = None;
            return;
        };
        match &watch.since {
            Some((at, seen)) if *seen == sample => {
                if at.elapsed() >= after && self.segment.abort(None, AbortCause::Deadlock) {
                    {
                        let mut report = String::from("sccemu: deadlock: every live core is blocked");
                        for (rank, mark, _) in &sample {
                            let id = self.segment.slot(*rank).core_id.load(Ordering::Relaxed);
                            report.push_str(&format!("\n  rank {rank} (core {id}) {mark}"));
                        }
                        eprintln!("{report}");
                    }
                }
            }
            _ => watch.since = Some((Instant::now(), sample)),
        }
    }

    /// Waits for every rank, enforcing fail-stop; returns how the job ended.
    pub fn wait(mut self) -> JobReport {
        let mut remaining = self.pids.len();
        let mut kill_at: Option<Instant> = None;
        let mut killed = false;
        let mut deadlock = DeadlockWatch::default();
        while remaining > 0 {
            let event = match kill_at {
                Some(at) => self.receiver.recv_timeout(at.saturating_duration_since(Instant::now())),
                None if self.deadlock_after.is_some() && !killed => {
                    match self.receiver.recv_timeout(DEADLOCK_SAMPLE) {
                        Err(RecvTimeoutError::Timeout) => Ok(Event::Sample),
                        event => event,
                    }
                }
                None => self.receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match event {
                Ok(Event::Exited(rank, status)) => {
                    self.exits[rank as usize] = Some(status);
                    remaining -= 1;
                    if let Some(cause) = self.failure_cause(rank, status) {
                        self.segment.abort(Some(self.first + rank), cause);
                    }
                }
                Ok(Event::Interrupt(signal)) => {
                    for (rank, pid) in self.pids.iter().enumerate() {
                        if self.exits[rank].is_none() {
                            let _ = kill(*pid, signal);
                        }
                    }
                    self.segment.abort(None, AbortCause::Interrupted(signal as i32));
                }
                Ok(Event::Sample) => self.check_deadlock(&mut deadlock),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill_all();
                    (killed, kill_at) = (true, None);
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if !killed && kill_at.is_none() && self.segment.job().check().is_err() {
                kill_at = Some(Instant::now() + self.grace);
            }
        }
        if let Some(pump) = self.pump.take() {
            pump.finish();
        }
        if let Some(reaper) = self.reaper.take() {
            reaper.finish();
        }
        // Every rank is reaped: their parent-death signal no longer matters.
        if let Some(starters) = self.starters.take() {
            starters.finish();
        }
        if let Some(file) = &self.trace {
            crate::job::vtime::merge_trace(file, self.node.as_ref(), self.first..self.first + self.pids.len() as u32);
        }
        JobReport {
            first_rank: self.first,
            exits: self.exits.iter().map(|s| s.unwrap_or_else(|| ExitStatus::from_raw(9))).collect(),
            failure: self.segment.job().check().err(),
            elapsed: self.started.elapsed(),
            vtimes: crate::job::vtime::collect(&self.segment),
        }
    }
}
