//! How the C test programs are built (`sccmpicc`, once each, flags as in `CFLAGS`)
//! and run (`sccmpiexec`, with a watchdog), and how their runs are judged: shared by
//! the tests of `c_programs.rs`.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Core counts every program runs at.
pub const CORES: [u32; 3] = [2, 3, 8];
/// The two-sided channel protocols (`sccmpiexec --channel`).
pub const BOTH: [&str; 2] = ["srb", "perpeer"];
/// Compiler flags of every program; without debug information (-Wl,-S), which the tests
/// do not read, the programs, which link the Rust library, take a quarter of the disk.
pub const CFLAGS: [&str; 6] = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-Wl,-S"];

pub fn build_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi-c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `tests/c/<name>.c` with `extra` flags (once per process), warnings as errors.
pub fn build(name: &str, extra: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(exe) = built.get(name) {
        return exe.clone();
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c"));
    let exe = build_dir().join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_sccmpicc"))
        .args(CFLAGS)
        .args(extra)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "sccmpicc {name} {extra:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    built.insert(name.to_owned(), exe.clone());
    exe
}

/// Runs `sccmpiexec ARGS... exe`.
pub fn sccmpiexec(args: &[&str], exe: &Path) -> (Output, Duration) {
    sccmpiexec_args(args, exe, &[])
}

/// Runs `sccmpiexec ARGS... exe PROGRAM_ARGS...`, one job at a time, failing the test if
/// it takes more than two minutes.
pub fn sccmpiexec_args(args: &[&str], exe: &Path, program_args: &[&str]) -> (Output, Duration) {
    sccmpiexec_env(args, exe, program_args, &[])
}

/// [`sccmpiexec_args`] with the variables `env` set for the job.
pub fn sccmpiexec_env(
    args: &[&str],
    exe: &Path,
    program_args: &[&str],
    env: &[(&str, &str)],
) -> (Output, Duration) {
    static ONE_JOB: Mutex<()> = Mutex::new(());
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(env!("CARGO_BIN_EXE_sccmpiexec"))
        .args(args)
        .arg(exe)
        .args(program_args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain both pipes while waiting, so that a chatty job cannot block on a full pipe.
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let (out, err) = (drain(Box::new(stdout)), drain(Box::new(stderr)));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("sccmpiexec {args:?} {} hung for two minutes; stderr:\n{stderr}", exe.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let output =
        Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() };
    (output, elapsed)
}

pub fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `sccmpiexec ARGS... exe`: `Err` with what went wrong unless the job exits 0
/// and prints `ok <name>`.
pub fn run_ok(name: &str, exe: &Path, args: &[&str]) -> Result<(), String> {
    let (out, took) = sccmpiexec(args, exe);
    eprintln!("{name} {}: {:.2} s", args.join(" "), took.as_secs_f64());
    let ok = format!("ok {name}");
    if out.status.success() && String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == ok) {
        return Ok(());
    }
    Err(format!("{name} {}: {:?}\n{}", args.join(" "), out.status, text(&out)))
}

/// Runs every `(name, build flags, sccmpiexec args)` and fails with all the runs that
/// failed, so that one failure does not hide the others.
pub fn all_pass<'a>(runs: impl IntoIterator<Item = (&'a str, &'a [&'a str], Vec<String>)>) {
    let failed: Vec<String> = runs
        .into_iter()
        .filter_map(|(name, extra, args)| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_ok(name, &build(name, extra), &args).err()
        })
        .collect();
    assert!(failed.is_empty(), "{} run(s) failed:\n\n{}", failed.len(), failed.join("\n\n"));
}

/// Runs `name` (built with `extra` flags) at each of `cores` on each of `channels`.
pub fn passes_with(name: &str, extra: &[&str], cores: &[u32], channels: &[&str]) {
    let runs = channels.iter().flat_map(|channel| {
        cores.iter().map(move |n| {
            (name, extra, vec!["-n".to_owned(), n.to_string(), "--channel".into(), channel.to_string()])
        })
    });
    all_pass(runs.collect::<Vec<_>>());
}

/// Runs `name` at every core count on both channels.
pub fn passes(name: &str) {
    passes_with(name, &[], &CORES, &BOTH);
}
