//! Virtual time of windows across nodes: the one-node model (`rma::timed`), with the
//! chip's inter-node link (`Chip::link_ps`) wherever something crosses.
//!
//! Stamps: every node's copy of the control block has the stamps area, and a stamp
//! lives in the copy on the node that observes it:
//! - a target's release stamps, and the window-wide exclusive-release stamp (which
//!   `lock_all` observes), on the target's node;
//! - a pair's post stamp on the origin's node, its completion stamp on the target's
//!   (each on its waiter's);
//! - the `unlock_all` stamp on every node (an exclusive lock observes its target's
//!   node's copy), and `lock_all` observes every node's exclusive-release stamp.
//!
//! A stamp for another node goes there as a one-way max-accumulate request, sent to
//! the same rank as the synchronisation it accompanies and before it, so it is applied
//! first (the requests of one origin to one rank apply in order). A stamp on another
//! node is read with a round trip after the synchronisation it belongs to. Fence
//! arrivals travel in the fence's own allgather.
//!
//! Costs: the messages carrying requests are untimed (`timing::untimed`, in the link),
//! so each operation is charged once, as the chip would pay it. One-way crossings
//! (puts, accumulates, posts, completions, stamps written there) hold nobody back: what
//! crosses arrives a link later, so a stamp written on another node carries the
//! writer's time plus the link, and so does a fence arrival from another node. A round
//! trip holds the origin for the link both ways: a get (one per call, however many
//! blocks), fetch-and-op, compare-and-swap, get_accumulate, lock, unlock (it completes
//! the epoch at the target), lock_all's entry to and unlock_all's exit from each other
//! node, and the sync that completes one-way requests to a target (flush, fence,
//! unlock_all). Reading a stamp there rides on the synchronisation's own round trip.
//! With a link that costs nothing, a program's virtual times are those of one node.

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::op::{ElemKind, Op as AccOp};
use crate::rma::remote::request;
use crate::rma::remote::wire::{Header, Kind};
use crate::rma::window::Window;
use crate::segment::view::Plain;
use crate::timing::{self, Category, Op, Ps};

/// The link's cost of `bytes`, on this core's chip (0 outside virtual time).
fn link_ps(bytes: usize) -> Ps {
    timing::clock().map_or(0, |c| c.chip().link_ps(bytes as u64))
}

/// Charges `bytes` crossing the link one way, as an operation of its own inside the
/// caller's (so the trace shows the link).
pub(crate) fn crossing(bytes: usize) {
    if let Some(op) = timing::begin(Category::Sync, "link") {
        op.charge(link_ps(bytes));
    }
}

/// Charges a round trip that sends `sent` bytes and answers `answered`.
pub(crate) fn round_trip(sent: usize, answered: usize) {
    crossing(sent);
    crossing(answered);
}

impl<T: Plain> Window<'_, T> {
    /// Where byte `offset` of the stamps area lies in the node of team rank `rank`.
    fn stamp_there(&self, rank: u32, offset: usize) -> usize {
        let remote = self.remote.as_ref().expect("a window across nodes");
        remote.meta[rank as usize] + self.ctl.stamps.expect("virtual time") + offset
    }

    /// Raises the `values.len()` consecutive stamps at byte `offset` of the stamps area
    /// on the node of team rank `rank` (another node) to `op`'s now plus the link.
    pub(crate) fn stamp_remote(&self, op: &Op<'_>, rank: u32, offset: usize, count: usize) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let at = op.clock().now() + link_ps(0);
        let values: Vec<u8> = (0..count).flat_map(|_| at.to_le_bytes()).collect();
        let head = Header::accumulate(self.stamp_there(rank, offset), ElemKind::U64, AccOp::Max, count as u32);
        request(&*remote.link, self.team.world(rank), head, &[&values], None)
    }

    /// The stamp at byte `offset` of the stamps area on the node of team rank `rank`
    /// (another node), read with a round trip that is not charged (the caller's
    /// synchronisation pays for its own).
    pub(crate) fn read_remote_stamp(&self, rank: u32, offset: usize) -> Result<Ps, JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let mut head = Header::new(Kind::Read, self.stamp_there(rank, offset));
        head.count = 8;
        let mut value = [0u8; 8];
        request(&*remote.link, self.team.world(rank), head, &[], Some(&mut value))?;
        Ok(u64::from_le_bytes(value))
    }

    /// A fence's meeting across nodes, once this member arrived: the members' barrier,
    /// an allgather of their arrival times; returns the latest (a link later from
    /// another node), 0 outside virtual time.
    pub(crate) fn remote_meet(&self, op: &Option<Op<'static>>) -> Result<Ps, JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let arrival = op.as_ref().map_or(0, |o| o.clock().now());
        let all = remote.link.allgather(&arrival.to_le_bytes())?;
        let arrivals = all.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")));
        let crossed = |r: usize| if remote.is_local(r as u32) { 0 } else { link_ps(0) };
        Ok(arrivals.enumerate().map(|(r, t)| t + crossed(r)).max().unwrap_or(0))
    }
}
