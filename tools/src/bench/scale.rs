//! The `scale` suite: launch, one barrier and exit at 48, 1024 and 4096 ranks, sccemu's
//! `hello` example under `sccrun` against the C hello of `benches/mpi/hello.c` under
//! `smpirun` on the generated SCC platform, in the same run. Both figures are host
//! times: the wall time of the whole command, and the peak memory of its process tree.
//!
//! Runs alternate (sccemu, SMPI, SMPI, sccemu, ...) so that drift on the shared machine
//! falls on both. Memory is measured in one extra run each, apart from the timed ones,
//! because reading thousands of processes' memory maps takes CPU time from the job: the
//! sum of `Pss` (`/proc/PID/smaps_rollup`, each shared page divided among the processes
//! that map it) over the launched process and its descendants, sampled every 20 ms,
//! peak kept.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sccemu::timing::Chip;
use sccemu_benches::measure::{Row, SuiteParams, row};

use super::peers::{self, Mpi};
use crate::smpi;

pub const NAME: &str = "scale";
pub const ABOUT: &str = "launch, one barrier and exit at 48, 1024 and 4096 ranks: sccemu's `hello` \
    example under sccrun against the C hello (benches/mpi/hello.c) under smpirun on the generated SCC \
    platform; host wall time and peak memory of each, measured in this run";
const PATTERN: &str = "launch-barrier-exit";

/// What the scale suite measured: rows (wall time) and peak memory per (implementation, cores).
pub struct Scale {
    pub rows: Vec<Row>,
    pub memory: Vec<(String, u32, Option<u64>)>,
    /// Why a side was not measured.
    pub missing: Vec<String>,
}

/// `dir/name`, `dir/../name`: where cargo puts a binary's neighbours.
pub(super) fn beside(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(name), dir.join("..").join(name)].into_iter().find(|p| p.is_file())
}

/// The commands of one side at `n` ranks, or why it cannot run.
fn command(
    implementation: &str,
    n: u32,
    build: &Path,
    smpi_hello: &Option<PathBuf>,
) -> Result<Command, String> {
    if implementation == "sccemu" {
        let sccrun = beside("sccrun").ok_or("sccrun is not beside this program (cargo build --release)")?;
        let hello = beside("examples/hello")
            .ok_or("examples/hello is not built (cargo build --release --examples)")?;
        let mut c = Command::new(sccrun);
        c.arg("-n").arg(n.to_string()).arg(hello).env("HELLO_QUIET", "1");
        return Ok(c);
    }
    let exe = smpi_hello.clone().ok_or("SimGrid is not installed: the SMPI side is skipped")?;
    let (xml, hosts) = smpi::write(&Chip::default(), n, &build.join("smpi")).map_err(|e| e.to_string())?;
    let mut c = Command::new("smpirun");
    c.arg("-np").arg(n.to_string()).arg("-platform").arg(xml).arg("-hostfile").arg(hosts);
    c.arg("--log=root.thres:warning").arg(exe);
    Ok(c)
}

/// The process and every descendant, by `/proc/PID/task/*/children`.
fn tree(root: u32) -> Vec<u32> {
    let mut all = vec![root];
    let mut i = 0;
    while i < all.len() {
        let pid = all[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
                all.extend(text.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
        i += 1;
    }
    all
}

fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Runs `command` to the end (at most `limit`); wall time, and the peak Pss if sampled.
fn run(mut command: Command, sample: bool, limit: Duration) -> Result<(Duration, Option<u64>), String> {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut peak = 0u64;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let wall = start.elapsed();
            if !status.success() {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                let last = err.lines().last().unwrap_or("").to_owned();
                return Err(format!("exited with {status}: {last}"));
            }
            return Ok((wall, sample.then_some(peak)));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("gave up after {} s", limit.as_secs()));
        }
        if sample {
            peak = peak.max(tree(child.id()).into_iter().map(pss_kib).sum());
            std::thread::sleep(Duration::from_millis(20));
        } else {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// The suite, `smpi_ready` when SimGrid was found (and wanted).
pub fn measure(params: &SuiteParams, build: &Path, smpi_ready: bool, limit: Duration) -> Scale {
    let sizes: &[u32] = if params.quick { &[48] } else { &[48, 1024, 4096] };
    let reps = if params.quick { 1 } else { 3 };
    let mut scale = Scale { rows: Vec::new(), memory: Vec::new(), missing: Vec::new() };
    let smpi_hello = if smpi_ready {
        match peers::write_sources(build)
            .map_err(|e| e.to_string())
            .and_then(|_| peers::build(Mpi::Smpi, build, "hello"))
        {
            Ok(exe) => Some(exe),
            Err(why) => {
                scale.missing.push(format!("smpi: {why}"));
                None
            }
        }
    } else {
        scale
            .missing
            .push("smpi: SimGrid is not installed or not requested: the SMPI side is skipped".into());
        None
    };
    for &n in sizes {
        let mut samples: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut failed: [Option<String>; 2] = [None, None];
        let sides = ["sccemu", "smpi"];
        for rep in 0..reps + 1 {
            // ABBA order; the last round samples memory.
            let order = if rep % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                if failed[side].is_some() {
                    continue;
                }
                let sample = rep == reps;
                match command(sides[side], n, build, &smpi_hello).and_then(|c| run(c, sample, limit)) {
                    Ok((wall, None)) => samples[side].push(wall.as_secs_f64() * 1e6),
                    Ok((_, Some(kib))) => scale.memory.push((sides[side].into(), n, Some(kib))),
                    Err(why) => failed[side] = Some(why),
                }
            }
        }
        for side in 0..2 {
            let mut r = row(NAME, sides[side], PATTERN, n, 0, std::mem::take(&mut samples[side]));
            if let Some(why) = failed[side].take() {
                if r.reps == 0 {
                    scale.memory.push((sides[side].into(), n, None));
                }
                r.note = Some(why);
            }
            scale.rows.push(r);
        }
    }
    scale
}

/// The suite's table: per size, each side's wall time and peak memory, and sccemu/SMPI.
pub fn table(md: &mut String, scale: &Scale) {
    for why in &scale.missing {
        let _ = writeln!(md, "{why}\n");
    }
    let _ = writeln!(
        md,
        "Host wall time of the whole command (median of the timed runs, seconds) and peak \
         memory of its processes (sum of Pss, one more run each); both are host figures, so \
         they compare directly.\n"
    );
    let _ = writeln!(
        md,
        "| ranks | sccemu wall (s) | sccemu peak memory | smpi wall (s) | smpi peak memory | sccemu/smpi wall |\n\
         |---:|---:|---:|---:|---:|---:|"
    );
    let mut sizes: Vec<u32> = scale.rows.iter().map(|r| r.cores).collect();
    sizes.dedup();
    for n in sizes {
        let find = |i: &str| scale.rows.iter().find(|r| r.cores == n && r.implementation == i);
        let wall = |i: &str| match find(i) {
            Some(r) if r.median_us.is_finite() => format!("{:.2}", r.median_us / 1e6),
            Some(r) => r.note.clone().unwrap_or_else(|| "—".into()).replace('|', "\\|"),
            None => "—".into(),
        };
        let memory = |i: &str| match scale.memory.iter().find(|m| m.0 == i && m.1 == n).and_then(|m| m.2) {
            Some(kib) => format!("{:.1} MiB", kib as f64 / 1024.0),
            None => "—".into(),
        };
        let ratio = match (find("sccemu"), find("smpi")) {
            (Some(a), Some(b)) if a.median_us.is_finite() && b.median_us.is_finite() => {
                format!("{:.2}", a.median_us / b.median_us)
            }
            _ => "—".into(),
        };
        let _ = writeln!(
            md,
            "| {n} | {} | {} | {} | {} | {ratio} |",
            wall("sccemu"),
            memory("sccemu"),
            wall("smpi"),
            memory("smpi")
        );
    }
    md.push('\n');
}
