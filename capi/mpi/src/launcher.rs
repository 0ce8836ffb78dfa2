//! Building and launching MPI programs: `sccmpicc`, `sccmpiexec`, and MPI's
//! "singleton init" of a program started without a launcher.
//!
//! [`compile_command`] is `sccmpicc`: `$CC` (default `cc`) with `mpi.h`'s directory
//! first and, when it links, `libsccmpi.a` and the system libraries the Rust runtime
//! needs after the objects. [`run_as_singleton`] re-runs the calling program as an
//! sccemu job of [`NP_VAR`] cores (default 1) and exits with its status, so that
//! `./prog` alone behaves like `sccrun -n 1 ./prog`, and `SCCEMU_MPI_NP=4 ./prog` like
//! `sccrun -n 4 ./prog` (how the benchmark harness starts MPI programs).

use std::path::{Path, PathBuf};
use std::process::Command;

use sccemu::job::c_link;

/// `mpi.h`'s directory.
pub fn include_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The archive to link: `$SCCEMU_MPI_LIB`, or the newer `libsccmpi.a` of `dir` and of
/// `dir/deps` (where `cargo test` leaves it).
pub fn archive(dir: &Path) -> Option<PathBuf> {
    c_link::archive(dir, "libsccmpi.a", "SCCEMU_MPI_LIB")
}

/// The compiler command for `args` (`compiler` is `$CC`-like: `cc` or `c++`), linking
/// the archive found next to `lib_dir`.
pub fn compile_command(compiler: &str, args: &[String], lib_dir: &Path) -> Result<Command, String> {
    let mut cmd = Command::new(compiler);
    cmd.arg(format!("-I{}", include_dir().display())).args(args);
    if c_link::links(args) {
        let archive =
            archive(lib_dir).ok_or("libsccmpi.a is missing; build it with `cargo build -p sccemu-mpi`")?;
        c_link::link_archive(&mut cmd, &archive);
    }
    Ok(cmd)
}

/// `sccmpicc` and `sccmpicxx`: runs the compiler (`cxx`: `$CXX` or `c++`; else
/// `$SCCEMU_MPICC_CC`, `$CC` or `cc`) on the command-line arguments, or prints the
/// command for `-show`; the exit code to return.
pub fn compiler_main(name: &str, cxx: bool) -> u8 {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "-show");
    args.retain(|a| a != "-show");
    let compiler = if cxx {
        std::env::var("CXX").unwrap_or_else(|_| "c++".into())
    } else {
        std::env::var("SCCEMU_MPICC_CC").or_else(|_| std::env::var("CC")).unwrap_or_else(|_| "cc".into())
    };
    let dir =
        std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)).unwrap_or_default();
    let mut cmd = match compile_command(&compiler, &args, &dir) {
        Ok(cmd) => cmd,
        Err(e) => {
            eprintln!("{name}: {e}");
            return 2;
        }
    };
    if show {
        let words: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        println!("{}", words.join(" "));
        return 0;
    }
    match cmd.status() {
        Ok(status) => status.code().unwrap_or(1).clamp(0, 255) as u8,
        Err(e) => {
            eprintln!("{name}: cannot run {}: {e}", cmd.get_program().to_string_lossy());
            2
        }
    }
}

/// The environment variable that gives the core count of a program started without a
/// launcher (see [`run_as_singleton`]).
pub const NP_VAR: &str = "SCCEMU_MPI_NP";

/// Re-runs this program, with its arguments, as the cores of a new job ([`NP_VAR`] of
/// them, 1 by default), and exits with the job's status: `MPI_Init` without `sccrun`.
pub fn run_as_singleton() -> ! {
    use sccemu::job::launcher::Launch;
    let cores = match std::env::var(NP_VAR) {
        Err(_) => 1,
        Ok(n) => match n.parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("sccemu MPI: {NP_VAR}={n:?} is not a core count");
                std::process::exit(2)
            }
        },
    };
    let mut config = sccemu::Config::new(cores);
    config.wait = sccemu::job::resolve_wait(cores) as u32;
    let mut launch = Launch::new(config, "/proc/self/exe");
    launch.args = std::env::args_os().skip(1).collect();
    let code = match launch.spawn() {
        Ok(running) => {
            let report = running.wait();
            if let Some(why) = report.diagnosis() {
                eprintln!("sccemu MPI: {why}");
            }
            i32::from(report.exit_code())
        }
        Err(e) => {
            eprintln!("sccemu MPI: cannot start a {cores}-core job for this program: {e}");
            1
        }
    };
    std::process::exit(code)
}
