//! RCCE C programs across nodes: the RCCE library's own C tests
//! (`capi/rcce/tests/c`), compiled as `sccemu-cc` compiles (`rcce::launcher`), run
//! unchanged by `sccrun --nodes K` over the real MPI at odd sizes (2 nodes x 5 UEs,
//! 3 x 7, and a 1,4,2 map), in every interface and flag width. Each program checks
//! itself and prints `ok <name>`; the job must succeed. Shared DRAM, which does not
//! cross nodes, must fail cleanly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SIMPLIFIED: &[&str] = &[];
const GORY: &[&str] = &["-DGORY"];
const BITS: &[&str] = &["-DSINGLEBITFLAGS"];
const GORY_BITS: &[&str] = &["-DGORY", "-DSINGLEBITFLAGS"];
const ALL_VARIANTS: [&[&str]; 4] = [SIMPLIFIED, GORY, BITS, GORY_BITS];

/// The jobs: `--nodes`, `-n` and an optional `--map`.
const SHAPES: [(u32, u32, Option<&str>); 3] = [(2, 5, None), (3, 7, None), (3, 7, Some("1,4,2"))];

/// Where the programs are built.
fn build_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rcce-nodes");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `capi/rcce/tests/c/<name>.c` with `flags`, warnings as errors, against the
/// `librcce.a` cargo built beside sccrun; once per process (tests share programs).
fn build(name: &str, flags: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi/rcce/tests/c").join(format!("{name}.c"));
    let exe = build_dir().join(format!("{name}{}", flags.concat().replace(['-', '='], "_")));
    if built.contains(&exe) {
        return exe;
    }
    let mut args: Vec<String> =
        ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-Wl,-S"].map(String::from).into();
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend([source.display().to_string(), "-o".into(), exe.display().to_string()]);
    let lib_dir = Path::new(env!("CARGO_BIN_EXE_sccrun")).parent().unwrap();
    let out = rcce::launcher::compile_command(&args, lib_dir).unwrap().output().unwrap();
    assert!(out.status.success(), "compiling {name} {flags:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    built.push(exe.clone());
    exe
}

/// `sccrun --nodes nodes [--map map] -n cores` running `exe args...` with RCCE's MPB
/// size, one job at a time, failing the test after three minutes.
fn sccrun(shape: (u32, u32, Option<&str>), options: &[&str], exe: &Path, args: &[&str]) -> Output {
    static ONE_JOB: Mutex<()> = Mutex::new(());
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let (nodes, cores, map) = shape;
    let mpb = rcce::launcher::MPB_BYTES.to_string();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sccrun"));
    cmd.args(["--nodes", &nodes.to_string(), "-n", &cores.to_string(), "--mpb", &mpb]);
    if let Some(map) = map {
        cmd.args(["--map", map]);
    }
    let (stdout, stderr) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    let mut child = cmd
        .args(options)
        .arg("--")
        .arg(exe)
        .args(args)
        .stdout(Stdio::from(stdout.try_clone().unwrap()))
        .stderr(Stdio::from(stderr.try_clone().unwrap()))
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("sccrun {shape:?} {} hung", exe.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut bytes).unwrap();
        bytes
    };
    Output { status, stdout: read(stdout), stderr: read(stderr) }
}

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `name` in `variants` in every shape, with sccrun's `options`; each must pass.
fn passes(name: &str, variants: &[&[&str]], options: &[&str], args: &[&str]) {
    for flags in variants {
        let exe = build(name, flags);
        for shape in SHAPES {
            let out = sccrun(shape, options, &exe, args);
            assert!(
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains(&format!("ok {name}")),
                "{name} {flags:?} {options:?} on {shape:?}: {:?}\n{}",
                out.status,
                text(&out)
            );
        }
    }
}

#[test]
fn synchronous_send_and_receive_across_nodes() {
    passes("t_sendrecv", &ALL_VARIANTS, &[], &[]);
}

#[test]
fn flags_across_nodes_in_both_widths() {
    passes("t_flags", &ALL_VARIANTS, &[], &[]);
}

#[test]
fn communicators_and_their_barriers_across_nodes() {
    passes("t_comm", &ALL_VARIANTS, &[], &[]);
}

/// Put/get between all pairs, the barrier, bcast, reduce and allreduce, node-local
/// locks, and `RCCE_comm_buffer` null for the UEs on other nodes.
#[test]
fn put_get_barrier_and_collectives_across_nodes() {
    passes("t_nodes", &ALL_VARIANTS, &[], &["spans"]);
}

#[test]
fn a_ue_that_returns_early_leaves_the_others_running_across_nodes() {
    passes("t_early_exit", &[SIMPLIFIED, GORY_BITS], &[], &[]);
}

/// With `--timing` the programs still run right; each node reports its virtual times.
#[test]
fn virtual_time_across_nodes() {
    for (name, flags) in [("t_sendrecv", SIMPLIFIED), ("t_nodes", BITS)] {
        let exe = build(name, flags);
        let args: &[&str] = if name == "t_nodes" { &["spans"] } else { &[] };
        let out = sccrun((2, 5, None), &["--timing", "scc"], &exe, args);
        let all = text(&out);
        assert!(out.status.success() && all.contains(&format!("ok {name}")), "{name} --timing:\n{all}");
        assert!(all.contains("node 0: virtual time") && all.contains("node 1: virtual time"), "{all}");
    }
}

/// `RCCE_shmalloc` across nodes: null and a line on stderr, and the program goes on;
/// the test-and-set registers of UEs on another node are taken and released.
#[test]
fn shared_dram_fails_cleanly_and_remote_locks_work_across_nodes() {
    let exe = build_source(
        "shm_nodes",
        r#"#include <stdio.h>
#include "RCCE.h"
int RCCE_APP(int argc, char **argv) {
    t_vcharp p;
    int rc, id;
    RCCE_init(&argc, &argv);
    p = RCCE_shmalloc(4096);
    id = RCCE_ue() == 0 ? RCCE_num_ues() - 1 : 0;
    rc = RCCE_acquire_lock(id);
    printf("UE %d shmalloc %s lock %d\n", RCCE_ue(), p == NULL ? "null" : "memory", rc);
    if (rc == RCCE_SUCCESS)
        rc = RCCE_release_lock(id);
    printf("UE %d unlock %d\n", RCCE_ue(), rc);
    RCCE_barrier(&RCCE_COMM_WORLD);
    return RCCE_finalize();
}
"#,
    );
    for shape in [(2, 5, None), (3, 7, None)] {
        let out = sccrun(shape, &[], &exe, &[]);
        let (all, stdout) = (text(&out), String::from_utf8_lossy(&out.stdout).into_owned());
        assert!(out.status.success(), "{shape:?}:\n{all}");
        for ue in 0..shape.1 {
            for line in [format!("UE {ue} shmalloc null lock 0"), format!("UE {ue} unlock 0")] {
                assert!(stdout.lines().any(|l| l == line), "{line}:\n{all}");
            }
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("RCCE UE 0: RCCE_shmalloc(4096): the job spans nodes"), "{all}");
    }
}

/// Builds the C program `source` (a file `name.c` in the build directory) with RCCE.
fn build_source(name: &str, source: &str) -> PathBuf {
    let dir = build_dir();
    let (src, exe) = (dir.join(format!("{name}.c")), dir.join(name));
    std::fs::write(&src, source).unwrap();
    let args: Vec<String> = ["-Wall", "-Wextra", "-Werror"]
        .map(String::from)
        .into_iter()
        .chain([src.display().to_string(), "-o".into(), exe.display().to_string()])
        .collect();
    let lib_dir = Path::new(env!("CARGO_BIN_EXE_sccrun")).parent().unwrap();
    let cc = rcce::launcher::compile_command(&args, lib_dir).unwrap().output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    exe
}

/// A ping-pong between the first and the last UE in virtual time, communication only:
/// with a link that costs nothing, rank 0's virtual time for its round trips is the
/// same on one node and across two (flags stamped on the owner's node, gets from the
/// other node's MPB charged as on the chip); with a link of 1 µs it grows by a whole
/// number of crossings, at least two per round trip.
#[test]
fn virtual_time_of_rcce_messages_crosses_nodes_with_the_link() {
    let exe = build_source(
        "pingpong_vt",
        r#"#include <stdio.h>
#include "RCCE.h"
#define ROUNDS 6
int RCCE_APP(int argc, char **argv) {
    static char buf[4000];
    double t0 = 0;
    int k, me, last;
    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    last = RCCE_num_ues() - 1;
    /* The first round trip brings both UEs in step; the others are timed. */
    for (k = 0; k <= ROUNDS; k++) {
        if (k == 1)
            t0 = RCCE_wtime();
        if (me == 0) {
            RCCE_send(buf, k % 2 ? 64 : sizeof buf, last);
            RCCE_recv(buf, k % 2 ? 64 : sizeof buf, last);
        } else if (me == last) {
            RCCE_recv(buf, k % 2 ? 64 : sizeof buf, 0);
            RCCE_send(buf, k % 2 ? 64 : sizeof buf, 0);
        }
    }
    if (me == 0)
        printf("round trips %.0f ps\n", (RCCE_wtime() - t0) * 1e12);
    return RCCE_finalize();
}
"#,
    );
    let dir = build_dir();
    let round_trips = |nodes: u32, latency_ns: f64| -> u64 {
        let chip = dir.join(format!("pingpong_vt_{latency_ns}.toml"));
        let toml = format!(
            "[compute]\nsource = \"none\"\n[link]\nlatency_ns = {latency_ns:?}\ngigabytes_per_s = 1e15\n"
        );
        std::fs::write(&chip, toml).unwrap();
        let timing = format!("scc={}", chip.display());
        let out = sccrun((nodes, 2, None), &["--timing", &timing], &exe, &[]);
        let all = text(&out);
        assert!(out.status.success(), "{nodes} nodes:\n{all}");
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("round trips ").map(String::from));
        line.and_then(|l| l.trim_end_matches(" ps").parse().ok()).unwrap_or_else(|| panic!("{all}"))
    };
    let one = round_trips(1, 0.0);
    assert_eq!(round_trips(2, 0.0), one, "a free link");
    let (link, rounds) = (1_000_000, 6);
    let crossed = round_trips(2, 1000.0) - round_trips(1, 1000.0);
    assert!(crossed % link == 0 && crossed >= 2 * rounds * link, "{crossed} ps more across two nodes");
}

/// In virtual time, a UE polling another node's flag with `RCCE_flag_read` sees it no
/// earlier than its writer wrote it: the writer spends hundreds of microseconds of chip
/// time on MPB copies first, far more than the reader's polls cost, so the reader's
/// time comes only from the flag's stamp. On one node and across two.
#[test]
fn a_remote_flag_read_sees_its_writers_virtual_time() {
    let exe = build_source(
        "flag_read_vt",
        r#"#define GORY
#include <stdio.h>
#include "RCCE.h"
#define COPIES 400
int RCCE_APP(int argc, char **argv) {
    static char buf[4096];
    RCCE_FLAG done;
    RCCE_FLAG_STATUS seen = RCCE_FLAG_UNSET;
    t_vcharp scratch;
    int k, me, last;
    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    last = RCCE_num_ues() - 1;
    if (RCCE_flag_alloc(&done) != RCCE_SUCCESS || !(scratch = RCCE_malloc(sizeof buf)))
        return 1;
    RCCE_barrier(&RCCE_COMM_WORLD);
    if (me == last) {
        for (k = 0; k < COPIES; k++)
            RCCE_put(scratch, (t_vcharp)buf, sizeof buf, me);
        printf("written %.0f ps\n", RCCE_wtime() * 1e12);
        fflush(stdout);
        RCCE_flag_write(&done, RCCE_FLAG_SET, me);
    } else if (me == 0) {
        while (seen != RCCE_FLAG_SET)
            RCCE_flag_read(done, &seen, last);
        printf("seen %.0f ps\n", RCCE_wtime() * 1e12);
    }
    RCCE_barrier(&RCCE_COMM_WORLD);
    return RCCE_finalize();
}
"#,
    );
    for nodes in [1, 2] {
        let out = sccrun((nodes, 2, None), &["--timing", "scc"], &exe, &[]);
        let all = text(&out);
        assert!(out.status.success(), "{nodes} nodes:\n{all}");
        let at = |what: &str| -> f64 {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let line = stdout.lines().find_map(|l| l.strip_prefix(what).map(String::from));
            line.and_then(|l| l.trim_end_matches(" ps").parse().ok())
                .unwrap_or_else(|| panic!("{what}:\n{all}"))
        };
        let (written, seen) = (at("written "), at("seen "));
        assert!(seen > written, "{nodes} nodes: seen at {seen} ps, written at {written} ps:\n{all}");
    }
}
