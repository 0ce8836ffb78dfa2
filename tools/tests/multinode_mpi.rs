//! MPI C programs across nodes: the MPI C library's own test programs
//! (`capi/mpi/tests/c`), built with `sccmpicc`'s command and run unchanged under
//! `sccrun --nodes K` at odd sizes, over the real MPI between the nodes. Each program
//! checks its results itself (a wrong one prints `FAIL ...` and aborts the job) and
//! rank 0 prints `ok <name>` at the end; `nodes.c` checks what crosses and what is
//! refused, and that `MPI_Abort` on one node ends every node.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Flags of every program, as the MPI library's own harness builds them.
const CFLAGS: [&str; 6] = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-Wl,-S"];

/// The MPI library's test programs that use only what crosses nodes (point-to-point,
/// communicators, groups, collectives, windows in DRAM under the atomic strategy, threads,
/// MPI-IO on this machine's files), and the build flags each needs.
const PROGRAMS: [(&str, &[&str]); 12] = [
    ("p2p_basic", &[]),
    ("threads", &["-pthread"]),
    ("file_io", &[]),
    ("file_shared", &[]),
    ("collectives", &[]),
    ("icoll", &[]),
    ("reduce_ops", &[]),
    ("groups_reduce", &[]),
    ("comm_topo", &[]),
    ("comm_create_group", &[]),
    ("intercomm", &[]),
    ("mprobe", &["-pthread"]),
];

/// (nodes, ranks): odd sizes, so that the nodes hold different numbers of ranks.
const SHAPES: [(u32, u32); 2] = [(2, 5), (3, 7)];

/// Compiles `capi/mpi/tests/c/<name>.c` once per test process, warnings as errors.
fn build(name: &str, extra: &[&str]) -> PathBuf {
    static BUILT: OnceLock<Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, exe)) = built.iter().find(|(n, _)| n == name) {
        return exe.clone();
    }
    let c_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi/mpi/tests/c");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("multinode-mpi");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(name);
    let mut args: Vec<String> = CFLAGS.iter().chain(extra).map(|s| s.to_string()).collect();
    args.push(c_dir.join(format!("{name}.c")).display().to_string());
    args.extend(["-o".to_owned(), exe.display().to_string()]);
    // libsccmpi.a is built beside this test's binary (target/<profile>/deps).
    let lib_dir = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let out = sccmpi::launcher::compile_command("cc", &args, &lib_dir).unwrap().output().unwrap();
    assert!(out.status.success(), "sccmpicc {name}:\n{}", String::from_utf8_lossy(&out.stderr));
    built.push((name.to_owned(), exe.clone()));
    exe
}

/// Runs `sccrun --nodes nodes -n cores [options] -- exe args`, one job at a time (the
/// machine has few CPUs), failing the test if it takes more than two minutes.
fn sccrun(nodes: u32, cores: u32, options: &[&str], exe: &Path, args: &[&str]) -> Output {
    static ONE_JOB: Mutex<()> = Mutex::new(());
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(env!("CARGO_BIN_EXE_sccrun"))
        .args(["--nodes", &nodes.to_string(), "-n", &cores.to_string()])
        .args(options)
        .arg("--")
        .arg(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both pipes drain while the job runs, so that a chatty job cannot block on one.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("{} on {nodes} nodes, {cores} ranks hung for two minutes:\n{stderr}", exe.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `Err` with what went wrong unless the job succeeded and printed `ok`.
fn passes(
    nodes: u32,
    cores: u32,
    options: &[&str],
    name: &str,
    args: &[&str],
    ok: &str,
) -> Result<(), String> {
    let exe = build(name, &[]);
    let out = sccrun(nodes, cores, options, &exe, args);
    if out.status.success() && String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == ok) {
        return Ok(());
    }
    Err(format!(
        "{name} {args:?} on {nodes} nodes, {cores} ranks {options:?}: {}\n{}",
        out.status,
        text(&out)
    ))
}

/// Fails with every failed run, so that one failure does not hide the others.
fn all_pass(failed: Vec<String>) {
    assert!(failed.is_empty(), "{} run(s) failed:\n\n{}", failed.len(), failed.join("\n\n"));
}

#[test]
fn mpi_test_programs_run_unchanged_across_nodes() {
    let mut failed = Vec::new();
    for (name, extra) in PROGRAMS {
        build(name, extra);
        for (nodes, cores) in SHAPES {
            failed.extend(passes(nodes, cores, &[], name, &[], &format!("ok {name}")).err());
        }
    }
    all_pass(failed);
}

#[test]
fn ring_reductions_and_communicators_across_nodes() {
    let mut failed = Vec::new();
    for (nodes, cores) in SHAPES {
        let args = ["basic", &nodes.to_string()];
        failed.extend(passes(nodes, cores, &[], "nodes", &args, "ok nodes basic").err());
    }
    // The per-peer channel crosses too (and the uneven blocks of a map).
    let options = ["--channel", "perpeer", "--map", "1,4,2"];
    failed.extend(passes(3, 7, &options, "nodes", &["basic", "3"], "ok nodes basic").err());
    failed.extend(passes(3, 7, &options, "p2p_basic", &[], "ok p2p_basic").err());
    all_pass(failed);
}

/// Windows and files do not cross nodes yet: each call returns
/// `MPI_ERR_UNSUPPORTED_OPERATION` on every rank under `MPI_ERRORS_RETURN`, and the job
/// goes on to finish (the program checks the classes and a later allreduce).
#[test]
fn windows_cross_nodes_and_what_does_not_fails_cleanly() {
    let mut failed = Vec::new();
    for (nodes, cores) in SHAPES {
        failed.extend(passes(nodes, cores, &[], "nodes", &["refused"], "ok nodes refused").err());
    }
    all_pass(failed);
}

/// The library's one-sided conformance program (lock contention, fetch-and-add
/// counters, a CAS mutex, PSCW, lock_all with flush seen by a third rank,
/// get_accumulate chains, every op) under every accumulate strategy.
#[test]
fn rma_conformance_across_nodes() {
    let mut failed = Vec::new();
    for (nodes, cores) in SHAPES {
        for strategy in ["atomic", "caller", "caller:64", "owner"] {
            failed.extend(passes(nodes, cores, &[], "rma_atomics", &[strategy], "ok rma_atomics").err());
        }
    }
    all_pass(failed);
}

/// The last rank, on the last node, calls `MPI_Abort(MPI_COMM_WORLD, 7)` while the
/// others wait in receives: the job fails, and every other rank, on every node, learns
/// that abort and its code; sccrun's exit status is that code, as on one node.
#[test]
fn mpi_abort_on_one_node_ends_every_node() {
    let (nodes, cores) = (3, 7);
    let out = sccrun(nodes, cores, &[], &build("nodes", &[]), &["abort"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(7), "{all}");
    let last = cores - 1;
    assert!(all.contains(&format!("sccrun: rank {last} called abort(7)")), "the diagnosis:\n{all}");
    for rank in 0..last {
        assert!(
            all.contains(&format!("on rank {rank}: other error: rank {last} called abort(7)")),
            "rank {rank} learned of the abort:\n{all}"
        );
    }
    assert!(!all.contains("outlived MPI_Abort"), "{all}");
}
