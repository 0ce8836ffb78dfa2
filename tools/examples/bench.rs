//! The benchmark harness on its own, until `sccrun bench` calls it:
//! `cargo run --release -p sccemu-tools --example bench -- [SUITE...] [--quick] [--peers ...] [--out DIR]`.

use clap::Parser;
use sccemu_tools::bench::{self, BenchArgs};

#[derive(Parser)]
#[command(about = "sccemu's suites side by side with MPICH and Open MPI")]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn main() {
    // sccemu's jobs re-execute this binary: their children must dispatch first.
    sccemu::job::init();
    if let Err(e) = bench::run(&Cli::parse().bench) {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}
