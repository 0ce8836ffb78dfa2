//! The MPI C library's C tests (`tests/c/*.c`), compiled with `sccmpicc -std=c99 -O1
//! -Wall -Wextra -Werror` and run under `sccmpiexec`, one job at a time, each under a
//! two-minute watchdog. Each program checks itself against a sequential computation
//! (a failed check prints `FAIL rank R file:line: what` and aborts the job) and ends
//! with `ok <name>` from rank 0; the harness checks the exit status and that line.
//!
//! What runs where:
//!
//! | program       | area                                                  | cores      | channels          |
//! |---------------|-------------------------------------------------------|------------|-------------------|
//! | `p2p_basic`   | point-to-point, requests, probe, truncation           | 2, 3, 8    | srb, perpeer      |
//! | `persistent`  | persistent requests under every completion call       | 2, 3, 8    | srb, perpeer      |
//! | `waitall`     | MPI_Waitall: null, persistent, bad handles, truncation | 2, 3, 8   | srb, perpeer      |
//! | `completions` | Testall (handles kept until all complete), Testany/some, Waitany/some; truncation | 2, 3, 8 | srb, perpeer |
//! | `mpi_test`    | MPI_Test on every kind of handle: plain, persistent, null, generalized, cancelled; errors | 2, 3, 8 | srb, perpeer |
//! | `cancel_issend` | MPI_Cancel, MPI_Test_cancelled, MPI_Issend          | 2, 3, 8    | srb, perpeer      |
//! | `send_modes`  | buffered sends, Irsend, Testsome, Request_get_status  | 2, 3, 8    | srb, perpeer      |
//! | `mprobe`      | matched probes and receives, with threads (`-pthread`) | 2, 3, 8   | srb, perpeer      |
//! | `datatypes`   | derived datatypes, their queries, typed messages      | 2, 3, 8    | srb, perpeer      |
//! | `type_decode` | MPI_Type_get_envelope/contents, rebuilt types; errors | 2, 3, 8    | srb, perpeer      |
//! | `darray`      | MPI_Type_create_darray in both orders, decoded; errors | 2, 3, 8   | srb, perpeer      |
//! | `comm_info`   | communicator hints: set, get, dup, dup_with_info; errors | 2, 3, 8  | srb, perpeer      |
//! | `profiling`   | the program's own MPI_ functions over the PMPI_ names  | 2, 3, 8   | srb, perpeer      |
//! | `pack_attr`   | subarrays, MPI_Pack/Unpack, attributes of the world   | 2, 3, 8    | srb, perpeer      |
//! | `collectives` | every collective; world, split and dup communicators  | 2, 3, 8    | srb, perpeer      |
//! | `icoll`       | nonblocking collectives, overlap with p2p, NBX        | 2, 3, 8    | srb, perpeer      |
//! | `icoll_more`  | nonblocking scatter, alltoall, scans, v-forms; errors | 2, 3, 8    | srb, perpeer      |
//! | `icoll_w`     | Ialltoallw (a type per block, in place), Ireduce_scatter; errors | 2, 3, 8 | srb, perpeer |
//! | `reduce_ops`  | every reduction op on every basic type it applies to  | 2, 3, 8    | srb, perpeer      |
//! | `vcoll`       | v-collectives, scan/exscan, user ops; their errors    | 2, 3, 8    | srb, perpeer      |
//! | `comm_topo`   | communicators, groups, Cartesian and graph topologies | 2, 3, 8    | srb, perpeer      |
//! | `comm_create_group` | MPI_Comm_create_group: disjoint, reversed, overlapping, repeated groups; errors | 2, 3, 8 | srb, perpeer |
//! | `intercomm`   | intercommunicators: create, p2p across groups, merge, dup, collectives; errors | 2, 3, 8 | srb, perpeer |
//! | `intercoll`   | rooted, v- and reduce-scatter collectives on intercommunicators; errors | 2, 3, 5, 8 | srb, perpeer |
//! | `icoll_inter` | MPI_Comm_idup; nonblocking collectives on intercommunicators; overlap; errors | 2, 3, 5, 8 | srb, perpeer |
//! | `intersplit`  | MPI_Comm_split and MPI_Comm_create of intercommunicators; errors | 3, 5, 8 | srb, perpeer |
//! | `neighbor`    | neighbourhood collectives on grids and graphs         | 2, 3, 8    | srb, perpeer      |
//! | `graph_topo`  | graph topologies, their queries and collectives; errors | 2, 3, 8  | srb, perpeer      |
//! | `dist_graph`  | MPI_Dist_graph_create's general form, weights; errors | 2, 3, 8    | srb, perpeer      |
//! | `ineighbor`   | nonblocking neighbourhood collectives, overlap, progress | 2, 3, 8 | srb, perpeer      |
//! | `groups_reduce` | group set ops and ranges, Cart_sub, names, Reduce_scatter, Reduce_local, Alltoallw | 2, 3, 8 | srb, perpeer |
//! | `env_errors`  | environment, info, memory; error classes of each area | 2, 3, 8    | srb, perpeer      |
//! | `keyvals`     | attribute caching: keys, callbacks, dup, free, finalize | 2, 3, 8  | srb, perpeer      |
//! | `win_type_attrs` | attributes of datatypes and windows, MPI_Type_match_size; errors | 2, 3 | srb, perpeer |
//! | `errhandlers` | the program's error handlers on communicators, windows | 2, 3, 8   | srb, perpeer      |
//! | `fatal`       | MPI_ERRORS_ARE_FATAL: a bad send aborts the job       | 2, 3, 8    | srb, perpeer      |
//! | `rma_basic`   | window flavors, put/get, every synchronization        | 2, 3, 8    | srb, perpeer      |
//! | `rma_atomics` | atomicity under every accumulate strategy             | 2, 3, 7, 8 | srb, perpeer      |
//! | `rma_fast`    | the hot one-sided calls' fast paths: results, errors  | 2, 3, 8    | srb, perpeer      |
//! | `rma_locks`   | lock, unlock, lock_all, unlock_all: exclusion, epoch misuse | 2, 3, 8 | srb, perpeer  |
//! | `win_subcomm` | windows on split, reversed and self communicators     | 2, 3, 8    | srb, perpeer      |
//! | `threads`     | MPI_THREAD_MULTIPLE with pthreads (`-pthread`)        | 2, 3, 8    | srb, perpeer      |
//! | `grequest`    | generalized requests completed by a thread (`-pthread`) | 2, 3, 8  | srb, perpeer      |
//! | `file_io`     | MPI-IO: open modes, explicit offsets, views with holes, pointers, split collectives; errors | 2, 3, 8 | srb, perpeer |
//! | `file_shared` | MPI-IO's shared file pointer, APPEND, SEQUENTIAL, nonblocking forms, atomic mode | 2, 3, 8 | srb, perpeer |
//! | `nodes basic 1` | ring, communicators, `MPI_COMM_TYPE_SHARED` on one node (sccemu-tools' `multinode_mpi` runs it across nodes) | 3, 5 | srb |
//!
//! Every program runs on both two-sided channels (`sccmpiexec --channel`), although
//! one-sided traffic does not use them: the RMA programs' collectives and messages do.
//! The wait policy is sccmpiexec's default (`auto`: blocking when the job has more
//! cores than the machine has CPUs, so 3 and 8 cores block on a 2-CPU machine).
//! Besides the matrix:
//!
//! - `wait_policies` runs the programs that wait the most (collectives, threads, RMA)
//!   at 3 cores under `--wait spin` and `--wait block`;
//! - `checking_mode_accepts_correct_programs` runs every passing program at 3 cores
//!   under `--check`, which must not flag correct programs;
//! - `sccmpiexec_options` checks that the options reach the job and bad ones are
//!   refused;
//!
//! The programs run in virtual time are in `c_virtual_time.rs`.
//!
//! The whole harness takes about a minute on a 2-CPU machine (`harness` builds and runs
//! the programs).
//!
//! `fatal` is expected to fail: the harness checks a non-zero exit and that stderr
//! names the call (`MPI_Send`) and the failing rank.

use std::process::Command;

mod harness;
use harness::*;

#[test]
fn point_to_point() {
    passes("p2p_basic");
}

#[test]
fn waitall_of_every_kind_of_handle() {
    passes("waitall");
}

#[test]
fn testall_testany_testsome_waitany_waitsome() {
    passes("completions");
}

#[test]
fn test_of_every_kind_of_handle() {
    passes("mpi_test");
}

#[test]
fn mpi_io_files_views_and_their_errors() {
    passes("file_io");
}

#[test]
fn mpi_io_shared_file_pointers() {
    passes("file_shared");
}

#[test]
fn persistent_requests() {
    passes("persistent");
}

#[test]
fn cancel_and_nonblocking_synchronous_sends() {
    passes("cancel_issend");
}

#[test]
fn buffered_and_ready_sends_and_partial_completion() {
    passes("send_modes");
}

#[test]
fn matched_probes() {
    passes_with("mprobe", &["-pthread"], &CORES, &BOTH);
}

#[test]
fn attribute_caching() {
    passes("keyvals");
}

#[test]
fn datatype_and_window_attributes() {
    passes_with("win_type_attrs", &[], &[2, 3], &BOTH);
}

#[test]
fn user_error_handlers() {
    passes("errhandlers");
}

#[test]
fn neighbourhood_collectives() {
    passes("neighbor");
}

#[test]
fn graph_topologies_and_their_neighbourhood_collectives() {
    passes("graph_topo");
}

#[test]
fn distributed_graphs_from_any_edges() {
    passes("dist_graph");
}

#[test]
fn nonblocking_neighbourhood_collectives() {
    passes("ineighbor");
}

#[test]
fn group_operations_cartesian_subgrids_and_reduce_scatter() {
    passes("groups_reduce");
}

#[test]
fn datatypes() {
    passes("datatypes");
}

#[test]
fn datatype_decoding() {
    passes("type_decode");
}

#[test]
fn distributed_arrays() {
    passes("darray");
}

#[test]
fn communicator_hints() {
    passes("comm_info");
}

#[test]
fn profiling_interface() {
    passes("profiling");
}

#[test]
fn subarrays_packing_and_attributes() {
    passes("pack_attr");
}

#[test]
fn collectives() {
    passes("collectives");
}

#[test]
fn nonblocking_collectives() {
    passes("icoll");
}

#[test]
fn more_nonblocking_collectives() {
    passes("icoll_more");
}

#[test]
fn nonblocking_alltoallw_and_reduce_scatter() {
    passes("icoll_w");
}

#[test]
fn every_op_on_every_type() {
    passes("reduce_ops");
}

#[test]
fn v_collectives_scans_and_user_ops() {
    passes("vcoll");
}

#[test]
fn communicators_groups_and_topologies() {
    passes("comm_topo");
}

#[test]
fn communicators_created_by_their_groups_alone() {
    passes("comm_create_group");
}

#[test]
fn intercommunicators() {
    passes("intercomm");
}

#[test]
fn intercommunicator_rooted_and_varied_collectives() {
    passes_with("intercoll", &[], &[2, 3, 5, 8], &BOTH);
}

#[test]
fn idup_and_intercommunicator_nonblocking_collectives() {
    passes_with("icoll_inter", &[], &[2, 3, 5, 8], &BOTH);
}

#[test]
fn intercommunicator_splits_and_creates() {
    // Uneven groups: one against two, two against three, three against five.
    passes_with("intersplit", &[], &[3, 5, 8], &BOTH);
}

#[test]
fn environment_and_error_classes() {
    passes("env_errors");
}

#[test]
fn rma_windows_and_synchronization() {
    passes("rma_basic");
}

/// `$SCCEMU_ACCUMULATE_STRATEGY` sets the strategy of the windows whose info does not:
/// `rma_basic`, which checks the hint in use against the variable, passes under two of
/// them, and a bad value fails the window's creation with the variable named.
#[test]
fn the_environment_sets_the_default_accumulate_strategy() {
    let exe = build("rma_basic", &[]);
    for strategy in ["caller:256", "owner"] {
        let (out, _) = sccmpiexec_env(&["-n", "3"], &exe, &[], &[("SCCEMU_ACCUMULATE_STRATEGY", strategy)]);
        let passed = String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == "ok rma_basic");
        assert!(out.status.success() && passed, "{strategy}: {}", text(&out));
    }
    let (out, _) = sccmpiexec_env(&["-n", "2"], &exe, &[], &[("SCCEMU_ACCUMULATE_STRATEGY", "fastest")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("$SCCEMU_ACCUMULATE_STRATEGY is \"fastest\""),
        "{}",
        text(&out)
    );
}

#[test]
fn rma_atomicity_under_every_accumulate_strategy() {
    // 7: an odd count past 4, where the fetch-and-add and mutex tests run fewer rounds.
    passes_with("rma_atomics", &[], &[2, 3, 7, 8], &BOTH);
}

#[test]
fn rma_fast_paths_agree_with_the_general_path() {
    passes("rma_fast");
}

#[test]
fn rma_locks_exclude_and_report_misuse() {
    passes("rma_locks");
}

#[test]
fn rma_windows_on_sub_communicators() {
    // Every accumulate strategy and both placements run inside the program.
    passes("win_subcomm");
}

#[test]
fn thread_multiple_with_pthreads() {
    passes_with("threads", &["-pthread"], &CORES, &BOTH);
}

#[test]
fn generalized_requests() {
    passes_with("grequest", &["-pthread"], &CORES, &BOTH);
}

/// The programs that wait the most, under both explicit wait policies.
/// `nodes.c`, which sccemu-tools' `multinode_mpi` runs across nodes, on one node: one
/// `MPI_COMM_TYPE_SHARED` communicator.
#[test]
fn the_nodes_program_on_one_node() {
    let exe = build("nodes", &[]);
    for n in ["3", "5"] {
        let (out, _) = sccmpiexec_args(&["-n", n], &exe, &["basic", "1"]);
        let ok = String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == "ok nodes basic");
        assert!(out.status.success() && ok, "nodes basic 1 on {n} cores: {}", text(&out));
    }
}

#[test]
fn wait_policies() {
    let programs: [(&str, &[&str]); 4] =
        [("collectives", &[]), ("threads", &["-pthread"]), ("rma_basic", &[]), ("rma_atomics", &[])];
    let runs = ["spin", "block"].into_iter().flat_map(|policy| {
        programs.iter().map(move |&(name, extra)| {
            (name, extra, vec!["-n".into(), "3".into(), "--wait".into(), policy.into()])
        })
    });
    all_pass(runs.collect::<Vec<_>>());
}

/// Checking mode (`--check`) compares what both sides of a call must agree on; correct
/// programs (including typed messages and collectives whose counts differ but whose
/// type signatures match) must pass it unchanged.
#[test]
fn checking_mode_accepts_correct_programs() {
    let programs: &[(&str, &[&str])] = &[
        ("p2p_basic", &[]),
        ("persistent", &[]),
        ("completions", &[]),
        ("mpi_test", &[]),
        ("cancel_issend", &[]),
        ("send_modes", &[]),
        ("mprobe", &["-pthread"]),
        ("groups_reduce", &[]),
        ("neighbor", &[]),
        ("graph_topo", &[]),
        ("dist_graph", &[]),
        ("ineighbor", &[]),
        ("errhandlers", &[]),
        ("keyvals", &[]),
        ("datatypes", &[]),
        ("type_decode", &[]),
        ("darray", &[]),
        ("profiling", &[]),
        ("comm_info", &[]),
        ("pack_attr", &[]),
        ("collectives", &[]),
        ("icoll", &[]),
        ("icoll_more", &[]),
        ("icoll_w", &[]),
        ("reduce_ops", &[]),
        ("vcoll", &[]),
        ("comm_topo", &[]),
        ("comm_create_group", &[]),
        ("intercomm", &[]),
        ("intercoll", &[]),
        ("icoll_inter", &[]),
        ("intersplit", &[]),
        ("threads", &["-pthread"]),
        ("grequest", &["-pthread"]),
        ("rma_basic", &[]),
        ("rma_atomics", &[]),
        ("rma_fast", &[]),
        ("rma_locks", &[]),
        ("win_subcomm", &[]),
        ("file_io", &[]),
        ("file_shared", &[]),
    ];
    all_pass(
        programs.iter().map(|&(name, extra)| (name, extra, vec!["-n".into(), "3".into(), "--check".into()])),
    );
}

/// Under the default MPI_ERRORS_ARE_FATAL a send to a rank that does not exist ends
/// the job: a non-zero exit, and stderr names the call and the rank that made it.
#[test]
fn errors_are_fatal_by_default() {
    let exe = build("fatal", &[]);
    for channel in BOTH {
        for n in CORES {
            let cores = n.to_string();
            let (out, _) = sccmpiexec(&["-n", &cores, "--channel", channel], &exe);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "fatal at {n} cores exited 0:\n{}", text(&out));
            // The program's own checks before the bad call passed, and nothing after it ran.
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains("fatal: before the bad send"), "{}", text(&out));
            assert!(!stdout.contains("ok fatal"), "the job went on after a fatal error:\n{}", text(&out));
            let culprit = n - 1;
            let named =
                stderr.lines().any(|l| l.contains("MPI_Send") && l.contains(&format!("rank {culprit}")));
            assert!(named, "stderr does not name MPI_Send and rank {culprit}:\n{}", text(&out));
        }
    }
}

/// A job that ends early: rank 1 calls `MPI_Abort(MPI_COMM_WORLD, 7)`, returns 5 from
/// `main` without finalizing, calls `abort()`, or fails a `CHECK`, per the first
/// argument.
const EARLY_END_C: &str = r#"#include <stdlib.h>
#include "test_check.h"
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        if (argv[1][0] == 'a') MPI_Abort(MPI_COMM_WORLD, 7);
        if (argv[1][0] == 'r') return 5;
        if (argv[1][0] == 's') abort();
        CHECK(argv[1][0] != 'c');
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"#;

/// sccmpiexec's exit code is the first failure's own: `MPI_Abort`'s error code, a
/// rank's exit status, 128 + a signal; a failed check (`MPI_Abort(..., 3)`) gives 3.
#[test]
fn sccmpiexec_exit_codes() {
    let src = build_dir().join("early_end.c");
    std::fs::write(&src, EARLY_END_C).unwrap();
    let exe = build_dir().join("early_end");
    let cc = Command::new(env!("CARGO_BIN_EXE_sccmpicc"))
        .args(CFLAGS)
        .arg(format!("-I{}/tests/c", env!("CARGO_MANIFEST_DIR")))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    for (mode, code) in [("abort", 7), ("return", 5), ("signal", 128 + 6), ("check", 3)] {
        let (out, _) = sccmpiexec_args(&["-n", "3"], &exe, &[mode]);
        assert_eq!(out.status.code(), Some(code), "early_end {mode}:\n{}", text(&out));
    }
    let (out, _) = sccmpiexec_args(&["-n", "2"], &exe, &["none"]);
    assert_eq!(out.status.code(), Some(0), "early_end none:\n{}", text(&out));
}

/// `--wait` and `--channel` reach the job (each value runs), and bad values are refused
/// with sccmpiexec's usage exit code 2.
#[test]
fn sccmpiexec_options() {
    let exe = build("p2p_basic", &[]);
    for args in [
        &["-n", "3", "--wait", "spin"][..],
        &["-n", "3", "--wait=block", "--channel=perpeer"][..],
        &["-np", "2", "--wait", "auto", "--channel", "srb"][..],
    ] {
        let (out, _) = sccmpiexec(args, &exe);
        assert!(out.status.success(), "sccmpiexec {args:?}:\n{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("ok p2p_basic"), "{}", text(&out));
    }
    for bad in [
        &["-n", "2", "--timing", "vax"][..],
        &["-n", "2", "--trace", "t.json"][..],
        &["-n", "2", "--timing=scc=/nonexistent/chip.toml"][..],
        &["-n", "2", "--channel", "tcp"][..],
        &["-n", "2", "--wait", "sometimes"][..],
        &["-n", "0"][..],
        &["-n", "2", "--channel"][..],
        &["-n", "2", "--bogus"][..],
    ] {
        let (out, _) = sccmpiexec(bad, &exe);
        assert_eq!(out.status.code(), Some(2), "sccmpiexec {bad:?}:\n{}", text(&out));
    }
}
