//! RCCE's ping-pong beside sccemu's own, on 2 cores: the one-way latency (µs) and
//! bandwidth of RCCE's synchronous send/recv, from the C program
//! `examples/c/pingpong.c` built at run time with `sccemu-cc`'s command (`-O2`, linked
//! with the `librcce.a` cargo built beside the running binary) and started as a 2-UE
//! job the way `rccerun` starts it; then sccemu's two-sided ping-pong (the pt2pt suite's
//! `latency`, over both channel protocols) at every size the C program printed.
//!
//! The C program times a number of round trips per size and prints their mean, so each
//! launch gives one sample per size: an `rcce` row's median and spread are over
//! launches, after one discarded warm-up launch. It writes its figures to a file whose
//! path it is given, which this suite reads back.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rcce::launcher::{RcceJob, compile_command, launch};
use sccemu::job::launcher::Output;

use crate::measure::{Row, SuiteParams, row};
use crate::pt2pt;

/// The suite's name, and the implementation name of the C program's rows.
pub const NAME: &str = "rcce";
const SOURCE: &str = include_str!("../../examples/c/pingpong.c");
/// `rccerun`'s default core clock, which RCCE hands the program.
const GHZ: f64 = 0.533;

/// How the C program is run: `round_trips` per size in each of `warmup + launches`
/// launches, the first `warmup` of them discarded.
struct Plan {
    round_trips: u32,
    launches: u32,
    warmup: u32,
}

impl Plan {
    fn new(params: &SuiteParams) -> Plan {
        Plan {
            round_trips: if params.quick { 20 } else { 1000 },
            launches: params.reps(10),
            warmup: params.warmup(1),
        }
    }
}

/// Where cargo put `librcce.a` for the running binary: its directory, or the parent of
/// `deps/` for tests and benches (which `rcce::launcher::archive` searches in turn).
fn lib_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the running binary: {e}"))?;
    let dir = exe.parent().ok_or("the running binary has no directory")?;
    Ok(if dir.ends_with("deps") { dir.parent().unwrap_or(dir) } else { dir }.to_path_buf())
}

/// Writes the C source into `dir` and compiles it there; returns the executable.
fn build(dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (source, exe) = (dir.join("pingpong.c"), dir.join("pingpong"));
    std::fs::write(&source, SOURCE).map_err(|e| format!("{}: {e}", source.display()))?;
    let args: Vec<String> =
        ["-O2".into(), source.display().to_string(), "-o".into(), exe.display().to_string()].into();
    let mut cmd = compile_command(&args, &lib_dir()?)?;
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", cmd.get_program().to_string_lossy()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("compiling pingpong.c failed ({}): {}", out.status, stderr.trim()));
    }
    Ok(exe)
}

/// One 2-UE launch; returns (bytes, one-way µs) per size, as the program printed them.
fn launch_once(exe: &Path, round_trips: u32, figures: &Path) -> Result<Vec<(u64, f64)>, String> {
    let _ = std::fs::remove_file(figures);
    let args: Vec<OsString> = vec![round_trips.to_string().into(), figures.into()];
    let job = RcceJob {
        ues: 2,
        ids: vec![0, 1],
        ghz: GHZ,
        check: false,
        program: exe.into(),
        args,
        timing: None,
        wait: None,
        pin: None,
    };
    let mut job = launch(&job)?;
    job.output = Output::Forward;
    let report = job.spawn().map_err(|e| e.to_string())?.wait();
    if !report.success() {
        return Err(report.diagnosis().unwrap_or_else(|| format!("the job failed: {:?}", report.exits)));
    }
    let text = std::fs::read_to_string(figures).map_err(|e| format!("{}: {e}", figures.display()))?;
    let parsed = parse(&text)?;
    if parsed.is_empty() {
        return Err(format!("{} holds no figures", figures.display()));
    }
    Ok(parsed)
}

/// `bytes round_trip_us one_way_us MB_per_s` lines (`#` starts a comment line).
fn parse(text: &str) -> Result<Vec<(u64, f64)>, String> {
    let figure = |line: &str| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let bytes = fields.first()?.parse().ok()?;
        let one_way = fields.get(2)?.parse().ok()?;
        Some((bytes, one_way))
    };
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| figure(l).ok_or_else(|| format!("unexpected line from pingpong: {l:?}")))
        .collect()
}

/// Builds the program in `dir` and launches it as `plan` says; returns the one-way µs
/// samples per size, in the order printed.
fn measure(dir: &Path, plan: &Plan) -> Result<Vec<(u64, Vec<f64>)>, String> {
    let exe = build(dir)?;
    let figures = dir.join("pingpong.out");
    let mut samples: Vec<(u64, Vec<f64>)> = Vec::new();
    for launch in 0..plan.warmup + plan.launches {
        let printed = launch_once(&exe, plan.round_trips, &figures)?;
        if launch < plan.warmup {
            continue;
        }
        if samples.is_empty() {
            samples = printed.iter().map(|&(bytes, _)| (bytes, Vec::new())).collect();
        }
        let sizes = |v: &[(u64, f64)]| v.iter().map(|f| f.0).collect::<Vec<_>>();
        if sizes(&printed) != samples.iter().map(|s| s.0).collect::<Vec<_>>() {
            return Err(format!("launch {launch} printed other sizes: {:?}", sizes(&printed)));
        }
        for ((_, all), (_, us)) in samples.iter_mut().zip(printed) {
            all.push(us);
        }
    }
    Ok(samples)
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let (dir, temporary) = match &params.build_dir {
        Some(build) => (build.join(NAME), false),
        None => (std::env::temp_dir().join(format!("sccemu-bench-rcce-{}", std::process::id())), true),
    };
    let measured = measure(&dir, &Plan::new(params));
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let samples = match measured {
        Ok(samples) => samples,
        // Without the C program's sizes there is nothing to set sccemu's figures beside.
        Err(why) => {
            return vec![Row {
                note: Some(format!("failed: {why}")),
                ..row(NAME, NAME, "latency", 2, 0, vec![])
            }];
        }
    };
    let sizes: Vec<usize> = samples.iter().map(|&(bytes, _)| bytes as usize).collect();
    let mut rows: Vec<Row> =
        samples.into_iter().map(|(bytes, us)| row(NAME, NAME, "latency", 2, bytes, us)).collect();
    for (kind, name) in pt2pt::PROTOCOLS {
        rows.extend(pt2pt::latency(NAME, params, kind, name, sizes.clone()));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_lines_parse_and_others_are_refused() {
        let text = "# bytes round_trip_us one_way_us MB_per_s\n32 2.000 1.000 32.0\n64 4.000 2.000 32.0\n";
        assert_eq!(parse(text).unwrap(), vec![(32, 1.0), (64, 2.0)]);
        assert!(parse("32 2.000\n").is_err());
    }
}
