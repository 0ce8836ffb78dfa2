//! `sccrun --nodes K --map ...`: jobs whose ranks are split over the nodes in blocks of
//! the sizes the map gives, not the even split, over the real MPI. The ranks are this
//! test binary re-run as `rank_main` with a role (`tests/node_roles`, as in
//! `multinode.rs`), and they say where they ran; the nodes given different maps are
//! this binary too, re-run under mpirun as `node_main`.

#[path = "../../tests/node_roles/mod.rs"]
mod node_roles;

use std::collections::BTreeMap;
use std::process::{Command, Output};

use node_roles::ROLE;

/// The role that runs the token ring, then prints where the rank ran ([`rank_main`]).
const RING_WHERE: &str = "ring_where";
/// Tells [`node_main`] the maps to give its nodes: one per node, `;` between them.
const NODE_MAPS: &str = "MAP_TEST_NODE_MAPS";

/// `sccrun --nodes nodes --map map -n cores` running `role` as every rank, with more of
/// sccrun's options.
fn sccrun(nodes: u32, map: &str, cores: u32, role: &str, options: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sccrun"));
    cmd.args(["--nodes", &nodes.to_string(), "--map", map, "-n", &cores.to_string()])
        .args(options)
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args(["rank_main", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role);
    cmd
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The node a process of this job runs on, as the MPI that started its node tells it
/// (Open MPI's or MPICH's variable, inherited from `sccrun-node`); `None` under an MPI
/// that says neither.
fn mpi_node() -> Option<u32> {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK"].iter().find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// The ranks' entry: does nothing unless started by `sccrun` here.
#[test]
fn rank_main() {
    if std::env::var(ROLE).as_deref() != Ok(RING_WHERE) {
        return node_roles::rank_main();
    }
    let core = sccemu::Core::attach().unwrap();
    node_roles::ring(&core).unwrap();
    // The parent is the rank's node process: ranks under one parent ran on one node.
    let node = mpi_node().map_or("?".to_owned(), |n| n.to_string());
    println!("rank {} ran on node {node} under {}", core.rank(), std::os::unix::process::parent_id());
}

/// Where each rank says it ran: rank -> (node number or "?", parent process).
fn placements(all: &str) -> BTreeMap<u32, (String, u32)> {
    let mut ranks = BTreeMap::new();
    // From the last "rank " of a line: the test harness prints "test rank_main ... "
    // before it, on the same line.
    for line in all.lines().filter_map(|l| l.rfind("rank ").map(|at| &l[at + "rank ".len()..])) {
        let words: Vec<&str> = line.split(' ').collect();
        if let [rank, "ran", "on", "node", node, "under", parent] = words[..] {
            let placed = (node.to_owned(), parent.parse().unwrap());
            assert!(ranks.insert(rank.parse().unwrap(), placed).is_none(), "rank {rank} twice:\n{all}");
        }
    }
    ranks
}

/// Runs the ring under `map` and checks that it passed and that node `i` ran the map's
/// `i`th block: the ranks of one parent process are exactly one block, in node order,
/// and each rank's node number (where the MPI tells it) is its block's.
fn ring_runs_where(map: &[u32], options: &[&str]) {
    let cores: u32 = map.iter().sum();
    let list = map.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let out = sccrun(map.len() as u32, &list, cores, RING_WHERE, options).output().unwrap();
    let all = text(&out);
    assert!(out.status.success(), "--map {list}:\n{all}");
    let ranks = placements(&all);
    assert_eq!(ranks.len(), cores as usize, "--map {list}: every rank says where it ran:\n{all}");
    let mut first = 0;
    for (node, &count) in map.iter().enumerate() {
        let block = first..first + count;
        let parent = ranks[&first].1;
        for (rank, (said, under)) in &ranks {
            assert_eq!(
                block.contains(rank),
                *under == parent,
                "--map {list}: rank {rank}, node {node}:\n{all}"
            );
            if block.contains(rank) && said != "?" {
                assert_eq!(said, &node.to_string(), "--map {list}: rank {rank}:\n{all}");
            }
        }
        first += count;
    }
}

#[test]
fn ranks_run_on_the_nodes_the_map_says() {
    // Uneven both ways round (the even split would be 3,3,2 and 3,2), and one rank alone.
    ring_runs_where(&[1, 5, 2], &[]);
    ring_runs_where(&[1, 4], &["--channel", "perpeer"]);
    // The even split's own sizes, given as a map.
    ring_runs_where(&[3, 2], &[]);
}

#[test]
fn a_bad_map_is_refused_before_anything_runs() {
    for (nodes, map, cores, says) in [
        (3, "1,5", 8, "--map 1,5: the map names 2 nodes, but the job runs on 3: one count per node"),
        (3, "1,5,3", 8, "--map 1,5,3: the map's counts add up to 9 ranks, but the job has 8"),
        (3, "1,0,7", 8, "--map 1,0,7: the map gives node 1 no rank: each node needs at least one"),
        (1, "7", 8, "--map 7: the map's counts add up to 7 ranks, but the job has 8"),
    ] {
        let out = sccrun(nodes, map, cores, "ring", &[]).output().unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "--nodes {nodes} --map {map} -n {cores}:\n{all}");
        assert!(all.contains(says), "--map {map}:\n{all}");
        assert!(!all.contains("rank_main"), "--map {map}: no rank ran:\n{all}");
    }
    // A map needs --nodes, and numbers.
    let out =
        Command::new(env!("CARGO_BIN_EXE_sccrun")).args(["--map", "1,1", "-n", "2", "--", "true"]).output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--nodes"), "{}", text(&out));
    let out = sccrun(2, "1,x", 2, "ring", &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("invalid value 'x' for '--map"), "{}", text(&out));
}

/// A node process of [`nodes_given_different_maps_stop`]: becomes `sccrun-node` with
/// its own node's map from [`NODE_MAPS`]; does nothing otherwise.
#[test]
fn node_main() {
    use std::os::unix::process::CommandExt;
    let Ok(maps) = std::env::var(NODE_MAPS) else { return };
    let node = mpi_node().expect("mpirun names the node");
    let map = maps.split(';').nth(node as usize).expect("a map for every node");
    let e =
        Command::new(env!("CARGO_BIN_EXE_sccrun-node")).args(["-n", "4", "--map", map, "--", "true"]).exec();
    panic!("cannot run sccrun-node: {e}");
}

/// `sccrun-node`s under one mpirun with the maps `maps` (one per node).
fn nodes_with_maps(maps: &[&str]) -> Output {
    let mut cmd = sccemu_tools::nodes_launch::mpirun_command(maps.len() as u32);
    cmd.arg(std::env::current_exe().unwrap())
        .args(["node_main", "--exact", "--nocapture", "--test-threads=1"])
        .env(NODE_MAPS, maps.join(";"));
    cmd.output().expect("mpirun runs")
}

/// Nodes started by hand with different maps do not each run their own idea of the
/// job: every node stops before its ranks start, and the job fails with the reason.
#[test]
fn nodes_given_different_maps_stop() {
    let out = nodes_with_maps(&["1,3", "1,3"]);
    assert!(out.status.success(), "the same map on both nodes:\n{}", text(&out));
    for maps in [["1,3", "2,2"], ["2,2", "1,3"]] {
        let out = nodes_with_maps(&maps);
        let all = text(&out);
        assert!(!out.status.success(), "{maps:?}:\n{all}");
        assert!(
            all.contains("the nodes were given different -n or --map: every sccrun-node needs the same"),
            "{maps:?}:\n{all}"
        );
    }
}
