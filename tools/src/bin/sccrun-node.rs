//! `sccrun-node`: one node of a multi-node job. `sccrun -n N --nodes K OPTIONS -- PROGRAM`
//! runs `mpirun -np K sccrun-node -n N OPTIONS -- PROGRAM`; each one takes its block of
//! the N ranks (world rank = node number; `NodeSpec::split`: as even as they go, or as
//! `--map` says), runs them over a segment of its own as sccrun would, and is their
//! gateway to the other nodes through the engine (`src/nodes`). It exits with its part
//! of the job's exit status once every node has finished.
//!
//! Until the ranks run, every node decides alike (same options, same world size), so an
//! error there ends every node cleanly: MPI finalized, node 0 says why. The options
//! that split the ranks (`-n`, `--map`) are checked to be the same on every node first,
//! since nodes that split differently would each run ranks the others think are theirs.
//! After that, a node that fails alone aborts the world (`MPI_Abort`), since the others
//! would wait for its `finished` status in the engine forever.

use sccemu::job::say;
use std::process::ExitCode;

use clap::Parser;
use mpi::traits::{Communicator, CommunicatorCollectives};
use nix::sys::signal::Signal;
use sccemu::job::node::NodeSpec;

#[path = "../job_args.rs"]
mod job_args;
#[path = "../nodes/mod.rs"]
mod nodes;

use job_args::{JobArgs, catch_signals, forward_signals, node_spec, usage_error};
use nodes::{node, seam};

#[derive(Parser, Debug)]
#[command(
    name = "sccrun-node",
    version,
    about = "One node of a multi-node sccrun job: `sccrun --nodes K` runs K of these under mpirun"
)]
struct NodeCli {
    #[command(flatten)]
    job: JobArgs,

    /// How many ranks each node runs, in node order, as a comma list (`--map 40,56`):
    /// one count per node, each at least 1, adding up to N; the same on every node.
    /// Without it, the ranks are split in blocks as even as they go.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',')]
    map: Option<Vec<u32>>,
}

/// A fingerprint of the options that split the ranks over the nodes (FNV-1a over `-n`,
/// then whether there is a map, its length and its counts): equal on nodes given the
/// same, and computed alike by every build of sccrun-node, unlike `std`'s hashers.
fn split_fingerprint(cores: u32, map: Option<&[u32]>) -> u64 {
    let mut words = vec![cores, u32::from(map.is_some())];
    if let Some(counts) = map {
        words.push(counts.len() as u32);
        words.extend_from_slice(counts);
    }
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// Whether every node was given the same `-n` and `--map`. Every node gathers every
/// node's fingerprint, so all of them get the same answer, and go on or stop together.
fn split_agreed(world: &mpi::topology::SimpleCommunicator, cores: u32, map: Option<&[u32]>) -> bool {
    let mine = split_fingerprint(cores, map);
    let mut all = vec![0u64; world.size() as usize];
    world.all_gather_into(&mine, &mut all[..]);
    all.iter().all(|&f| f == mine)
}

/// Where this node's ranks sit among the ranks of every node on this host (`before`,
/// `total`), so that nodes sharing a machine pin their ranks side by side rather than
/// each from CPU 0 (`Launch::host_share`). The nodes of a host learn each other through
/// a shared-memory split of the world, ordered by node number, as their blocks are.
fn host_share(world: &mpi::topology::SimpleCommunicator, spec: &NodeSpec) -> (usize, usize) {
    let host = world.split_shared(spec.node as i32);
    let mut counts = vec![0u32; host.size() as usize];
    host.all_gather_into(&spec.count, &mut counts[..]);
    let before: u32 = counts[..host.rank() as usize].iter().sum();
    (before as usize, counts.iter().sum::<u32>() as usize)
}

fn main() -> ExitCode {
    let cli = NodeCli::parse();
    let cores = cli.job.cores.expect("clap requires -n");
    // Funneled, not Single: the wait and signal threads exist, but only this (main)
    // thread ever calls MPI.
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("sccrun-node: MPI was initialized already");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let (node, nodes) = (world.rank() as u32, world.size() as u32);
    let map = cli.map.as_deref();
    let agreed = if split_agreed(&world, cores, map) {
        node_spec(cores, nodes, map, node)
    } else {
        Err("the nodes were given different -n or --map: every sccrun-node needs the same".into())
    };
    let agreed = agreed.and_then(|spec| Ok((spec.clone(), cli.job.launch(cores, Some(spec))?)));
    let (spec, mut launch) = match agreed {
        Ok(agreed) => agreed,
        Err(e) => {
            drop(universe);
            return if node == 0 { usage_error(e) } else { ExitCode::from(2) };
        }
    };
    launch.host_share = Some(host_share(&world, &spec));
    let compute_note = launch.timing.as_ref().map(|t| t.compute_note());
    // Before the ranks start, as in sccrun: a signal is then held for them.
    let signals = catch_signals();
    let running = match launch.spawn() {
        Ok(running) => running,
        Err(e) => {
            eprintln!("sccrun: node {node}: {e}");
            world.abort(1);
        }
    };
    if let Some(signals) = signals {
        forward_signals(signals, running.interrupter());
    }
    let mut gateway = match seam::open_gateway(&running) {
        Ok(gateway) => gateway,
        Err(e) => {
            eprintln!("sccrun: node {node}: {e}");
            running.interrupter().interrupt(Signal::SIGTERM);
            let _ = running.wait();
            world.abort(1);
        }
    };
    let report = match node::drive(&world, running, &mut *gateway) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("sccrun: node {node}: {e}");
            world.abort(1);
        }
    };
    drop(gateway);
    // One node says why the job failed: the failing rank's, or node 0 for the job.
    let says = report.failure.is_none_or(|f| f.rank.map_or(node == 0, |rank| spec.is_local(rank)));
    if let (Some(diagnosis), true) = (report.diagnosis(), says) {
        say(&format!("sccrun: {diagnosis}\n"));
    }
    if let (Some(times), Some(note)) = (&report.vtimes, compute_note) {
        say(&format!("node {node}: {}\n  {note}\n", sccemu::job::vtime::report(times)));
    }
    let code = report.exit_code();
    drop(universe);
    ExitCode::from(code)
}
