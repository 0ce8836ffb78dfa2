//! Atomic accumulate, after Nieplocha et al. (owner- vs caller-computes on Quadrics):
//! - Figure 2: accumulate bandwidth (MB/s) against message size, 8 B to 1 MiB with
//!   720 KB (737280 B) included, `Op::Sum` on f64, one origin into one target, for the
//!   three strategies (`sccemu-atomic`, `sccemu-caller` with a whole-part lock, the
//!   paper's caller-computes, and `sccemu-owner`); one iteration is an accumulate and
//!   the flush that completes it at the target (rank 1 into rank 0). A `memcpy` row per size gives the
//!   physical reference;
//! - Figure 4: the owner/caller bandwidth ratio per size (pattern `owner/caller`; the
//!   ratio stands in the median/p10/p90 columns and in `note`; `mb_per_s` is empty);
//! - contention (the Fock-build pattern): N-1 origins accumulate random sizes from
//!   200 B to 4 KB at random places of one target's (the last rank's) 64 KB part; a row is one
//!   repetition's wall time for all origins and the bytes they moved together, for
//!   lock-free, whole-part lock, striped (4 KB granules: 16 stripes over the part)
//!   and owner-computes, with 1, 2, 3 and 7 origins.
//!
//! Nothing here asserts a time.

use std::time::Instant;

use sccemu::{AccStrategy, Core, Job, Op, Placement};
use serde::{Deserialize, Serialize};

use crate::measure::{Row, SuiteParams, row};

const SUITE: &str = "acc";
/// The paper's 720 KB point.
pub const PAPER_POINT: usize = 737_280;

fn s(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn impl_name(strategy: AccStrategy) -> &'static str {
    match strategy {
        AccStrategy::Atomic => "sccemu-atomic",
        AccStrategy::CallerComputes { granularity: usize::MAX } => "sccemu-caller",
        AccStrategy::CallerComputes { .. } => "sccemu-striped",
        AccStrategy::OwnerComputes => "sccemu-owner",
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Arg {
    strategy: AccStrategy,
    bytes: usize,
    iters: u32,
    reps: u32,
    warmup: u32,
}

/// Figure 2: rank 1 accumulates into rank 0; rank 1's µs per accumulate+flush.
///
/// The passive target is rank 0 on purpose: it sleeps in the barrier on rank 0's
/// doorbell (the barrier's home), while the owner-computes agent rings the origin's
/// doorbell after every request. With the roles the other way round, each of those
/// rings would also wake the target's main thread, pinned to the agent's CPU, and the
/// figure would measure that scheduling artefact (about 10 µs per call) instead of
/// the protocol.
fn bandwidth(core: &Core, a: Arg) -> Result<Vec<f64>, String> {
    let len = a.bytes / 8;
    let win = core.window_with::<f64>(len, Placement::Dram, a.strategy).map_err(s)?;
    let src: Vec<f64> = (0..len).map(|i| i as f64 * 0.5).collect();
    let epoch = win.lock_all().map_err(s)?;
    let mut samples = Vec::new();
    for rep in 0..a.warmup + a.reps {
        core.barrier().map_err(s)?;
        if core.rank() == 1 {
            let t = Instant::now();
            for _ in 0..a.iters {
                epoch.accumulate(0, 0, &src, Op::Sum).map_err(s)?;
                epoch.flush(0).map_err(s)?;
            }
            if rep >= a.warmup {
                samples.push(t.elapsed().as_secs_f64() * 1e6 / a.iters as f64);
            }
        }
    }
    epoch.unlock_all().map_err(s)?;
    core.barrier().map_err(s)?;
    win.free().map_err(s)?;
    Ok(samples)
}

/// Contention: ranks 0..n-1 into rank n-1; per repetition (wall µs, bytes moved).
fn contention(core: &Core, a: Arg) -> Result<Vec<(f64, u64)>, String> {
    const PART: usize = 64 * 1024 / 8;
    let me = core.rank();
    // The target is the last rank, not rank 0, whose doorbell also hosts the barrier
    // that the target sleeps in: wake-ups meant for lock and queue waiters would wake
    // it too (an artefact of the barrier, not of the strategies).
    let target = core.size() - 1;
    let win = core
        .window_with::<f64>(if me == target { PART } else { 0 }, Placement::Dram, a.strategy)
        .map_err(s)?;
    let src = vec![1.0f64; 4096 / 8];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (me as u64 + 1);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let epoch = win.lock_all().map_err(s)?;
    let mut samples = Vec::new();
    for rep in 0..a.warmup + a.reps {
        core.barrier().map_err(s)?;
        let t = Instant::now();
        let mut moved = 0u64;
        if me != target {
            for _ in 0..a.iters {
                let len = 25 + (next() % (512 - 25 + 1)) as usize;
                let at = (next() % (PART - len + 1) as u64) as usize;
                epoch.accumulate(target, at, &src[..len], Op::Sum).map_err(s)?;
                moved += len as u64 * 8;
            }
            epoch.flush(target).map_err(s)?;
        }
        let us = t.elapsed().as_secs_f64() * 1e6;
        if rep >= a.warmup {
            samples.push((us, moved));
        }
    }
    epoch.unlock_all().map_err(s)?;
    core.barrier().map_err(s)?;
    win.free().map_err(s)?;
    Ok(samples)
}

fn failed(implementation: &str, pattern: &str, cores: u32, bytes: usize, e: impl std::fmt::Display) -> Row {
    eprintln!("acc {implementation} {pattern}: {e}");
    let mut r = row(SUITE, implementation, pattern, cores, bytes as u64, Vec::new());
    r.note = Some(e.to_string());
    r
}

fn iters_for(params: &SuiteParams, bytes: usize) -> u32 {
    if params.quick {
        return 5;
    }
    ((32usize << 20) / bytes.max(1)).clamp(20, 2000) as u32
}

/// Local copy bandwidth for the same sizes: the physical reference.
fn memcpy_row(params: &SuiteParams, bytes: usize) -> Row {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let iters = iters_for(params, bytes);
    let mut samples = Vec::new();
    for _ in 0..params.reps(7) {
        let t = Instant::now();
        for _ in 0..iters {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
    }
    row(SUITE, "memcpy", "memcpy", 1, bytes as u64, samples)
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let sizes: Vec<usize> = if params.quick {
        vec![8, 4096]
    } else {
        vec![8, 64, 512, 4096, 32 << 10, 128 << 10, 512 << 10, PAPER_POINT, 1 << 20]
    };
    let strategies = [
        AccStrategy::Atomic,
        AccStrategy::CallerComputes { granularity: usize::MAX },
        AccStrategy::OwnerComputes,
    ];
    let mut rows = Vec::new();
    let pattern = "accumulate-sum-f64";
    for &bytes in &sizes {
        rows.push(memcpy_row(params, bytes));
        let mut bw = [None; 3];
        for (k, &strategy) in strategies.iter().enumerate() {
            let a = Arg {
                strategy,
                bytes,
                iters: iters_for(params, bytes),
                reps: params.reps(7),
                warmup: params.warmup(1),
            };
            let r = match Job::new(2).run(&a, bandwidth) {
                Ok(mut ranks) => {
                    row(SUITE, impl_name(strategy), pattern, 2, bytes as u64, ranks.swap_remove(1))
                }
                Err(e) => failed(impl_name(strategy), pattern, 2, bytes, e),
            };
            bw[k] = r.mb_per_s;
            rows.push(r);
        }
        if let (Some(caller), Some(owner)) = (bw[1], bw[2]) {
            // Figure 4: the ratio goes in the time columns (it is not a time; see note).
            let ratio = owner / caller;
            let mut r = row(SUITE, "sccemu", "owner/caller", 2, 0, vec![ratio]);
            r.bytes = bytes as u64;
            r.note = Some(format!("owner/caller bandwidth ratio {ratio:.2} (not µs)"));
            rows.push(r);
        }
    }
    let contenders = [
        AccStrategy::Atomic,
        AccStrategy::CallerComputes { granularity: usize::MAX },
        AccStrategy::CallerComputes { granularity: 4096 },
        AccStrategy::OwnerComputes,
    ];
    let pattern = "contention 200B-4KB";
    let core_counts: &[u32] = if params.quick { &[3] } else { &[2, 3, 4, 8] };
    for (&cores, strategy) in core_counts.iter().flat_map(|c| contenders.iter().map(move |s| (c, *s))) {
        let a = Arg {
            strategy,
            bytes: 0,
            iters: if params.quick { 10 } else { 2000 },
            reps: params.reps(5),
            warmup: params.warmup(1),
        };
        rows.push(match Job::new(cores).run(&a, contention) {
            Ok(ranks) => {
                // Per repetition: the slowest origin's wall time, everyone's bytes.
                let origins = &ranks[..ranks.len() - 1];
                let reps = origins[0].len();
                let (mut wall, mut moved) = (Vec::new(), 0u64);
                for rep in 0..reps {
                    wall.push(origins.iter().map(|r| r[rep].0).fold(0.0, f64::max));
                    moved = origins.iter().map(|r| r[rep].1).sum();
                }
                row(SUITE, impl_name(strategy), pattern, cores, moved, wall)
            }
            Err(e) => failed(impl_name(strategy), pattern, cores, 0, e),
        });
    }
    rows
}
