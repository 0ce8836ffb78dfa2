//! Reading many pipes from one thread: the ranks' output ([`relay`]) and their results.
//!
//! Each pipe is registered with a sink; one thread sleeps on an epoll set of them all,
//! reads what a readable pipe holds and hands it to that pipe's sink, and at end of
//! file calls the sink once more with `None` and closes the pipe.
//!
//! Why not a thread per pipe: the launcher forks once per rank, and every thread it has
//! by then (a stack, a guard page, touched pages) is copied by each later fork: at 1024
//! ranks with their output relayed, thousands of threads made starting the job
//! quadratic in the core count (see `reaper`, which does the same for exits).
//!
//! Should epoll be unavailable, each pipe gets a thread of its own, as before.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rustix::event::epoll;
use rustix::io::Errno;

use crate::job::launcher::Output;

/// What a pipe's bytes go to: `Some(bytes)` as they come, `None` once at end of file.
pub type Sink = Box<dyn FnMut(Option<&[u8]>) + Send>;

/// The token of the wake-up eventfd (pipes are numbered from 0).
const WAKE: u64 = u64::MAX;

/// Bytes read from a pipe at a time: its default capacity.
const CHUNK: usize = 64 * 1024;

struct Streams {
    open: HashMap<u64, (OwnedFd, Sink)>,
    /// No pipe will be added any more: the thread ends once `open` is empty.
    closed: bool,
}

/// Pipes drained by one thread (module docs).
pub struct Pump {
    epoll: Option<(Arc<OwnedFd>, Arc<OwnedFd>)>,
    streams: Arc<Mutex<Streams>>,
    next: u64,
    threads: Vec<JoinHandle<()>>,
}

impl Pump {
    /// A pump with no pipe yet.
    pub fn new() -> Pump {
        let streams = Arc::new(Mutex::new(Streams { open: HashMap::new(), closed: false }));
        let mut pump = Pump { epoll: None, streams, next: 0, threads: Vec::new() };
        let Ok(set) = epoll::create(epoll::CreateFlags::CLOEXEC) else { return pump };
        let Ok(wake) = rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC) else { return pump };
        if epoll::add(&set, &wake, epoll::EventData::new_u64(WAKE), epoll::EventFlags::IN).is_err() {
            return pump;
        }
        let (set, wake) = (Arc::new(set), Arc::new(wake));
        let (streams, thread_set, thread_wake) = (pump.streams.clone(), set.clone(), wake.clone());
        pump.threads.push(std::thread::spawn(move || pump_loop(&thread_set, &thread_wake, &streams)));
        pump.epoll = Some((set, wake));
        pump
    }

    /// Drains `fd` (a pipe's read end) into `sink`.
    pub fn add(&mut self, fd: OwnedFd, mut sink: Sink) {
        let token = self.next;
        self.next += 1;
        if let Some((set, _)) = &self.epoll {
            // Added and stored under the lock: the thread takes it for the first event.
            let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
            if epoll::add(&**set, &fd, epoll::EventData::new_u64(token), epoll::EventFlags::IN).is_ok() {
                streams.open.insert(token, (fd, sink));
                return;
            }
        }
        self.threads.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            while let Some(n) = read_some(&fd, &mut buf) {
                sink(Some(&buf[..n]));
            }
            sink(None);
        }));
    }

    /// Waits until every pipe reached end of file (every writer closed it) and its sink
    /// saw `None`.
    pub fn finish(mut self) {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        if let Some((_, wake)) = &self.epoll {
            let _ = rustix::io::write(&**wake, &1u64.to_ne_bytes());
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Default for Pump {
    fn default() -> Pump {
        Pump::new()
    }
}

/// One read: `Some(n)` with `n > 0` bytes, `None` at end of file or on an error.
fn read_some(fd: &OwnedFd, buf: &mut [u8]) -> Option<usize> {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => return None,
            Ok(n) => return Some(n),
            Err(Errno::INTR) => continue,
            Err(_) => return None,
        }
    }
}

fn pump_loop(set: &OwnedFd, wake: &OwnedFd, streams: &Mutex<Streams>) {
    let mut events = Vec::with_capacity(64);
    let mut buf = vec![0u8; CHUNK];
    loop {
        events.clear();
        match epoll::wait(set, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return,
        }
        let mut streams = streams.lock().unwrap_or_else(|e| e.into_inner());
        for event in &events {
            let token = event.data.u64();
            if token == WAKE {
                // Consumed, or it would stay readable and spin this loop.
                let _ = rustix::io::read(wake, &mut [0u8; 8]);
                continue;
            }
            let Some((fd, sink)) = streams.open.get_mut(&token) else { continue };
            // Readable: data, or end of file (then read returns 0 at once).
            match read_some(fd, &mut buf) {
                Some(n) => sink(Some(&buf[..n])),
                None => {
                    sink(None);
                    // Closing the fd takes it out of the set.
                    streams.open.remove(&token);
                }
            }
        }
        if streams.closed && streams.open.is_empty() {
            return;
        }
    }
}

/// Lines libtest prints when a test binary is re-run as a job's child.
fn is_test_harness_noise(line: &str) -> bool {
    line.is_empty() || line == "running 1 test"
}

/// A sink that prints each line of a rank's stream with its tag (the last line even
/// without a newline).
pub(crate) fn relay(tag: String, output: Output, is_stderr: bool) -> Sink {
    let mut pending: Vec<u8> = Vec::new();
    let emit = move |line: &[u8]| {
        let line = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(line));
        match (output, is_stderr) {
            (Output::Tagged, false) => {
                let _ = writeln!(std::io::stdout().lock(), "{tag}{line}");
            }
            (Output::Tagged, true) => {
                let _ = writeln!(std::io::stderr().lock(), "{tag}{line}");
            }
            (_, _) if is_test_harness_noise(&line) => {}
            (_, false) => println!("{tag}{line}"),
            (_, true) => eprintln!("{tag}{line}"),
        }
    };
    Box::new(move |chunk| match chunk {
        Some(bytes) => {
            pending.extend_from_slice(bytes);
            let mut start = 0;
            while let Some(end) = pending[start..].iter().position(|&b| b == b'\n') {
                emit(&pending[start..start + end]);
                start += end + 1;
            }
            pending.drain(..start);
        }
        None if !pending.is_empty() => emit(&std::mem::take(&mut pending)),
        None => {}
    })
}
