//! Point-to-point two-sided messaging, for both channel protocols (`sccemu-perpeer`,
//! `sccemu-srb`): ping-pong latency (osu_latency style, one-way time), streaming
//! bandwidth (a window of back-to-back sends, then one acknowledgement), and N-1 to 1
//! many-to-one throughput. A `cache-line` latency row gives the hardware's floor in
//! the same run: one 8-byte window word bounced between the two cores by atomic store
//! and a bare spinning load, no protocol at all.

use sccemu::{ANY_SOURCE, ChannelKind, Core, Job, Placement};
use serde::{Deserialize, Serialize};

use crate::measure::{Row, SuiteParams, row};

pub const PROTOCOLS: [(ChannelKind, &str); 2] =
    [(ChannelKind::PerPeer, "sccemu-perpeer"), (ChannelKind::Srb, "sccemu-srb")];

/// What one job measures: every size, `warmup` untimed then `reps` timed samples.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub sizes: Vec<usize>,
    pub reps: u32,
    pub warmup: u32,
    /// Messages per sample (per sender for many-to-one).
    pub iters: Vec<u32>,
}

fn iters_for(size: usize, quick: bool) -> u32 {
    let budget = if quick { 1 << 18 } else { 8 << 20 };
    (budget / size.max(64)).clamp(4, if quick { 50 } else { 2000 }) as u32
}

impl Plan {
    pub fn new(params: &SuiteParams, sizes: Vec<usize>, reps: u32) -> Plan {
        let iters = sizes.iter().map(|&s| iters_for(s, params.quick)).collect();
        Plan { sizes, reps: params.reps(reps), warmup: params.warmup(2), iters }
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Rank 0 and 1 bounce a message; samples are one-way µs per size.
fn pingpong(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, String> {
    let me = core.rank();
    let peer = 1 - me;
    let mut out = Vec::new();
    for (&size, &iters) in plan.sizes.iter().zip(&plan.iters) {
        let mut buf = vec![7u8; size];
        let mut samples = Vec::new();
        for rep in 0..plan.warmup + plan.reps {
            core.barrier().map_err(err)?;
            let t = core.clock();
            for _ in 0..iters {
                if me == 0 {
                    core.send(peer, 1, &buf).map_err(err)?;
                    core.recv(peer, 1, &mut buf).map_err(err)?;
                } else {
                    core.recv(peer, 1, &mut buf).map_err(err)?;
                    core.send(peer, 1, &buf).map_err(err)?;
                }
            }
            if rep >= plan.warmup {
                samples.push((core.clock() - t).as_secs_f64() * 1e6 / (2.0 * iters as f64));
            }
        }
        out.push(samples);
    }
    Ok(out)
}

/// The floor under any message: ranks 0 and 1 take turns storing into one word (rank
/// 0's first element) and spinning until the other's store shows; samples are one-way
/// µs. A bare spin (no pause, no sleep) on dedicated CPUs, as a reference only.
fn line_pingpong(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, String> {
    let me = u64::from(core.rank());
    let win = core.window::<u64>(1, Placement::Dram).map_err(err)?;
    let epoch = win.lock_all().map_err(err)?;
    let mut out = Vec::new();
    for &iters in &plan.iters {
        let mut samples = Vec::new();
        for rep in 0..plan.warmup + plan.reps {
            epoch.store(0, 0, 0u64).map_err(err)?;
            core.barrier().map_err(err)?;
            let t = core.clock();
            for i in 0..u64::from(iters) {
                // Rank 0 stores the odd values, rank 1 the even ones.
                let (ping, pong) = (2 * i + 1, 2 * i + 2);
                let (mine, awaited) = if me == 0 { (ping, pong) } else { (pong, ping) };
                if me == 0 {
                    epoch.store(0, 0, mine).map_err(err)?;
                }
                while epoch.load::<u64>(0, 0).map_err(err)? != awaited {}
                if me == 1 {
                    epoch.store(0, 0, mine).map_err(err)?;
                }
            }
            if rep >= plan.warmup {
                samples.push((core.clock() - t).as_secs_f64() * 1e6 / (2.0 * f64::from(iters)));
            }
            core.barrier().map_err(err)?;
        }
        out.push(samples);
    }
    epoch.unlock_all().map_err(err)?;
    win.free().map_err(err)?;
    Ok(out)
}

/// One-way µs of the cache-line ping-pong, measured once (a few milliseconds): how
/// costly moving a line between the first two CPUs is right now, for runs on machines
/// where that drifts. `None` if the job failed.
pub fn line_cost() -> Option<f64> {
    let plan = Plan { sizes: vec![8], reps: 5, warmup: 1, iters: vec![5000] };
    let mut ranks = Job::new(2).run(&plan, line_pingpong).ok()?;
    let mut samples = ranks.swap_remove(0).pop()?;
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied()
}

/// Rank 0 streams `iters` messages to rank 1, which acknowledges the last; samples are
/// µs per message.
fn stream(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, String> {
    let me = core.rank();
    let mut out = Vec::new();
    for (&size, &iters) in plan.sizes.iter().zip(&plan.iters) {
        let mut buf = vec![3u8; size];
        let mut ack = [0u8; 1];
        let mut samples = Vec::new();
        for rep in 0..plan.warmup + plan.reps {
            core.barrier().map_err(err)?;
            let t = core.clock();
            if me == 0 {
                for _ in 0..iters {
                    core.send(1, 2, &buf).map_err(err)?;
                }
                core.recv(1, 3, &mut ack).map_err(err)?;
            } else {
                for _ in 0..iters {
                    core.recv(0, 2, &mut buf).map_err(err)?;
                }
                core.send(0, 3, &ack).map_err(err)?;
            }
            if rep >= plan.warmup {
                samples.push((core.clock() - t).as_secs_f64() * 1e6 / iters as f64);
            }
        }
        out.push(samples);
    }
    Ok(out)
}

/// Ranks 1..N each send `iters` messages to rank 0, which receives from any source;
/// samples are µs per message received at rank 0.
pub fn many_to_one(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, String> {
    let (me, n) = (core.rank(), core.size());
    let mut out = Vec::new();
    for (&size, &iters) in plan.sizes.iter().zip(&plan.iters) {
        let mut buf = vec![5u8; size];
        let mut samples = Vec::new();
        let iters = (iters / (n - 1).max(1)).max(2);
        for rep in 0..plan.warmup + plan.reps {
            core.barrier().map_err(err)?;
            let t = core.clock();
            if me == 0 {
                for _ in 0..iters * (n - 1) {
                    core.recv(ANY_SOURCE, 4, &mut buf).map_err(err)?;
                }
            } else {
                for _ in 0..iters {
                    core.send(0, 4, &buf).map_err(err)?;
                }
            }
            if rep >= plan.warmup {
                samples.push((core.clock() - t).as_secs_f64() * 1e6 / (iters * (n - 1)) as f64);
            }
        }
        out.push(samples);
    }
    Ok(out)
}

type Entry = fn(&Core, Plan) -> Result<Vec<Vec<f64>>, String>;

/// Runs `entry` on `cores` cores with `kind` and turns rank 0's samples into rows.
pub fn rows(
    suite: &str,
    pattern: &str,
    cores: u32,
    kind: ChannelKind,
    name: &str,
    plan: Plan,
    entry: Entry,
) -> Vec<Row> {
    let sizes = plan.sizes.clone();
    match Job::new(cores).channel(kind).run(&plan, entry) {
        Ok(mut ranks) => {
            let samples = ranks.swap_remove(0);
            sizes.iter().zip(samples).map(|(&s, v)| row(suite, name, pattern, cores, s as u64, v)).collect()
        }
        Err(e) => sizes
            .iter()
            .map(|&s| Row {
                note: Some(format!("failed: {e}")),
                ..row(suite, name, pattern, cores, s as u64, vec![])
            })
            .collect(),
    }
}

/// Timed samples per size of the ping-pong latency at full scale.
const LATENCY_REPS: u32 = 15;

/// The two-sided ping-pong between 2 cores over `kind`, one row of one-way µs per size
/// (rows of `suite`, implementation `name`, pattern `latency`). The rcce suite measures
/// sccemu's side with it.
pub fn latency(
    suite: &str,
    params: &SuiteParams,
    kind: ChannelKind,
    name: &str,
    sizes: Vec<usize>,
) -> Vec<Row> {
    rows(suite, "latency", 2, kind, name, Plan::new(params, sizes, LATENCY_REPS), pingpong)
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let latency_sizes: Vec<usize> = if params.quick {
        vec![1, 8, 4096]
    } else {
        (0..=20).step_by(2).map(|k| 1usize << k).chain([8]).collect()
    };
    let mut latency_sizes = latency_sizes;
    latency_sizes.sort_unstable();
    let bw_sizes: Vec<usize> =
        if params.quick { vec![4096, 65536] } else { vec![64, 4096, 16384, 65536, 262_144, 1 << 20] };
    let m2o_cores: &[u32] = if params.quick { &[2, 8] } else { &[2, 8, 48] };
    let m2o_sizes: Vec<usize> = if params.quick { vec![64] } else { vec![8, 4096, 65536] };
    let mut out = rows(
        "pt2pt",
        "latency",
        2,
        ChannelKind::Srb,
        "cache-line",
        Plan::new(params, vec![8], 15),
        line_pingpong,
    );
    for (kind, name) in PROTOCOLS {
        out.extend(latency("pt2pt", params, kind, name, latency_sizes.clone()));
        out.extend(rows(
            "pt2pt",
            "bandwidth",
            2,
            kind,
            name,
            Plan::new(params, bw_sizes.clone(), 10),
            stream,
        ));
        for &n in m2o_cores {
            let plan = Plan::new(params, m2o_sizes.clone(), if n > 8 { 5 } else { 10 });
            out.extend(rows("pt2pt", "many-to-one", n, kind, name, plan, many_to_one));
        }
    }
    out
}
