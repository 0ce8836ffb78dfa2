//! The `nodes` suite (issue 23): two-sided latency and bandwidth between two nodes of
//! one sccemu job, beside the raw MPI that carries the nodes' rounds, on the same
//! transport, in the same run; and the intra-node figures that must not regress.
//!
//! Four configurations, each a launch that measures `latency` and `bandwidth` at one
//! size (`ROW` lines, `benches/mpi/common.h`'s format):
//! - `sccemu-2nodes`: `examples/node_pingpong` under `sccrun --nodes 2 -n 2`, rank 1 on
//!   the other node, so every message crosses both gateways and the engine's rounds;
//! - `openmpi-tcp`: `benches/mpi/pt2pt.c` (Open MPI's build) under the gateways' own
//!   `mpirun` ([`crate::nodes_launch::mpirun_command`]: `--mca btl self,tcp`,
//!   oversubscribe, bind-to none), the transport underneath the gateways;
//! - `sccemu-1node`: the same example under `sccrun -n 2`, sccemu's ordinary ping-pong;
//! - `sccemu-2nodes-local`: the example under `sccrun --nodes 2 -n 4`, ranks 0 and 1
//!   on node 0 while the gateways run (ranks 2 and 3 only join the barriers).
//!
//! For each size, every configuration runs once per round, in an order reversed every
//! other round (ABCD DCBA ...), so drift on the shared machine falls on all of them; the
//! cache-line probe is read before each round. A row's median is the median of its
//! launches' medians; its spread runs from the lowest 10th to the highest 90th
//! percentile of those launches. Only with the `multinode` feature (sccrun's `--nodes`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sccemu_benches::measure::{Row, SuiteParams, row};

use super::peers::{self, Mpi};
use super::process::{last_line, run_with_timeout};
use super::scale::beside;

pub const NAME: &str = "nodes";
pub const ABOUT: &str = "inter-node latency (one-way) and bandwidth (window of 64) between ranks 0 and 1 \
    of `sccrun --nodes 2 -n 2`, beside Open MPI's pt2pt over the gateways' own transport \
    (`--mca btl self,tcp`), interleaved per size in the same run; intra-node rows (one node, and two \
    ranks on one node of a 2-node job) for the no-regression check. Goal (issue 23): sccemu/MPI at \
    most 1.2 for 8 B and 1.05 for 1 MiB";

/// Configurations, in table order.
pub const INTER: &str = "sccemu-2nodes";
pub const RAW: &str = "openmpi-tcp";
pub const ONE_NODE: &str = "sccemu-1node";
pub const LOCAL_IN_TWO: &str = "sccemu-2nodes-local";
const CONFIGS: [&str; 4] = [INTER, RAW, ONE_NODE, LOCAL_IN_TWO];
const PATTERNS: [&str; 2] = ["latency", "bandwidth"];

/// The sizes of a full run (`--quick`: 8 B and 64 KiB). 4 MiB is the largest message a
/// blocking send carries across in one whole frame (`sccemu::job::gateway`'s `frame`),
/// and 16 MiB one that crosses in 4 MiB pulls of ring-sized fragments.
pub const SIZES: [u64; 6] = [8, 1024, 65536, 1 << 20, 4 << 20, 16 << 20];

/// The goals: sccemu/raw MPI at most this, at this size.
pub const GOALS: [(u64, f64); 2] = [(8, 1.2), (1 << 20, 1.05)];

/// What the suite measured.
pub struct Nodes {
    pub rows: Vec<Row>,
    /// Cache-line probe readings (point, one-way µs).
    pub probes: Vec<(String, Option<f64>)>,
    /// Launches that failed, and why a configuration was not measured.
    pub missing: Vec<String>,
}

/// Where the runs go and how long each may take.
pub struct Setup<'a> {
    pub build: &'a Path,
    pub logs: &'a Path,
    pub timeout: Duration,
}

/// One launch's figures: (pattern, bytes, reps, median, p10, p90).
type Printed = (String, u64, u32, f64, f64, f64);

/// `ROW pattern bytes reps median p10 p90` lines.
pub fn parse_rows(text: &str) -> Vec<Printed> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let ["ROW", pattern, bytes, reps, median, p10, p90] = f.as_slice() else { return None };
            Some((
                (*pattern).to_owned(),
                bytes.parse().ok()?,
                reps.parse().ok()?,
                median.parse().ok()?,
                p10.parse().ok()?,
                p90.parse().ok()?,
            ))
        })
        .collect()
}

/// The programs every launch needs.
struct Programs {
    sccrun: PathBuf,
    example: PathBuf,
    pt2pt: Result<PathBuf, String>,
}

fn programs(build: &Path) -> Result<Programs, String> {
    let sccrun = beside("sccrun").ok_or("sccrun is not beside this program (cargo build --release)")?;
    let example = beside("examples/node_pingpong")
        .ok_or("examples/node_pingpong is not built (cargo build --release --example node_pingpong)")?;
    let pt2pt = peers::write_sources(build)
        .map_err(|e| e.to_string())
        .and_then(|_| peers::build(Mpi::OpenMpi, build, "pt2pt"));
    Ok(Programs { sccrun, example, pt2pt })
}

/// The command of `config` at `size`, or why it cannot run.
fn command(config: &str, programs: &Programs, size: u64, params: &SuiteParams) -> Result<Command, String> {
    let mut cmd = match config {
        RAW => {
            let mut c = crate::nodes_launch::mpirun_command(2);
            c.arg(programs.pt2pt.as_ref().map_err(Clone::clone)?);
            c
        }
        _ => {
            let (nodes, cores) = match config {
                INTER => (2, 2),
                LOCAL_IN_TWO => (2, 4),
                _ => (1, 2),
            };
            let mut c = Command::new(&programs.sccrun);
            c.args(["--nodes", &nodes.to_string(), "-n", &cores.to_string(), "--"]).arg(&programs.example);
            c
        }
    };
    cmd.args(["--patterns", &PATTERNS.join(","), "--sizes", &size.to_string()])
        .args(["--reps", &params.reps(10).to_string(), "--warmup", &params.warmup(2).to_string()])
        .args(["--inner", &(if params.quick { 10 } else { 1000 }).to_string()]);
    Ok(cmd)
}

/// Every launch of one configuration at one size: its ROW lines, or why it failed.
type Launches = Vec<Result<Vec<Printed>, String>>;

/// One launch into the logs; its rows, or why it gave none.
fn launch(
    config: &str,
    programs: &Programs,
    size: u64,
    round: u32,
    params: &SuiteParams,
    setup: &Setup,
) -> Result<Vec<Printed>, String> {
    let mut cmd = command(config, programs, size, params)?;
    let stem = format!("{NAME}-{config}-{size}-r{round}");
    let (out, err) = (setup.logs.join(format!("{stem}.out")), setup.logs.join(format!("{stem}.err")));
    let finished = run_with_timeout(&mut cmd, &out, &err, setup.timeout).map_err(|e| e.to_string())?;
    let rows = parse_rows(&std::fs::read_to_string(&out).unwrap_or_default());
    if finished.timed_out() {
        return Err(format!("gave up after {:.0} s; log: logs/{stem}.err", finished.elapsed.as_secs_f64()));
    }
    if !finished.succeeded() || rows.len() < PATTERNS.len() {
        return Err(format!(
            "failed ({}): {}; log: logs/{stem}.err",
            finished.status.map_or_else(String::new, |s| s.to_string()),
            last_line(&err)
        ));
    }
    Ok(rows)
}

/// The suite at every size, rounds interleaved (module doc).
pub fn measure(params: &SuiteParams, setup: &Setup) -> Nodes {
    let mut nodes = Nodes { rows: Vec::new(), probes: Vec::new(), missing: Vec::new() };
    let programs = match programs(setup.build) {
        Ok(p) => p,
        Err(why) => {
            nodes.missing.push(why);
            return nodes;
        }
    };
    if let Err(why) = &programs.pt2pt {
        nodes.missing.push(format!("{RAW}: {why}"));
    }
    let sizes: &[u64] = if params.quick { &[8, 65536] } else { &SIZES };
    let rounds = if params.quick { 1 } else { 3 };
    for &size in sizes {
        let mut launches: Vec<Launches> = vec![Vec::new(); CONFIGS.len()];
        for round in 0..rounds {
            let point = format!("before {size} B, round {}", round + 1);
            let us = sccemu_benches::pt2pt::line_cost();
            eprintln!(
                "bench: {NAME}: cache-line probe {point}: {}",
                us.map_or("not measured".into(), |u| format!("{u:.3} µs one way"))
            );
            nodes.probes.push((point, us));
            let order: Vec<usize> = if round % 2 == 0 {
                (0..CONFIGS.len()).collect()
            } else {
                (0..CONFIGS.len()).rev().collect()
            };
            for i in order {
                eprintln!("bench: {NAME}: {} at {size} B, round {}", CONFIGS[i], round + 1);
                launches[i].push(launch(CONFIGS[i], &programs, size, round, params, setup));
            }
        }
        for (config, runs) in CONFIGS.iter().zip(launches) {
            nodes.rows.extend(combine(config, size, &runs));
            nodes.missing.extend(
                runs.into_iter().filter_map(Result::err).map(|why| format!("{config} at {size} B: {why}")),
            );
        }
    }
    nodes
}

/// One row per pattern from a configuration's launches at one size (module doc).
fn combine(config: &str, size: u64, runs: &Launches) -> Vec<Row> {
    let cores = if config == LOCAL_IN_TWO { 4 } else { 2 };
    PATTERNS
        .iter()
        .map(|&pattern| {
            let printed: Vec<&Printed> =
                runs.iter().flatten().flatten().filter(|p| p.0 == pattern && p.1 == size).collect();
            let medians: Vec<f64> = printed.iter().map(|p| p.3).collect();
            let mut r = row(NAME, config, pattern, cores, size, medians);
            r.reps = printed.iter().map(|p| p.2).sum();
            if !printed.is_empty() {
                r.p10_us = printed.iter().map(|p| p.4).fold(f64::INFINITY, f64::min);
                r.p90_us = printed.iter().map(|p| p.5).fold(f64::NEG_INFINITY, f64::max);
            } else {
                r.note = Some("not measured".into());
            }
            r
        })
        .collect()
}

fn find<'a>(rows: &'a [Row], config: &str, pattern: &str, bytes: u64) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.implementation == config && r.pattern == pattern && r.bytes == bytes && r.median_us.is_finite()
    })
}

fn cell(r: Option<&Row>) -> String {
    match r {
        Some(r) => match r.mb_per_s.filter(|_| r.bytes >= 1024) {
            Some(mbs) => format!("{:.2} [{:.2}–{:.2}] {mbs:.0} MB/s", r.median_us, r.p10_us, r.p90_us),
            None => format!("{:.2} [{:.2}–{:.2}]", r.median_us, r.p10_us, r.p90_us),
        },
        None => "—".into(),
    }
}

fn ratio(a: Option<&Row>, b: Option<&Row>) -> Option<f64> {
    Some(a?.median_us / b?.median_us)
}

/// The suite's tables: inter-node beside the raw MPI with the goal, then intra-node.
pub fn table(md: &mut String, nodes: &Nodes) {
    for why in &nodes.missing {
        let _ = writeln!(md, "{}\n", why.replace('|', "\\|"));
    }
    let mut sizes: Vec<u64> = nodes.rows.iter().map(|r| r.bytes).collect();
    sizes.dedup();
    let _ = writeln!(
        md,
        "Inter-node: µs per operation (latency one way, bandwidth per message of a window of 64), \
         median of the launches' medians [lowest p10 – highest p90], bandwidth at the median.\n\n\
         | pattern | bytes | {INTER} | {RAW} | sccemu/MPI | goal | met |\n|---|---:|---:|---:|---:|---:|:-:|"
    );
    for pattern in PATTERNS {
        for &bytes in &sizes {
            let (a, b) = (find(&nodes.rows, INTER, pattern, bytes), find(&nodes.rows, RAW, pattern, bytes));
            let goal = GOALS.iter().find(|g| g.0 == bytes).map(|g| g.1);
            let r = ratio(a, b);
            let met = match (r, goal) {
                (Some(r), Some(g)) => {
                    if r <= g {
                        "yes"
                    } else {
                        "no"
                    }
                }
                _ => "",
            };
            let _ = writeln!(
                md,
                "| {pattern} | {bytes} | {} | {} | {} | {} | {met} |",
                cell(a),
                cell(b),
                r.map_or("—".into(), |r| format!("{r:.2}")),
                goal.map_or("—".into(), |g| format!("≤ {g}")),
            );
        }
    }
    let _ = writeln!(
        md,
        "\nIntra-node (no-regression check): ranks 0 and 1 on one node, alone (`sccrun -n 2`) and \
         inside a 2-node job whose gateways run (`sccrun --nodes 2 -n 4`).\n\n\
         | pattern | bytes | {ONE_NODE} | {LOCAL_IN_TWO} | 2-node/1-node |\n|---|---:|---:|---:|---:|"
    );
    for pattern in PATTERNS {
        for &bytes in &sizes {
            let (a, b) = (
                find(&nodes.rows, ONE_NODE, pattern, bytes),
                find(&nodes.rows, LOCAL_IN_TWO, pattern, bytes),
            );
            let r = ratio(b, a).map_or("—".into(), |r| format!("{r:.2}"));
            let _ = writeln!(md, "| {pattern} | {bytes} | {} | {} | {r} |", cell(a), cell(b));
        }
    }
    let probes: Vec<String> = nodes
        .probes
        .iter()
        .map(|(point, us)| us.map_or(format!("{point} not measured"), |us| format!("{point} {us:.3} µs")))
        .collect();
    if !probes.is_empty() {
        let _ = writeln!(md, "\nCache-line probe (one way): {}.", probes.join("; "));
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_launches_combine() {
        let printed = parse_rows(
            "BEGIN latency 8\nROW latency 8 10 2.0 1.5 3.0\nnoise\nROW bandwidth 8 10 1.0 0.9 1.2\n",
        );
        assert_eq!(printed.len(), 2);
        let other = vec![
            ("latency".to_owned(), 8, 10, 4.0, 3.5, 5.0),
            ("bandwidth".to_owned(), 8, 10, 1.0, 0.8, 1.1),
        ];
        let rows = combine(INTER, 8, &vec![Ok(printed), Err("failed".into()), Ok(other)]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].median_us, rows[0].p10_us, rows[0].p90_us, rows[0].reps), (4.0, 1.5, 5.0, 20));
        let mut md = String::new();
        let raw = combine(RAW, 8, &vec![Ok(vec![("latency".to_owned(), 8, 10, 2.0, 1.0, 3.0)])]);
        table(
            &mut md,
            &Nodes {
                rows: [rows, raw].concat(),
                probes: vec![("before".into(), Some(0.1))],
                missing: vec![],
            },
        );
        assert!(
            md.contains("| latency | 8 | 4.00 [1.50–5.00] | 2.00 [1.00–3.00] | 2.00 | ≤ 1.2 | no |"),
            "{md}"
        );
    }
}
