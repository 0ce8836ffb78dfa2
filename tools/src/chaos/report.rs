//! The campaign's table: runs and outcomes per fault kind and per core count, then
//! the seeds that were not clean.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use super::check::{Outcome, RunResult};
use super::plan::Plan;

/// One line naming what a seed ran, e.g. `8 cores, 5 steps, rank 3 dies by panic at step 2.1`.
pub fn describe(plan: &Plan) -> String {
    let f = plan.fault;
    format!(
        "{} cores, {} steps, rank {} dies by {} at step {}.{}",
        plan.cores,
        plan.steps.len(),
        f.victim,
        f.kind.name(),
        f.step,
        f.phase
    )
}

fn row(out: &mut String, label: &str, runs: &[&RunResult]) {
    let _ = write!(out, "| {label} | {} |", runs.len());
    for outcome in Outcome::ALL {
        let _ = write!(out, " {} |", runs.iter().filter(|r| r.outcome == outcome).count());
    }
    out.push('\n');
}

/// The Markdown table of `results`, the time taken, and the failing seeds.
pub fn table(results: &[RunResult], elapsed: Duration) -> String {
    let mut out = String::new();
    let header: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
    let _ = writeln!(out, "| runs by | runs | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(header.len()));
    let mut by_kind: BTreeMap<_, Vec<&RunResult>> = BTreeMap::new();
    let mut by_cores: BTreeMap<u32, Vec<&RunResult>> = BTreeMap::new();
    for r in results {
        by_kind.entry(r.plan.fault.kind).or_default().push(r);
        by_cores.entry(r.plan.cores).or_default().push(r);
    }
    for (kind, runs) in &by_kind {
        row(&mut out, &format!("fault {}", kind.name()), runs);
    }
    for (cores, runs) in &by_cores {
        row(&mut out, &format!("{cores} cores"), runs);
    }
    row(&mut out, "**all**", &results.iter().collect::<Vec<_>>());
    let slowest = results.iter().map(|r| r.elapsed).max().unwrap_or_default();
    let _ = writeln!(out, "\n{} runs in {:.1?} (slowest job {:.1?})", results.len(), elapsed, slowest);
    for r in results.iter().filter(|r| r.outcome != Outcome::Clean) {
        let seed = r.plan.seed;
        let _ = writeln!(out, "not clean: --seeds {seed}..{} ({}): {}", seed + 1, r.outcome.name(), r.detail);
    }
    out
}
