//! `sccrun smpi-platform` against SimGrid itself: the generated SCC platform is
//! accepted by `smpirun`, and a two-rank MPI ping-pong runs on it. Skipped, with the
//! reason printed, where SimGrid is not installed (CI installs it).

use std::path::Path;
use std::process::Command;

/// A ping-pong between rank 0 and rank `argv[1]`; rank 0 prints the virtual one-way µs.
const PINGPONG: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank, size;
    char buf[32] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            MPI_Send(buf, 32, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 32, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == peer) {
            MPI_Recv(buf, 32, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 32, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) printf("one-way %.6f\n", (MPI_Wtime() - t0) / 20 * 1e6);
    MPI_Finalize();
    return 0;
}
"#;

fn simgrid() -> bool {
    let found = sccemu_tools::smpi::installed();
    if !found {
        eprintln!(
            "note: skipped, SimGrid's smpicc and smpirun are not installed (apt-get install libsimgrid-dev)"
        );
    }
    found
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{command:?}: {text}");
    text
}

/// One-way µs between core 0 and the last of `ranks` ranks on the platform in `dir`.
/// The network alone: SMPI's default also charges each computation burst as the host
/// timed it, which moved the near pair past the far one on a loaded machine.
fn one_way(exe: &Path, dir: &Path, ranks: u32) -> f64 {
    let text = run(Command::new("smpirun")
        .arg("--cfg=smpi/simulate-computation:no")
        .arg("-np")
        .arg(ranks.to_string())
        .arg("-platform")
        .arg(dir.join("scc-48.xml"))
        .arg("-hostfile")
        .arg(dir.join("scc-48.hosts"))
        .arg(exe));
    let line = text.lines().find_map(|l| l.strip_prefix("one-way ")).unwrap_or_else(|| panic!("{text}"));
    line.trim().parse().unwrap()
}

#[test]
fn smpirun_runs_a_ping_pong_on_the_generated_scc_platform() {
    if !simgrid() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The command a user types.
    let printed = run(Command::new(env!("CARGO_BIN_EXE_sccrun"))
        .args(["smpi-platform", "-n", "48", "--out"])
        .arg(dir.path()));
    assert!(printed.contains("scc-48.xml"), "{printed}");
    let hosts = std::fs::read_to_string(dir.path().join("scc-48.hosts")).unwrap();
    assert_eq!(hosts.lines().count(), 48);

    let source = dir.path().join("pingpong.c");
    std::fs::write(&source, PINGPONG).unwrap();
    let exe = dir.path().join("pingpong");
    run(Command::new("smpicc").arg("-O2").arg("-o").arg(&exe).arg(&source));
    let near = one_way(&exe, dir.path(), 2);
    let far = one_way(&exe, dir.path(), 48);
    // Virtual time on the model, not host speed: core 47 is 8 hops from core 0 and
    // core 1 shares its tile, so the far pair's message crosses 8 more mesh links.
    assert!(near > 0.0 && far > near, "one-way (0,1) {near} µs, (0,47) {far} µs");
}

#[test]
fn a_chip_file_changes_the_platform_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let chip = dir.path().join("slow.toml");
    std::fs::write(&chip, "[clocks]\ndivider = 6\n").unwrap();
    let sccrun = env!("CARGO_BIN_EXE_sccrun");
    run(Command::new(sccrun)
        .args(["smpi-platform", "-n", "4", "--chip"])
        .arg(&chip)
        .arg("--out")
        .arg(dir.path()));
    let xml = std::fs::read_to_string(dir.path().join("scc-4.xml")).unwrap();
    assert!(xml.contains("speed=\"2.666667e8f\""), "cores at 1600/6 MHz: {xml}");
    std::fs::write(&chip, "[clocks]\ndivider = 0\n").unwrap();
    let out = Command::new(sccrun).args(["smpi-platform", "-n", "4", "--chip"]).arg(&chip).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("divider"), "{out:?}");
}
