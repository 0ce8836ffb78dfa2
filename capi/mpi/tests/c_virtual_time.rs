//! The MPI C programs run in virtual time (`sccmpiexec --timing`), on the harness of
//! `c_programs.rs`:
//! - `virtual_time_pingpong_repeats_exactly` runs `vtime_pingpong` twice and compares
//!   its `MPI_Wtime` figures;
//! - `pcontrol_pauses_the_trace` runs `pcontrol` under `--trace` and reads the trace;
//! - `completions_in_virtual_time` runs `completions`, whose polls of `MPI_Testall`
//!   and the `*any`/`*some` calls must see requests complete where a test round tests
//!   nothing, and `mpi_test`, whose polls of `MPI_Test` must too.

mod harness;
use harness::*;

/// A chip description whose compute is not charged, in the harness's build folder.
fn no_compute_chip(name: &str) -> std::path::PathBuf {
    let chip = build_dir().join(name);
    std::fs::write(&chip, "[compute]\nsource = \"none\"\n").unwrap();
    chip
}

/// Point-to-point in virtual time through `sccmpiexec --timing scc=FILE --trace FILE`:
/// with a chip whose compute is not charged (`[compute] source = "none"`; the default
/// charges the host's CPU time between calls, which varies), a 2-rank ping-pong's
/// `MPI_Wtime` differences are the model's alone, so two runs print them identical to
/// the picosecond. The run also writes its trace and prints each core's virtual time.
/// (Two-sided messages only: collectives and RMA are not timed to that standard yet.)
#[test]
fn virtual_time_pingpong_repeats_exactly() {
    let exe = build("vtime_pingpong", &[]);
    let chip = no_compute_chip("no_compute.toml");
    let timing = format!("--timing=scc={}", chip.display());
    let trace = build_dir().join("vtime_pingpong.json");
    let figures = |run: usize| {
        let _ = std::fs::remove_file(&trace);
        let (out, _) = sccmpiexec(&["-n", "2", &timing, "--trace", trace.to_str().unwrap()], &exe);
        assert!(out.status.success(), "run {run}:\n{}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(stdout.contains("ok vtime_pingpong"), "run {run}:\n{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("makespan"),
            "no virtual times:\n{}",
            text(&out)
        );
        assert!(std::fs::metadata(&trace).is_ok_and(|m| m.len() > 0), "run {run} wrote no trace");
        stdout.lines().filter(|l| l.starts_with("rtt ")).map(str::to_owned).collect::<Vec<_>>()
    };
    let (first, second) = (figures(1), figures(2));
    assert_eq!(first.len(), 4, "{first:?}");
    assert_eq!(first, second, "virtual times differ between runs");
    // The default chip (compute from CPU time) runs too.
    let (out, _) = sccmpiexec(&["-n", "2", "--timing", "scc"], &exe);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stderr).contains("makespan"),
        "{}",
        text(&out)
    );
}

/// The `ts` (virtual µs) of a trace line.
fn trace_time(line: &str) -> f64 {
    let ts = line.split("\"ts\":").nth(1).and_then(|t| t.split([',', '}']).next());
    ts.and_then(|t| t.parse().ok()).unwrap_or_else(|| panic!("no ts in {line}"))
}

/// `MPI_Pcontrol(0)` stops sccemu's trace of the calling process and `MPI_Pcontrol(1)`
/// resumes it, with both changes marked on the process's track.
#[test]
fn pcontrol_pauses_the_trace() {
    let exe = build("pcontrol", &[]);
    let chip = no_compute_chip("pcontrol_chip.toml");
    let trace = build_dir().join("pcontrol.json");
    let _ = std::fs::remove_file(&trace);
    let timing = format!("--timing=scc={}", chip.display());
    let (out, _) = sccmpiexec(&["-n", "2", &timing, "--trace", trace.to_str().unwrap()], &exe);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ok pcontrol"),
        "{}",
        text(&out)
    );
    let json = std::fs::read_to_string(&trace).unwrap();
    let rank0: Vec<&str> = json.lines().filter(|l| l.contains("\"tid\":0,")).collect();
    let marker = |level: u32| {
        let name = format!("\"name\":\"profiling level {level}\"");
        let found: Vec<f64> = rank0.iter().filter(|l| l.contains(&name)).map(|l| trace_time(l)).collect();
        assert_eq!(found.len(), 1, "level {level} markers: {found:?}");
        found[0]
    };
    let (off, on) = (marker(0), marker(1));
    assert!(off < on, "profiling turned off at {off} µs, on at {on} µs");
    let sends: Vec<f64> = rank0
        .iter()
        .filter(|l| l.contains("\"cat\":\"send\"") && l.contains("\"ph\":\"X\""))
        .map(|l| trace_time(l))
        .collect();
    let before = sends.iter().filter(|&&t| t < off).count();
    let during = sends.iter().filter(|&&t| t >= off && t < on).count();
    let after = sends.iter().filter(|&&t| t >= on).count();
    // A send may be more than one slice (the call, and the message inside it): the
    // same number per round on either side of the pause, and none in it.
    let per_round = before / 3;
    assert!(
        per_round > 0 && before == 3 * per_round && during == 0 && after == 2 * per_round,
        "rank 0's sends: {sends:?}, off {off}, on {on}"
    );
}

/// The completion calls in virtual time, where an engine's test round tests nothing:
/// `MPI_Test`, `MPI_Testall`, `MPI_Testany` and `MPI_Testsome` test each request by
/// itself there, so that a program polling them still sees its requests complete
/// (`completions` and `mpi_test` loop on them until they do).
#[test]
fn completions_in_virtual_time() {
    for program in ["completions", "mpi_test"] {
        let exe = build(program, &[]);
        let chip = no_compute_chip(&format!("{program}_chip.toml"));
        let timing = format!("--timing=scc={}", chip.display());
        for n in ["2", "3"] {
            let (out, _) = sccmpiexec(&["-n", n, &timing], &exe);
            assert!(
                out.status.success()
                    && String::from_utf8_lossy(&out.stdout).contains(&format!("ok {program}")),
                "{program} on {n} cores:\n{}",
                text(&out)
            );
        }
    }
}
