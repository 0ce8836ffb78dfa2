//! The `vtime` suite: a second opinion on virtual time. The same C programs of
//! `benches/mpi/` run on sccemu in virtual time (`sccrun --timing scc`, the program
//! built on sccemu's MPI library, `MPI_Wtime` reading virtual seconds) and under SMPI
//! on the platform `sccrun smpi-platform` generates from the same chip description;
//! RCCE's own ping-pong (`examples/c/pingpong.c`, as `rccerun -clock 0.533` runs it)
//! gives sccemu's figure for the chip's native library, and RCCE's published figures
//! stand beside them where they exist.
//!
//! Rows: the ping-pong's one-way time between core 0 and cores 1, 2 and 47 (same tile,
//! one hop, the far corner); the barrier at 2 to 48 cores; the stencil's time per step
//! at 1 to 48 cores; and the 48-core stencil's virtual makespan quiet and beside a CPU
//! hog (a busy thread in this process), for each emulator. Every figure is virtual µs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sccemu_benches::hog::Hog;
use sccemu_benches::measure::{Row, SuiteParams};

use super::peers::{self, Mpi};
use super::process::{last_line, run_with_timeout};
use crate::smpi;

pub const NAME: &str = "vtime";
pub const ABOUT: &str = "virtual time, second opinion: the C ping-pong (pairs (0,1), (0,2), (0,47)), \
    barrier and stencil under sccemu --timing scc and under SMPI on the generated SCC platform, beside \
    RCCE's ping-pong in sccemu's virtual time and RCCE's published SCC figures; the 48-core stencil's \
    virtual makespan quiet and beside a CPU hog";

/// RCCE's published ping-pong on the SCC, as sccemu's chip description calibrates to it
/// (`src/timing/chip.rs`): about 2.9 µs one way for small messages, a peak near 57 MB/s
/// at 2 KB, about 20 MB/s from 16 KB to 128 KB. One-way µs per size.
const PUBLISHED: [(u64, f64); 4] =
    [(32, 2.9), (2048, 2048.0 / 57.0), (16384, 16384.0 / 20.0), (65536, 65536.0 / 20.0)];

/// Emulators' columns, in table order.
pub const RCCE: &str = "sccemu-rcce";
pub const SCCEMU: &str = "sccemu-mpi";
pub const SMPI: &str = "smpi";
pub const PUBLISHED_NAME: &str = "published";

/// What the suite measured.
pub struct VTime {
    pub rows: Vec<Row>,
    /// (emulator, "quiet" or "hog", makespan µs or why not).
    pub makespans: Vec<(String, &'static str, Result<f64, String>)>,
    pub missing: Vec<String>,
}

/// Where the runs go and how long each may take.
pub struct Setup<'a> {
    pub build: &'a Path,
    pub logs: &'a Path,
    pub timeout: Duration,
    pub smpi: bool,
}

fn vrow(implementation: &str, pattern: &str, cores: u32, bytes: u64, us: f64) -> Row {
    let mut r = sccemu_benches::measure::row(NAME, implementation, pattern, cores, bytes, vec![us]);
    r.oversubscribed = false;
    r
}

/// `ROW pattern bytes reps median p10 p90` lines (see `benches/mpi/common.h`).
fn parse_rows(text: &str) -> Vec<(String, u64, f64)> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                ["ROW", pattern, bytes, _, median, _, _] => {
                    Some(((*pattern).to_owned(), bytes.parse().ok()?, median.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect()
}

/// The number after `key` on the last line holding it, e.g. sccrun's `makespan  12.3 µs`
/// or SMPI's `Simulated time: 0.001 seconds.`
fn number_after(text: &str, key: &str) -> Option<f64> {
    let line = text.lines().rev().find(|l| l.contains(key))?;
    line[line.find(key)? + key.len()..].split_whitespace().next()?.parse().ok()
}

impl Setup<'_> {
    /// Runs one C program on `mpi` in virtual time; (rows printed, makespan µs).
    fn run(
        &self,
        mpi: Mpi,
        exe: &Path,
        ranks: u32,
        args: &[String],
        tag: &str,
    ) -> Result<(String, f64), String> {
        let mut command = if mpi == Mpi::Smpi {
            let (xml, hosts) =
                smpi::write(&sccemu::timing::Chip::default(), ranks.max(48), &self.build.join("smpi"))
                    .map_err(|e| e.to_string())?;
            let mut c = std::process::Command::new("smpirun");
            c.arg("-np").arg(ranks.to_string()).arg("-platform").arg(xml).arg("-hostfile").arg(hosts);
            c.arg("--cfg=smpi/display-timing:yes").arg(exe);
            c
        } else {
            let sccrun = beside("sccrun").ok_or("sccrun is not beside this program")?;
            let mut c = std::process::Command::new(sccrun);
            c.arg("-n").arg(ranks.to_string()).arg("--timing").arg("scc").arg("--").arg(exe);
            c
        };
        command.args(args);
        let stem = format!("vtime-{}-{tag}", mpi.name());
        let (out, err) = (self.logs.join(format!("{stem}.out")), self.logs.join(format!("{stem}.err")));
        let finished = run_with_timeout(&mut command, &out, &err, self.timeout).map_err(|e| e.to_string())?;
        if !finished.succeeded() {
            let how = if finished.timed_out() { "timed out".to_owned() } else { last_line(&err) };
            return Err(format!("{}: {how} (logs/{stem}.err)", mpi.name()));
        }
        let (printed, errors) = (
            std::fs::read_to_string(&out).unwrap_or_default(),
            std::fs::read_to_string(&err).unwrap_or_default(),
        );
        let makespan = if mpi == Mpi::Smpi {
            number_after(&errors, "Simulated time:").map(|s| s * 1e6)
        } else {
            number_after(&errors, "makespan")
        };
        Ok((
            printed,
            makespan.ok_or_else(|| format!("{}: no virtual makespan in logs/{stem}.err", mpi.name()))?,
        ))
    }
}

/// `dir/name` or `dir/../name` of the running binary (cargo's layout for tests).
fn beside(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(name), dir.join("..").join(name)].into_iter().find(|p| p.is_file())
}

fn options(patterns: &str, sizes: &str, reps: u32) -> Vec<String> {
    ["--patterns", patterns, "--sizes", sizes, "--reps", &reps.to_string(), "--warmup", "1", "--inner", "10"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// The suite.
pub fn measure(params: &SuiteParams, setup: &Setup<'_>) -> VTime {
    let mut v = VTime { rows: Vec::new(), makespans: Vec::new(), missing: Vec::new() };
    let quick = params.quick;
    let (pairs, sizes, barrier_cores, stencil_cores): (&[u32], &[u64], &[u32], &[u32]) = if quick {
        (&[1], &[32], &[2], &[1, 2])
    } else {
        (&[1, 2, 47], &[32, 2048, 16384, 65536], &[2, 4, 8, 16, 32, 48], &[1, 2, 4, 8, 16, 32, 48])
    };
    let reps = if quick { 1 } else { 3 };
    let mut mpis = vec![Mpi::Sccmpi];
    if setup.smpi {
        mpis.push(Mpi::Smpi);
    } else {
        v.missing.push("smpi: SimGrid is not installed or not requested: its column is skipped".into());
    }
    let _ = peers::write_sources(setup.build);
    let size_list = sizes.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    for &mpi in &mpis {
        let name = if mpi == Mpi::Smpi { SMPI } else { SCCEMU };
        let build = |program: &str| peers::build(mpi, setup.build, program);
        let (pt2pt, barrier, stencil) = match (build("pt2pt"), build("barrier"), build("stencil")) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (a, b, c) => {
                let why = [a.err(), b.err(), c.err()].into_iter().flatten().collect::<Vec<_>>().join("; ");
                v.missing.push(format!("{name}: {why}"));
                continue;
            }
        };
        for &peer in pairs {
            let mut args = options("latency", &size_list, reps);
            args.extend(["--peer".to_owned(), peer.to_string()]);
            match setup.run(mpi, &pt2pt, peer + 1, &args, &format!("pingpong-0-{peer}")) {
                Ok((printed, _)) => {
                    for (_, bytes, us) in parse_rows(&printed) {
                        v.rows.push(vrow(name, &format!("pingpong-0-{peer}"), 2, bytes, us));
                    }
                }
                Err(why) => v.missing.push(why),
            }
        }
        for &n in barrier_cores {
            match setup.run(mpi, &barrier, n, &options("barrier", "0", reps), &format!("barrier-{n}")) {
                Ok((printed, _)) => {
                    v.rows.extend(
                        parse_rows(&printed).into_iter().map(|(_, _, us)| vrow(name, "barrier", n, 0, us)),
                    );
                }
                Err(why) => v.missing.push(why),
            }
        }
        for &n in stencil_cores {
            match setup.run(mpi, &stencil, n, &options("stencil-p2p", "1024", reps), &format!("stencil-{n}"))
            {
                Ok((printed, _)) => {
                    v.rows.extend(parse_rows(&printed).into_iter().map(|(p, b, us)| vrow(name, &p, n, b, us)))
                }
                Err(why) => v.missing.push(why),
            }
        }
        if !quick {
            for (condition, hog) in [("quiet", false), ("hog", true)] {
                let _hog = hog.then(Hog::start);
                let args = options("stencil-p2p", "1024", reps);
                let outcome =
                    setup.run(mpi, &stencil, 48, &args, &format!("stencil-48-{condition}")).map(|r| r.1);
                v.makespans.push((name.to_owned(), condition, outcome));
            }
        }
    }
    rcce_rows(&mut v, pairs, sizes, setup);
    for &(bytes, us) in PUBLISHED.iter().filter(|(b, _)| sizes.contains(b)) {
        v.rows.push(vrow(PUBLISHED_NAME, "pingpong-0-1", 2, bytes, us));
    }
    v
}

/// RCCE's ping-pong in sccemu's virtual time at each pair (`rccerun -clock 0.533 -f hosts`).
fn rcce_rows(v: &mut VTime, pairs: &[u32], sizes: &[u64], setup: &Setup<'_>) {
    let exe = match super::vtime_rcce::build(setup.build) {
        Ok(exe) => exe,
        Err(why) => return v.missing.push(format!("{RCCE}: {why}")),
    };
    for &peer in pairs {
        match super::vtime_rcce::one_way(&exe, peer, setup.build) {
            Ok(figures) => v.rows.extend(
                figures
                    .into_iter()
                    .filter(|(b, _)| sizes.contains(b))
                    .map(|(b, us)| vrow(RCCE, &format!("pingpong-0-{peer}"), 2, b, us)),
            ),
            Err(why) => v.missing.push(format!("{RCCE}: {why}")),
        }
    }
}

/// The suite's tables.
pub fn table(md: &mut String, v: &VTime) {
    for why in &v.missing {
        let _ = writeln!(md, "Not measured: {}\n", why.replace('|', "\\|"));
    }
    let _ = writeln!(
        md,
        "Virtual µs on the emulated SCC (one way for the ping-pong `pingpong-0-K` between \
         cores 0 and K, per barrier, per stencil step of a 512-row grid of 1024-byte rows), \
         medians of the samples each program printed. `sccemu-mpi` and `smpi` run the same C source; ≠ marks where the two \
         emulators disagree by more than 20%.\n"
    );
    let columns = [RCCE, SCCEMU, SMPI, PUBLISHED_NAME];
    let _ = writeln!(md, "| measurement | cores | bytes | {} | smpi/sccemu-mpi |", columns.join(" | "));
    let _ = writeln!(md, "|---|---:|---:|{}---:|", "---:|".repeat(columns.len()));
    let mut keys: Vec<(String, u32, u64)> = Vec::new();
    for r in &v.rows {
        let key = (r.pattern.clone(), r.cores, r.bytes);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (pattern, cores, bytes) in keys {
        let of = |i: &str| {
            v.rows
                .iter()
                .find(|r| {
                    r.implementation == i && r.pattern == pattern && r.cores == cores && r.bytes == bytes
                })
                .map(|r| r.median_us)
                .filter(|m| m.is_finite())
        };
        let cells: Vec<String> =
            columns.iter().map(|c| of(c).map_or("—".into(), |m| format!("{m:.3}"))).collect();
        let ratio = match (of(SMPI), of(SCCEMU)) {
            (Some(a), Some(b)) if b > 0.0 => {
                let mark = if (a / b - 1.0).abs() > 0.2 { " ≠" } else { "" };
                format!("{:.2}{mark}", a / b)
            }
            _ => "—".into(),
        };
        let _ = writeln!(md, "| {pattern} | {cores} | {bytes} | {} | {ratio} |", cells.join(" | "));
    }
    md.push('\n');
    if v.makespans.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "Host independence: the 48-core stencil's virtual makespan (whole program, µs), quiet \
         and beside a CPU hog (one busy thread on this machine's {} CPUs):\n\n\
         | emulator | quiet | beside a hog | moved |\n|---|---:|---:|---:|",
        sccemu::core::pin::available_cpu_count()
    );
    for emulator in [SCCEMU, SMPI] {
        let get = |c: &str| v.makespans.iter().find(|m| m.0 == emulator && m.1 == c).map(|m| &m.2);
        let text = |m: Option<&Result<f64, String>>| match m {
            Some(Ok(us)) => format!("{us:.1}"),
            Some(Err(why)) => why.replace('|', "\\|"),
            None => "—".into(),
        };
        let moved = match (get("quiet"), get("hog")) {
            (Some(Ok(a)), Some(Ok(b))) if *a > 0.0 => format!("{:+.1}%", (b / a - 1.0) * 100.0),
            _ => "—".into(),
        };
        if get("quiet").is_some() {
            let _ = writeln!(md, "| {emulator} | {} | {} | {moved} |", text(get("quiet")), text(get("hog")));
        }
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_makespans_parse() {
        let rows = parse_rows("BEGIN latency 32\nROW latency 32 3 3.178625 3.1 3.5\nnoise\n");
        assert_eq!(rows, vec![("latency".to_owned(), 32, 3.178625)]);
        assert_eq!(number_after("x\n  makespan          5.000000 µs", "makespan"), Some(5.0));
        let smpi = "[0.001055] [smpi_utils/INFO] Simulated time: 0.00105496 seconds. \n";
        assert_eq!(number_after(smpi, "Simulated time:"), Some(0.00105496));
    }

    #[test]
    fn the_table_marks_disagreements_past_20_percent() {
        let v = VTime {
            rows: vec![
                vrow(SCCEMU, "barrier", 2, 0, 10.0),
                vrow(SMPI, "barrier", 2, 0, 13.0),
                vrow(SCCEMU, "barrier", 4, 0, 10.0),
                vrow(SMPI, "barrier", 4, 0, 11.0),
            ],
            makespans: vec![(SCCEMU.into(), "quiet", Ok(100.0)), (SCCEMU.into(), "hog", Ok(101.0))],
            missing: Vec::new(),
        };
        let mut md = String::new();
        table(&mut md, &v);
        assert!(md.contains("| barrier | 2 | 0 | — | 10.000 | 13.000 | — | 1.30 ≠ |"), "{md}");
        assert!(md.contains("| barrier | 4 | 0 | — | 10.000 | 11.000 | — | 1.10 |"), "{md}");
        assert!(md.contains("| sccemu-mpi | 100.0 | 101.0 | +1.0% |"), "{md}");
    }
}
