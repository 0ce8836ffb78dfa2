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
//! `sccrun smpi-platform [--chip FILE] -n N` writes a SimGrid platform and host file for
//! that chip, so that SMPI runs the same MPI C program on it (`docs/SMPI.md`).

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use nix::sys::signal::Signal;
use sccemu::core::pin::PinPolicy;
use sccemu::job::launcher::{Launch, LaunchError, Output, find_program};
use shm_layout::{ChannelKind, Config, MAX_CORES, Mesh, WaitPolicy};

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

    /// Number of cores (processes) to start.
    #[arg(short = 'n', long = "cores", value_name = "N", required = true, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CORES)))]
    cores: Option<u32>,

    /// CPU placement: none, compact, scatter, or a comma-separated CPU list (one per rank).
    #[arg(long, default_value = "compact", value_parser = parse_pin)]
    pin: PinPolicy,

    /// How blocked calls wait; auto blocks when there are more cores than CPUs.
    #[arg(long, value_enum, default_value_t = WaitArg::Auto)]
    wait: WaitArg,

    /// Two-sided channel protocol.
    #[arg(long, value_enum, default_value_t = ChannelArg::Srb)]
    channel: ChannelArg,

    /// Message-passing buffer bytes per core (the SCC's is 8192).
    #[arg(long, value_name = "BYTES")]
    mpb: Option<u32>,

    /// Shared heap bytes (windows and DRAM channels).
    #[arg(long, value_name = "BYTES")]
    heap: Option<u64>,

    /// Receive-ring bytes per core (a power of two).
    #[arg(long, value_name = "BYTES")]
    ring: Option<u32>,

    /// Mesh shape COLSxROWSxCORES_PER_TILE (default 6x4x2, grown by rows past 48 cores).
    #[arg(long, value_name = "CxRxK")]
    mesh: Option<Mesh>,

    /// Prefix every line of a rank's stdout and stderr with its rank.
    #[arg(long)]
    tag_output: bool,

    /// Checking mode: interfaces compare what both sides of a call must agree on (RCCE:
    /// a send's size against its receive's) and stop the job on a mismatch. Same as
    /// SCCEMU_CHECK=1.
    #[arg(long)]
    check: bool,

    /// Asynchronous progress: a thread per core moves its messages while the program
    /// computes without calling the library. Same as SCCEMU_ASYNC_PROGRESS=1.
    #[arg(long)]
    async_progress: bool,

    /// Virtual time: `scc` for sccemu's model of the SCC, `scc=FILE` for a chip
    /// described in a TOML file. Program clocks (`Core::wtime`, `RCCE_wtime`,
    /// `MPI_Wtime`) then read virtual seconds, and sccrun prints each core's virtual
    /// time at the end.
    #[arg(long, value_name = "scc[=FILE]")]
    timing: Option<String>,

    /// With --timing: write a Chrome trace-event JSON of every core's operations to FILE
    /// (Perfetto, chrome://tracing; `sccrun trace-report FILE` draws it as SVG).
    #[arg(long, value_name = "FILE", requires = "timing")]
    trace: Option<std::path::PathBuf>,

    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
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

#[derive(Clone, Copy, Debug, ValueEnum)]
enum WaitArg {
    Auto,
    Spin,
    Block,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ChannelArg {
    Perpeer,
    Srb,
}

fn parse_pin(s: &str) -> Result<PinPolicy, String> {
    s.parse().map_err(|e: sccemu::core::pin::PinError| e.to_string())
}

impl Cli {
    fn config(&self, cores: u32) -> Result<Config, String> {
        let mut config = Config::new(cores);
        config.mpb_bytes = self.mpb.unwrap_or(config.mpb_bytes);
        config.heap_bytes = self.heap.unwrap_or(config.heap_bytes);
        config.ring_bytes = self.ring.unwrap_or(config.ring_bytes);
        config.mesh = self.mesh.unwrap_or(config.mesh);
        config.wait = match self.wait {
            WaitArg::Auto => sccemu::job::resolve_wait(cores),
            WaitArg::Spin => WaitPolicy::Spin,
            WaitArg::Block => WaitPolicy::Block,
        } as u32;
        config.channel = match self.channel {
            ChannelArg::Perpeer => ChannelKind::PerPeer,
            ChannelArg::Srb => ChannelKind::Srb,
        } as u32;
        shm_layout::layout(&config).map_err(|e| e.to_string())?;
        Ok(config)
    }
}

/// The program as the kernel will run it, or why it cannot be run.
fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("sccrun: {message}\nUsage: sccrun -n N [OPTIONS] -- PROGRAM [ARGS]...  (see sccrun --help)");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    // `sccrun bench` runs jobs that re-execute this binary: their children start here.
    sccemu::job::init();
    let cli = Cli::parse();
    let cores = match (&cli.tool, cli.cores) {
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
    let config = match cli.config(cores) {
        Ok(config) => config,
        Err(e) => return usage_error(e),
    };
    let program = match find_program(Path::new(&cli.command[0])) {
        Ok(program) => program,
        Err(e) => return usage_error(e),
    };
    let mut launch = Launch::new(config, program);
    launch.args = cli.command[1..].to_vec();
    launch.pin = cli.pin.clone();
    launch.output = if cli.tag_output { Output::Tagged } else { Output::Inherit };
    if cli.check {
        launch.env.push((sccemu::job::launcher::CHECK_VAR.into(), "1".into()));
    }
    if cli.async_progress {
        launch.env.push((sccemu::core::async_progress::ASYNC_PROGRESS_VAR.into(), "1".into()));
    }
    if let Some(spec) = &cli.timing {
        match sccemu::job::vtime::VirtualTime::from_spec(spec) {
            Ok(mut timing) => {
                timing.trace.clone_from(&cli.trace);
                launch.timing = Some(timing);
            }
            Err(e) => return usage_error(e),
        }
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
    ExitCode::from(report.exit_code().clamp(0, 255) as u8)
}

/// Catches SIGINT and SIGTERM from now on, for [`forward_signals`].
fn catch_signals() -> Option<signal_hook::iterator::Signals> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).ok();
    if signals.is_none() {
        eprintln!("sccrun: cannot install signal handlers; Ctrl-C will not be forwarded");
    }
    signals
}

/// SIGINT and SIGTERM (caught since `catch_signals`) go to every rank, and abort the job.
fn forward_signals(
    mut signals: signal_hook::iterator::Signals,
    interrupter: sccemu::job::launcher::Interrupter,
) {
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if let Ok(signal) = Signal::try_from(signal) {
                interrupter.interrupt(signal);
            }
        }
    });
}
