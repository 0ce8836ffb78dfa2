//! Jobs: starting the processes that play the cores.
//!
//! Owns the process launcher behind `sccrun` ([`launcher`]: the segment, pinning, the
//! children, abort on a death, reaping; with `limits`, the checks before a job starts,
//! `spawn`, starting the ranks, `reaper`, one thread that reaps them all, `report`, how the job ended, and `pump`,
//! one thread that reads their output and results) and [`Job`], which runs a Rust
//! function as every core of a job by re-executing the current binary ([`runner`]), and
//! the launcher's side of virtual time ([`vtime`]); one job over several nodes ([`node`]: which ranks
//! a node runs, and what the engine between nodes drives; [`gateway`]: what crosses); and what the C compiler wrappers
//! add to link a C program against one of sccemu's C libraries ([`c_link`]).
//!
//! May use: every layer below it.

pub mod c_link;
pub mod gateway;
pub mod launcher;
mod limits;
pub mod node;
mod pump;
mod reaper;
mod report;
mod spawn;
pub mod runner;
pub mod vtime;

pub use report::say;
pub use runner::{Job, JobError, JobOutcome, RankFailure, init, resolve_wait};
