//! Node gateways without the network: K node groups, each with a segment and ranks of
//! its own, whose gateways (`sccemu::job::gateway`) exchange their rounds through this
//! test's memory instead of an MPI engine. The ranks are real processes (this test
//! binary, re-run as `rank_main`); the groups share nothing but what the gateways carry.
//! `sccemu-tools`'s multinode tests run the same over MPI, under `sccrun --nodes`.

use std::ffi::OsString;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sccemu::job::gateway::Gateway;
use sccemu::job::launcher::{JobReport, Launch, Output};
use sccemu::job::node::{NodeSide, NodeSpec};
use sccemu::{ANY_SOURCE, ANY_TAG, AbortCause, Core};
use shm_layout::Config;

const ROLE: &str = "GATEWAY_TEST_ROLE";
/// What a survivor exits with when its error named the dead rank.
const NAMED_THE_DEAD: i32 = 42;

/// Runs `role` as every rank of a `cores`-core job over `nodes` node groups.
fn run_nodes(nodes: u32, cores: u32, role: &str) -> Vec<JobReport> {
    let exe = std::env::current_exe().unwrap();
    let mut gateways = Vec::new();
    let (done, finished) = mpsc::channel();
    for node in 0..nodes {
        let mut launch = Launch::new(Config::new(cores), exe.clone());
        launch.args =
            ["rank_main", "--exact", "--nocapture", "--test-threads=1"].map(OsString::from).to_vec();
        launch.env = vec![(ROLE.into(), role.into())];
        launch.output = Output::Forward;
        launch.node = NodeSpec::block(cores, nodes, node);
        let running = launch.spawn().unwrap();
        gateways.push(Gateway::new(&running).unwrap());
        let done = done.clone();
        std::thread::spawn(move || done.send((node, running.wait())).unwrap());
    }
    let mut reports: Vec<Option<JobReport>> = (0..nodes).map(|_| None).collect();
    let mut idle = Duration::ZERO;
    loop {
        while let Ok((node, report)) = finished.try_recv() {
            gateways[node as usize].set_finished();
            reports[node as usize] = Some(report);
        }
        let mut out: Vec<Vec<Vec<u8>>> = (0..nodes).map(|_| vec![Vec::new(); nodes as usize]).collect();
        for (gateway, out) in gateways.iter_mut().zip(&mut out) {
            gateway.collect(out);
        }
        let all: Vec<_> = gateways.iter_mut().map(|g| g.status()).collect();
        for (from, batches) in out.iter().enumerate() {
            for (to, batch) in batches.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
                gateways[to].deliver(from as u32, batch).unwrap();
            }
        }
        for gateway in &mut gateways {
            gateway.settle(&all);
        }
        if all.iter().all(|s| s.finished) {
            return reports.into_iter().map(Option::unwrap).collect();
        }
        idle = if gateways.iter().any(|g| g.busy()) {
            Duration::ZERO
        } else {
            (idle * 2).clamp(Duration::from_micros(20), Duration::from_micros(500))
        };
        std::thread::sleep(idle);
    }
}

fn micros_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

/// A token around the ring, messages larger than a ring, synchronous sends, sums at
/// rank 0 from any source, and barriers that nobody leaves early.
fn ring(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, size) = (core.rank(), core.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    for lap in 0..3u64 {
        let mut token = [0u8; 8];
        if rank == 0 {
            core.send(next, 1, &lap.to_le_bytes())?;
            core.recv(prev, 1, &mut token)?;
            let expect = lap + u64::from(size * (size - 1) / 2);
            assert_eq!(u64::from_le_bytes(token), expect, "lap {lap}");
        } else {
            core.recv(prev, 1, &mut token)?;
            core.send(next, 1, &(u64::from_le_bytes(token) + u64::from(rank)).to_le_bytes())?;
        }
    }
    // 200 KiB: several fragments, more than a 64 KiB ring holds.
    let big: Vec<u8> = (0..200 * 1024).map(|i| (i as u32 * 7 + rank) as u8).collect();
    let request = core.isend(next, 2, &big)?;
    let (got, status) = core.recv_vec(prev, 2)?;
    request.wait()?;
    assert_eq!(status.source, prev);
    assert!(
        got.iter().enumerate().all(|(i, &b)| b == (i as u32 * 7 + prev) as u8),
        "big message from {prev}"
    );
    // Synchronous sends around the ring, rank 0 first (all sending first would deadlock).
    let mut word = [0u8; 4];
    if rank == 0 {
        core.ssend(next, 3, &rank.to_le_bytes())?;
        core.recv(prev, 3, &mut word)?;
    } else {
        core.recv(prev, 3, &mut word)?;
        core.ssend(next, 3, &rank.to_le_bytes())?;
    }
    assert_eq!(u32::from_le_bytes(word), prev);
    if rank == 0 {
        let mut sum = 0;
        for _ in 1..size {
            let status = core.recv(ANY_SOURCE, ANY_TAG, &mut word)?;
            assert_eq!(u32::from_le_bytes(word), status.source * 10);
            sum += status.source;
        }
        assert_eq!(sum, size * (size - 1) / 2);
    } else {
        core.send(0, 4, &(rank * 10).to_le_bytes())?;
    }
    for round in 0..4 {
        let late = round % size;
        let entered = if rank == late {
            std::thread::sleep(Duration::from_millis(30));
            micros_now()
        } else {
            0
        };
        core.barrier()?;
        let left = micros_now();
        if rank == late {
            for r in (0..size).filter(|&r| r != late) {
                core.send(r, 5, &entered.to_le_bytes())?;
            }
        } else {
            let mut at = [0u8; 8];
            core.recv(late, 5, &mut at)?;
            assert!(
                left >= u64::from_le_bytes(at),
                "rank {rank} left barrier {round} before rank {late} entered it"
            );
        }
    }
    Ok(())
}

/// The last rank dies after a barrier; everyone else waits for a message that never
/// comes, and must get an error naming it.
fn die(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let dead = core.size() - 1;
    core.barrier()?;
    if core.rank() == dead {
        std::process::exit(3);
    }
    let mut buf = [0u8; 4];
    match core.recv(ANY_SOURCE, 9, &mut buf) {
        Err(e) if e.to_string().contains(&format!("rank {dead} exited with status 3")) => {
            std::process::exit(NAMED_THE_DEAD)
        }
        other => panic!("rank {} got {other:?}", core.rank()),
    }
}

/// The ranks' entry: does nothing unless started by `run_nodes`.
#[test]
fn rank_main() {
    let Ok(role) = std::env::var(ROLE) else { return };
    let core = Core::attach().unwrap();
    match role.as_str() {
        "ring" => ring(&core).unwrap(),
        "die" => die(&core).unwrap(),
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn two_sided_messages_and_barriers_cross_nodes() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "ring") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn a_dead_rank_aborts_every_node() {
    let (nodes, cores) = (3, 6);
    let reports = run_nodes(nodes, cores, "die");
    for report in &reports {
        let failure = report.failure.expect("every node aborted");
        assert_eq!((failure.rank, failure.cause), (Some(cores - 1), AbortCause::Exited(3)), "{failure}");
        for (i, status) in report.exits.iter().enumerate() {
            let rank = report.first_rank + i as u32;
            let expect = if rank == cores - 1 { 3 } else { NAMED_THE_DEAD };
            assert_eq!(status.code(), Some(expect), "rank {rank}");
        }
    }
}
