//! Building and launching RCCE programs, for `sccemu-cc`, `rccerun` and the benchmark
//! harness alike.
//!
//! [`compile_command`] is `sccemu-cc`: `$CC` (default `cc`) with RCCE's include
//! directory first and, when it links, `librcce.a`, `-lm` and the system libraries the
//! Rust runtime needs after the objects; icc-only flags are dropped, and so is a
//! `librcce.a` the Makefile names itself (`$(ARCHIVE)`), which may not be built where
//! it says when `cargo test` built the library. [`launch`] is
//! `rccerun`: rank `r` on the `r`-th smallest core ID, the program started as
//! `prog N GHz id_0 ... id_{N-1} args...` with a fresh MPB sized for RCCE.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use sccemu::job::c_link;
use sccemu::job::launcher::{CHECK_VAR, Launch, find_program};
use sccemu::{Config, Mesh};

/// icc flags RCCE Makefiles pass that other compilers refuse.
const ICC_ONLY: &[&str] = &[
    "-restrict",
    "-fno-alias",
    "-fno-fnalias",
    "-no-multibyte-chars",
    "-static-intel",
    "-openmp",
    "-mcpu=pentium",
];
/// MPB per core for RCCE jobs: RCCE's 8 KiB plus sccemu's own channel counters.
pub const MPB_BYTES: u32 = 8192 + sccemu::protocol::ring::srb::COUNTER_BYTES as u32;

/// RCCE's headers.
pub fn include_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The archive to link: `$SCCEMU_RCCE_LIB`, or the newer `librcce.a` of `dir` and of
/// `dir/deps` (where `cargo test` leaves it).
pub fn archive(dir: &Path) -> Option<PathBuf> {
    c_link::archive(dir, "librcce.a", "SCCEMU_RCCE_LIB")
}

/// The compiler command for `args`, linking the archive found next to `lib_dir`.
pub fn compile_command(args: &[String], lib_dir: &Path) -> Result<Command, String> {
    // `$(ARCHIVE)` from RCCE Makefiles names librcce.a, which is linked below anyway.
    let args: Vec<&String> =
        args.iter().filter(|a| !ICC_ONLY.contains(&a.as_str()) && !a.ends_with("librcce.a")).collect();
    let links = c_link::links(&args);
    let mut cmd = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cmd.arg(format!("-I{}", include_dir().display())).args(args);
    if links {
        let archive =
            archive(lib_dir).ok_or("librcce.a is missing; build it with `cargo build -p sccemu-rcce`")?;
        c_link::link_archive(&mut cmd, &archive);
    }
    Ok(cmd)
}

/// What `rccerun` starts.
#[derive(Clone, Debug)]
pub struct RcceJob {
    /// The number of UEs.
    pub ues: u32,
    /// Their core IDs, in host-file order.
    pub ids: Vec<u32>,
    /// The core clock in GHz (RCCE passes it to the program).
    pub ghz: f64,
    /// Checking mode.
    pub check: bool,
    /// The program and its own arguments.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Virtual time, if the job runs in it.
    pub timing: Option<sccemu::job::vtime::VirtualTime>,
    /// How blocked UEs wait (`None`: sccemu's default for the job's size).
    pub wait: Option<sccemu::WaitPolicy>,
    /// Where the UEs are pinned (`None`: compactly).
    pub pin: Option<sccemu::core::pin::PinPolicy>,
}

/// The launch of an RCCE job (not started yet: the caller may adjust its output).
pub fn launch(job: &RcceJob) -> Result<Launch, String> {
    let mut config = Config::new(job.ues);
    config.mpb_bytes = MPB_BYTES;
    let highest = job.ids.iter().copied().max().unwrap_or(0);
    config.mesh = Mesh::for_cores(job.ues.max(highest + 1));
    config.wait = job.wait.unwrap_or_else(|| sccemu::job::resolve_wait(job.ues)) as u32;
    let mut launch = Launch::new(config, find_program(&job.program)?);
    let mut args: Vec<OsString> = vec![job.ues.to_string().into(), job.ghz.to_string().into()];
    args.extend(job.ids.iter().map(|id| OsString::from(id.to_string())));
    args.extend(job.args.iter().cloned());
    launch.args = args;
    let mut sorted = job.ids.clone();
    sorted.sort_unstable();
    launch.core_ids = Some(sorted);
    if job.check {
        launch.env.push((CHECK_VAR.into(), "1".into()));
    }
    launch.timing.clone_from(&job.timing);
    if let Some(pin) = &job.pin {
        launch.pin = pin.clone();
    }
    Ok(launch)
}
