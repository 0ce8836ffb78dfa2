//! Whole jobs over several nodes on this machine: `sccrun --nodes K` starts K
//! `sccrun-node` processes under mpirun, each with a segment and ranks of its own,
//! talking through the real MPI. The ranks are this test binary re-run as `rank_main`
//! with a role (`tests/node_roles`, shared with the library's `tests/gateway.rs`).

#[path = "../../tests/node_roles/mod.rs"]
mod node_roles;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use node_roles::ROLE;

/// `sccrun --nodes nodes -n cores` running `role` as every rank.
fn sccrun(nodes: u32, cores: u32, role: &str) -> Command {
    sccrun_with(nodes, cores, role, &[])
}

/// [`sccrun`] with more of sccrun's options.
fn sccrun_with(nodes: u32, cores: u32, role: &str, options: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sccrun"));
    cmd.args(["--nodes", &nodes.to_string(), "-n", &cores.to_string()])
        .args(options)
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args(["rank_main", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role);
    cmd
}

fn run(nodes: u32, cores: u32, role: &str) -> Output {
    sccrun(nodes, cores, role).output().expect("sccrun runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The ranks' entry: does nothing unless started by `sccrun` here.
#[test]
fn rank_main() {
    node_roles::rank_main();
}

#[test]
fn token_ring_messages_and_barriers_cross_nodes() {
    for (nodes, cores) in [(2, 2), (2, 5), (3, 7), (2, 96)] {
        let out = run(nodes, cores, "ring");
        assert!(out.status.success(), "{nodes} nodes, {cores} cores:\n{}", text(&out));
    }
    let out = sccrun_with(3, 7, "ring", &["--channel", "perpeer"]).output().unwrap();
    assert!(out.status.success(), "per-peer, 3 nodes, 7 cores:\n{}", text(&out));
}

/// Messages of 4 MiB and more between nodes (`node_roles::big`): the last whole frame,
/// the first message in pieces and one of several collects, blocking and not, both
/// ways, over both channels, every byte checked; then a window of them into a slow
/// receiver. Before the fix, a full stand-in ring with the credit closed sent the
/// gateway round the ring forever: the deadline turns that hang into a failure.
#[test]
fn messages_past_a_whole_frame_cross_nodes_intact() {
    for channel in ["srb", "perpeer"] {
        let out = output_within(sccrun_with(2, 2, "big", &["--channel", channel]), Duration::from_secs(90));
        let all = text(&out);
        assert!(out.status.success() && all.contains("big messages crossed intact"), "{channel}:\n{all}");
    }
}

/// `cmd`'s output, or a panic if it runs longer than `limit` (after ending it: SIGTERM,
/// which sccrun forwards to its job, then SIGKILL).
fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Both pipes drain while the job runs, so that a chatty job cannot block on one.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let (out, err) =
        (drain(Box::new(child.stdout.take().unwrap())), drain(Box::new(child.stderr.take().unwrap())));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            std::thread::sleep(Duration::from_secs(5));
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("the job hung for {} s:\n{stderr}", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}

#[test]
fn collectives_cross_nodes() {
    for (nodes, cores) in [(2, 5), (3, 7), (2, 24)] {
        let out = run(nodes, cores, "coll");
        assert!(out.status.success(), "{nodes} nodes, {cores} cores:\n{}", text(&out));
    }
}

/// Flow control over MPI (`node_roles::flow`): a many-to-one flood into a slow
/// receiver, a flag's request that passes messages held back, and window and MPB
/// requests that wait behind no two-sided data (`node_roles::behind`, issue 23).
#[test]
fn floods_cross_nodes_within_their_credit() {
    for (role, cores) in [("flood", 7), ("flood_flag", 3), ("behind", 3)] {
        let out = run(2, cores, role);
        assert!(out.status.success(), "{role}:\n{}", text(&out));
    }
}

#[test]
fn windows_mpbs_and_flags_cross_nodes() {
    for role in ["rma", "rma_acc", "mpb", "dropped"] {
        for (nodes, cores) in [(2, 5), (3, 7)] {
            let out = run(nodes, cores, role);
            assert!(out.status.success(), "{role}, {nodes} nodes, {cores} cores:\n{}", text(&out));
        }
    }
}

#[test]
fn a_dead_rank_on_one_node_aborts_every_node() {
    for (role, nodes, cores) in [("die", 3, 6), ("coll_die", 2, 5), ("rma_die", 3, 7), ("flood_die", 2, 5)] {
        a_dead_rank_is_named(role, nodes, cores);
    }
}

/// `role` kills the last rank: the diagnosis and every other rank name it.
fn a_dead_rank_is_named(role: &str, nodes: u32, cores: u32) {
    let out = run(nodes, cores, role);
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    let dead = cores - 1;
    assert!(
        all.contains(&format!("rank {dead} exited with status 3")),
        "{role}: the diagnosis names the dead rank:\n{all}"
    );
    for rank in 0..dead {
        assert!(
            all.contains(&format!("rank {rank} named the dead rank {dead}")),
            "{role}: rank {rank}:\n{all}"
        );
    }
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let out = Command::new("pgrep").args(["-P", &pid.to_string()]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// A node's process killed outright: mpirun ends the others, which take their ranks
/// with them; sccrun fails, and no rank is left behind. (Processes are found through
/// this job's own tree, so that the other tests' jobs are left alone.)
#[test]
fn a_killed_node_ends_the_job() {
    let (nodes, cores) = (2, 4);
    let mut child =
        sccrun(nodes, cores, "wait").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let node_processes = || children(child.id()).into_iter().flat_map(children).collect::<Vec<_>>();
    let started = Instant::now();
    let (node_pids, rank_pids) = loop {
        let node_pids = node_processes();
        let rank_pids: Vec<u32> = node_pids.iter().flat_map(|&p| children(p)).collect();
        if node_pids.len() == nodes as usize && rank_pids.len() == cores as usize {
            break (node_pids, rank_pids);
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the nodes and ranks never all started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let status = Command::new("kill").args(["-KILL", &node_pids[0].to_string()]).status().unwrap();
    assert!(status.success(), "a node process to kill");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "sccrun still runs a minute after a node was killed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    let alive = || rank_pids.iter().filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists()).count();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive() > 0 {
        assert!(Instant::now() < deadline, "{} ranks outlived the job", alive());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `--timing` across nodes: each node reports its own ranks' virtual times.
#[test]
fn virtual_time_runs_across_nodes() {
    let dir = std::env::temp_dir().join(format!("sccemu-multinode-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    let out = sccrun_with(2, 2, "timed", &["--timing", "scc", "--trace", trace.to_str().unwrap()])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    // One trace for the job: both ranks' operations, messages from each node's side, and
    // nothing left beside it.
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    for rank in [0, 1] {
        let sends = events.iter().filter(|e| e["tid"] == rank && e["name"] == "send").count();
        assert!(sends >= 6, "rank {rank} sent {sends} times in the trace");
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("t.json")], "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    for (node, rank) in [(0, 0), (1, 1)] {
        let report = all
            .split(&format!("node {node}: virtual time"))
            .nth(1)
            .unwrap_or_else(|| panic!("node {node}:\n{all}"));
        assert!(
            report.lines().nth(1).is_some_and(|l| l.trim_start().starts_with(&format!("core    {rank} "))),
            "{all}"
        );
    }
}

/// Windows across nodes in virtual time, over the real MPI: a smoke test that the job
/// runs and reports (`tests/gateway.rs` compares the times with one node's).
#[test]
fn windows_run_in_virtual_time_across_nodes() {
    let out = sccrun_with(2, 5, "rma_timed", &["--timing", "scc"]).output().unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("node 1: virtual time"), "{all}");
}

/// Two nodes on one machine pin their ranks side by side, not both from CPU 0.
#[test]
fn nodes_on_one_host_share_its_cpus() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    let out = run(2, 2, "cpus");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let cpus = |rank: u32| {
        let line = all
            .lines()
            .find(|l| l.contains(&format!("rank {rank} runs on cpus ")))
            .unwrap_or_else(|| panic!("{all}"));
        line.rsplit(' ').next().unwrap().to_owned()
    };
    assert_ne!(cpus(0), cpus(1), "{all}");
}
