//! The options of one job launch, and the launch they make: shared, by path, by the
//! `sccrun` and `sccrun-node` binaries. It is not a module of `sccemu_tools`' library
//! on purpose: `sccrun-node` links a real MPI, and must not link that library, whose
//! benchmark harness pulls in sccemu's own MPI C interface (`sccmpi`): both define the
//! `MPI_*` symbols, and the real MPI's calls would land in sccemu's.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use nix::sys::signal::Signal;
use sccemu::core::pin::PinPolicy;
use sccemu::job::launcher::{Launch, Output, find_program};
use sccemu::job::node::NodeSpec;
use shm_layout::{ChannelKind, Config, MAX_JOB_CORES, Mesh, WaitPolicy};

/// How to launch one job (every option but the tools').
#[derive(clap::Args, Debug)]
pub struct JobArgs {
    /// Number of cores (processes) to start.
    #[arg(short = 'n', long = "cores", value_name = "N", required = true, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_JOB_CORES)))]
    pub cores: Option<u32>,

    /// CPU placement: none, compact, scatter, or a comma-separated CPU list (one per rank).
    #[arg(long, default_value = "compact", value_parser = parse_pin)]
    pub pin: PinPolicy,

    /// How blocked calls wait; auto blocks when there are more cores than CPUs.
    #[arg(long, value_enum, default_value_t = WaitArg::Auto)]
    pub wait: WaitArg,

    /// Two-sided channel protocol.
    #[arg(long, value_enum, default_value_t = ChannelArg::Srb)]
    pub channel: ChannelArg,

    /// Message-passing buffer bytes per core (the SCC's is 8192).
    #[arg(long, value_name = "BYTES")]
    pub mpb: Option<u32>,

    /// Shared heap bytes (windows and DRAM channels).
    #[arg(long, value_name = "BYTES")]
    pub heap: Option<u64>,

    /// Receive-ring bytes per core (a power of two).
    #[arg(long, value_name = "BYTES")]
    pub ring: Option<u32>,

    /// Mesh shape COLSxROWSxCORES_PER_TILE (default 6x4x2, grown by rows past 48 cores).
    #[arg(long, value_name = "CxRxK")]
    pub mesh: Option<Mesh>,

    /// Prefix every line of a rank's stdout and stderr with its rank.
    #[arg(long)]
    pub tag_output: bool,

    /// Checking mode: interfaces compare what both sides of a call must agree on (RCCE:
    /// a send's size against its receive's) and stop the job on a mismatch. Same as
    /// SCCEMU_CHECK=1.
    #[arg(long)]
    pub check: bool,

    /// Asynchronous progress: a thread per core moves its messages while the program
    /// computes without calling the library. Same as SCCEMU_ASYNC_PROGRESS=1.
    #[arg(long)]
    pub async_progress: bool,

    /// Virtual time: `scc` for sccemu's model of the SCC, `scc=FILE` for a chip
    /// described in a TOML file. Program clocks (`Core::wtime`, `RCCE_wtime`,
    /// `MPI_Wtime`) then read virtual seconds, and sccrun prints each core's virtual
    /// time at the end.
    #[arg(long, value_name = "scc[=FILE]")]
    pub timing: Option<String>,

    /// With --timing: write a Chrome trace-event JSON of every core's operations to FILE
    /// (Perfetto, chrome://tracing; `sccrun trace-report FILE` draws it as SVG).
    #[arg(long, value_name = "FILE", requires = "timing")]
    pub trace: Option<std::path::PathBuf>,

    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "PROGRAM")]
    pub command: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum WaitArg {
    Auto,
    Spin,
    Block,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ChannelArg {
    Perpeer,
    Srb,
}

fn parse_pin(s: &str) -> Result<PinPolicy, String> {
    s.parse().map_err(|e: sccemu::core::pin::PinError| e.to_string())
}

impl JobArgs {
    fn config(&self, cores: u32, node: Option<&NodeSpec>) -> Result<Config, String> {
        let mut config = Config::new(cores);
        if let Some(node) = node {
            (config.node_first, config.node_cores) = (node.first, node.count);
        }
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

    /// The launch these options describe for `cores` ranks, or for `node`'s block of
    /// them; a usage error (to print with [`usage_error`]) if they do not make one.
    pub fn launch(&self, cores: u32, node: Option<NodeSpec>) -> Result<Launch, String> {
        let config = self.config(cores, node.as_ref())?;
        let program = find_program(Path::new(&self.command[0]))?;
        let mut launch = Launch::new(config, program);
        launch.node = node;
        launch.args = self.command[1..].to_vec();
        launch.pin = self.pin.clone();
        launch.output = if self.tag_output { Output::Tagged } else { Output::Inherit };
        if self.check {
            launch.env.push((sccemu::job::launcher::CHECK_VAR.into(), "1".into()));
        }
        if self.async_progress {
            launch.env.push((sccemu::core::async_progress::ASYNC_PROGRESS_VAR.into(), "1".into()));
        }
        if let Some(spec) = &self.timing {
            let mut timing = sccemu::job::vtime::VirtualTime::from_spec(spec).map_err(|e| e.to_string())?;
            timing.trace.clone_from(&self.trace);
            launch.timing = Some(timing);
        }
        Ok(launch)
    }
}

/// Node `node`'s block of a `cores`-rank job over `nodes` nodes: as `--map` says (its
/// counts, `map`), else in blocks as even as they go (`NodeSpec::split`). The error
/// names the option at fault, for [`usage_error`].
pub fn node_spec(cores: u32, nodes: u32, map: Option<&[u32]>, node: u32) -> Result<NodeSpec, String> {
    NodeSpec::split(cores, nodes, map, node).map_err(|e| match map {
        Some(counts) => {
            let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
            format!("--map {}: {e}", counts.join(","))
        }
        None => e.to_string(),
    })
}

/// A usage error, said the way sccrun says them; exit status 2.
pub fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("sccrun: {message}\nUsage: sccrun -n N [OPTIONS] -- PROGRAM [ARGS]...  (see sccrun --help)");
    ExitCode::from(2)
}

/// Catches SIGINT and SIGTERM from now on, for [`forward_signals`].
pub fn catch_signals() -> Option<signal_hook::iterator::Signals> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).ok();
    if signals.is_none() {
        eprintln!("sccrun: cannot install signal handlers; Ctrl-C will not be forwarded");
    }
    signals
}

/// SIGINT and SIGTERM (caught since `catch_signals`) go to every rank, and abort the job.
pub fn forward_signals(
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
