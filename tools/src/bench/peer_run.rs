//! One mpirun of a peer program and the rows it printed.
//!
//! The program prints `BEGIN pattern bytes` before and `ROW pattern bytes reps median
//! p10 p90` after each configuration (see `benches/mpi/common.h`). A run that times out
//! or fails keeps the rows it finished; the configuration it was in becomes a row with
//! no figure and a note saying when it gave up, and the run as a whole becomes an
//! [`Incident`] for the report.

use std::path::Path;
use std::time::Duration;

use sccemu_benches::measure::{self, Row, SuiteParams};

use super::catalog::PeerSpec;
use super::peers::Mpi;
use super::process::{last_line, run_with_timeout};

/// A peer run that did not finish every configuration.
#[derive(Clone, Debug)]
pub struct Incident {
    pub suite: String,
    pub implementation: String,
    /// The patterns the run measures, e.g. `halo-p2p,halo-fence`.
    pub patterns: String,
    /// 0 when the failure precedes any run (a build).
    pub cores: u32,
    pub what: String,
}

/// Everything one peer run contributes.
pub struct PeerOutcome {
    pub rows: Vec<Row>,
    pub incident: Option<Incident>,
    /// Killed for running out of time: more ranks would only take longer.
    pub timed_out: bool,
}

/// What a run needs besides the spec.
pub struct PeerRun<'a> {
    pub suite: &'a str,
    pub mpi: Mpi,
    pub exe: &'a Path,
    pub spec: &'a PeerSpec,
    pub cores: u32,
    pub params: &'a SuiteParams,
    pub timeout: Duration,
    pub logs: &'a Path,
}

impl PeerRun<'_> {
    pub fn run(&self) -> PeerOutcome {
        let oversubscribed = measure::oversubscribed(self.cores);
        let build = self.exe.parent().and_then(Path::parent).unwrap_or(self.logs);
        let mut command = match self.mpi.mpirun(self.cores, oversubscribed, self.exe, build) {
            Ok(command) => command,
            Err(e) => return self.failed_outright(format!("could not write the SMPI platform: {e}")),
        };
        let sizes: Vec<String> = self.spec.sizes.pick(self.params).iter().map(u64::to_string).collect();
        command
            .arg("--patterns")
            .arg(self.spec.patterns.join(","))
            .arg("--sizes")
            .arg(sizes.join(","))
            .arg("--reps")
            .arg(self.params.reps(20).to_string())
            .arg("--warmup")
            .arg(self.params.warmup(3).to_string())
            .arg("--inner")
            .arg(self.spec.inner(self.params).to_string());
        let stem = format!(
            "{}-{}-{}-n{}",
            self.suite,
            self.mpi.name(),
            self.spec.patterns.first().copied().unwrap_or(self.spec.program),
            self.cores
        );
        let (out, err) = (self.logs.join(format!("{stem}.out")), self.logs.join(format!("{stem}.err")));
        let finished = match run_with_timeout(&mut command, &out, &err, self.timeout) {
            Ok(finished) => finished,
            Err(e) => return self.failed_outright(format!("could not start mpirun: {e}")),
        };
        let printed = std::fs::read_to_string(&out).unwrap_or_default();
        let mut outcome = self.parse(&printed);
        outcome.timed_out = finished.timed_out();
        let problem = if finished.timed_out() {
            Some(format!("gave up after {:.1} s (timeout)", finished.elapsed.as_secs_f64()))
        } else if !finished.succeeded() {
            let status = finished.status.map_or_else(String::new, |s| s.to_string());
            Some(format!(
                "failed after {:.1} s ({status}): {}",
                finished.elapsed.as_secs_f64(),
                last_line(&err)
            ))
        } else {
            None
        };
        if let Some(what) = problem {
            if let Some((pattern, bytes)) = unfinished(&printed) {
                outcome.rows.push(self.missing_row(&pattern, bytes, &what));
            }
            outcome.incident = Some(self.incident(format!("{what}; log: logs/{stem}.err")));
        }
        outcome
    }

    fn parse(&self, printed: &str) -> PeerOutcome {
        let rows = printed.lines().filter_map(|line| self.parse_row(line)).collect();
        PeerOutcome { rows, incident: None, timed_out: false }
    }

    fn parse_row(&self, line: &str) -> Option<Row> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [tag, pattern, bytes, reps, median, p10, p90] = fields.as_slice() else { return None };
        if *tag != "ROW" {
            return None;
        }
        let bytes: u64 = bytes.parse().ok()?;
        let median_us: f64 = median.parse().ok()?;
        Some(Row {
            suite: self.suite.into(),
            implementation: self.mpi.name().into(),
            pattern: (*pattern).into(),
            cores: self.cores,
            bytes,
            reps: reps.parse().ok()?,
            median_us,
            p10_us: p10.parse().ok()?,
            p90_us: p90.parse().ok()?,
            mb_per_s: (bytes > 0).then(|| bytes as f64 / median_us),
            oversubscribed: measure::oversubscribed(self.cores),
            note: None,
        })
    }

    fn missing_row(&self, pattern: &str, bytes: u64, note: &str) -> Row {
        Row {
            suite: self.suite.into(),
            implementation: self.mpi.name().into(),
            pattern: pattern.into(),
            cores: self.cores,
            bytes,
            reps: 0,
            median_us: f64::NAN,
            p10_us: f64::NAN,
            p90_us: f64::NAN,
            mb_per_s: None,
            oversubscribed: measure::oversubscribed(self.cores),
            note: Some(note.into()),
        }
    }

    fn incident(&self, what: String) -> Incident {
        Incident {
            suite: self.suite.into(),
            implementation: self.mpi.name().into(),
            patterns: self.spec.patterns.join(","),
            cores: self.cores,
            what,
        }
    }

    fn failed_outright(&self, what: String) -> PeerOutcome {
        PeerOutcome { rows: Vec::new(), incident: Some(self.incident(what)), timed_out: false }
    }

    /// Not run, because fewer ranks of the same program already timed out: one row
    /// per pattern (at the first size) says so, so that the table shows the gap.
    pub fn skipped(&self, why: &str) -> PeerOutcome {
        let first_size = self.spec.sizes.pick(self.params).first().copied().unwrap_or(0);
        let rows = self.spec.patterns.iter().map(|p| self.missing_row(p, first_size, why)).collect();
        PeerOutcome { rows, incident: Some(self.incident(why.to_owned())), timed_out: false }
    }
}

/// The configuration begun last but never reported, if any.
fn unfinished(printed: &str) -> Option<(String, u64)> {
    let mut open = None;
    for line in printed.lines() {
        let mut fields = line.split_whitespace();
        match (fields.next(), fields.next(), fields.next().and_then(|b| b.parse().ok())) {
            (Some("BEGIN"), Some(pattern), Some(bytes)) => open = Some((pattern.to_owned(), bytes)),
            (Some("ROW"), ..) => open = None,
            _ => {}
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_configuration_is_the_last_begin_without_a_row() {
        let printed = "BEGIN latency 1\nROW latency 1 3 1 1 1\nBEGIN latency 8\n";
        assert_eq!(unfinished(printed), Some(("latency".into(), 8)));
        assert_eq!(unfinished("BEGIN a 1\nROW a 1 3 1 1 1\n"), None);
    }
}
