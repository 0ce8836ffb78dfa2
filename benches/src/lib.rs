//! Benchmark suites, one module per suite, each reproducing a reference paper's figure
//! or table on sccemu. They run real multi-process jobs through `sccemu::Job` and
//! return [`measure::Row`]s; `cargo bench` prints them, and `sccrun bench` puts them
//! beside MPICH's and Open MPI's figures for the same patterns, measured in the same run.
//!
//! A binary that runs suites must call `sccemu::job::init()` first thing in `main`:
//! jobs re-execute the current binary.

pub mod acc;
pub mod allgather;
pub mod barrier;
pub mod exchange;
pub mod halo;
pub mod hog;
pub mod measure;
pub mod pt2pt;
pub mod rcce;
pub mod rma;
pub mod srb;
pub mod stencil;

use measure::{Row, SuiteParams};

/// A suite: its name and how to run it.
pub struct Suite {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&SuiteParams) -> Vec<Row>,
}

/// Every suite, in report order.
pub const SUITES: &[Suite] = &[
    Suite { name: "barrier", about: "barrier latency for N = 2, 8, 48 cores", run: barrier::run },
    Suite {
        name: "pt2pt",
        about: "two-sided ping-pong latency, streaming bandwidth, N-1 to 1 throughput (perpeer, srb)",
        run: pt2pt::run,
    },
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
    Suite {
        name: "halo",
        about: "ghost exchange with 4 neighbours, two-sided vs fence, PSCW and lock, 16 B-256 KiB (MPICH2 paper, Tables 1 and 2)",
        run: halo::suite,
    },
    Suite {
        name: "allgather",
        about: "allgather per algorithm, 512 B-32 KiB, N = 4-48 (concurrency paper, Figures 7 and 8); allreduce",
        run: allgather::run,
    },
    Suite {
        name: "srb",
        about: "shared receive buffer vs per-peer: shared memory vs N, many-to-one small-message throughput",
        run: srb::run,
    },
    Suite {
        name: "stencil",
        about: "9-point stencil CFD automaton, rows split across cores: time per step and speedup per version (RCKMPI paper)",
        run: stencil::suite,
    },
    Suite {
        name: rcce::NAME,
        about: "RCCE's C ping-pong (examples/c/pingpong.c on librcce) beside sccemu's two-sided ping-pong, 32 B-64 KiB, 2 cores",
        run: rcce::run,
    },
];

pub fn suite(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}
