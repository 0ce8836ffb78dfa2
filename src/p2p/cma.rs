//! Cross-memory attach (CMA): how a receiver copies a large message straight out of its
//! sender's memory, `process_vm_readv(2)`, and when a message is large enough for it.
//!
//! A blocking send of at least [`SingleCopy::threshold`] bytes to another core leaves
//! its bytes where they are and announces them (`rendezvous`); the receiver copies them
//! with one `process_vm_readv` into the receive's buffer and answers, and the send
//! returns on the answer. One copy instead of the ring's two (sender into the ring,
//! receiver out of it), and no ring space.
//!
//! The threshold ([`DEFAULT_THRESHOLD`]) was chosen by measurement on the 2-CPU
//! development machine (`cargo run --release --example p2p_sweep`, both channels,
//! ping-pong and streaming, 4 KiB to 4 MiB; see docs/ARCHITECTURE.md and the README):
//! below it the ring's pipelined copies and the syscall-free path win, above it the
//! single copy does. `SCCEMU_SINGLE_COPY` overrides it for a process: a byte count
//! (`65536`, `64K`, `1M`), or `off`.
//!
//! When the kernel refuses. The copy needs ptrace access to the sender (same user, and
//! the Yama LSM's `ptrace_scope` allowing it; seccomp profiles of containers may forbid
//! the syscall). Once per process, before its first announcement, this module checks
//! what it can: the syscall must work on the process itself (seccomp, `ENOSYS`); Yama's
//! scope 1 (only ancestors may attach, so sibling ranks may not) is lifted for this
//! process with `PR_SET_PTRACER_ANY`, as Open MPI's CMA transport does; scopes 2 and 3
//! turn the path off. A receiver whose copy is still refused (`EPERM`) answers so, the
//! sender sends the bytes through the channel, and stops announcing for good: the
//! fallback costs one round trip per sending process, once.
//!
//! Virtual time does not depend on any of this: a message of at least the threshold is
//! charged as a single copy whichever way the host moved it (see `timed`).

use std::io::IoSliceMut;

use nix::errno::Errno;
use nix::sys::uio::{RemoteIoVec, process_vm_readv};
use nix::unistd::Pid;

use crate::sync::{AtomicU32, Ordering};

/// Messages of at least this many bytes take the single-copy path by default.
pub const DEFAULT_THRESHOLD: usize = 64 * 1024;

/// The environment variable that sets the threshold (`off` turns the path off).
pub const THRESHOLD_VAR: &str = "SCCEMU_SINGLE_COPY";

const UNKNOWN: u32 = 0;
const USABLE: u32 = 1;
const REFUSED: u32 = 2;

/// This process's single-copy settings and what it learnt about the kernel.
pub(crate) struct SingleCopy {
    threshold: Option<usize>,
    /// `UNKNOWN` until the first announcement checks the host, then `USABLE` or
    /// `REFUSED` (also after a receiver refused a copy).
    state: AtomicU32,
}

/// Why a copy out of another process failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The kernel does not allow it (`EPERM`, `EACCES`, `ENOSYS`): use the channel.
    Refused,
    /// No such process: the sender died.
    Gone,
    /// The sender's memory is not readable there (`errno`).
    Fault(i32),
}

/// Parses a [`THRESHOLD_VAR`] value: `off`, or bytes with an optional `K`/`M` suffix.
pub(crate) fn parse_threshold(value: &str) -> Result<Option<usize>, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("off") || v == "0" {
        return Ok(None);
    }
    let (digits, unit) = match v.as_bytes().last() {
        Some(b'k' | b'K') => (&v[..v.len() - 1], 1024),
        Some(b'm' | b'M') => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .map(Some)
        .ok_or_else(|| format!("{THRESHOLD_VAR}={value:?}: expected a byte count (65536, 64K, 1M) or off"))
}

impl SingleCopy {
    /// The settings of this process, from [`THRESHOLD_VAR`] (an unreadable value turns
    /// the path off, with one line on standard error).
    pub(crate) fn from_env() -> SingleCopy {
        let threshold = match std::env::var(THRESHOLD_VAR) {
            Err(_) => Some(DEFAULT_THRESHOLD),
            Ok(v) => parse_threshold(&v).unwrap_or_else(|e| {
                eprintln!("sccemu: {e}; the single-copy path is off");
                None
            }),
        };
        SingleCopy::new(threshold)
    }

    /// Settings with `threshold` (`None`: off).
    pub(crate) fn new(threshold: Option<usize>) -> SingleCopy {
        SingleCopy { threshold, state: AtomicU32::new(UNKNOWN) }
    }

    /// The smallest message of the single-copy path (`None`: off).
    pub(crate) fn threshold(&self) -> Option<usize> {
        self.threshold
    }

    /// Whether a message of `len` bytes is large enough for the single-copy path (and
    /// is charged as one copy in virtual time), whatever the host allows.
    pub(crate) fn applies(&self, len: usize) -> bool {
        self.threshold.is_some_and(|t| len >= t)
    }

    /// Whether this process may announce messages: checks the host once (module docs).
    pub(crate) fn usable(&self) -> bool {
        // Relaxed, all: the state is a cache of facts about the host; racing threads
        // compute the same answer, and nothing else is published through it.
        match self.state.load(Ordering::Relaxed) {
            USABLE => true,
            REFUSED => false,
            _ => {
                let usable = self.threshold.is_some() && host_allows();
                let _ = self.state.compare_exchange(
                    UNKNOWN,
                    if usable { USABLE } else { REFUSED },
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                self.state.load(Ordering::Relaxed) == USABLE
            }
        }
    }

    /// A receiver refused a copy: announce no more.
    pub(crate) fn refused(&self) {
        self.state.store(REFUSED, Ordering::Relaxed);
    }
}

/// The host's answer for this process: the syscall works, and Yama lets siblings in.
fn host_allows() -> bool {
    // The kernel checks access before it touches memory: reading one byte at address 0
    // of this very process fails with EFAULT when the syscall itself is allowed, with
    // ENOSYS or EPERM when seccomp or the kernel forbid it.
    let mut byte = [0u8; 1];
    let probe = process_vm_readv(Pid::this(), &mut [IoSliceMut::new(&mut byte)], &[RemoteIoVec { base: 0, len: 1 }]);
    if !matches!(probe, Err(Errno::EFAULT) | Ok(_)) {
        return false;
    }
    match std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").map(|s| s.trim().to_owned()) {
        // No Yama, or classic ptrace permissions: same user suffices.
        Err(_) => true,
        Ok(s) if s == "0" => true,
        // Only ancestors may attach: let the other ranks (siblings) in.
        Ok(s) if s == "1" => rustix::process::set_ptracer(rustix::process::PTracer::Any).is_ok(),
        Ok(_) => false,
    }
}

/// Copies `dst.len()` bytes at `addr` in process `pid` into `dst`.
pub(crate) fn read(pid: u32, addr: u64, dst: &mut [u8]) -> Result<(), ReadError> {
    let pid = Pid::from_raw(i32::try_from(pid).map_err(|_| ReadError::Gone)?);
    let mut done = 0;
    while done < dst.len() {
        let base = usize::try_from(addr).map_err(|_| ReadError::Fault(Errno::EFAULT as i32))? + done;
        let remote = [RemoteIoVec { base, len: dst.len() - done }];
        // A single call may copy less (past the kernel's per-call limit, or up to a
        // page it could not read): go on from where it stopped.
        match process_vm_readv(pid, &mut [IoSliceMut::new(&mut dst[done..])], &remote) {
            Ok(0) => return Err(ReadError::Fault(Errno::EFAULT as i32)),
            Ok(n) => done += n,
            Err(Errno::EINTR) => {}
            Err(Errno::EPERM | Errno::EACCES | Errno::ENOSYS) => return Err(ReadError::Refused),
            Err(Errno::ESRCH) => return Err(ReadError::Gone),
            Err(e) => return Err(ReadError::Fault(e as i32)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse() {
        assert_eq!(parse_threshold("65536"), Ok(Some(65536)));
        assert_eq!(parse_threshold("64K"), Ok(Some(65536)));
        assert_eq!(parse_threshold(" 2m "), Ok(Some(2 << 20)));
        assert_eq!(parse_threshold("off"), Ok(None));
        assert_eq!(parse_threshold("0"), Ok(None));
        assert!(parse_threshold("lots").is_err());
        assert!(parse_threshold("K").is_err());
    }

    #[test]
    fn reads_own_memory_and_reports_bad_addresses() {
        let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; src.len()];
        if read(std::process::id(), src.as_ptr() as u64, &mut dst) == Err(ReadError::Refused) {
            return; // the host forbids the syscall: nothing to check
        }
        assert_eq!(dst, src);
        assert!(matches!(read(std::process::id(), 0, &mut dst[..8]), Err(ReadError::Fault(_))));
        let s = SingleCopy::new(Some(100));
        assert!(!s.applies(99) && s.applies(100));
        assert!(!SingleCopy::new(None).applies(usize::MAX));
    }
}
