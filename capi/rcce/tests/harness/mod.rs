//! Building and running the C test programs, shared by the test files of this crate.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where the test programs are built.
pub fn build_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rcce-c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `tests/c/<name>.c` with `flags` (once per process), warnings as errors.
pub fn build(name: &str, flags: &[&str]) -> PathBuf {
    build_source(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c")),
        name,
        flags,
    )
}

/// Compiles the C source `src` as `name` with `flags` (once per process).
pub fn build_source(src: &Path, name: &str, flags: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let key = format!("{name}{}", flags.concat().replace(['-', '=', 'D'], "_"));
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(exe) = built.get(&key) {
        return exe.clone();
    }
    let exe = build_dir().join(&key);
    let out = Command::new(env!("CARGO_BIN_EXE_sccemu-cc"))
        // Without the Rust library's debug information (-Wl,-S), which the tests do not
        // read, the programs take a quarter of the disk.
        .args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-Wl,-S"])
        .args(flags)
        .arg(src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "sccemu-cc {name} {flags:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    built.insert(key, exe.clone());
    exe
}

/// Runs `rccerun ARGS... exe PROGRAM_ARGS...`, one job at a time, failing the test if it
/// takes more than two minutes.
pub fn rccerun(args: &[&str], exe: &Path, program_args: &[&str]) -> Output {
    static ONE_JOB: Mutex<()> = Mutex::new(());
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rccerun"))
        .args(args)
        .arg(exe)
        .args(program_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("rccerun {args:?} {} hung", exe.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

pub fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
