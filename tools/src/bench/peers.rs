//! The MPI peers: finding (or installing) Debian's MPICH and Open MPI, SimGrid's SMPI
//! (`smpicc`, `smpirun`: virtual time on a platform generated from sccemu's chip
//! description, see [`crate::smpi`]), and sccemu's own MPI library (`capi/mpi`:
//! `libsccmpi.a`, which cargo builds beside this program, with `sccmpicc`'s command
//! line, and this program itself as the launcher); building the C programs of
//! `benches/mpi/` with each, and the mpirun command line for a run.
//!
//! Nothing here fails the benchmark: an MPI that cannot be had or built is reported as
//! unavailable, with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sccemu::timing::Chip;

use super::catalog::PEER_SOURCES;
use super::process::{last_line, run_with_timeout};
use crate::smpi;

/// An MPI that runs the C programs: one of the two the report compares with, SimGrid's
/// SMPI (whose figures are virtual times), or sccemu's own (`capi/mpi`), which runs the
/// very same sources on sccemu.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mpi {
    Mpich,
    OpenMpi,
    Smpi,
    Sccmpi,
}

/// The directory of this program, where cargo leaves `libsccmpi.a` (or in `deps/`).
fn own_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl Mpi {
    /// The `implementation` name of its rows.
    pub fn name(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpich",
            Mpi::OpenMpi => "openmpi",
            Mpi::Smpi => "smpi",
            Mpi::Sccmpi => "sccmpi",
        }
    }

    /// Whether its times are virtual (a simulation's clock), not the host's.
    pub fn virtual_time(self) -> bool {
        self == Mpi::Smpi
    }

    /// The compiler command for `args`: the MPI's `mpicc`, or `sccmpicc`'s command.
    fn compile(self, args: &[String]) -> Result<Command, String> {
        let mut command = match self {
            Mpi::Mpich => Command::new("mpicc.mpich"),
            Mpi::OpenMpi => Command::new("mpicc.openmpi"),
            Mpi::Smpi => Command::new("smpicc"),
            Mpi::Sccmpi => return sccmpi::launcher::compile_command("cc", args, &own_dir()),
        };
        command.args(args);
        Ok(command)
    }

    /// The `mpirun` of MPICH, Open MPI or SMPI (sccemu's programs launch themselves).
    fn launcher(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpirun.mpich",
            Mpi::Smpi => "smpirun",
            _ => "mpirun.openmpi",
        }
    }

    fn compiler(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpicc.mpich",
            Mpi::Smpi => "smpicc",
            _ => "mpicc.openmpi",
        }
    }

    fn packages(self) -> &'static [&'static str] {
        match self {
            Mpi::Mpich => &["mpich", "libmpich-dev"],
            Mpi::OpenMpi => &["openmpi-bin", "libopenmpi-dev"],
            Mpi::Smpi => &["libsimgrid-dev"],
            Mpi::Sccmpi => &[],
        }
    }

    /// `mpirun` for `ranks` ranks of `program`, pinned one rank per core like sccemu's
    /// compact pinning. Open MPI refuses to bind more ranks than cores unless told that
    /// overload is allowed, and refuses root without the two variables below. SMPI runs
    /// every rank in one process, on the SCC platform written into `build/smpi/`.
    pub fn mpirun(
        self,
        ranks: u32,
        oversubscribed: bool,
        program: &Path,
        build: &Path,
    ) -> std::io::Result<Command> {
        let mut command = Command::new(self.launcher());
        match self {
            Mpi::Smpi => {
                let (xml, hosts) = smpi::write(&Chip::default(), ranks, &build.join("smpi"))?;
                command
                    .arg("-np")
                    .arg(ranks.to_string())
                    .arg("-platform")
                    .arg(xml)
                    .arg("-hostfile")
                    .arg(hosts);
                // SimGrid's start-up notes (every setting of the platform) stay out of the log.
                command.arg("--log=root.thres:warning");
            }
            Mpi::Sccmpi => {
                // Started alone, an sccemu MPI program launches itself as a job of that
                // many cores, pinned compactly as the native suites are.
                let mut alone = Command::new(program);
                alone.env(sccmpi::launcher::NP_VAR, ranks.to_string());
                return Ok(alone);
            }
            Mpi::Mpich => {
                command.args(["-bind-to", "core", "-np", &ranks.to_string()]);
            }
            Mpi::OpenMpi => {
                let binding = if oversubscribed { "core:overload-allowed" } else { "core" };
                command.args(["--oversubscribe", "--bind-to", binding, "-np", &ranks.to_string()]);
                if nix::unistd::geteuid().is_root() {
                    command.arg("--allow-run-as-root");
                }
                command
                    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                    // The shared-memory transports the design compares with: osc/sm for
                    // windows (osc/rdma, the default, crashes in compare-and-swap here)
                    // and btl/sm ("vader") for messages.
                    .env("OMPI_MCA_osc", "sm")
                    .env("OMPI_MCA_btl", "self,vader");
            }
        }
        command.arg(program);
        Ok(command)
    }

    /// `mpirun --version`'s first meaningful line, or why the MPI cannot be used.
    fn version(self) -> Result<String, String> {
        if self == Mpi::Sccmpi {
            return match sccmpi::launcher::archive(&own_dir()) {
                None => Err(format!(
                    "libsccmpi.a is not beside {} (cargo build -p sccemu-mpi)",
                    own_dir().display()
                )),
                Some(_) => Ok(format!("sccemu MPI {}", env!("CARGO_PKG_VERSION"))),
            };
        }
        for tool in [self.compiler(), self.launcher()] {
            if !on_path(tool) && self == Mpi::Smpi {
                return Err(format!(
                    "SimGrid is not installed ({tool} not found): the SMPI column is skipped \
                     (apt-get install libsimgrid-dev)"
                ));
            }
            if !on_path(tool) {
                return Err(format!("{tool} not found"));
            }
        }
        let flag = if self == Mpi::Smpi { "-version" } else { "--version" };
        let out = Command::new(self.launcher())
            .arg(flag)
            .output()
            .map_err(|e| format!("{}: {e}", self.launcher()))?;
        // Hydra prints "Version: 4.0.2" among its build details; Open MPI's mpirun
        // prints "mpirun (OpenRTE) 4.1.4" first; smpirun "SimGrid version 3.32".
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .lines()
            .find(|l| {
                l.trim_start().starts_with("Version:")
                    || l.contains("OpenRTE")
                    || l.contains("Open MPI")
                    || l.contains("SimGrid version")
            })
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or("(version unknown)");
        let name = match self {
            Mpi::Mpich => "MPICH",
            Mpi::OpenMpi => "Open MPI",
            Mpi::Smpi => "SimGrid SMPI",
            Mpi::Sccmpi => "sccemu MPI",
        };
        Ok(format!("{name} {version}"))
    }
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

/// Installs packages with apt-get, at most once per harness run for `apt-get update`.
pub struct Installer {
    pub allowed: bool,
    pub logs: PathBuf,
    updated: bool,
}

const APT_LIMIT: Duration = Duration::from_secs(900);

impl Installer {
    pub fn new(allowed: bool, logs: PathBuf) -> Installer {
        Installer { allowed, logs, updated: false }
    }

    /// The MPI's version, installing its packages first if it is missing.
    pub fn ensure(&mut self, mpi: Mpi) -> Result<String, String> {
        let missing = match mpi.version() {
            Ok(version) => return Ok(version),
            Err(why) => why,
        };
        if mpi.packages().is_empty() {
            return Err(missing);
        }
        if !self.allowed {
            return Err(format!("{missing}; installing is switched off (--no-install)"));
        }
        if !nix::unistd::geteuid().is_root() {
            return Err(format!("{missing}; not root, so not installing {}", mpi.packages().join(" ")));
        }
        if !self.updated {
            self.apt(&["update"], "apt-update")?;
            self.updated = true;
        }
        let mut install = vec!["install", "-y"];
        install.extend(mpi.packages());
        self.apt(&install, &format!("apt-install-{}", mpi.name()))?;
        mpi.version()
    }

    fn apt(&self, args: &[&str], log: &str) -> Result<(), String> {
        let (out, err) = (self.logs.join(format!("{log}.out")), self.logs.join(format!("{log}.err")));
        let mut command = Command::new("apt-get");
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        let finished = run_with_timeout(&mut command, &out, &err, APT_LIMIT)
            .map_err(|e| format!("apt-get {}: {e}", args.join(" ")))?;
        if finished.succeeded() {
            Ok(())
        } else {
            Err(format!("apt-get {} failed: {}", args.join(" "), last_line(&err)))
        }
    }
}

/// Writes the peer sources into `dir/src` (the harness carries them, so it builds from
/// any working directory).
pub fn write_sources(build: &Path) -> std::io::Result<PathBuf> {
    let src = build.join("src");
    std::fs::create_dir_all(&src)?;
    for (name, text) in PEER_SOURCES {
        std::fs::write(src.join(name), text)?;
    }
    Ok(src)
}

const BUILD_LIMIT: Duration = Duration::from_secs(120);

/// Compiles `program` with the MPI's `mpicc` into `build/<mpi>/<program>`.
pub fn build(mpi: Mpi, build: &Path, program: &str) -> Result<PathBuf, String> {
    let dir = build.join(mpi.name());
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let exe = dir.join(program);
    let source = build.join("src").join(format!("{program}.c"));
    let (out, err) = (dir.join(format!("{program}.build.out")), dir.join(format!("{program}.build.err")));
    let args: Vec<String> =
        ["-O2".into(), "-o".into(), exe.display().to_string(), source.display().to_string()].into();
    let mut command = mpi.compile(&args)?;
    let compiler = format!("{}'s compiler", mpi.name());
    let finished =
        run_with_timeout(&mut command, &out, &err, BUILD_LIMIT).map_err(|e| format!("{compiler}: {e}"))?;
    if finished.succeeded() {
        Ok(exe)
    } else {
        Err(format!("{compiler} {program}.c failed: {}", last_line(&err)))
    }
}
