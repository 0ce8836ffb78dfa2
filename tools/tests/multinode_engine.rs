//! The engine between nodes (`src/nodes/engine.rs`) over a real MPI, with fake gateways.
//!
//! This test has its own main (`harness = false`): run plainly, it runs every scenario
//! under `mpirun -np 2` and `-np 3` (the flags `sccrun --nodes` uses), re-executing
//! itself with [`SCENARIO_VAR`] set; so started, it is one node: it initializes MPI on
//! the main thread, drives its fake gateway through `engine::run` and prints
//! `node I/K SCENARIO ok` once its checks pass (a failed check panics, and mpirun then
//! fails). The driver checks every node's line and mpirun's status.
//!
//! Scenarios: `frames` (numbered frames of varied sizes, a few large enough for MPI's
//! rendezvous, between every pair of nodes over many iterations, order and count
//! checked), `barriers` (barrier generations; bytes sent before a barrier must arrive
//! before its release, and settle must see each node's virtual time of its arrival at
//! the barrier released), `failure` (one node's failure reaches every node's settle, and
//! every node aborts: the job ends only once all have learned of it), `exited`
//! (`node::drive_with`: a node is finished once its local wait returns, and the engine
//! ends only once every node has), `refused` (a batch the gateway refuses aborts the
//! whole job instead of hanging it).

use std::io::Read;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use mpi::traits::Communicator;
use sccemu::job::node::{NodeSide, NodeStatus};
use sccemu::protocol::abort::AbortCause;

// The node side is compiled in by path, as in sccrun-node (see src/nodes/mod.rs for why
// not through sccemu_tools' library); this test uses only part of it. Cargo compiles a
// harness-less test with cfg(test) but without its #[test] functions, so the unit
// tests' imports go unused here (they run in sccrun-node's unit tests).
#[allow(dead_code)]
#[path = "../src/nodes/launch.rs"]
mod launch;
#[allow(dead_code, unused_imports)]
#[path = "../src/nodes/mod.rs"]
mod nodes;

use nodes::{engine, node, seam::LocalGateway};

const SCENARIO_VAR: &str = "SCCEMU_TEST_NODE_SCENARIO";
const SCENARIOS: [&str; 5] = ["frames", "barriers", "failure", "exited", "refused"];
/// Frames each node sends each other node in `frames`.
const FRAMES: u32 = 300;
/// Barrier generations in `barriers`.
const BARRIERS: u64 = 12;

fn main() -> ExitCode {
    match std::env::var(SCENARIO_VAR) {
        Ok(scenario) => node_main(&scenario),
        Err(_) => drive_all(),
    }
}

/// Runs every scenario under mpirun; the test's verdict.
fn drive_all() -> ExitCode {
    let mut failed = 0;
    let mut passed = 0;
    for scenario in SCENARIOS {
        for nodes in [2, 3] {
            match run_scenario(scenario, nodes) {
                Ok(()) => {
                    passed += 1;
                    println!("test {scenario} (np {nodes}) ... ok");
                }
                Err(e) => {
                    failed += 1;
                    println!("test {scenario} (np {nodes}) ... FAILED\n{e}");
                }
            }
        }
    }
    let verdict = if failed == 0 { "ok" } else { "FAILED" };
    println!("\ntest result: {verdict}. {passed} passed; {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn run_scenario(scenario: &str, nodes: u32) -> Result<(), String> {
    let mut cmd = launch::mpirun_command(nodes);
    cmd.arg(std::env::current_exe().map_err(|e| e.to_string())?);
    cmd.env(SCENARIO_VAR, scenario).stdout(Stdio::piped()).stderr(Stdio::piped());
    let (status, out, err) = run_bounded(cmd, Duration::from_secs(90))?;
    let said = |what: &str| format!("status {status}\n--- stdout\n{out}--- stderr\n{err}--- expected {what}");
    if scenario == "refused" {
        // Node 1 refuses a batch: it says so and aborts the world, which mpirun reports.
        if status.success() || !err.contains("refused node 0's batch: not this scenario's batch") {
            return Err(said("a failure naming the refused batch"));
        }
        return Ok(());
    }
    if !status.success() {
        return Err(said("success"));
    }
    for node in 0..nodes {
        if !out.contains(&format!("node {node}/{nodes} {scenario} ok")) {
            return Err(said(&format!("node {node}'s ok line")));
        }
    }
    Ok(())
}

/// Runs `cmd` to its end, or kills it after `limit`; its status and output.
fn run_bounded(
    mut cmd: Command,
    limit: Duration,
) -> Result<(std::process::ExitStatus, String, String), String> {
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let pipe = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = pipe(Box::new(child.stdout.take().expect("piped")));
    let err = pipe(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("mpirun ran past {limit:?}: killed"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok((status, out.join().unwrap_or_default(), err.join().unwrap_or_default()))
}

/// One node of a scenario, under mpirun.
fn node_main(scenario: &str) -> ExitCode {
    let (universe, _) =
        mpi::initialize_with_threading(mpi::Threading::Funneled).expect("MPI initializes once");
    let world = universe.world();
    let (me, nodes) = (world.rank() as u32, world.size() as u32);
    let result = match scenario {
        "frames" => {
            let mut side = Frames::new(me, nodes);
            engine::run(&world, &mut side).and_then(|()| side.check())
        }
        "barriers" => {
            let mut side = Barriers::new(me, nodes);
            engine::run(&world, &mut side).and_then(|()| side.check())
        }
        "failure" => {
            let mut side = Failure::new(me, nodes);
            engine::run(&world, &mut side).and_then(|()| side.check())
        }
        "exited" => {
            let mut side = Exited::default();
            let pause = Duration::from_millis(50 + 150 * u64::from(me));
            let waited =
                node::drive_with(&world, move || (std::thread::sleep(pause), me * 10).1, || {}, &mut side);
            waited.and_then(|value| side.check(value, me))
        }
        "refused" => {
            let mut side = Refuse { me, sent: false };
            engine::run(&world, &mut side)
        }
        other => panic!("no scenario {other}"),
    };
    if let Err(e) = result {
        eprintln!("node {me}/{nodes}: {e}");
        world.abort(3);
    }
    println!("node {me}/{nodes} {scenario} ok");
    drop(universe);
    ExitCode::SUCCESS
}

/// `frames`: every node sends every other node `FRAMES` numbered frames, a few per
/// iteration (none in some), each `[from, seq, len]` as u32s then `len` pattern bytes
/// (a few hundred kB now and then, else under 61).
struct Frames {
    me: u32,
    iteration: u32,
    sent: Vec<u32>,
    received: Vec<u32>,
}

impl Frames {
    fn new(me: u32, nodes: u32) -> Frames {
        Frames { me, iteration: 0, sent: vec![0; nodes as usize], received: vec![0; nodes as usize] }
    }

    fn peers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.sent.len()).filter(|&n| n != self.me as usize)
    }

    fn payload(from: u32, seq: u32) -> Vec<u8> {
        let len = if seq % 97 == 13 { 300_000 + from } else { (seq * 7 + from * 3) % 61 };
        (0..len).map(|i| (seq + i + from) as u8).collect()
    }

    fn check(&self) -> Result<(), String> {
        for peer in self.peers() {
            if self.received[peer] != FRAMES || self.sent[peer] != FRAMES {
                return Err(format!(
                    "peer {peer}: sent {}, received {}",
                    self.sent[peer], self.received[peer]
                ));
            }
        }
        Ok(())
    }
}

impl NodeSide for Frames {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        self.iteration += 1;
        // A slow node now and then: the others' batches to it pile up meanwhile.
        if self.me == 1 && self.iteration % 17 == 0 {
            std::thread::sleep(Duration::from_millis(3));
        }
        for peer in self.peers().collect::<Vec<_>>() {
            let count = (self.iteration + self.me + peer as u32) % 5;
            for _ in 0..count.min(FRAMES - self.sent[peer]) {
                let seq = self.sent[peer];
                let payload = Frames::payload(self.me, seq);
                for word in [self.me, seq, payload.len() as u32] {
                    out[peer].extend_from_slice(&word.to_le_bytes());
                }
                out[peer].extend_from_slice(&payload);
                self.sent[peer] += 1;
            }
        }
    }

    fn deliver(&mut self, from: u32, mut batch: &[u8]) -> Result<(), String> {
        let word = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        while !batch.is_empty() {
            let (sender, seq, len) = (word(batch, 0), word(batch, 1), word(batch, 2) as usize);
            let expected = self.received[from as usize];
            if sender != from || seq != expected {
                return Err(format!(
                    "from node {from}: frame {seq} of node {sender}, expected frame {expected}"
                ));
            }
            if batch[12..12 + len] != Frames::payload(from, seq) {
                return Err(format!("from node {from}: frame {seq}'s payload differs"));
            }
            self.received[from as usize] += 1;
            batch = &batch[12 + len..];
        }
        Ok(())
    }

    fn status(&mut self) -> NodeStatus {
        let done = self.peers().all(|p| self.sent[p] == FRAMES && self.received[p] == FRAMES);
        NodeStatus { finished: done, ..NodeStatus::default() }
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        assert_eq!(all.len(), self.sent.len());
    }

    fn busy(&self) -> bool {
        self.peers().any(|p| self.sent[p] < FRAMES)
    }
}

/// `barriers`: a simulated rank, acting between the engine's collect and the next
/// status (as a real rank may), sends every peer a note "entering barrier g" and then
/// enters it. The note must be delivered before any node is let out of barrier g: the
/// engine reads the status before it collects, and sends the status after the batches
/// collected with it, so the note reaches each node before the barrier count that
/// includes it. Each status's virtual time is the node's arrival at the barrier it is in
/// ([`arrival`]), or junk once released: settle must be shown every node's arrival at
/// the barrier it releases.
struct Barriers {
    me: u32,
    entered: u64,
    released: u64,
    /// Rounds to wait before entering the next barrier.
    delay: u64,
    notes: Vec<Vec<u8>>,
    heard: Vec<u64>,
}

impl Barriers {
    fn new(me: u32, nodes: u32) -> Barriers {
        let n = nodes as usize;
        Barriers {
            me,
            entered: 0,
            released: 0,
            delay: u64::from(me),
            notes: vec![Vec::new(); n],
            heard: vec![0; n],
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.released != BARRIERS || self.entered != BARRIERS {
            return Err(format!("entered {}, released {}", self.entered, self.released));
        }
        Ok(())
    }
}

impl NodeSide for Barriers {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        for (slot, notes) in out.iter_mut().zip(&mut self.notes) {
            slot.append(notes);
        }
        // The rank, after the collect: between barriers and done waiting, it sends its
        // notes and enters the next barrier.
        if self.entered == self.released && self.entered < BARRIERS {
            if self.delay > 0 {
                self.delay -= 1;
            } else {
                for (peer, notes) in self.notes.iter_mut().enumerate() {
                    if peer != self.me as usize {
                        notes.extend_from_slice(&self.entered.to_le_bytes());
                    }
                }
                self.entered += 1;
            }
        }
    }

    fn deliver(&mut self, from: u32, batch: &[u8]) -> Result<(), String> {
        for note in batch.chunks(8) {
            let g = u64::from_le_bytes(note.try_into().map_err(|_| "a torn note")?);
            if g != self.heard[from as usize] {
                return Err(format!(
                    "node {from}'s note for barrier {g}, expected {}",
                    self.heard[from as usize]
                ));
            }
            self.heard[from as usize] += 1;
        }
        Ok(())
    }

    fn status(&mut self) -> NodeStatus {
        // Junk that changes with each release, so a status with the same barrier count
        // but another vtime goes out after each one.
        let barrier_vtime = if self.entered > self.released {
            arrival(self.me, self.released)
        } else {
            u64::MAX - self.released
        };
        NodeStatus {
            barriers: self.entered,
            finished: self.released == BARRIERS,
            barrier_vtime,
            ..NodeStatus::default()
        }
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        let reached = all.iter().map(|s| s.barriers).min().expect("nodes");
        for g in self.released..reached {
            for (peer, &heard) in self.heard.iter().enumerate() {
                assert!(
                    peer == self.me as usize || heard > g,
                    "node {}: released from barrier {g} before node {peer}'s note for it",
                    self.me
                );
            }
        }
        if reached > self.released {
            assert!(reached <= self.entered, "released past this node's own barrier");
            for (node, status) in all.iter().enumerate() {
                assert_eq!(
                    status.barrier_vtime,
                    arrival(node as u32, self.released),
                    "node {}: node {node}'s arrival at barrier {}",
                    self.me,
                    self.released
                );
            }
            self.released = reached;
            self.delay = (u64::from(self.me) + reached) % 3;
        }
    }

    fn busy(&self) -> bool {
        self.notes.iter().any(|n| !n.is_empty())
    }
}

/// The virtual time of `node`'s arrival at barrier `g` in `barriers`.
fn arrival(node: u32, g: u64) -> u64 {
    1000 * (u64::from(node) + 1) + g
}

/// `failure`: the last node fails in its 5th iteration (seen in that iteration's settle
/// there); every node must learn of it through settle and take it on (report it too),
/// and its ranks "exit" 3 iterations after it has learned: the job ends only once every
/// node has.
struct Failure {
    me: u32,
    nodes: u32,
    iteration: u32,
    known: Option<(Option<u32>, AbortCause)>,
    learned: Option<u32>,
}

const FAILED_ITERATION: u32 = 5;
const FAILURE: (Option<u32>, AbortCause) = (Some(42), AbortCause::UserAbort(7));

impl Failure {
    fn new(me: u32, nodes: u32) -> Failure {
        Failure { me, nodes, iteration: 0, known: None, learned: None }
    }

    fn check(&self) -> Result<(), String> {
        let failing = self.me == self.nodes - 1;
        match (self.known, self.learned) {
            (Some(known), Some(iteration))
                if known == FAILURE && (!failing || iteration == FAILED_ITERATION) =>
            {
                Ok(())
            }
            other => Err(format!(
                "knew {other:?}, expected {FAILURE:?} (from iteration {FAILED_ITERATION} if failing)"
            )),
        }
    }
}

impl NodeSide for Failure {
    fn collect(&mut self, _out: &mut [Vec<u8>]) {}

    fn deliver(&mut self, from: u32, _batch: &[u8]) -> Result<(), String> {
        Err(format!("no bytes expected, got some from node {from}"))
    }

    fn status(&mut self) -> NodeStatus {
        self.iteration += 1;
        if self.me == self.nodes - 1 && self.iteration == FAILED_ITERATION {
            self.known = Some(FAILURE);
        }
        let finished = self.learned.is_some_and(|r| self.iteration > r + 3);
        NodeStatus { failure: self.known, finished, ..NodeStatus::default() }
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        if self.learned.is_none() {
            if let Some(failure) = all.iter().find_map(|s| s.failure) {
                self.known = Some(failure);
                self.learned = Some(self.iteration);
            }
        }
    }

    fn busy(&self) -> bool {
        false
    }
}

/// `exited`: a gateway that never reports `finished` itself; `node::drive_with` must
/// make it finished (and say so once) when its wait returns.
#[derive(Default)]
struct Exited {
    told: u32,
    finished_seen: bool,
}

impl Exited {
    fn check(&self, waited: u32, me: u32) -> Result<(), String> {
        if self.told != 1 || waited != me * 10 || !self.finished_seen {
            return Err(format!("set_finished {} times, wait gave {waited}", self.told));
        }
        Ok(())
    }
}

impl NodeSide for Exited {
    fn collect(&mut self, _out: &mut [Vec<u8>]) {}

    fn deliver(&mut self, from: u32, _batch: &[u8]) -> Result<(), String> {
        Err(format!("no bytes expected, got some from node {from}"))
    }

    fn status(&mut self) -> NodeStatus {
        NodeStatus::default()
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        self.finished_seen = all.iter().all(|s| s.finished);
    }

    fn busy(&self) -> bool {
        false
    }
}

impl LocalGateway for Exited {
    fn set_finished(&mut self) {
        self.told += 1;
    }
}

/// `refused`: node 0 sends node 1 one batch, which node 1 refuses.
struct Refuse {
    me: u32,
    sent: bool,
}

impl NodeSide for Refuse {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        if self.me == 0 && !self.sent {
            out[1].push(1);
            self.sent = true;
        }
    }

    fn deliver(&mut self, _from: u32, _batch: &[u8]) -> Result<(), String> {
        Err("not this scenario's batch".into())
    }

    fn status(&mut self) -> NodeStatus {
        NodeStatus::default()
    }

    fn settle(&mut self, _all: &[NodeStatus]) {}

    fn busy(&self) -> bool {
        true
    }
}
