//! The engine between the nodes' gateways, over a real MPI: point to point, no
//! collective per message.
//!
//! Every node runs [`run`] on its world communicator (world rank = node number). Each
//! iteration of its loop, on the main thread only:
//! 1. `side.status()`, then `side.collect()`, in that order.
//! 2. Every non-empty batch goes to its node at once, in a nonblocking send tagged
//!    [`DATA`] ([`Outbox`] owns the buffer until the send completes).
//! 3. If the status differs from the last one this node sent, it goes to every other
//!    node, tagged [`STATUS`] ([`wire`]'s encoding), *after* that iteration's batches.
//! 4. Whatever has arrived from any node is received in arrival order (at most
//!    [`RECEIVES_PER_ITERATION`] messages): a batch goes to `side.deliver(from, ..)`; a
//!    status replaces what this node knew of its sender, and `side.settle(known)` follows
//!    at once. `side.settle(known)` is called once more at the iteration's end.
//! 5. Completed sends are freed; the loop ends once every node's known status says
//!    `finished` and every send of this node has completed; otherwise it paces itself
//!    ([`Pace`]) and goes on.
//!
//! Invariants:
//! - Bytes before barriers. MPI keeps the order of one sender's messages to one receiver
//!   that match the same receive, and the inbox receives with any source and any tag; so
//!   a node learns of another's status only after it has delivered every batch that node
//!   sent before it. Whatever a rank sent before it entered a barrier (or exited) was sent
//!   before the status that counts that barrier (or says `finished`) was read, so it was
//!   collected no later than that status's iteration (step 1) and sent before it (step 3).
//!   Hence no node releases barrier `g` before the bytes sent ahead of it have been
//!   delivered there, and a node that says `finished` has nothing left to send. (But for
//!   two-sided data that a gateway's flow control holds back, which a barrier need not
//!   order; a gateway says `finished` only once it holds nothing back: the gateway's
//!   module docs, `credit`.)
//! - Settle sees, for this node, its status read this iteration, and for every other
//!   node the latest status received from it, except for virtual time: a node's
//!   `barrier_vtime` is only meaningful in the status that first reports a barrier count
//!   (its ranks' arrivals at that barrier; once it has released the barrier, it reports
//!   the next barrier's partial arrivals). Settle is shown, for each other node, the
//!   `barrier_vtime` of its first status with this node's own barrier count when it has
//!   reported one ([`Known`]): the barrier this node may release next. The gateway's
//!   rules are unchanged: it releases barrier `g` once every known status has
//!   `barriers >= g + 1`, and takes on a failure found in any known status.
//! - Termination. Statuses only grow towards `finished` (a finished node stays so), and
//!   each node sends its `finished` status, so every node learns that all have finished.
//!   A node that ends its loop has delivered every batch sent to it (they came before
//!   their senders' `finished`) and completed its sends. It then enters a nonblocking
//!   barrier and keeps receiving until every node has entered it: no node finalizes MPI
//!   while another still needs it. What arrives then can only be a late status change
//!   (a failure learned after `finished`): it is decoded and kept, and changes nothing.
//!
//! Errors (a batch the gateway refuses, a status that does not decode, a message with an
//! unknown tag, a batch too large for an MPI count) return from [`run`] at once; the
//! caller must then abort the whole job (`MPI_Abort`), since the other nodes would wait
//! for this one forever.

use std::thread::{sleep, yield_now};
use std::time::{Duration, Instant};

use mpi::Tag;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};
use sccemu::job::node::{NodeSide, NodeStatus};

use super::mail::{Inbox, Outbox};
use super::wire;

/// The tag of a batch of bytes.
pub const DATA: Tag = 1;
/// The tag of a node status.
pub const STATUS: Tag = 2;
/// At most this many messages are received per iteration, so that a flood of incoming
/// batches does not hold up this node's own.
pub const RECEIVES_PER_ITERATION: usize = 64;

/// Runs the engine between this node (`side`, world rank = node number) and every other
/// node until every node has finished. See the module's doc for the protocol.
pub fn run(world: &SimpleCommunicator, side: &mut dyn NodeSide) -> Result<(), String> {
    let nodes = usize::try_from(world.size()).map_err(|_| "negative world size")?;
    let me = usize::try_from(world.rank()).map_err(|_| "negative world rank")?;
    let mut out = vec![Vec::new(); nodes];
    let mut outbox = Outbox::default();
    let mut inbox = Inbox::default();
    let mut known = Known::new(nodes, me);
    let mut sent: Option<NodeStatus> = None;
    let mut pace = Pace::new();
    loop {
        let status = side.status();
        side.collect(&mut out);
        if !out[me].is_empty() {
            return Err(format!("node {me}'s gateway collected a batch for itself"));
        }
        let mut active = false;
        for (node, batch) in out.iter_mut().enumerate() {
            if !batch.is_empty() {
                outbox.send(world, node, DATA, std::mem::take(batch))?;
                active = true;
            }
        }
        if sent != Some(status) {
            let message = wire::encode_status(&status);
            for node in (0..nodes).filter(|&n| n != me) {
                outbox.send(world, node, STATUS, message.to_vec())?;
            }
            sent = Some(status);
            active = true;
        }
        known.heard(me, status);
        for _ in 0..RECEIVES_PER_ITERATION {
            let Some((from, tag, bytes)) = inbox.receive(world) else { break };
            active = true;
            if take(me, from, tag, bytes, side, &mut known)? {
                side.settle(known.view());
            }
        }
        side.settle(known.view());
        outbox.progress();
        if known.all_finished() && outbox.is_empty() {
            return finish(world, side, &mut inbox, &mut known, &mut pace);
        }
        pace.wait(active || side.busy() || !outbox.is_empty());
    }
}

/// Takes one received message: a batch goes to the gateway, a status to `known`. True
/// if it was a status.
fn take(
    me: usize,
    from: usize,
    tag: Tag,
    bytes: &[u8],
    side: &mut dyn NodeSide,
    known: &mut Known,
) -> Result<bool, String> {
    if from == me || from >= known.latest.len() {
        return Err(format!("node {me} got a message from node {from}"));
    }
    match tag {
        DATA => {
            if !bytes.is_empty() {
                side.deliver(from as u32, bytes)
                    .map_err(|e| format!("node {me} refused node {from}'s batch: {e}"))?;
            }
            Ok(false)
        }
        STATUS => {
            let status = wire::decode_status(bytes).map_err(|e| format!("node {from}'s status: {e}"))?;
            if known.latest[from].finished && !status.finished {
                return Err(format!("node {from} said it had finished, then that it had not"));
            }
            known.heard(from, status);
            Ok(true)
        }
        other => Err(format!("node {me} got a message with tag {other} from node {from}")),
    }
}

/// After the loop: a nonblocking barrier, receiving (and keeping) whatever still arrives
/// until every node has entered it.
fn finish(
    world: &SimpleCommunicator,
    side: &mut dyn NodeSide,
    inbox: &mut Inbox,
    known: &mut Known,
    pace: &mut Pace,
) -> Result<(), String> {
    let me = usize::try_from(world.rank()).map_err(|_| "negative world rank")?;
    let mut barrier = world.immediate_barrier();
    loop {
        barrier = match barrier.test() {
            Ok(_) => return Ok(()),
            Err(pending) => pending,
        };
        let mut active = false;
        while let Some((from, tag, bytes)) = inbox.receive(world) {
            active = true;
            if let Err(e) = take(me, from, tag, bytes, side, known) {
                // The caller aborts the world; a pending rsmpi request panics on drop.
                std::mem::forget(barrier);
                return Err(e);
            }
        }
        pace.wait(active);
    }
}

/// What this node knows of every node's status, as settle is shown it (see the module's
/// doc on virtual time).
pub struct Known {
    me: usize,
    /// Each node's latest status (this node's: read this iteration).
    latest: Vec<NodeStatus>,
    /// Per node, `(barriers, barrier_vtime)` of the first status that reported each of
    /// its last two barrier counts, older first.
    arrivals: Vec<[(u64, u64); 2]>,
    view: Vec<NodeStatus>,
}

impl Known {
    /// Nothing heard yet: every node at its start.
    pub fn new(nodes: usize, me: usize) -> Known {
        let start = NodeStatus::default();
        Known { me, latest: vec![start; nodes], arrivals: vec![[(0, 0); 2]; nodes], view: vec![start; nodes] }
    }

    /// Node `node`'s status is now `status`.
    pub fn heard(&mut self, node: usize, status: NodeStatus) {
        let arrivals = &mut self.arrivals[node];
        if status.barriers != arrivals[1].0 {
            *arrivals = [arrivals[1], (status.barriers, status.barrier_vtime)];
        }
        self.latest[node] = status;
    }

    /// Every node's status as settle is shown it: the latest, with each other node's
    /// `barrier_vtime` from its first status with this node's barrier count, if any.
    pub fn view(&mut self) -> &[NodeStatus] {
        let own = self.latest[self.me].barriers;
        for (node, (view, latest)) in self.view.iter_mut().zip(&self.latest).enumerate() {
            *view = *latest;
            if node != self.me {
                if let Some(&(_, vtime)) = self.arrivals[node].iter().find(|(count, _)| *count == own) {
                    view.barrier_vtime = vtime;
                }
            }
        }
        &self.view
    }

    /// Whether every node's latest status says `finished`.
    pub fn all_finished(&self) -> bool {
        self.latest.iter().all(|s| s.finished)
    }
}

/// Spin (yielding the CPU) this long after the last activity before sleeping.
pub const SPIN_FOR: Duration = Duration::from_millis(1);
/// The first sleep once the spin is over.
pub const SLEEP_MIN: Duration = Duration::from_micros(5);
/// The longest sleep between idle iterations.
pub const SLEEP_MAX: Duration = Duration::from_micros(50);
/// After this long without activity the job is taken to be computing, and the sleeps
/// grow on, up to [`SLEEP_QUIET_MAX`].
pub const QUIET_AFTER: Duration = Duration::from_millis(100);
/// The longest sleep of a gateway quiet for [`QUIET_AFTER`].
pub const SLEEP_QUIET_MAX: Duration = Duration::from_millis(1);

/// How the loop waits between iterations: after activity it only yields the CPU (the
/// machine may be oversubscribed: ranks and gateways share it), for [`SPIN_FOR`] after
/// the last activity; then it sleeps, [`SLEEP_MIN`] first and doubling up to
/// [`SLEEP_MAX`], and past [`QUIET_AFTER`] of quiet on up to [`SLEEP_QUIET_MAX`]. Any
/// activity starts it over. The timer slack of the calling thread is lowered so that
/// short sleeps stay short.
///
/// Measured on 2 CPUs (2 ranks and 2 gateways, a ping-pong): without the spin, a
/// one-way 8 B message took 120-200 µs and 1 MiB 12-29 ms; spinning 50 µs to 5 ms after
/// activity, about 18-25 µs and 1.1-1.8 ms (noisy, another job on the machine). The
/// longest sleep sets what an idle gateway costs: about 17% of a CPU at 50 µs, 12% at
/// 100 µs, 7% at 200 µs (the round engine, at 500 µs: about 13%), while the latency of a
/// message to an idle job (5 ms apart) stayed at 110-180 µs for all three, dominated by
/// the ranks' own waking. Measured again later (`docs/MULTINODE.md`, Limits), the whole
/// round trip after 5 ms of quiet did move: 211-233 µs at 50 µs, 540-580 µs at 200 µs,
/// for a quarter and a tenth of a CPU per idle gateway. The quiet stage (`QUIET_AFTER`,
/// `SLEEP_QUIET_MAX`) cut the idle cost of 10 s to 0.56-0.70 CPU-seconds for both
/// gateways (4.6-5.4 without it, same session), for a first round trip after 200 ms of
/// quiet of 2.6 ms (0.32 ms without): `docs/MULTINODE.md`, Limits.
pub struct Pace {
    last_active: Instant,
    sleep: Duration,
}

impl Pace {
    /// A pace that starts spinning; lowers this thread's timer slack.
    pub fn new() -> Pace {
        // Best effort: with the default slack (50 µs), a 5 µs sleep lasts about 55.
        let _ = nix::sys::prctl::set_timerslack(1_000);
        Pace { last_active: Instant::now(), sleep: Duration::ZERO }
    }

    /// Waits after an iteration that was `active` or idle; returns the sleep it took
    /// (zero when it only yielded).
    pub fn wait(&mut self, active: bool) -> Duration {
        let now = Instant::now();
        if active {
            self.last_active = now;
            self.sleep = Duration::ZERO;
        }
        if now.duration_since(self.last_active) < SPIN_FOR {
            yield_now();
            return Duration::ZERO;
        }
        let longest =
            if now.duration_since(self.last_active) < QUIET_AFTER { SLEEP_MAX } else { SLEEP_QUIET_MAX };
        self.sleep = (self.sleep * 2).clamp(SLEEP_MIN, longest);
        sleep(self.sleep);
        self.sleep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_spins_then_sleeps_longer_and_starts_over_on_activity() {
        let mut pace = Pace::new();
        assert_eq!(pace.wait(true), Duration::ZERO);
        sleep(SPIN_FOR);
        let idle: Vec<_> = (0..6).map(|_| pace.wait(false).as_micros()).collect();
        assert_eq!(idle, [5, 10, 20, 40, 50, 50]);
        assert_eq!(pace.wait(true), Duration::ZERO);
    }

    #[test]
    fn a_long_quiet_lets_the_sleeps_grow_to_a_millisecond() {
        let mut pace = Pace::new();
        pace.last_active = Instant::now() - QUIET_AFTER;
        let idle: Vec<_> = (0..10).map(|_| pace.wait(false).as_micros()).collect();
        assert_eq!(idle, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        assert_eq!(pace.wait(true), Duration::ZERO);
        assert_eq!(pace.wait(false), Duration::ZERO, "activity starts it over, with the spin");
    }

    #[test]
    fn settle_sees_the_vtime_of_the_barrier_it_may_release() {
        let at = |barriers, barrier_vtime| NodeStatus { barriers, barrier_vtime, ..NodeStatus::default() };
        let mut known = Known::new(3, 0);
        known.heard(0, at(1, 10));
        // Node 1 arrived at barrier 0 (vtime 11), released it and moved on: its later
        // statuses' vtimes are about barrier 1.
        known.heard(1, at(1, 11));
        known.heard(1, at(1, 99));
        known.heard(1, at(2, 21));
        known.heard(2, at(1, 12));
        let view = known.view();
        assert_eq!(
            view.iter().map(|s| (s.barriers, s.barrier_vtime)).collect::<Vec<_>>(),
            [(1, 10), (2, 11), (1, 12)]
        );
        // Once this node is at barrier 1 too, node 1's arrival at it counts.
        known.heard(0, at(2, 20));
        assert_eq!(known.view()[1].barrier_vtime, 21);
        // A node not yet at this node's count shows its latest.
        assert_eq!(known.view()[2].barrier_vtime, 12);
        assert!(!known.all_finished());
    }
}
