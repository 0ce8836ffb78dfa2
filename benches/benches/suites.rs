//! `cargo bench -p sccemu-benches [-- SUITE... [--quick]]`: runs suites and prints their
//! figures. `sccrun bench` runs the same suites beside MPICH and Open MPI.

use sccemu_benches::SUITES;
use sccemu_benches::measure::{SuiteParams, print_table};

fn main() {
    sccemu::job::init();
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let params = SuiteParams { quick: args.iter().any(|a| a == "--quick"), build_dir: None };
    let chosen: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    for suite in SUITES.iter().filter(|s| chosen.is_empty() || chosen.iter().any(|c| *c == s.name)) {
        println!("== {}: {}", suite.name, suite.about);
        print_table(&(suite.run)(&params));
    }
}
