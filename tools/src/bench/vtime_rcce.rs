//! RCCE's ping-pong (`examples/c/pingpong.c`) in sccemu's virtual time for the `vtime`
//! suite: built with `sccemu-cc`'s command against the `librcce.a` cargo built beside
//! this program, run as two UEs on chip cores 0 and K with the SCC's model, as
//! `rccerun -nue 2 -f hosts -clock 0.533 -timing ...` would.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rcce::launcher::{RcceJob, compile_command, launch};
use sccemu::job::launcher::Output;
use sccemu::job::vtime::VirtualTime;

const SOURCE: &str = include_str!("../../../examples/c/pingpong.c");
/// `rccerun`'s default core clock (the SCC's 533 MHz), which RCCE hands the program.
const GHZ: f64 = 0.533;
/// Round trips per size: virtual time repeats itself, a few suffice.
const ROUND_TRIPS: u32 = 20;

/// Where cargo put `librcce.a`: beside the running binary, or above `deps/` for tests.
fn lib_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the running binary: {e}"))?;
    let dir = exe.parent().ok_or("the running binary has no directory")?;
    Ok(if dir.ends_with("deps") { dir.parent().unwrap_or(dir) } else { dir }.to_path_buf())
}

/// Compiles the ping-pong into `build/rcce-vtime/`.
pub fn build(build: &Path) -> Result<PathBuf, String> {
    let dir = build.join("rcce-vtime");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (source, exe) = (dir.join("pingpong.c"), dir.join("pingpong"));
    std::fs::write(&source, SOURCE).map_err(|e| format!("{}: {e}", source.display()))?;
    let args: Vec<String> =
        ["-O2".into(), source.display().to_string(), "-o".into(), exe.display().to_string()].into();
    let mut cmd = compile_command(&args, &lib_dir()?)?;
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", cmd.get_program().to_string_lossy()))?;
    if !out.status.success() {
        return Err(format!("compiling pingpong.c failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(exe)
}

/// One-way virtual µs per size between chip cores 0 and `peer`.
pub fn one_way(exe: &Path, peer: u32, build: &Path) -> Result<Vec<(u64, f64)>, String> {
    let figures = build.join("rcce-vtime").join(format!("figures-0-{peer}.txt"));
    let _ = std::fs::remove_file(&figures);
    let job = RcceJob {
        ues: 2,
        ids: vec![0, peer],
        ghz: GHZ,
        check: false,
        program: exe.into(),
        args: vec![OsString::from(ROUND_TRIPS.to_string()), figures.clone().into()],
        timing: Some(VirtualTime::from_spec("scc")?),
        wait: None,
        pin: None,
    };
    let mut job = launch(&job)?;
    // The virtual-time report goes to the launcher's caller, not to the terminal.
    job.output = Output::Forward;
    let report = job.spawn().map_err(|e| e.to_string())?.wait();
    if !report.success() {
        return Err(report.diagnosis().unwrap_or_else(|| "the job failed".into()));
    }
    let text = std::fs::read_to_string(&figures).map_err(|e| format!("{}: {e}", figures.display()))?;
    // `bytes round_trip_us one_way_us MB_per_s` lines; `#` starts a comment.
    let rows: Vec<(u64, f64)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.first()?.parse().ok()?, f.get(2)?.parse().ok()?))
        })
        .collect();
    if rows.is_empty() { Err(format!("{} holds no figures", figures.display())) } else { Ok(rows) }
}
