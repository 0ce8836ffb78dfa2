//! Benchmark suites, one module per suite, each reproducing a reference paper's figure
//! or table on sccemu. They run real multi-process jobs through `sccemu::Job` and
//! return [`measure::Row`]s; `cargo bench` prints them, and `sccrun bench` puts them
//! beside MPICH's and Open MPI's figures for the same patterns, measured in the same run.
//!
//! A binary that runs suites must call `sccemu::job::init()` first thing in `main`:
//! jobs re-execute the current binary.

pub mod acc;
pub mod measure;
pub mod rma;

use measure::{Row, SuiteParams};

/// A suite: its name and how to run it.
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&SuiteParams) -> Vec<Row>,
}

/// Every suite, in report order.
pub const SUITES: &[Suite] = &[
    Suite {
        name: "rma",
        about: "one-sided windows: put/get latency and bandwidth under lock+flush, fence and PSCW; ARMW; locks; fence",
        run: rma::run,
    },
    Suite {
        name: "acc",
        about: "atomic accumulate: Figure 2 bandwidth vs size per strategy, owner/caller ratio (Figure 4), N-1 contention",
        run: acc::run,
    },
];

pub fn suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}
