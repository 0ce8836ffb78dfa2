//! The launcher's side of virtual time: what it tells the ranks (the chip, the trace
//! file) and what it reports when they are done (each core's virtual time, split into
//! compute, communication and waiting, and the job's makespan).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::segment::mapping::Segment;
use crate::sync::Ordering;
use crate::timing::chip::ComputeSource;
use crate::timing::{CHIP_VAR, Chip, TRACE_VAR};

/// A job in virtual time.
#[derive(Clone, Debug)]
pub struct VirtualTime {
    /// The chip's description (TOML).
    pub chip: String,
    /// Where the trace goes, if wanted.
    pub trace: Option<PathBuf>,
}

impl VirtualTime {
    /// The SCC's default model, or the description at `file` (`sccrun --timing
    /// scc=FILE`): checked here, so that a bad file is refused before any rank starts.
    pub fn from_spec(spec: &str) -> Result<VirtualTime, String> {
        let chip = match spec.strip_prefix("scc") {
            Some("") => String::new(),
            Some(rest) => match rest.strip_prefix('=') {
                Some(file) => std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?,
                None => return Err(format!("--timing {spec}: use scc or scc=FILE")),
            },
            None => return Err(format!("--timing {spec}: use scc or scc=FILE")),
        };
        if !chip.trim().is_empty() {
            Chip::from_toml(&chip).map_err(|e| e.to_string())?;
        }
        Ok(VirtualTime { chip, trace: None })
    }

    /// The chip this describes (checked by [`VirtualTime::from_spec`]).
    pub fn chip(&self) -> Chip {
        if self.chip.trim().is_empty() { Chip::default() } else { Chip::from_toml(&self.chip).unwrap_or_default() }
    }

    /// Where the chip takes compute time from, for the report (a rank that cannot
    /// open an instruction counter says so itself, and counts CPU time).
    pub fn compute_note(&self) -> String {
        let chip = self.chip();
        let c = &chip.compute;
        match c.source {
            ComputeSource::CpuTime => format!("compute: thread CPU time x {} (host to target)", c.host_to_target),
            ComputeSource::Instructions => format!("compute: retired instructions x {} cycles per instruction", c.cpi),
            ComputeSource::None => "compute: not charged".into(),
        }
    }

    /// The environment every rank gets.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env = vec![(CHIP_VAR.into(), self.chip.clone().into())];
        if let Some(trace) = &self.trace {
            env.push((TRACE_VAR.into(), trace.clone().into()));
        }
        env
    }
}

/// Merges the trace parts of `ranks` (this launcher's) into `file`, or across nodes
/// beside it, for `node` (`sccrun` merges the nodes' traces on one machine).
pub(crate) fn merge_trace(file: &std::path::Path, node: Option<&crate::job::node::NodeSpec>, ranks: std::ops::Range<u32>) {
    let into = node.map_or(file.to_path_buf(), |spec| crate::timing::trace::node_path(file, spec.node));
    if let Err(e) = crate::timing::trace::merge(file, ranks, &into) {
        eprintln!("sccemu: cannot write the trace {}: {e}", into.display());
    }
}

/// One core's virtual times, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreTimes {
    /// The core's rank.
    pub rank: u32,
    /// When the core last left the library: its finishing time.
    pub end: u64,
    /// Compute.
    pub compute: u64,
    /// Communication.
    pub comm: u64,
    /// Waiting.
    pub wait: u64,
}

/// The times of every rank this segment ran (all of them, unless the job spans
/// nodes), from the control slots, if the job ran in virtual time.
pub fn collect(segment: &Segment) -> Option<Vec<CoreTimes>> {
    let config = segment.config();
    (config.timing != 0).then(|| {
        (0..config.cores)
            .filter(|&rank| config.is_local(rank))
            .map(|rank| {
                // Relaxed: every rank has exited; nothing is being written.
                let w = |i: usize| segment.slot(rank).vtime[i].load(Ordering::Relaxed);
                CoreTimes { rank, end: w(0), compute: w(1), comm: w(2), wait: w(3) }
            })
            .collect()
    })
}

fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// The report `sccrun` prints at the end of a virtual-time job.
pub fn report(times: &[CoreTimes]) -> String {
    let mut out = String::from("virtual time (µs)          total        compute           comm           wait\n");
    for t in times {
        let _ = writeln!(
            out,
            "  core {:>4} {:>16.6} {:>14.6} {:>14.6} {:>14.6}",
            t.rank,
            us(t.end),
            us(t.compute),
            us(t.comm),
            us(t.wait)
        );
    }
    let makespan = times.iter().map(|t| t.end).max().unwrap_or(0);
    let _ = write!(out, "  makespan  {:>16.6} µs", us(makespan));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_the_report() {
        assert!(VirtualTime::from_spec("scc").unwrap().chip.is_empty());
        assert!(VirtualTime::from_spec("scc=/no/such/file").is_err());
        assert!(VirtualTime::from_spec("knl").is_err());
        assert_eq!(VirtualTime::from_spec("scc").unwrap().compute_note(), "compute: thread CPU time x 10 (host to target)");
        let t = CoreTimes { rank: 6, end: 5_000_000, compute: 1_000_000, comm: 3_000_000, wait: 1_000_000 };
        let text = report(&[CoreTimes { rank: 5, ..t }, t]);
        assert!(text.contains("core    6         5.000000       1.000000       3.000000       1.000000"), "{text}");
        assert!(text.contains("core    5 "), "{text}");
        assert!(text.ends_with("makespan          5.000000 µs"), "{text}");
    }
}
