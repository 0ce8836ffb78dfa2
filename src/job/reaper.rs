//! Waiting for a job's children from one thread.
//!
//! Each child gets a pidfd, registered in one epoll set; one thread sleeps on the set,
//! reaps each child whose pidfd turns readable (`waitpid` on its pid: it has exited,
//! so the call returns at once) and reports its status.
//!
//! Why not a thread per child (`Child::wait`): each thread is a stack mapping, a guard
//! page and touched pages in the launcher, and every later `fork` of the launcher
//! copies all of them (page tables, VMAs) and write-protects the touched pages again.
//! At 1024 cores the launcher's forks, the forked copies' execs and the copy-on-write
//! faults were 89% of the job's CPU time (`perf`, `sccrun -n 1024 hello`): quadratic in
//! the core count.
//!
//! Where a pidfd cannot be had (a kernel older than 5.3, or no fd left under
//! `RLIMIT_NOFILE`), that child falls back to a thread of its own, so a job never fails
//! for want of a pidfd.
//!
//! Nothing else in the process may wait for these pids: the launcher drops the std
//! `Child` handles (which neither wait nor kill on drop) and reaps by pid here.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rustix::event::epoll;
use rustix::process::{Pid, PidfdFlags, WaitOptions, pidfd_open, waitpid};

/// The token of the stop eventfd in the epoll set (ranks are below `u32::MAX`).
const STOP: u64 = u64::MAX;

type Report = dyn Fn(u32, ExitStatus) + Send + Sync;

/// Each watched child's pid and pidfd, by rank, until it is reaped.
type Pidfds = Mutex<Vec<Option<(Pid, OwnedFd)>>>;

/// The reaper of one job's children (module docs).
pub struct Reaper {
    epoll: Option<Arc<OwnedFd>>,
    pidfds: Arc<Pidfds>,
    stop: Option<OwnedFd>,
    report: Arc<Report>,
    /// Children watched so far.
    watched: usize,
    threads: Vec<JoinHandle<()>>,
}

impl Reaper {
    /// A reaper for up to `ranks` children, calling `report(rank, status)` from its
    /// thread as each one exits.
    pub fn new(ranks: usize, report: impl Fn(u32, ExitStatus) + Send + Sync + 'static) -> Reaper {
        let mut reaper = Reaper {
            epoll: None,
            pidfds: Arc::new(Mutex::new((0..ranks).map(|_| None).collect())),
            stop: None,
            report: Arc::new(report),
            watched: 0,
            threads: Vec::new(),
        };
        // Without epoll or an eventfd every child gets a thread (module docs).
        let Ok(epoll) = epoll::create(epoll::CreateFlags::CLOEXEC) else { return reaper };
        let Ok(stop) = rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC) else { return reaper };
        if epoll::add(&epoll, &stop, epoll::EventData::new_u64(STOP), epoll::EventFlags::IN).is_err() {
            return reaper;
        }
        let epoll = Arc::new(epoll);
        let (pidfds, report, set) = (reaper.pidfds.clone(), reaper.report.clone(), epoll.clone());
        reaper.threads.push(std::thread::spawn(move || reap_loop(&set, &pidfds, &*report)));
        reaper.epoll = Some(epoll);
        reaper.stop = Some(stop);
        reaper
    }

    /// How many children [`Reaper::watch`] was given.
    pub fn watched(&self) -> usize {
        self.watched
    }

    /// Watches child `pid`, which plays `rank`.
    pub fn watch(&mut self, rank: u32, pid: u32) {
        self.watched += 1;
        let pid = Pid::from_raw(pid as i32).expect("a child's pid is positive");
        if let Some(epoll) = &self.epoll
            && let Ok(fd) = pidfd_open(pid, PidfdFlags::empty())
        {
            // Added and stored under the lock: the loop takes it for the event, which may
            // come as soon as the add, and then finds the fd.
            let mut fds = self.pidfds.lock().unwrap_or_else(|e| e.into_inner());
            let data = epoll::EventData::new_u64(u64::from(rank));
            if epoll::add(&**epoll, &fd, data, epoll::EventFlags::IN).is_ok() {
                fds[rank as usize] = Some((pid, fd));
                return;
            }
        }
        let report = self.report.clone();
        self.threads.push(std::thread::spawn(move || {
            if let Some(status) = reap(pid) {
                report(rank, status);
            }
        }));
    }

    /// Stops the thread and joins every thread. Call once every watched child was
    /// reported (or killed and reported): a child still running keeps its own thread,
    /// if it has one, until it ends.
    pub fn finish(mut self) {
        // The eventfd stays open until the thread has seen it: closing it would take it
        // out of the epoll set, and the wake-up with it.
        if let Some(stop) = &self.stop {
            let _ = rustix::io::write(stop, &1u64.to_ne_bytes());
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Waits for `pid` to end and reaps it; `None` if it cannot be waited for (already
/// reaped, which only this module does).
fn reap(pid: Pid) -> Option<ExitStatus> {
    loop {
        match waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => return Some(ExitStatus::from_raw(status.as_raw())),
            Err(rustix::io::Errno::INTR) => continue,
            _ => return None,
        }
    }
}

fn reap_loop(epoll: &OwnedFd, pidfds: &Pidfds, report: &Report) {
    let mut events = Vec::with_capacity(64);
    loop {
        events.clear();
        match epoll::wait(epoll, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return,
        }
        for event in &events {
            let token = event.data.u64();
            if token == STOP {
                return;
            }
            let rank = token as u32;
            // A readable pidfd: the child has exited. Dropping the fd removes it from
            // the set, so each child is reported once.
            let Some((pid, fd)) = pidfds.lock().unwrap_or_else(|e| e.into_inner())[rank as usize].take()
            else {
                continue;
            };
            drop(fd);
            if let Some(status) = reap(pid) {
                report(rank, status);
            }
        }
    }
}
