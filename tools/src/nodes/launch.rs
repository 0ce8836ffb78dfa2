//! `sccrun --nodes K` on one machine: `mpirun -np K sccrun-node ARGS`, where ARGS are
//! sccrun's arguments without `--nodes K` (so with its `--map`, if any: every node gets
//! the same), and `sccrun-node` is the binary beside sccrun. Each of the K processes is one node (world rank = node number) and its
//! gateway. (`sccrun-node`, not sccrun itself: sccrun links sccemu's own MPI C
//! interface, whose `MPI_*` symbols would take the real MPI's calls; see
//! `src/nodes/mod.rs`.)
//!
//! The mpirun is Open MPI's: `mpirun.openmpi` if it is on the PATH, else `mpirun`; the
//! environment variable `SCCEMU_MPIRUN` (`MPIRUN_VAR`) names another program. It
//! must be the mpirun of the MPI that sccrun was built against (rsmpi finds it through
//! `mpicc`). Its flags:
//! - `--mca btl self,tcp`: the nodes talk over TCP, as separate machines would, and not
//!   through Open MPI's shared-memory transport, so that one machine plays the network
//!   too (its loopback or local interfaces: Open MPI picks them);
//! - `--oversubscribe` and `--bind-to none`: the node processes mostly wait in the
//!   engine's back-off, and the ranks they start are placed by sccrun's own `--pin`,
//!   which an mpirun binding would otherwise narrow;
//! - `--allow-run-as-root`, only when sccrun runs as root (containers, CI).
//!
//! sccrun's exit status is mpirun's (128 + the signal if mpirun was killed by one).
//! SIGINT and SIGTERM reaching sccrun are passed on to mpirun, which stops the job.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, geteuid};

/// The environment variable that names the mpirun program to use.
pub const MPIRUN_VAR: &str = "SCCEMU_MPIRUN";

/// The mpirun to run: `$SCCEMU_MPIRUN`, else `mpirun.openmpi` if on the PATH, else
/// `mpirun`.
pub fn mpirun_program() -> OsString {
    if let Some(program) = std::env::var_os(MPIRUN_VAR).filter(|p| !p.is_empty()) {
        return program;
    }
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| is_executable(&dir.join(name))))
    };
    if on_path("mpirun.openmpi") { "mpirun.openmpi".into() } else { "mpirun".into() }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `mpirun -np nodes` with the flags of the module's doc, ready for the program and its
/// arguments.
pub fn mpirun_command(nodes: u32) -> Command {
    let mut cmd = Command::new(mpirun_program());
    cmd.arg("-np").arg(nodes.to_string());
    cmd.args(["--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,tcp"]);
    if geteuid().is_root() {
        cmd.arg("--allow-run-as-root");
    }
    cmd
}

/// sccrun's arguments (without the program name) for each node: `args` without its
/// `--nodes K` (or `--nodes=K`). Only the first `--nodes` is sccrun's: clap
/// takes no `--`-led word as an option's value, and everything from the program on
/// comes after it. `None` if `args` has no `--nodes`.
pub fn node_args(args: &[OsString]) -> Option<Vec<OsString>> {
    let at = args.iter().position(|a| a == "--nodes" || a.as_encoded_bytes().starts_with(b"--nodes="))?;
    let skip = if args[at] == "--nodes" { 2 } else { 1 };
    let mut out = args[..at].to_vec();
    out.extend(args.iter().skip(at + skip).cloned());
    Some(out)
}

/// Runs `exe` (sccrun-node) as `nodes` nodes under mpirun, with sccrun's arguments
/// `args` (which hold `--nodes K`); returns the exit code for sccrun.
pub fn run(exe: &Path, args: &[OsString], nodes: u32) -> Result<i32, String> {
    let node_args = node_args(args).ok_or("no --nodes among the arguments")?;
    // Held from before mpirun starts, so that a signal cannot kill sccrun and leave
    // mpirun without its parent's report.
    let signals =
        signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM])
            .map_err(|e| format!("cannot catch signals: {e}"))?;
    let mut cmd = mpirun_command(nodes);
    cmd.arg(exe).args(&node_args);
    let program = cmd.get_program().to_owned();
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()))?;
    let pid = Pid::from_raw(child.id() as i32);
    let handle = signals.handle();
    let forwarder = std::thread::spawn(move || {
        let mut signals = signals;
        for signal in signals.forever() {
            // mpirun stops the job on SIGINT or SIGTERM. It may get a terminal's Ctrl-C
            // itself as well; Open MPI's mpirun takes a second one as the same request.
            if let Ok(signal) = Signal::try_from(signal) {
                let _ = kill(pid, signal);
            }
        }
    });
    let status = child.wait().map_err(|e| format!("waiting for {}: {e}", program.to_string_lossy()));
    handle.close();
    let _ = forwarder.join();
    Ok(exit_code(&status?))
}

fn exit_code(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The node program: `sccrun-node` beside the running sccrun (cargo builds both).
pub fn node_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find sccrun's own executable: {e}"))?;
    let node = exe.with_file_name("sccrun-node");
    if is_executable(&node) {
        Ok(node)
    } else {
        Err(format!(
            "{} is missing: build it with `cargo build -p sccemu-tools --features multinode`",
            node.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn nodes_goes_and_the_program_keeps_its_arguments() {
        assert_eq!(
            node_args(&args(&["-n", "4", "--nodes", "2", "--tag-output", "--", "prog", "--nodes", "3"])),
            Some(args(&["-n", "4", "--tag-output", "--", "prog", "--nodes", "3"]))
        );
        assert_eq!(
            node_args(&args(&["--nodes=3", "-n", "4", "prog", "--nodes=9"])),
            Some(args(&["-n", "4", "prog", "--nodes=9"]))
        );
        assert_eq!(node_args(&args(&["-n", "4", "prog"])), None);
    }

    #[test]
    fn every_node_gets_the_map() {
        assert_eq!(
            node_args(&args(&["--nodes", "3", "--map", "1,5,2", "-n", "8", "--", "prog", "--map", "9"])),
            Some(args(&["--map", "1,5,2", "-n", "8", "--", "prog", "--map", "9"]))
        );
        assert_eq!(
            node_args(&args(&["-n", "8", "--map=1,7", "--nodes=2", "prog"])),
            Some(args(&["-n", "8", "--map=1,7", "prog"]))
        );
    }

    #[test]
    fn mpirun_gets_open_mpi_flags() {
        let cmd = mpirun_command(3);
        let words: Vec<_> = cmd.get_args().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            words[..8],
            ["-np", "3", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,tcp"]
        );
        assert_eq!(words.contains(&"--allow-run-as-root"), geteuid().is_root());
    }
}
