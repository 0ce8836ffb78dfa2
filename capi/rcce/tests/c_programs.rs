//! The RCCE interface's C tests (`tests/c/*.c`), compiled with `sccemu-cc` in every
//! variant that applies (simplified or gory interface, byte or single-bit flags, power
//! management, another `RCCE_MAXNP`) and run under `rccerun` at 2, 5 and 48 UEs. Each
//! program checks itself and ends with `ok <name>`; the harness checks what a program
//! cannot see: the launcher's exit code, the deadlock and checking-mode reports, and
//! where the UEs were placed.

mod harness;
use harness::{build, build_dir, rccerun, text};
use std::path::Path;
use std::process::Command;

const CORES: [u32; 3] = [2, 5, 48];
const SIMPLIFIED: &[&str] = &[];
const GORY: &[&str] = &["-DGORY"];
const BITS: &[&str] = &["-DSINGLEBITFLAGS"];
const GORY_BITS: &[&str] = &["-DGORY", "-DSINGLEBITFLAGS"];
/// Every interface and flag width.
const ALL_VARIANTS: [&[&str]; 4] = [SIMPLIFIED, GORY, BITS, GORY_BITS];

/// Runs `name` in `variants` at every core count; each run must pass.
fn passes(name: &str, variants: &[&[&str]], program_args: &[&str]) {
    for flags in variants {
        let exe = build(name, flags);
        for cores in CORES {
            let n = cores.to_string();
            let out = rccerun(&["-nue", &n], &exe, program_args);
            let ok = format!("ok {name}");
            assert!(
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains(&ok),
                "{name} {flags:?} at {cores} UEs: {:?}\n{}",
                out.status,
                text(&out)
            );
        }
    }
}

#[test]
fn basic_start_up_identity_and_arguments() {
    passes("t_basic", &ALL_VARIANTS, &["alpha", "--beta=1", "42"]);
    passes("t_basic", &[SIMPLIFIED], &[]);
}

#[test]
fn programs_built_for_more_than_48_ues() {
    for maxnp in ["-DRCCE_MAXNP=64", "-DRCCE_MAXNP=4096"] {
        let exe = build("t_basic", &[maxnp]);
        for cores in ["5", "64"] {
            let out = rccerun(&["-nue", cores], &exe, &["alpha", "--beta=1", "42"]);
            assert!(out.status.success(), "t_basic {maxnp} at {cores} UEs:\n{}", text(&out));
        }
    }
    // A program built for 48 UEs is refused on 64, with a clear message.
    let out = rccerun(&["-nue", "64"], &build("t_basic", SIMPLIFIED), &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("RCCE_MAXNP"), "{}", text(&out));
}

#[test]
fn mpb_allocation_and_put_get() {
    passes("t_mpb", &ALL_VARIANTS, &[]);
}

#[test]
fn flags_in_both_widths() {
    passes("t_flags", &ALL_VARIANTS, &[]);
}

#[test]
fn synchronous_send_and_receive() {
    passes("t_sendrecv", &ALL_VARIANTS, &[]);
}

#[test]
fn what_runs_across_nodes_runs_on_one() {
    passes("t_nodes", &ALL_VARIANTS, &[]);
}

#[test]
fn linear_collectives() {
    passes("t_coll", &[SIMPLIFIED, BITS], &[]);
}

#[test]
fn communicators() {
    passes("t_comm", &ALL_VARIANTS, &[]);
    passes("t_comm", &[&["-DRCCE_MAXNP=64"]], &[]);
}

#[test]
fn shared_dram_and_test_and_set_locks() {
    passes("t_shm", &ALL_VARIANTS, &[]);
}

#[test]
fn error_codes_for_bad_input() {
    passes("t_errors", &ALL_VARIANTS, &[]);
}

#[test]
fn error_strings_debug_fence_and_qsort() {
    passes("t_misc", &[SIMPLIFIED, GORY], &[]);
}

#[test]
fn power_management() {
    passes("t_power", &[&["-DRC_POWER_MANAGEMENT"], &["-DRC_POWER_MANAGEMENT", "-DGORY"]], &[]);
}

#[test]
fn a_ue_that_returns_without_finalize_leaves_the_others_running() {
    passes("t_early_exit", &[SIMPLIFIED, GORY], &[]);
}

#[test]
fn a_reversed_host_file_gives_the_same_ranks() {
    for flags in [SIMPLIFIED, GORY] {
        let exe = build("t_hostfile", flags);
        for cores in CORES {
            let hosts = build_dir().join(format!("hosts-reversed-{cores}"));
            let ids: Vec<String> = (0..cores).rev().map(|i| i.to_string()).collect();
            std::fs::write(&hosts, ids.join("\n")).unwrap();
            let n = cores.to_string();
            let out = rccerun(&["-nue", &n, "-f", hosts.to_str().unwrap()], &exe, &[]);
            assert!(out.status.success(), "t_hostfile {flags:?} at {cores}:\n{}", text(&out));
        }
    }
}

/// RCCE's globals and placement, seen from C: `RCCE_IAM`, `RCCE_NP`, every UE's MPB
/// through `RCCE_comm_buffer` (a byte stored through a pointer into the right
/// neighbour's MPB is read by it), and `RCCE_power_domain`, which depends only on where
/// a UE sits (2x2 tiles of 2 cores).
const PLACEMENT_C: &str = r#"#include <stdio.h>
#include "RCCE.h"
#include "RCCE_lib.h"
int RCCE_APP(int argc, char **argv) {
    t_vcharp line;
    long off;
    RCCE_init(&argc, &argv);
    line = RCCE_malloc(RCCE_LINE_SIZE);
    off = (long)(line - RCCE_comm_buffer[RCCE_IAM]);
    RCCE_comm_buffer[(RCCE_IAM + 1) % RCCE_NP][off] = (unsigned char)(RCCE_IAM + 1);
    RCCE_fence();
    RCCE_barrier(&RCCE_COMM_WORLD);
    RC_cache_invalidate();
    printf("rank %d domain %d iam %d np %d line %ld got %d\n", RCCE_ue(), RCCE_power_domain(), RCCE_IAM,
           RCCE_NP, off, line[0]);
    return RCCE_finalize();
}
"#;

#[test]
fn ues_sit_on_the_cores_the_host_file_names() {
    let src = build_dir().join("placement.c");
    std::fs::write(&src, PLACEMENT_C).unwrap();
    let exe = build_dir().join("placement");
    let cc = Command::new(env!("CARGO_BIN_EXE_sccemu-cc"))
        .args(["-DRC_POWER_MANAGEMENT", "-Wall", "-Wextra", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let hosts = build_dir().join("hosts-placement");
    // Out of order: the UE on core 0 is rank 0, on 13 rank 1, on 47 rank 2.
    std::fs::write(&hosts, "47\n0 # a comment\n13\n").unwrap();
    let out = rccerun(&["-nue", "3", "-f", hosts.to_str().unwrap()], &exe, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Core 0: tile (0,0), domain 0; core 13: tile 6 = (0,1), domain 0; core 47: tile 23 = (5,3), domain 5.
    // Each got its left neighbour's rank + 1 through the pointer into its MPB.
    for (rank, domain, got) in [(0, 0, 3), (1, 0, 1), (2, 5, 2)] {
        let line = format!("rank {rank} domain {domain} iam {rank} np 3 ");
        let seen = stdout.lines().find(|l| l.starts_with(&line));
        assert!(seen.is_some_and(|l| l.ends_with(&format!(" got {got}"))), "rank {rank}:\n{}", text(&out));
    }
}

#[test]
fn a_send_send_deadlock_is_reported_and_stopped() {
    for flags in [SIMPLIFIED, GORY] {
        let exe = build("t_deadlock", flags);
        for cores in ["2", "5"] {
            let out = rccerun(&["-nue", cores], &exe, &[]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "t_deadlock {flags:?} at {cores} exited 0");
            assert!(stderr.contains("deadlock: every live core is blocked"), "{}", text(&out));
            assert!(stderr.contains("rank 0 (core 0) sends to rank 1"), "{}", text(&out));
            assert!(stderr.contains("rank 1 (core 1) sends to rank 0"), "{}", text(&out));
        }
    }
}

#[test]
fn checking_mode_reports_a_size_mismatch() {
    let exe = build("t_mismatch", SIMPLIFIED);
    let out = rccerun(&["-nue", "2", "-check"], &exe, &[]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("UE 0 sends 100 bytes but UE 1 receives 64"),
        "{}",
        text(&out)
    );
    // Without checking the pair completes one handshake, as on the chip.
    let out = rccerun(&["-nue", "2"], &exe, &[]);
    assert!(out.status.success(), "{}", text(&out));
    // An empty send against a receive that expects bytes is caught too.
    let src = build_dir().join("empty_mismatch.c");
    std::fs::write(
        &src,
        "#include \"RCCE.h\"\nint RCCE_APP(int argc, char **argv) {\nchar b[100];\nRCCE_init(&argc, &argv);\n\
         if (RCCE_ue() == 0) RCCE_send(b, 0, 1); else if (RCCE_ue() == 1) RCCE_recv(b, 100, 0);\n\
         return RCCE_finalize();\n}\n",
    )
    .unwrap();
    let exe = build_dir().join("empty_mismatch");
    let cc = Command::new(env!("CARGO_BIN_EXE_sccemu-cc")).arg(&src).arg("-o").arg(&exe).output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let out = rccerun(&["-nue", "2", "-check"], &exe, &[]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("UE 0 sends 0 bytes but UE 1 receives 100"),
        "{}",
        text(&out)
    );
}

#[test]
fn rccerun_propagates_exit_codes_and_refuses_bad_arguments() {
    let src = build_dir().join("exit3.c");
    std::fs::write(
        &src,
        "#include \"RCCE.h\"\nint RCCE_APP(int argc, char **argv) {\nRCCE_init(&argc, &argv);\n\
         return RCCE_ue() == 1 ? 3 : RCCE_finalize();\n}\n",
    )
    .unwrap();
    let exe = build_dir().join("exit3");
    let cc = Command::new(env!("CARGO_BIN_EXE_sccemu-cc")).arg(&src).arg("-o").arg(&exe).output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    assert_eq!(rccerun(&["-nue", "2"], &exe, &[]).status.code(), Some(3));
    for bad in [&["-nue", "0"][..], &["-f", "/nonexistent"][..], &["-nue", "2", "-clock", "fast"][..]] {
        let out = rccerun(bad, &exe, &[]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out));
    }
}

/// The examples build with their RCCE-style Makefile in every API variant, and run.
#[test]
fn examples_build_with_the_rcce_makefile_and_run() {
    let profile = Path::new(env!("CARGO_BIN_EXE_rccerun")).parent().unwrap().to_path_buf();
    let rcceroot = profile.join("rcce");
    assert!(rcceroot.join("common/symbols").is_file(), "the build wrote no RCCEROOT");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c");
    for (variant, make_args) in
        [("simplified", &[][..]), ("bits", &["SINGLEBITFLAGS=1"][..]), ("gory", &["API=gory"][..])]
    {
        let dir = build_dir().join(format!("examples-{variant}"));
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&examples).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
        let targets: &[&str] = if variant == "gory" { &["ring_shift", "shm_reduce"] } else { &["all"] };
        let make = Command::new("make")
            .current_dir(&dir)
            .arg(format!("RCCEROOT={}", rcceroot.display()))
            .args(make_args)
            .args(["OPT=-O2 -restrict -Wall -Wextra -Werror"]) // sccemu-cc drops the icc-only flag
            .args(targets)
            .output()
            .unwrap();
        assert!(make.status.success(), "make {variant}:\n{}", text(&make));
        let out = rccerun(&["-nue", "5"], &dir.join("ring_shift"), &[]);
        assert!(
            out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("WRONG"),
            "{}",
            text(&out)
        );
        let out = rccerun(&["-nue", "4"], &dir.join("shm_reduce"), &["100000"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains(": ok"), "{}", text(&out));
        if variant != "gory" {
            let out = rccerun(&["-nue", "4"], &dir.join("stencil"), &["20", "66"]);
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("matches the sequential run"),
                "{}",
                text(&out)
            );
            let out = rccerun(&["-nue", "2"], &dir.join("pingpong"), &["10"]);
            assert!(
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains("65536 "),
                "{}",
                text(&out)
            );
        }
    }
    let dir = build_dir().join("examples-simplified");
    let make = Command::new("make")
        .current_dir(&dir)
        .arg(format!("RCCEROOT={}", rcceroot.display()))
        .args(["PWRMGMT=1", "freq_divider"])
        .output()
        .unwrap();
    assert!(make.status.success(), "make freq_divider:\n{}", text(&make));
    let out = rccerun(&["-nue", "8"], &dir.join("freq_divider"), &[]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("divider 8"),
        "{}",
        text(&out)
    );
}
