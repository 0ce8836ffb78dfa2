//! One node's process (`sccrun --mpi`) once its ranks run: the launcher's wait on one
//! thread, the engine on the main thread (the only thread that calls MPI), until every
//! node has finished.
//!
//! The gateway learns that its ranks are all gone from the wait: when the wait thread
//! returns it says so on a channel, and the engine's next status (which it reads before
//! it collects, see `engine`) calls [`LocalGateway::set_finished`] and reports
//! `finished` from then on, whatever the gateway's own status says. The wait returns
//! only after every local rank was reaped, so no rank can send after that status.

use std::sync::mpsc::{Receiver, TryRecvError, channel};

use mpi::topology::SimpleCommunicator;
use sccemu::job::launcher::{JobReport, Running};
use sccemu::job::node::{NodeSide, NodeStatus};

use super::engine;
use super::seam::LocalGateway;

/// Waits for `running` beside the engine's loop over `gateway`; returns the local
/// job's report once every node has finished. On an engine error, the local job is
/// interrupted (SIGTERM to its ranks) and reaped before the error returns; the caller
/// must then abort the world, whose other nodes cannot go on without this one.
pub fn drive(
    world: &SimpleCommunicator,
    running: Running,
    gateway: &mut dyn LocalGateway,
) -> Result<JobReport, String> {
    let interrupter = running.interrupter();
    drive_with(
        world,
        move || running.wait(),
        move || interrupter.interrupt(nix::sys::signal::Signal::SIGTERM),
        gateway,
    )
}

/// [`drive`] over any local job: `wait` (run on its own thread) returns once every local
/// rank has exited, and `stop` makes it return soon.
pub fn drive_with<R: Send + 'static>(
    world: &SimpleCommunicator,
    wait: impl FnOnce() -> R + Send + 'static,
    stop: impl FnOnce(),
    gateway: &mut dyn LocalGateway,
) -> Result<R, String> {
    let (done, exited) = channel();
    let waiter = std::thread::Builder::new()
        .name("node-wait".into())
        .spawn(move || {
            let report = wait();
            // The engine may have returned on an error already: nobody to tell then.
            let _ = done.send(());
            report
        })
        .map_err(|e| format!("cannot start the wait thread: {e}"))?;
    let mut side = Node { gateway, exited, finished: false };
    let result = engine::run(world, &mut side);
    if result.is_err() {
        stop();
    }
    let report = waiter.join().map_err(|_| "the wait thread panicked".to_string())?;
    result.map(|()| report)
}

/// The gateway as the engine sees it: finished once the local wait returned.
struct Node<'g> {
    gateway: &'g mut dyn LocalGateway,
    exited: Receiver<()>,
    finished: bool,
}

impl NodeSide for Node<'_> {
    fn collect(&mut self, out: &mut [Vec<u8>]) {
        self.gateway.collect(out);
    }

    fn deliver(&mut self, from: u32, batch: &[u8]) -> Result<(), String> {
        self.gateway.deliver(from, batch)
    }

    fn status(&mut self) -> NodeStatus {
        if !self.finished && !matches!(self.exited.try_recv(), Err(TryRecvError::Empty)) {
            self.finished = true;
            self.gateway.set_finished();
        }
        let mut status = self.gateway.status();
        status.finished |= self.finished;
        status
    }

    fn settle(&mut self, all: &[NodeStatus]) {
        self.gateway.settle(all);
    }

    fn busy(&self) -> bool {
        self.gateway.busy()
    }
}
