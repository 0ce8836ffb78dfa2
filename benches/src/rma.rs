//! One-sided communication, OSU-style: put/get latency and bandwidth under lock+flush,
//! fence and PSCW; fetch-and-op and compare-and-swap latency; lock/unlock latency
//! uncontended and with 8 contending cores; lock_all; fence cost at N = 2, 8, 48.
//!
//! Each row is a median over repetitions; a repetition times `iters` operations on rank
//! 0 and reports µs per operation (per put+flush, per put+fence epoch, ...). Rows that
//! move data carry MB/s (bytes per operation over the median).

use std::time::Instant;

use sccemu::{Assert, Core, Group, Job, LockKind, Placement};
use serde::{Deserialize, Serialize};

use crate::measure::{Row, SuiteParams, row};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
enum Pattern {
    PutLockFlush,
    GetLockFlush,
    PutFence,
    GetFence,
    PutPscw,
    GetPscw,
    FetchAdd,
    CompareAndSwap,
    LockUnlock,
    LockAllUnlockAll,
    Fence,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Self::PutLockFlush => "put-lock-flush",
            Self::GetLockFlush => "get-lock-flush",
            Self::PutFence => "put-fence",
            Self::GetFence => "get-fence",
            Self::PutPscw => "put-pscw",
            Self::GetPscw => "get-pscw",
            Self::FetchAdd => "fetch-and-op",
            Self::CompareAndSwap => "compare-and-swap",
            Self::LockUnlock => "lock-unlock",
            Self::LockAllUnlockAll => "lock_all-unlock_all",
            Self::Fence => "fence",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Arg {
    pattern: Pattern,
    bytes: usize,
    iters: u32,
    reps: u32,
    warmup: u32,
}

fn s(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Runs `body` `iters` times per repetition on every core; rank 0's µs per iteration.
fn timed(core: &Core, a: &Arg, mut body: impl FnMut() -> Result<(), String>) -> Result<Vec<f64>, String> {
    let mut samples = Vec::with_capacity(a.reps as usize);
    for rep in 0..a.warmup + a.reps {
        core.barrier().map_err(s)?;
        let t = Instant::now();
        for _ in 0..a.iters {
            body()?;
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / a.iters as f64;
        if rep >= a.warmup {
            samples.push(us);
        }
    }
    Ok(if core.rank() == 0 { samples } else { Vec::new() })
}

fn bench(core: &Core, a: Arg) -> Result<Vec<f64>, String> {
    let me = core.rank();
    let win = core.window::<u8>(a.bytes.max(8), Placement::Dram).map_err(s)?;
    let mut buf = vec![me as u8; a.bytes];
    let samples = match a.pattern {
        Pattern::PutLockFlush | Pattern::GetLockFlush => {
            let put = a.pattern == Pattern::PutLockFlush;
            let epoch = win.lock(LockKind::Shared, 1).map_err(s)?;
            let out = timed(core, &a, || {
                if me == 0 {
                    if put {
                        epoch.put(1, 0, &buf).map_err(s)?;
                    } else {
                        epoch.get(1, 0, &mut buf).map_err(s)?;
                    }
                    epoch.flush(1).map_err(s)?;
                }
                Ok(())
            })?;
            epoch.unlock().map_err(s)?;
            out
        }
        Pattern::PutFence | Pattern::GetFence => {
            let put = a.pattern == Pattern::PutFence;
            win.fence_with(Assert::NOPRECEDE).map_err(s)?;
            let out = timed(core, &a, || {
                if me == 0 {
                    if put {
                        win.put(1, 0, &buf).map_err(s)?;
                    } else {
                        win.get(1, 0, &mut buf).map_err(s)?;
                    }
                }
                win.fence().map_err(s)
            })?;
            win.fence_with(Assert::NOSUCCEED).map_err(s)?;
            out
        }
        Pattern::PutPscw | Pattern::GetPscw => {
            let (to1, to0) = (Group::single(1), Group::single(0));
            let put = a.pattern == Pattern::PutPscw;
            timed(core, &a, || {
                match me {
                    0 => {
                        win.start(&to1).map_err(s)?;
                        if put {
                            win.put(1, 0, &buf).map_err(s)?;
                        } else {
                            win.get(1, 0, &mut buf).map_err(s)?;
                        }
                        win.complete().map_err(s)?;
                    }
                    1 => {
                        win.post(&to0).map_err(s)?;
                        win.wait().map_err(s)?;
                    }
                    _ => {}
                }
                Ok(())
            })?
        }
        Pattern::FetchAdd | Pattern::CompareAndSwap => {
            // As the MPI peers: a shared lock on rank 1, each op followed by a flush;
            // CAS chains `compare` through the returned value so that every one swaps.
            let epoch = win.lock(LockKind::Shared, 1).map_err(s)?;
            let cas = a.pattern == Pattern::CompareAndSwap;
            let mut compare = 0u64;
            let out = timed(core, &a, || {
                if me == 0 {
                    if cas {
                        compare = epoch.compare_and_swap(1, 0, compare, compare + 1).map_err(s)? + 1;
                    } else {
                        std::hint::black_box(epoch.fetch_add(1, 0, 1u64).map_err(s)?);
                    }
                    epoch.flush(1).map_err(s)?;
                }
                Ok(())
            })?;
            epoch.unlock().map_err(s)?;
            out
        }
        Pattern::LockUnlock => {
            // As the MPI peers: every rank but 1 locks rank 1 exclusively, so it is
            // uncontended with 2 cores and N-1 contenders otherwise.
            timed(core, &a, || {
                if me != 1 {
                    let epoch = win.lock(LockKind::Exclusive, 1).map_err(s)?;
                    epoch.unlock().map_err(s)?;
                }
                Ok(())
            })?
        }
        Pattern::LockAllUnlockAll => timed(core, &a, || {
            if me == 0 {
                win.lock_all().map_err(s)?.unlock_all().map_err(s)?;
            }
            Ok(())
        })?,
        Pattern::Fence => timed(core, &a, || win.fence().map_err(s))?,
    };
    core.barrier().map_err(s)?;
    if matches!(a.pattern, Pattern::Fence) {
        win.fence_with(Assert::NOSUCCEED).map_err(s)?;
    }
    win.free().map_err(s)?;
    Ok(samples)
}

fn measure(params: &SuiteParams, pattern: Pattern, cores: u32, bytes: usize, iters: u32) -> Row {
    let a = Arg { pattern, bytes, iters, reps: params.reps(15), warmup: params.warmup(2) };
    let bytes_moved = !matches!(pattern, Pattern::LockUnlock | Pattern::LockAllUnlockAll | Pattern::Fence);
    match Job::new(cores).run(&a, bench) {
        Ok(mut ranks) => {
            let samples = ranks.swap_remove(0);
            let size = if bytes_moved { bytes as u64 } else { 0 };
            row("rma", "sccemu", pattern.name(), cores, size, samples)
        }
        Err(e) => {
            let mut r = row("rma", "sccemu", pattern.name(), cores, bytes as u64, Vec::new());
            r.note = Some(e.to_string());
            r
        }
    }
}

/// Iterations per repetition: enough to dwarf the timer for small transfers, and about
/// 64 MiB of traffic for large ones.
fn iters_for(params: &SuiteParams, bytes: usize) -> u32 {
    if params.quick {
        return 10;
    }
    ((64usize << 20) / bytes.max(1)).clamp(20, 2000) as u32
}

/// Sizes, core counts and patterns are those of the MPI peers' catalog entry
/// (`sccrun bench`), so that every row has its MPICH and Open MPI counterparts.
pub fn run(params: &SuiteParams) -> Vec<Row> {
    let sizes: Vec<usize> = if params.quick { vec![8, 1024] } else { (0..=20).map(|p| 1 << p).collect() };
    let mut rows = Vec::new();
    for pattern in [
        Pattern::PutLockFlush,
        Pattern::GetLockFlush,
        Pattern::PutFence,
        Pattern::GetFence,
        Pattern::PutPscw,
        Pattern::GetPscw,
    ] {
        for &bytes in &sizes {
            let iters = iters_for(params, bytes);
            // Epoch-synchronized patterns cost a context switch or two per iteration on 2 CPUs.
            let iters = if matches!(pattern, Pattern::PutLockFlush | Pattern::GetLockFlush) {
                iters
            } else {
                iters.min(500)
            };
            rows.push(measure(params, pattern, 2, bytes, iters));
        }
    }
    let small = if params.quick { 10 } else { 20_000 };
    rows.push(measure(params, Pattern::FetchAdd, 2, 8, small));
    rows.push(measure(params, Pattern::CompareAndSwap, 2, 8, small));
    rows.push(measure(params, Pattern::LockUnlock, 2, 0, small));
    rows.push(measure(params, Pattern::LockAllUnlockAll, 2, 0, small));
    if !params.quick {
        rows.push(measure(params, Pattern::LockUnlock, 8, 0, 500));
    }
    let fence_cores: &[u32] = if params.quick { &[2] } else { &[2, 8, 48] };
    for &cores in fence_cores {
        let iters = if params.quick {
            5
        } else if cores > 8 {
            50
        } else {
            1000
        };
        rows.push(measure(params, Pattern::Fence, cores, 0, iters));
    }
    rows
}
