//! The MPI peers: finding (or installing) Debian's MPICH and Open MPI, building the
//! C programs of `benches/mpi/` with each, and the mpirun command line for a run.
//!
//! Nothing here fails the benchmark: an MPI that cannot be had or built is reported as
//! unavailable, with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::catalog::PEER_SOURCES;
use super::process::{last_line, run_with_timeout};

/// One of the two MPIs the report compares with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mpi {
    Mpich,
    OpenMpi,
}

impl Mpi {
    /// The `implementation` name of its rows.
    pub fn name(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpich",
            Mpi::OpenMpi => "openmpi",
        }
    }

    fn compiler(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpicc.mpich",
            Mpi::OpenMpi => "mpicc.openmpi",
        }
    }

    fn launcher(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpirun.mpich",
            Mpi::OpenMpi => "mpirun.openmpi",
        }
    }

    fn packages(self) -> &'static [&'static str] {
        match self {
            Mpi::Mpich => &["mpich", "libmpich-dev"],
            Mpi::OpenMpi => &["openmpi-bin", "libopenmpi-dev"],
        }
    }

    /// `mpirun` for `ranks` ranks of `program`, pinned one rank per core like sccemu's
    /// compact pinning. Open MPI refuses to bind more ranks than cores unless told that
    /// overload is allowed, and refuses root without the two variables below.
    pub fn mpirun(self, ranks: u32, oversubscribed: bool, program: &Path) -> Command {
        let mut command = Command::new(self.launcher());
        match self {
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
        command
    }

    /// `mpirun --version`'s first meaningful line, or why the MPI cannot be used.
    fn version(self) -> Result<String, String> {
        for tool in [self.compiler(), self.launcher()] {
            if !on_path(tool) {
                return Err(format!("{tool} not found"));
            }
        }
        let out = Command::new(self.launcher())
            .arg("--version")
            .output()
            .map_err(|e| format!("{}: {e}", self.launcher()))?;
        // Hydra prints "Version: 4.0.2" among its build details; Open MPI's mpirun
        // prints "mpirun (OpenRTE) 4.1.4" first.
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .lines()
            .find(|l| {
                l.trim_start().starts_with("Version:") || l.contains("OpenRTE") || l.contains("Open MPI")
            })
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or("(version unknown)");
        let name = match self {
            Mpi::Mpich => "MPICH",
            Mpi::OpenMpi => "Open MPI",
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
    let mut command = Command::new(mpi.compiler());
    command.arg("-O2").arg("-o").arg(&exe).arg(&source);
    let finished = run_with_timeout(&mut command, &out, &err, BUILD_LIMIT)
        .map_err(|e| format!("{}: {e}", mpi.compiler()))?;
    if finished.succeeded() {
        Ok(exe)
    } else {
        Err(format!("{} {program}.c failed: {}", mpi.compiler(), last_line(&err)))
    }
}
