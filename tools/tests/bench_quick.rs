//! `sccrun bench --quick` end to end: the harness runs, writes well-formed outputs and
//! checks them itself. No timing is ever asserted.

use std::path::Path;

use clap::Parser;
use sccemu_tools::bench::{self, BenchArgs};

/// The harness's arguments as `sccrun bench` parses them.
#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn args(line: &[&str], out: &Path) -> BenchArgs {
    let mut argv = vec!["bench"];
    argv.extend_from_slice(line);
    let mut parsed = Cli::parse_from(argv).bench;
    parsed.out = out.to_path_buf();
    parsed
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn quick_barrier_without_peers_writes_well_formed_outputs() {
    // Job children re-run this test: let them dispatch before anything else happens.
    sccemu::job::init();
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["barrier", "--quick", "--peers", "none"], dir.path())).unwrap();

    let csv = read(&dir.path().join("barrier.csv"));
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("suite,implementation,pattern,cores,bytes,reps"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2, "sccemu at 2 and 8 cores: {csv}");
    assert!(rows.iter().all(|r| r.starts_with("barrier,sccemu,barrier,")));

    let svg = dir.path().join("plots/barrier-barrier-latency.svg");
    assert!(read(&svg).contains("<svg"));
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("## barrier"));
    assert!(report.contains("## Machine"));
    assert!(report.contains("| barrier | measured | 0 |"), "no MPI, no comparison: {report}");
    assert!(report.contains("| mpich | not requested (--peers) |"), "{report}");
    assert!(dir.path().join("metadata.json").is_file());
}

#[test]
fn quick_stencil_without_peers_reports_every_version() {
    sccemu::job::init();
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["stencil", "--quick", "--peers", "none"], dir.path())).unwrap();
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("## stencil"), "{report}");
    let csv = read(&dir.path().join("stencil.csv"));
    assert!(csv.starts_with("suite,implementation"), "{csv}");
    for version in ["p2p", "fence", "pscw", "lock"] {
        assert!(csv.contains(&format!("sccemu,stencil-{version},")), "no stencil-{version} row: {csv}");
    }
}

#[test]
fn quick_rcce_without_peers_sets_the_c_program_beside_sccemu() {
    sccemu::job::init();
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["rcce", "--quick", "--peers", "none"], dir.path())).unwrap();
    let csv = read(&dir.path().join("rcce.csv"));
    assert!(!csv.contains("failed"), "{csv}");
    // Every size the C program prints, for it and for both of sccemu's protocols.
    for implementation in ["rcce", "sccemu-perpeer", "sccemu-srb"] {
        for bytes in [32, 65536] {
            let row = format!("rcce,{implementation},latency,2,{bytes},");
            assert!(csv.lines().any(|l| l.starts_with(&row)), "no {row} row: {csv}");
        }
    }
    assert!(dir.path().join("build/rcce/pingpong").is_file());
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("## rcce"), "{report}");
    assert!(report.contains("No MPI peer"), "{report}");
    assert!(report.contains("Time relative to `rcce`"), "{report}");
}

#[test]
fn unknown_suites_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = bench::run(&args(&["no-such-suite", "--peers", "none"], dir.path())).unwrap_err();
    assert!(err.to_string().contains("unknown suite `no-such-suite`"), "{err}");
}

/// One tiny MPI peer run per installed MPI; skipped with a note where none is.
#[test]
fn quick_barrier_beside_installed_mpis() {
    sccemu::job::init();
    let installed: Vec<&str> = ["mpich", "openmpi"]
        .into_iter()
        .filter(|mpi| {
            std::process::Command::new(format!("mpicc.{mpi}"))
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect();
    if installed.is_empty() {
        eprintln!("note: skipped, neither mpicc.mpich nor mpicc.openmpi is installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let peers = installed.join(",");
    bench::run(&args(&["barrier", "--quick", "--no-install", "--peers", &peers], dir.path())).unwrap();
    let csv = read(&dir.path().join("barrier.csv"));
    for mpi in &installed {
        // A row per MPI, measured or marked as given up: never a timing assertion.
        assert!(csv.lines().any(|l| l.starts_with(&format!("barrier,{mpi},barrier,2,"))), "{csv}");
    }
    assert!(read(&dir.path().join("report.md")).contains("sccemu/"));
}

#[test]
fn quick_rma_with_the_sccemu_mpi_runs_the_c_programs_on_sccemu() {
    sccemu::job::init();
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["rma", "--quick", "--peers", "sccmpi"], dir.path())).unwrap();
    let csv = read(&dir.path().join("rma.csv"));
    // The same C programs as MPICH's and Open MPI's, built with libsccmpi.a and run on
    // sccemu: a row per pattern they print, none failed.
    assert!(!csv.contains("failed") && !csv.contains("gave up"), "{csv}");
    for pattern in ["put-lock-flush", "fetch-and-op", "compare-and-swap", "lock-unlock", "fence"] {
        assert!(
            csv.lines().any(|l| l.starts_with(&format!("rma,sccmpi,{pattern},"))),
            "no sccmpi {pattern}: {csv}"
        );
    }
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("| sccmpi | sccemu MPI"), "{report}");
    assert!(report.contains("sccmpi/sccemu"), "the MPI layer against the native API: {report}");
}

/// SMPI's column: virtual times in a column of their own, in no ratio; skipped with a
/// note where SimGrid is not installed.
#[test]
fn quick_barrier_beside_smpi_keeps_virtual_times_out_of_the_ratios() {
    sccemu::job::init();
    if !sccemu_tools::smpi::installed() {
        eprintln!("note: skipped, SimGrid's smpicc and smpirun are not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["barrier", "--quick", "--no-install", "--peers", "smpi"], dir.path())).unwrap();
    let csv = read(&dir.path().join("barrier.csv"));
    assert!(csv.lines().any(|l| l.starts_with("barrier,smpi,barrier,2,")), "{csv}");
    assert!(dir.path().join("build/smpi/scc-2.xml").is_file());
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("| smpi (virtual µs) |"), "{report}");
    assert!(!report.contains("/smpi |"), "no ratio divides by a virtual time: {report}");
    assert!(report.contains("| smpi | SimGrid SMPI"), "{report}");
    assert!(report.contains("cache-line probe") || report.contains("Cache-line one-way cost"), "{report}");
}

#[test]
fn quick_scale_and_vtime_write_their_tables() {
    sccemu::job::init();
    let dir = tempfile::tempdir().unwrap();
    bench::run(&args(&["scale", "vtime", "--quick", "--no-install", "--peers", "smpi"], dir.path())).unwrap();
    let report = read(&dir.path().join("report.md"));
    assert!(report.contains("## scale") && report.contains("| ranks | sccemu wall (s)"), "{report}");
    assert!(report.contains("## vtime") && report.contains("| measurement | cores | bytes |"), "{report}");
    let csv = read(&dir.path().join("vtime.csv"));
    // sccemu's own virtual time runs whether or not SimGrid is here.
    assert!(csv.lines().any(|l| l.starts_with("vtime,sccemu-mpi,pingpong-0-1,2,32,")), "{csv}\n{report}");
    assert!(csv.lines().any(|l| l.starts_with("vtime,sccemu-rcce,pingpong-0-1,2,32,")), "{csv}\n{report}");
    if sccemu_tools::smpi::installed() {
        assert!(csv.lines().any(|l| l.starts_with("vtime,smpi,pingpong-0-1,2,32,")), "{csv}\n{report}");
    } else {
        assert!(report.contains("SMPI") || report.contains("smpi:"), "{report}");
    }
}
