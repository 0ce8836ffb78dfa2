//! Starting the ranks' processes, several at a time.
//!
//! Each rank is a fork and an exec. Between the two the child clears close-on-exec on
//! the fds meant for it, asks for SIGKILL when the launcher dies (so no core outlives
//! its job), and pins itself. The parent's `spawn` returns only once the exec has
//! succeeded (std reports a failed exec as the spawn's error), so starting the ranks one
//! after another paid a whole fork and exec per rank on one CPU while the others ran
//! the started ranks: past a few hundred ranks the launcher set the pace. Large jobs
//! are therefore started by several threads, one per CPU up to [`MAX_THREADS`], each
//! taking the next rank; ranks start in roughly, not exactly, rank order. Jobs of up to
//! [`PARALLEL_FROM`] ranks are started by the calling thread alone, in rank order, as
//! before.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::core::facade::env;
use crate::core::pin;

/// Jobs larger than this are started by several threads.
const PARALLEL_FROM: usize = 64;
/// At most this many starting threads (each fork takes the launcher's memory map lock,
/// so more threads than this gain little).
const MAX_THREADS: usize = 8;

/// What every rank's process is started with.
pub(crate) struct Plan {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    /// The segment's fd, inherited by every rank.
    pub seg_fd: RawFd,
    /// Each started rank's CPU, if pinned: the ranks `first..first + cpus.len()`.
    pub cpus: Vec<Option<usize>>,
    /// The first rank this launcher starts (0 unless the job spans nodes).
    pub first: u32,
    /// Ranks in the whole job.
    pub size: u32,
    /// Whether the ranks' stdout and stderr are pipes to the launcher.
    pub piped: bool,
    /// One fd per rank for that rank alone, under this variable name.
    pub rank_fds: Option<(&'static str, Vec<OwnedFd>)>,
}

/// Why a rank could not be started.
pub(crate) struct Failed {
    pub rank: u32,
    pub error: std::io::Error,
}

/// The threads that started a large job's ranks. They must outlive the ranks: the
/// parent-death signal a rank asks for fires when the *thread* that forked it ends, not
/// the process. So they wait until [`Starters::finish`] (or until dropped, when the
/// launcher gives the job up: its ranks then die with them).
pub(crate) struct Starters {
    release: Option<mpsc::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl Starters {
    /// Lets the threads end; call once every rank has been reaped.
    pub(crate) fn finish(mut self) {
        self.release = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The ranks still to start, shared by the starting threads.
struct Work {
    plan: Plan,
    var: Option<&'static str>,
    own_fds: Mutex<Vec<Option<OwnedFd>>>,
    /// Ranks in the order to start them ([`start_order`]), and how many were taken.
    order: Vec<usize>,
    next: Mutex<usize>,
    started: Vec<Mutex<Option<Result<Child, Failed>>>>,
    parent: Pid,
}

impl Work {
    /// Starts ranks until none is left or one fails.
    fn run(&self) {
        loop {
            let rank = {
                let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
                let Some(&rank) = self.order.get(*next) else { return };
                *next += 1;
                rank
            };
            let own = self.own_fds.lock().unwrap_or_else(|e| e.into_inner()).get_mut(rank).and_then(Option::take);
            let result = start_one(&self.plan, rank, self.var.zip(own.as_ref()), self.parent)
                .map_err(|error| Failed { rank: self.plan.first + rank as u32, error });
            // The launcher's copy of the rank's own fd closes here, started or not.
            drop(own);
            let failed = result.is_err();
            *self.started[rank].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            if failed {
                // No thread takes another rank.
                *self.next.lock().unwrap_or_else(|e| e.into_inner()) = self.order.len();
                return;
            }
        }
    }
}

/// Starts every rank; on the first failure, kills and reaps the ranks already started
/// and returns the failure (module docs).
pub(crate) fn start_all(mut plan: Plan) -> Result<(Vec<Child>, Option<Starters>), Failed> {
    let cores = plan.cpus.len();
    let (var, fds) = match plan.rank_fds.take() {
        Some((var, fds)) => (Some(var), fds.into_iter().map(Some).collect()),
        None => (None, Vec::new()),
    };
    let work = Arc::new(Work {
        order: start_order(&plan.cpus),
        plan,
        var,
        own_fds: Mutex::new(fds),
        next: Mutex::new(0),
        started: (0..cores).map(|_| Mutex::new(None)).collect(),
        parent: nix::unistd::getpid(),
    });
    let threads = if cores > PARALLEL_FROM {
        std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS)
    } else {
        1
    };
    let starters = if threads == 1 {
        work.run();
        None
    } else {
        let (done, finished) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let threads = (0..threads)
            .map(|_| {
                let (work, done, released) = (work.clone(), done.clone(), released.clone());
                std::thread::spawn(move || {
                    work.run();
                    drop(work);
                    let _ = done.send(());
                    // Until `finish` drops the sender (module docs).
                    let _ = released.lock().unwrap_or_else(|e| e.into_inner()).recv();
                })
            })
            .collect::<Vec<_>>();
        for _ in 0..threads.len() {
            let _ = finished.recv();
        }
        Some(Starters { release: Some(release), threads })
    };
    let mut children = Vec::with_capacity(cores);
    let mut failure = None;
    for slot in &work.started {
        match slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(Ok(child)) => children.push(child),
            Some(Err(failed)) => failure = failure.or(Some(failed)),
            None => {}
        }
    }
    match failure {
        None => Ok((children, starters)),
        Some(failed) => {
            for child in &mut children {
                let _ = child.kill();
                let _ = child.wait();
            }
            Err(failed)
        }
    }
}

/// The order to start the ranks in: one rank per CPU in turn. Compact pinning gives
/// each CPU a contiguous block of ranks, so in rank order every rank of the first block
/// would start (exec, then the dynamic loader) on the first CPU while the others idled:
/// a third of the CPU time of `sccrun -n 1024 hello` was idle on 2 CPUs.
fn start_order(cpus: &[Option<usize>]) -> Vec<usize> {
    let mut by_cpu: std::collections::BTreeMap<Option<usize>, Vec<usize>> = Default::default();
    for (rank, cpu) in cpus.iter().enumerate() {
        by_cpu.entry(*cpu).or_default().push(rank);
    }
    let queues: Vec<Vec<usize>> = by_cpu.into_values().collect();
    let longest = queues.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest).flat_map(|i| queues.iter().filter_map(move |q| q.get(i).copied())).collect()
}

/// Starts rank `rank`, handing it `own` (its variable and fd), if any.
fn start_one(plan: &Plan, rank: usize, own: Option<(&str, &OwnedFd)>, parent: Pid) -> std::io::Result<Child> {
    let mut cmd = Command::new(&plan.program);
    cmd.args(&plan.args)
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .env(env::FD, plan.seg_fd.to_string())
        .env(env::RANK, (plan.first as usize + rank).to_string())
        .env(env::SIZE, plan.size.to_string());
    let keep: Vec<RawFd> = std::iter::once(plan.seg_fd).chain(own.map(|(_, fd)| fd.as_raw_fd())).collect();
    if let Some((var, fd)) = own {
        cmd.env(var, fd.as_raw_fd().to_string());
    }
    if plan.piped {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let cpu_set = plan.cpus[rank].map(pin::cpu_set).transpose().map_err(std::io::Error::other)?;
    // SAFETY: the closure runs between fork and exec and makes only async-signal-safe
    // system calls (fcntl, prctl, getppid, sched_setaffinity) on values prepared before
    // the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            for &fd in &keep {
                fcntl(std::os::fd::BorrowedFd::borrow_raw(fd), FcntlArg::F_SETFD(FdFlag::empty()))?;
            }
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The launcher may have died before the line above took effect.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::other("launcher exited"));
            }
            if let Some(set) = &cpu_set {
                nix::sched::sched_setaffinity(Pid::from_raw(0), set)?;
            }
            Ok(())
        });
    }
    cmd.spawn()
}

#[cfg(test)]
mod tests {
    use super::start_order;

    #[test]
    fn ranks_start_one_per_cpu_in_turn_each_once() {
        // Compact pinning of 5 ranks on 2 CPUs: 0-2 on CPU 0, 3-4 on CPU 1.
        let compact = [Some(0), Some(0), Some(0), Some(1), Some(1)];
        assert_eq!(start_order(&compact), [0, 3, 1, 4, 2]);
        // Scatter already alternates; unpinned ranks start in rank order.
        assert_eq!(start_order(&[Some(0), Some(1), Some(0), Some(1)]), [0, 1, 2, 3]);
        assert_eq!(start_order(&[None, None, None]), [0, 1, 2]);
        let mut big: Vec<Option<usize>> = (0..4096).map(|r| Some(r * 3 / 4096)).collect();
        big.reverse();
        let mut order = start_order(&big);
        order.sort_unstable();
        assert_eq!(order, (0..4096).collect::<Vec<_>>());
    }
}
