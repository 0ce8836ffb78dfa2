//! The machine a run was measured on: CPU, cores, kernel, toolchain, commit and MPIs.
//! Figures from different machines are not comparable; the report says where these
//! were taken.

use std::collections::BTreeMap;
use std::process::Command;

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Metadata {
    pub date_utc: String,
    pub cpu_model: String,
    /// CPUs this process may run on (what oversubscription is judged against).
    pub cpus_available: usize,
    pub cpus_online: usize,
    pub kernel: String,
    pub rustc: String,
    pub git_commit: String,
    pub command: String,
    pub quick: bool,
    /// Each MPI's version, or why it is unavailable.
    pub peers: BTreeMap<String, String>,
}

/// First line a command prints, or "unknown".
fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The commit of the sources this harness was built from, marked when they differ.
fn git_commit() -> String {
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let commit = first_line("git", &["-C", repo, "rev-parse", "--short=12", "HEAD"]);
    let dirty = Command::new("git")
        .args(["-C", repo, "status", "--porcelain", "--untracked-files=no"])
        .output()
        .is_ok_and(|out| !out.stdout.is_empty());
    if dirty { format!("{commit} (with uncommitted changes)") } else { commit }
}

impl Metadata {
    pub fn collect(quick: bool) -> Metadata {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        Metadata {
            date_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            cpu_model: cpu_model(),
            cpus_available: sccemu::core::pin::available_cpu_count(),
            cpus_online: std::fs::read_to_string("/proc/cpuinfo")
                .map_or(0, |info| info.lines().filter(|l| l.starts_with("processor")).count()),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or_else(|_| "unknown".into(), |k| k.trim().to_owned()),
            rustc: first_line(&rustc, &["--version"]),
            git_commit: git_commit(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            quick,
            peers: BTreeMap::new(),
        }
    }
}
