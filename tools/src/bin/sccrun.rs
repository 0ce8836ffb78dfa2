//! `sccrun`: launch a program as the cores of an emulated SCC-like chip.
//!
//! `sccrun -n 48 [--pin ...] [--wait ...] -- ./my_app args` creates the job's segment,
//! starts 48 pinned processes of `my_app` and watches them fail-stop: the first rank
//! to die aborts the job, every peer's blocked call returns an error naming it, and
//! sccrun reaps everything and exits non-zero with a one-line diagnosis.
//!
//! `sccrun bench [SUITE...] [--quick] [--peers mpich,openmpi] [--out DIR]` runs the
//! benchmark suites beside MPICH and Open MPI and writes CSV, SVG plots and a report.
//!
//! `sccrun chaos [--seeds A..B] [--cores 2,8,48]` runs the fault campaign: random
//! programs with one rank killed at a random point, each outcome checked.
//!
//! `sccrun -n 48 --timing scc [--trace FILE] -- ./my_app` runs in virtual time (see
//! `sccemu::timing`); `sccrun trace-report FILE` draws such a trace.
//!
//! `sccrun -n 48 --nodes 3 -- ./my_app` runs one job as 3 nodes, each with a segment and
//! 16 ranks of its own, joined by a real MPI: `mpirun -np 3 sccrun-node` with the same
//! arguments but `--nodes 3`, one `sccrun-node` per node (`tools/src/nodes`). Only with
//! the `multinode` feature. `--map 8,30,10` gives the nodes other blocks (8, 30 and 10
//! ranks); every `sccrun-node` gets the same `--map`.
//!
//! `sccrun smpi-platform [--chip FILE] -n N` writes a SimGrid platform and host file for
//! that chip, so that SMPI runs the same MPI C program on it (`docs/SMPI.md`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sccemu::job::launcher::LaunchError;
use sccemu::job::node::NodeSpec;

#[path = "../job_args.rs"]
mod job_args;

use job_args::{JobArgs, catch_signals, forward_signals, node_spec, usage_error};

#[derive(Parser, Debug)]
#[command(
    name = "sccrun",
    version,
    about = "Run a program as N cores of an emulated SCC-like many-core chip",
    override_usage = "sccrun -n N [OPTIONS] -- PROGRAM [ARGS]...\n       sccrun bench [SUITE]... [--quick] [--peers mpich,openmpi] [--out DIR]\n       sccrun chaos [--seeds A..B] [--cores N,...] [--limit SECONDS]\n       sccrun trace-report FILE [--out SVG]\n       sccrun smpi-platform [--chip FILE] -n N [--out DIR]",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    tool: Option<Tool>,

    #[command(flatten)]
    job: JobArgs,

    /// Run the job as K nodes, each with a segment and a block of the ranks of its own,
    /// joined by a real MPI (`mpirun -np K`, Open MPI over TCP; `SCCEMU_MPIRUN` names
    /// another mpirun). 1 is the ordinary launch. Needs sccrun built with
    /// `--features multinode`.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,

    /// With --nodes: how many ranks each node runs, in node order, as a comma list
    /// (`--nodes 2 --map 40,56 -n 96`: ranks 0-39 on node 0, 40-95 on node 1). One
    /// count per node, each at least 1, adding up to N. Without it, the ranks are split
    /// in blocks as even as they go.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', requires = "nodes")]
    map: Option<Vec<u32>>,
}

#[derive(Subcommand, Debug)]
enum Tool {
    /// Run benchmark suites beside MPICH and Open MPI; write CSV, SVG plots and report.md.
    Bench(sccemu_tools::bench::BenchArgs),
    /// Fault campaign: random programs, one rank killed at a random point, outcome checked.
    Chaos(sccemu_tools::chaos::ChaosArgs),
    /// Draw a virtual-time trace (`sccrun --trace FILE`) as an SVG timeline per core.
    TraceReport(sccemu_tools::trace_report::TraceReportArgs),
    /// Write a SimGrid SMPI platform (.xml) and host file (.hosts) for the emulated chip.
    SmpiPlatform(sccemu_tools::smpi::SmpiPlatformArgs),
}

fn main() -> ExitCode {
    // `sccrun bench` runs jobs that re-execute this binary: their children start here.
    sccemu::job::init();
    let cli = Cli::parse();
    let cores = match (&cli.tool, cli.job.cores) {
        (Some(Tool::Bench(args)), _) => {
            return match sccemu_tools::bench::run(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sccrun bench: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        (Some(Tool::Chaos(args)), _) => {
            return match sccemu_tools::chaos::run(args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("sccrun chaos: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        (Some(Tool::TraceReport(args)), _) => {
            return match sccemu_tools::trace_report::run(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sccrun trace-report: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        (Some(Tool::SmpiPlatform(args)), _) => {
            return match sccemu_tools::smpi::run(args) {
                Ok(message) => {
                    println!("{message}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("sccrun smpi-platform: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        (None, Some(cores)) => cores,
        (None, None) => return usage_error("the number of cores (-n N) is required"),
    };
    // With several nodes, the largest node's block: every node's launch is then made of
    // the same options. A map is checked with one node too, never ignored.
    let (nodes, map) = (cli.nodes.unwrap_or(1), cli.map.as_deref());
    let node =
        match node_spec(cores, nodes, map, 0).and_then(|spec| node_spec(cores, nodes, map, largest(&spec))) {
            Ok(spec) => Some(spec).filter(|_| nodes > 1),
            Err(e) => return usage_error(e),
        };
    let launch = match cli.job.launch(cores, node) {
        Ok(launch) => launch,
        Err(e) => return usage_error(e),
    };
    if let Some(nodes @ 2..) = cli.nodes {
        // The options made a launch here, so every node will make one too.
        return launch_nodes(nodes, cli.job.trace.clone());
    }
    let launch_timing = launch.timing.clone();
    // Before the ranks start: a Ctrl-C during a long launch is then held for them, not
    // the default action that would leave them to their parent-death signal.
    let signals = catch_signals();
    let running = match launch.spawn() {
        Ok(running) => running,
        Err(e @ LaunchError::Pin(_)) => return usage_error(e),
        Err(e) => {
            eprintln!("sccrun: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(signals) = signals {
        forward_signals(signals, running.interrupter());
    }
    let report = running.wait();
    if let (Some(times), Some(timing)) = (&report.vtimes, &launch_timing) {
        eprintln!("{}\n  {}", sccemu::job::vtime::report(times), timing.compute_note());
    }
    if let Some(diagnosis) = report.diagnosis() {
        eprintln!("sccrun: {diagnosis}");
    }
    ExitCode::from(report.exit_code())
}

/// The node that runs the most ranks under `spec`'s split (the first of them).
fn largest(spec: &NodeSpec) -> u32 {
    let counts = spec.counts();
    let most = counts.iter().copied().max().unwrap_or(0);
    counts.iter().position(|&c| c == most).unwrap_or(0) as u32
}

/// `sccrun --nodes K`: `sccrun-node`, K times under mpirun.
#[cfg(feature = "multinode")]
fn launch_nodes(nodes: u32, trace: Option<std::path::PathBuf>) -> ExitCode {
    use sccemu_tools::nodes_launch as launch;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match launch::node_exe().and_then(|exe| launch::run(&exe, &args, nodes)) {
        Ok(code) => {
            // On one machine every node wrote its trace beside the file: one file.
            if let Some(file) = trace {
                if let Err(e) = sccemu::timing::trace::merge_nodes(&file, nodes) {
                    eprintln!("sccrun: cannot write the trace {}: {e}", file.display());
                }
            }
            ExitCode::from(code.clamp(0, 255) as u8)
        }
        Err(e) => {
            eprintln!("sccrun: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "multinode"))]
fn launch_nodes(_nodes: u32, _trace: Option<std::path::PathBuf>) -> ExitCode {
    usage_error(
        "--nodes: this sccrun was built without multiple nodes: build it with \
         `cargo build -p sccemu-tools --features multinode`",
    )
}
