//! Node gateways without the network: K node groups, each with a segment and ranks of
//! its own, whose gateways (`sccemu::job::gateway`) exchange their rounds through this
//! test's memory instead of an MPI engine. The ranks are real processes (this test
//! binary, re-run as `rank_main`); the groups share nothing but what the gateways carry.
//! `sccemu-tools`'s multinode tests run the same over MPI, under `sccrun --nodes`.

use std::ffi::OsString;
use std::sync::mpsc;
use std::time::Duration;

use sccemu::AbortCause;
use sccemu::job::gateway::Gateway;
use sccemu::job::launcher::{JobReport, Launch, Output};
use sccemu::job::node::{NodeSide, NodeSpec};
use sccemu::job::vtime::VirtualTime;
use sccemu::timing::Chip;
use shm_layout::{ChannelKind, Config};

mod node_roles;

use node_roles::{NAMED_THE_DEAD, ROLE};

/// Runs `role` as every rank of a `cores`-core job over `nodes` node groups.
fn run_nodes(nodes: u32, cores: u32, role: &str) -> Vec<JobReport> {
    run_with(nodes, Config::new(cores), role, None)
}

/// [`run_nodes`] of a job of `config`, in virtual time if `timing` says so; one node is
/// an ordinary job.
fn run_with(nodes: u32, config: Config, role: &str, timing: Option<VirtualTime>) -> Vec<JobReport> {
    run_held(nodes, config, role, timing).0
}

/// What a gateway held for its node: the most at any time, still at the end, and the
/// bound of one flow into it (`Gateway::held`, `Gateway::flow_bound`).
#[derive(Debug)]
struct Held {
    most: u64,
    left: u64,
    flow_bound: u64,
}

/// [`run_with`], and what each node's gateway held (none on one node).
fn run_held(
    nodes: u32,
    config: Config,
    role: &str,
    timing: Option<VirtualTime>,
) -> (Vec<JobReport>, Vec<Held>) {
    let cores = config.cores;
    let exe = std::env::current_exe().unwrap();
    let mut gateways = Vec::new();
    let (done, finished) = mpsc::channel();
    for node in 0..nodes {
        let mut launch = Launch::new(config, exe.clone());
        launch.args =
            ["rank_main", "--exact", "--nocapture", "--test-threads=1"].map(OsString::from).to_vec();
        launch.env = vec![(ROLE.into(), role.into())];
        launch.output = Output::Forward;
        launch.node = NodeSpec::block(cores, nodes, node).ok().filter(|_| nodes > 1);
        launch.timing = timing.clone();
        let running = launch.spawn().unwrap();
        if nodes == 1 {
            return (vec![running.wait()], Vec::new());
        }
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
        // Each status before its node's collect, as the engine reads them: whatever a rank
        // sent before the status changed (a barrier count, its death) then goes out in
        // this iteration's batches, delivered below before any node settles on it.
        let all: Vec<_> = gateways.iter_mut().map(|g| g.status()).collect();
        let mut out: Vec<Vec<Vec<u8>>> = (0..nodes).map(|_| vec![Vec::new(); nodes as usize]).collect();
        for (gateway, out) in gateways.iter_mut().zip(&mut out) {
            gateway.collect(out);
        }
        for (from, batches) in out.iter().enumerate() {
            for (to, batch) in batches.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
                gateways[to].deliver(from as u32, batch).unwrap();
            }
        }
        for gateway in &mut gateways {
            gateway.settle(&all);
        }
        if all.iter().all(|s| s.finished) {
            let held = gateways
                .iter()
                .map(|g| Held { most: g.held().1, left: g.held().0, flow_bound: g.flow_bound() })
                .collect();
            return (reports.into_iter().map(Option::unwrap).collect(), held);
        }
        idle = if gateways.iter().any(|g| g.busy()) {
            Duration::ZERO
        } else {
            (idle * 2).clamp(Duration::from_micros(20), Duration::from_micros(500))
        };
        std::thread::sleep(idle);
    }
}

/// The ranks' entry: does nothing unless started by `run_nodes`.
#[test]
fn rank_main() {
    node_roles::rank_main();
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
fn the_per_peer_channel_crosses_nodes() {
    for (nodes, cores) in [(2, 2), (3, 7)] {
        let config = Config { channel: ChannelKind::PerPeer as u32, ..Config::new(cores) };
        for report in run_with(nodes, config, "ring", None) {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

/// Many senders on one node flood one slow receiver on another (`flood`): every message
/// arrives whole and in order, and the receiving gateway holds at most the credit of the
/// flows into it (issue 23), far less than the flood: one flow per other node under the
/// shared receive buffer, one per remote sender per peer.
#[test]
fn a_flood_into_a_slow_receiver_is_held_to_the_credit() {
    // Node 0 runs ranks 0..4, node 1 ranks 4..7; rank 6 receives.
    let (nodes, cores, remote_senders) = (2, 7, 4);
    let per_sender: u64 =
        (0..node_roles::flow::FLOOD_MESSAGES).map(|i| node_roles::flow::flood_len(i) as u64).sum();
    for (channel, flows) in [(ChannelKind::Srb, 1), (ChannelKind::PerPeer, remote_senders)] {
        let config = Config { channel: channel as u32, ..Config::new(cores) };
        let (reports, held) = run_held(nodes, config, "flood", None);
        for report in &reports {
            assert!(report.success(), "{channel}: {:?}", report.diagnosis());
        }
        let receiving = &held[1];
        let bound = flows * receiving.flow_bound;
        assert!(
            receiving.most <= bound,
            "{channel}: held {receiving:?}, more than {flows} flows' bound {bound}"
        );
        assert_eq!(receiving.left, 0, "{channel}: {receiving:?}");
        assert!(held[0].most <= held[0].flow_bound, "{channel}: the sending node's gateway {:?}", held[0]);
        if channel == ChannelKind::Srb {
            let flood = remote_senders * per_sender;
            assert!(bound * 2 < flood, "the flood ({flood} B) must dwarf the bound ({bound} B)");
        }
    }
}

/// A flag written from another node reaches a rank that takes no message until it sees
/// it, though its stand-in ring holds a flood's messages back for want of credit
/// (`flood_flag`), on either channel (per peer, the flag's pair holds nothing back).
#[test]
fn a_request_passes_messages_held_back() {
    for channel in [ChannelKind::Srb, ChannelKind::PerPeer] {
        let config = Config { channel: channel as u32, ..Config::new(3) };
        for report in run_with(2, config, "flood_flag", None) {
            assert!(report.success(), "{channel}: {:?}", report.diagnosis());
        }
    }
}

/// Window and MPB requests reach a rank that takes no message until they have, though
/// two-sided messages for it fill their flow's credit, its stand-in ring and their
/// sender's queue (`behind`, issue 23): the sender's own requests and another rank's,
/// on either channel.
#[test]
fn requests_never_wait_behind_two_sided_data() {
    for channel in [ChannelKind::Srb, ChannelKind::PerPeer] {
        let config = Config { channel: channel as u32, ..Config::new(3) };
        for report in run_with(2, config, "behind", None) {
            assert!(report.success(), "{channel}: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn collectives_cross_nodes() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "coll") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn windows_cross_nodes() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "rma") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn accumulates_with_locks_cross_nodes() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "rma_acc") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn windows_dropped_across_nodes_give_their_memory_back() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "dropped") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn mpbs_and_flags_cross_nodes() {
    for (nodes, cores) in [(1, 3), (2, 2), (2, 5), (3, 7)] {
        for report in run_nodes(nodes, cores, "mpb") {
            assert!(report.success(), "{nodes} nodes, {cores} cores: {:?}", report.diagnosis());
        }
    }
}

#[test]
fn a_dead_rank_aborts_every_node() {
    let roles =
        [("die", 3, 6), ("coll_die", 2, 5), ("rma_die", 2, 5), ("rma_die", 3, 7), ("flood_die", 2, 5)];
    for (role, nodes, cores) in roles {
        a_dead_rank_is_named(role, nodes, cores);
    }
}

/// `role` kills the last rank: every node's report names it, and every other rank
/// exits with [`NAMED_THE_DEAD`].
fn a_dead_rank_is_named(role: &str, nodes: u32, cores: u32) {
    let reports = run_nodes(nodes, cores, role);
    for report in &reports {
        let failure = report.failure.expect("every node aborted");
        assert_eq!((failure.rank, failure.cause), (Some(cores - 1), AbortCause::Exited(3)), "{failure}");
        for (i, status) in report.exits.iter().enumerate() {
            let rank = report.first_rank + i as u32;
            let expect = if rank == cores - 1 { 3 } else { NAMED_THE_DEAD };
            assert_eq!(status.code(), Some(expect), "{role}: rank {rank}");
        }
    }
}

/// A communication-only ping-pong in virtual time, on either channel: across two nodes
/// every message arrives exactly the chip's link cost later than on one node, and
/// nothing else moves.
#[test]
fn virtual_time_crosses_nodes_with_the_link_cost() {
    let chip_toml = "[compute]\nsource = \"none\"\n";
    let timing = VirtualTime { chip: chip_toml.into(), trace: None };
    let link = Chip::from_toml(chip_toml).unwrap();
    let (rounds, sizes) = (node_roles::TIMED_ROUNDS, node_roles::TIMED_SIZES);
    let round_trips: u64 = sizes.iter().map(|&s| 2 * rounds * link.link_ps(s as u64)).sum();
    for channel in [ChannelKind::Srb, ChannelKind::PerPeer] {
        let config = Config { channel: channel as u32, ..Config::new(2) };
        let ends = |nodes| -> Vec<u64> {
            let reports = run_with(nodes, config, "timed", Some(timing.clone()));
            reports.iter().flat_map(|r| r.vtimes.clone().expect("virtual times")).map(|t| t.end).collect()
        };
        let (one, two) = (ends(1), ends(2));
        // Rank 0 receives the last pong and arrives at the barrier last: rank 1 leaves
        // it once rank 0's arrival has crossed the link.
        assert_eq!(two[0] - one[0], round_trips, "{channel}, rank 0: {one:?} on one node, {two:?} on two");
        let rank_1 = round_trips + link.link_ps(0);
        assert_eq!(two[1] - one[1], rank_1, "{channel}, rank 1: {one:?} on one node, {two:?} on two");
    }
}

/// Windows in virtual time (`rma::remote::timed`): with a link that costs nothing, every
/// rank's virtual time after each synchronisation of `rma_timed` (which all move a
/// clock) is the same on one, two and three nodes; with the default link none is
/// earlier across nodes, and every rank ends later.
#[test]
fn window_virtual_time_is_one_nodes_plus_the_link() {
    let marks = |nodes, link: &str| -> Vec<Vec<u64>> {
        window_ends(nodes, 5, "rma_timed", link);
        (0..5)
            .map(|rank| {
                let file = node_roles::rma_timed::marks_file(std::process::id(), rank);
                let text = std::fs::read_to_string(&file).unwrap();
                std::fs::remove_file(&file).unwrap();
                text.split(' ').map(|t| t.parse().unwrap()).collect()
            })
            .collect()
    };
    let free_link = "[link]\nlatency_ns = 0.0\ngigabytes_per_s = 1e15\n";
    let one = marks(1, free_link);
    for nodes in [2, 3] {
        assert_eq!(marks(nodes, free_link), one, "{nodes} nodes with a free link");
    }
    let (one, two) = (marks(1, ""), marks(2, ""));
    for (rank, (a, b)) in one.iter().zip(&two).enumerate() {
        assert!(a.iter().zip(b).all(|(a, b)| b >= a), "rank {rank}: {b:?} on two nodes, {a:?} on one");
        assert!(b.last() > a.last(), "rank {rank}: {b:?} on two nodes, {a:?} on one");
    }
}

/// Every rank's virtual end time of `role` on `cores` cores over `nodes` nodes, with
/// no compute and the link of `link` (TOML; empty: the default).
fn window_ends(nodes: u32, cores: u32, role: &str, link: &str) -> Vec<u64> {
    let timing = VirtualTime { chip: format!("[compute]\nsource = \"none\"\n{link}"), trace: None };
    let reports = run_with(nodes, Config::new(cores), role, Some(timing));
    reports.iter().flat_map(|r| r.vtimes.clone().expect("virtual times")).map(|t| t.end).collect()
}

/// A window's round trips to another node each cost the link both ways, its one-way
/// operations nothing at the origin, and a fence the link once: on two nodes, rank 0
/// of `rma_link` ends exactly those links later than on one, and rank 1 leaves the
/// last barrier once rank 0's arrival has crossed the link.
#[test]
fn window_round_trips_cost_the_link_both_ways() {
    let link = "[link]\nlatency_ns = 1000.0\ngigabytes_per_s = 1e15\n";
    let latency = 1_000_000;
    let (one, two) = (window_ends(1, 2, "rma_link", link), window_ends(2, 2, "rma_link", link));
    // The fence's link, then lock, get, fetch-and-add, compare-and-swap, unlock,
    // lock_all, get, unlock_all.
    let round_trips = latency + 2 * 8 * latency;
    assert_eq!(two[0] - one[0], round_trips, "rank 0: {one:?} on one node, {two:?} on two");
    assert_eq!(two[1] - one[1], round_trips + latency, "rank 1: {one:?} on one node, {two:?} on two");
}
