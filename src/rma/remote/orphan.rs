//! A window across nodes dropped without `free`: the last one out, node by node.
//!
//! On one node such a window is an orphan that the cores agree to reclaim
//! (`segment::reclaim`). Across nodes every node holds memory of its own (the control
//! block its leader allocated, with the strategy's shares, and the node's packed parts),
//! and any member may still reach it from any node until that member is done. So each
//! node's memory waits for every member of the window, on every node:
//!
//! 1. a member that drops the window stops its owner-computes agent (which reads its
//!    share until then) and completes its one-way requests (a sync round trip to each
//!    rank it sent one to since its last sync);
//! 2. it counts itself out on every node: in the `left` word of each other node's control
//!    block by a fetch-and-add that the node's gateway applies and answers, then in its
//!    own node's, with an AcqRel add (`protocol::last_out`). So its drop returns with
//!    every count applied;
//! 3. the node's leader returns the node's memory once its node's count reaches the
//!    window's size: at its own drop if the count is full by then, or else in a later
//!    window creation across nodes, once the creation's first allgather shows that every
//!    member has entered it, and so has finished dropping the windows before it
//!    (`CoreContext::reclaim_on_node`). A program that drops windows and creates new
//!    ones over the same members therefore never holds more than one dropped window.
//!
//! Happens-before: a member's local accesses precede its own add (Release); its remote
//! ones were applied by the gateway before the sync's answer, and its count travels
//! after that answer, in the same order per pair, applied by the gateway as an AcqRel
//! RMW. The adds continue one release sequence, which the leader's Acquire load of a
//! full count reads: every access to the node's memory happens before it is returned.
//!
//! Only the leader returns the memory, and only from its own list, so no stale entry
//! can read a recycled count. Not returned: parts in MPBs (every core's replica of the
//! symmetric MPB allocator must give a region back at the same point of the job, which a
//! drop cannot provide), and a node's memory whose leader leaves first; both last until
//! the job ends, and the leader's leftovers are in its exit report
//! (`CoreContext::orphaned`).

use std::mem::offset_of;

use crate::protocol::atomic::op::{ElemKind, Op};
use crate::protocol::last_out::count_out;
use crate::rma::control::TeamCtl;
use crate::rma::window::Window;
use crate::segment::reclaim::NodeOrphan;
use crate::segment::view::Plain;

use super::wire::Header;

impl<T: Plain> Window<'_, T> {
    /// [`Drop`] of a window across nodes that was not freed (module docs).
    pub(crate) fn drop_across(&self) {
        let remote = self.remote.as_ref().expect("a window across nodes");
        self.acc_take();
        // Failures here mean the job is aborting, when nothing needs the memory.
        if self.remote_sync_all().is_err() {
            return;
        }
        let left = self.ctl.team + offset_of!(TeamCtl, left);
        for &leader in remote.leaders.iter().filter(|&&l| !remote.is_local(l)) {
            let head = Header::accumulate(remote.meta[leader as usize] + left, ElemKind::U32, Op::Sum, 1);
            let mut before = [0u8; 4];
            if self.request(leader, head, &[&1u32.to_le_bytes()], Some(&mut before)).is_err() {
                return;
            }
        }
        count_out(&self.team_ctl().left, self.team.size());
        if remote.leads {
            let orphan = NodeOrphan { left: self.meta_abs.offset + left, members: self.team.size(), heap: self.node_heap() };
            self.ctx.reclaim_on_node(Some(orphan));
        }
    }
}
