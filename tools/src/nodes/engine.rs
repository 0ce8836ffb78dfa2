//! The round loop between the nodes' gateways, over a real MPI.
//!
//! Every node runs [`run`] on its world communicator; the loop is lock-step, each round
//! being the same three collectives on every node:
//! 1. `side.status()`, then `side.collect()`. Status first: whatever a rank sent before
//!    it entered a barrier (or before it exited) that the status counts was sent before
//!    the collect, so it travels in the same round as the status, or earlier. Since
//!    batches are delivered before statuses are settled, a barrier is never released
//!    on a node before the bytes sent ahead of it have been delivered there, and a node
//!    that reports `finished` has nothing left to send.
//! 2. An allgather of every node's status words ([`wire`]), this node's busy flag
//!    included (busy if `side.busy()` or it is sending bytes this round).
//! 3. An all-to-all of the batches' byte counts, then an all-to-all-varcount of the
//!    bytes themselves.
//! 4. `side.deliver(from, batch)` for every non-empty batch, in node order, then
//!    `side.settle(statuses)` with every node's status.
//!
//! The loop ends after the first round in which every node reported `finished`: every
//! node sees the same statuses, so every node leaves after the same round and no
//! collective is left half-entered. A round's bytes from a node all travel in that
//! round, and a finished node has nothing left to send (step 1), so nothing is lost.
//!
//! Back-off: a round in which no node is busy and no bytes moved is idle (all nodes
//! agree on that too, from the allgathered busy flags). After an idle round the node
//! sleeps before the next, [`BACKOFF_MIN`] first and doubling up to [`BACKOFF_MAX`];
//! any activity resets it to no sleep. Phase 1's cross-node latency is therefore bounded
//! by the back-off: a message sent to another node while the job is idle waits up to
//! about `BACKOFF_MAX` (plus one round) before it leaves.
//!
//! Errors (a batch the gateway refuses, a status that does not decode, a batch too large
//! for an MPI count) return from [`run`] at once; the caller must then abort the whole
//! job (`MPI_Abort`), since the other nodes are, or soon will be, inside a collective.

use std::thread::sleep;
use std::time::Duration;

use mpi::Count;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};
use sccemu::job::node::{NodeSide, NodeStatus};

use super::wire::{self, STATUS_WORDS, StatusWords};

/// The first sleep after an idle round.
pub const BACKOFF_MIN: Duration = Duration::from_micros(20);
/// The longest sleep between idle rounds.
pub const BACKOFF_MAX: Duration = Duration::from_micros(500);

/// How long to sleep between rounds: nothing while the job is active, a doubling sleep
/// while it stays idle.
#[derive(Debug, Default)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    /// The sleep before the next round, after a round that was `active` or idle.
    pub fn after_round(&mut self, active: bool) -> Duration {
        if active {
            self.next = Duration::ZERO;
            return Duration::ZERO;
        }
        self.next = (self.next * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        self.next
    }
}

/// Runs the rounds between this node (`side`, world rank = node number) and every other
/// node until every node has finished. See the module's doc for the protocol.
pub fn run(world: &SimpleCommunicator, side: &mut dyn NodeSide) -> Result<(), String> {
    let nodes = usize::try_from(world.size()).map_err(|_| "negative world size")?;
    let me = usize::try_from(world.rank()).map_err(|_| "negative world rank")?;
    let mut out = vec![Vec::new(); nodes];
    let mut words = vec![0u64; nodes * STATUS_WORDS];
    let mut statuses = vec![NodeStatus::default(); nodes];
    let mut sizes = vec![0 as Count; nodes];
    let mut arriving = vec![0 as Count; nodes];
    // Never an empty allocation: an empty Vec<u8>'s dangling pointer is 1, which Open MPI
    // takes for MPI_IN_PLACE (and fails the all-to-all with MPI_ERR_ARG).
    let mut outgoing: Vec<u8> = Vec::with_capacity(64);
    let mut incoming: Vec<u8> = Vec::with_capacity(64);
    let mut backoff = Backoff::default();
    loop {
        let status = side.status();
        out.iter_mut().for_each(Vec::clear);
        side.collect(&mut out);
        if !out[me].is_empty() {
            return Err(format!("node {me}'s gateway collected a batch for itself"));
        }
        let sending = out.iter().any(|batch| !batch.is_empty());
        let mine: StatusWords = wire::encode_status(&status, side.busy() || sending);
        world.all_gather_into(&mine[..], &mut words[..]);
        let mut busy = false;
        for (node, chunk) in words.chunks_exact(STATUS_WORDS).enumerate() {
            let chunk: &StatusWords = chunk.try_into().expect("chunks_exact gives STATUS_WORDS");
            let (status, node_busy) =
                wire::decode_status(chunk).map_err(|e| format!("node {node}'s status: {e}"))?;
            statuses[node] = status;
            busy |= node_busy;
        }

        for (size, batch) in sizes.iter_mut().zip(&out) {
            *size = Count::try_from(batch.len())
                .map_err(|_| format!("a batch of {} bytes exceeds an MPI count", batch.len()))?;
        }
        world.all_to_all_into(&sizes[..], &mut arriving[..]);
        outgoing.clear();
        out.iter().for_each(|batch| outgoing.extend_from_slice(batch));
        let (send_displs, _) = displacements(&sizes)?;
        let (recv_displs, total) = displacements(&arriving)?;
        incoming.clear();
        incoming.resize(total, 0u8);
        {
            let send = Partition::new(&outgoing[..], &sizes[..], &send_displs[..]);
            let mut recv = PartitionMut::new(&mut incoming[..], &arriving[..], &recv_displs[..]);
            world.all_to_all_varcount_into(&send, &mut recv);
        }

        for from in 0..nodes {
            let (start, len) = (recv_displs[from] as usize, arriving[from] as usize);
            if len > 0 {
                side.deliver(from as u32, &incoming[start..start + len])
                    .map_err(|e| format!("node {me} refused node {from}'s batch: {e}"))?;
            }
        }
        side.settle(&statuses);

        if statuses.iter().all(|s| s.finished) {
            return Ok(());
        }
        // `busy` comes from the allgather, so every node pauses alike; a node that sent
        // bytes said it was busy.
        let pause = backoff.after_round(busy);
        if !pause.is_zero() {
            sleep(pause);
        }
    }
}

/// Each batch's offset in the concatenation of batches of these sizes, and their total.
fn displacements(sizes: &[Count]) -> Result<(Vec<Count>, usize), String> {
    let mut displs = Vec::with_capacity(sizes.len());
    let mut at: Count = 0;
    for &size in sizes {
        displs.push(at);
        at = at.checked_add(size).ok_or("a round's batches exceed an MPI count")?;
    }
    Ok((displs, at as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_while_idle_and_resets_on_activity() {
        let mut backoff = Backoff::default();
        assert_eq!(backoff.after_round(true), Duration::ZERO);
        let idle: Vec<_> = (0..7).map(|_| backoff.after_round(false).as_micros()).collect();
        assert_eq!(idle, [20, 40, 80, 160, 320, 500, 500]);
        assert_eq!(backoff.after_round(true), Duration::ZERO);
        assert_eq!(backoff.after_round(false), BACKOFF_MIN);
    }

    #[test]
    fn displacements_are_running_sums() {
        assert_eq!(displacements(&[3, 0, 5]), Ok((vec![0, 3, 3], 8)));
        assert_eq!(displacements(&[]), Ok((vec![], 0)));
        assert!(displacements(&[Count::MAX, 1]).is_err());
    }
}
