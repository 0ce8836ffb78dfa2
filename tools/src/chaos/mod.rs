//! `sccrun chaos`: a fault campaign. For each seed it generates a random program and
//! kills one rank of it at a random point, then checks that the job failed the way
//! fail-stop promises.
//!
//! What is generated ([`plan`]): a job of 2 to 48 cores (48 a minority) over either
//! two-sided channel (shared receive buffers, or per-peer rings up to 16 cores), with
//! the default or the blocking wait policy, a
//! program of 1 to 10 steps that every rank runs — blocking send/recv pairs, isend/irecv rings,
//! windows in DRAM or the MPBs with each accumulate strategy and each synchronisation
//! (fence, PSCW, lock/unlock, lock_all) carrying puts, gets, accumulates or fetch-adds,
//! and collectives (barrier, bcast, allreduce, allgather) — ending in a barrier; and a
//! fault: a victim rank, a step, before or in the middle of it (an epoch, request or
//! exchange open), after a sleep of 0, 1 or 10 ms, and a death: SIGKILL, a panic,
//! `exit(0)` without finalizing, or `abort()`.
//!
//! What is checked ([`check`]): every result computed before the fault equals the
//! program's model ([`program`]); the launcher names the victim and how it died, and
//! every survivor returns an error naming it; the job ends within the limit (a
//! watchdog kills it otherwise: a hang); no process of the job and no segment (memfd
//! fd or mapping, `/dev/shm` entry) is left. The table ([`report`]) counts outcomes
//! per fault kind and per core count, and every failing seed is printed so that
//! `--seeds N..N+1` re-runs it alone.

pub mod check;
pub mod plan;
pub mod program;
pub mod report;

use std::ops::Range;
use std::time::{Duration, Instant};

pub use check::{Outcome, RunResult};
pub use plan::Plan;

/// `sccrun chaos [--seeds A..B] [--cores 2,4,48] [--limit SECONDS]`
#[derive(clap::Args, Clone, Debug)]
pub struct ChaosArgs {
    /// Seeds to run, `A..B` (B excluded).
    #[arg(long, default_value = "0..100", value_parser = parse_seeds)]
    pub seeds: Range<u64>,

    /// Core counts to sample from (default: 2,3,4,5,8,12,16,48, weighted to small jobs).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(2..=48))]
    pub cores: Vec<u32>,

    /// Seconds a whole job may take before it counts as hung and is killed.
    #[arg(long, default_value_t = 20)]
    pub limit: u64,
}

fn parse_seeds(s: &str) -> Result<Range<u64>, String> {
    let (a, b) = s.split_once("..").ok_or("expected A..B")?;
    let a = a.parse::<u64>().map_err(|e| e.to_string())?;
    let b = b.parse::<u64>().map_err(|e| e.to_string())?;
    if a >= b {
        return Err(format!("empty seed range {a}..{b}"));
    }
    Ok(a..b)
}

/// Runs every seed; `progress` gets each finished run. `Err` if a job could not be
/// ended at all.
pub fn campaign(args: &ChaosArgs, mut progress: impl FnMut(&RunResult)) -> Result<Vec<RunResult>, String> {
    let limit = Duration::from_secs(args.limit);
    let mut results = Vec::new();
    for seed in args.seeds.clone() {
        let token = format!("sccemu-chaos-{}-{seed}", std::process::id());
        let result = check::run(Plan::generate(seed, &args.cores, token), limit)?;
        progress(&result);
        results.push(result);
    }
    Ok(results)
}

/// `sccrun chaos`: runs the campaign, prints the table; `Ok(true)` if every run was clean.
pub fn run(args: &ChaosArgs) -> Result<bool, String> {
    let started = Instant::now();
    let total = args.seeds.end - args.seeds.start;
    let mut done = 0u64;
    let results = campaign(args, |r| {
        done += 1;
        if r.outcome != Outcome::Clean {
            eprintln!(
                "seed {} ({}): {}: {}",
                r.plan.seed,
                report::describe(&r.plan),
                r.outcome.name(),
                r.detail
            );
        }
        if done % 50 == 0 || done == total {
            eprintln!("chaos: {done}/{total} runs, {:.0?}", started.elapsed());
        }
    })?;
    print!("{}", report::table(&results, started.elapsed()));
    Ok(results.iter().all(|r| r.outcome == Outcome::Clean))
}
