//! Command-line arguments of `sccrun bench`.

use std::path::PathBuf;
use std::time::Duration;

/// An MPI to measure beside sccemu, or `none` for sccemu alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum PeerChoice {
    Mpich,
    Openmpi,
    /// SimGrid's SMPI: the same C programs in virtual time on the generated SCC platform.
    Smpi,
    /// sccemu's own MPI library, running the same C programs as the two MPIs.
    Sccmpi,
    None,
}

/// `sccrun bench [SUITE...] [--quick] [--peers mpich,openmpi,sccmpi] [--out DIR]`
#[derive(clap::Args, Clone, Debug)]
pub struct BenchArgs {
    /// Suites to run, in report order (default: every suite): barrier, pt2pt, rma, acc,
    /// halo, allgather, srb, stencil, rcce, scale, vtime, nodes (only in an sccrun built with
    /// the `multinode` feature), and any other registered sccemu suite.
    pub suites: Vec<String>,

    /// Every suite at tiny sizes and few repetitions: a smoke test, not a measurement.
    #[arg(long)]
    pub quick: bool,

    /// MPIs measured beside sccemu in the same run (`none` for sccemu alone): MPICH,
    /// Open MPI, SimGrid's SMPI (virtual times, in columns of their own) and sccemu's own
    /// MPI library on the same C programs.
    #[arg(long, value_delimiter = ',', default_value = "mpich,openmpi,smpi,sccmpi")]
    pub peers: Vec<PeerChoice>,

    /// Directory for CSV files, plots, report.md, peer builds and logs.
    #[arg(long, default_value = "bench-out")]
    pub out: PathBuf,

    /// Seconds after which one MPI run is killed and reported as given up
    /// (default: 30 with --quick, 120 otherwise).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,

    /// Never install missing MPI (or SimGrid) packages with apt-get; report them as
    /// unavailable.
    #[arg(long)]
    pub no_install: bool,
}

impl BenchArgs {
    /// Arguments for a run into `out` with the defaults otherwise.
    pub fn new(out: impl Into<PathBuf>) -> BenchArgs {
        BenchArgs {
            suites: Vec::new(),
            quick: false,
            peers: vec![PeerChoice::Mpich, PeerChoice::Openmpi, PeerChoice::Smpi, PeerChoice::Sccmpi],
            out: out.into(),
            timeout: None,
            no_install: false,
        }
    }

    pub fn mpi_timeout(&self) -> Duration {
        Duration::from_secs(self.timeout.unwrap_or(if self.quick { 30 } else { 120 }))
    }
}
