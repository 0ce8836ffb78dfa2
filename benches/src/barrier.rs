//! Suite `barrier`: latency of `Core::barrier()` for N = 2, 8 and 48 cores (the spine's
//! speed targets), compared by `sccrun bench` with MPI_Barrier of MPICH and Open MPI.
//!
//! Each sample times `inner` back-to-back barriers on rank 0 after a barrier that lines
//! the ranks up, and divides by `inner`; warm-up samples come first and are dropped.
//! 48 cores on a 2-CPU machine are oversubscribed and the row says so.

use serde::{Deserialize, Serialize};
use std::time::Instant;

use sccemu::{Core, Job};

use crate::measure::{self, Row, SuiteParams};

/// Cores measured: quick mode skips the oversubscribed 48.
pub fn cores(params: &SuiteParams) -> &'static [u32] {
    if params.quick { &[2, 8] } else { &[2, 8, 48] }
}

/// Barriers per sample: enough to dwarf the clock's cost on a fast barrier.
pub fn inner(params: &SuiteParams) -> u32 {
    if params.quick { 10 } else { 200 }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Plan {
    warmup: u32,
    reps: u32,
    inner: u32,
}

/// Runs on every core; returns the per-sample µs per barrier (rank 0's are reported).
fn barrier_samples(core: &Core, plan: Plan) -> Result<Vec<f64>, String> {
    let mut samples = Vec::with_capacity(plan.reps as usize);
    for sample in 0..plan.warmup + plan.reps {
        core.barrier().map_err(|e| e.to_string())?;
        let start = Instant::now();
        for _ in 0..plan.inner {
            core.barrier().map_err(|e| e.to_string())?;
        }
        if sample >= plan.warmup {
            samples.push(start.elapsed().as_secs_f64() * 1e6 / f64::from(plan.inner));
        }
    }
    Ok(samples)
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let plan = Plan { warmup: params.warmup(3), reps: params.reps(20), inner: inner(params) };
    cores(params)
        .iter()
        .map(|&n| match Job::new(n).run(&plan, barrier_samples) {
            Ok(mut per_rank) => measure::row("barrier", "sccemu", "barrier", n, 0, per_rank.swap_remove(0)),
            Err(e) => {
                let mut failed = measure::row("barrier", "sccemu", "barrier", n, 0, Vec::new());
                failed.note = Some(format!("job failed: {e}"));
                failed
            }
        })
        .collect()
}
