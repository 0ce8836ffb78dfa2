//! `sccrun bench`: sccemu's benchmark suites side by side with MPICH and Open MPI (and
//! SimGrid's SMPI, in virtual time), measured in one run, written out as CSV, SVG plots
//! and a Markdown report.
//!
//! - [`args`]: the command line ([`BenchArgs`]).
//! - [`catalog`]: what each suite measures on the MPI side (patterns, cores, sizes).
//! - [`peers`]: finding, installing and building the MPI peer programs.
//! - [`peer_run`]: one timed mpirun and the rows it printed.
//! - [`process`]: outside programs with a time limit, killed as a process group.
//! - [`orchestrate`]: the run itself, with its progress bar.
//! - [`output`]: CSV files and the self-check of everything written.
//! - [`plot`], [`report`], [`metadata`]: the figures, `report.md` and the machine.
//! - [`scale`], [`vtime`]: suites the harness runs itself: launch at scale beside SMPI,
//!   and virtual time beside SMPI and RCCE's published figures; and `nodes` (with the
//!   `multinode` feature): one job over two nodes beside the raw MPI underneath.
//!
//! sccemu's side of a suite comes from `sccemu_benches::SUITES`; a catalogued suite not
//! registered there still runs its MPI peers and the report says sccemu was not
//! measured. A binary that calls [`run`] must call `sccemu::job::init()` first thing in
//! `main`, because sccemu's jobs re-execute the current binary.

pub mod args;
pub mod catalog;
pub mod error;
pub mod metadata;
#[cfg(feature = "multinode")]
pub mod nodes;
pub mod orchestrate;
pub mod output;
pub mod peer_run;
pub mod peers;
pub mod plot;
pub mod process;
pub mod report;
pub mod scale;
pub mod vtime;
mod vtime_rcce;

pub use args::{BenchArgs, PeerChoice};
pub use error::BenchError;
pub use orchestrate::run;
