//! Nonblocking collectives on intercommunicators (MPI-3.1 section 5.2.2), on the engine
//! of [`super::machine`]: the protocol, one state machine for every call
//! ([`super::inter_args`] turns each call's arguments into a `Plan`).
//!
//! Each group's leader (local rank 0) is the only process that talks to the other group
//! (but for a root, `MPI_ROOT`, which talks to the other group's leader itself). An
//! operation is at most three steps, each optional:
//!
//! 1. up: the local members' inputs go to the leader (`Fold`, phase `PHASE_GATHER`),
//!    folded in rank order (reductions: the blocking calls' combination, so results
//!    agree bit for bit) or concatenated in rank order; alltoall's leader then regroups
//!    its members' lists by destination (`by_destination`). The leader sends the
//!    result to the other group's leader or to the root (phase [`PHASE_REMOTE`]);
//! 2. across: the leader (or the root) receives the other side's one message, of a
//!    length both ends know from their arguments (a receive expects it exactly: the
//!    groups' type signatures differing is `MPI_ERR_TRUNCATE` where it lands);
//! 3. down: the leader hands what came to its members: all of it over the binomial
//!    tree (`Tree`, phase `PHASE_TREE`: barrier, bcast, allreduce, allgather), or to
//!    each member its part directly (phase `PHASE_SPREAD`: scatter, alltoall,
//!    reduce-scatter);
//!    or nothing (what came is the receiver's result: a root's reduce or gather).
//!
//! So barrier is up (empty inputs), across (empty), down; bcast is the root's message
//! to the other leader, and down; reduce and gather are up and across to the root;
//! scatter is the root's message, and down; allreduce, allgather, alltoall and the
//! reduce-scatters are all three (a reduce-scatter's up is a fold of the whole inputs,
//! whose result the other group's leader cuts into its members' blocks). `MPI_PROC_NULL`'s processes take no part (their request completes at once).
//!
//! Invariants: every process of both groups takes the operation's sequence number
//! (MPI has them start their collectives on the intercommunicator in one order), which
//! skips the number 0 that the blocking intercommunicator collectives' tags use
//! (`CommObj::next_icoll_tag`). Each (source, tag) pair carries at most one message per
//! operation. A leader sends up-results across only once its group's inputs are all in,
//! and hands down only once the other side's message is in, so a member's request
//! completes only after every process of the other group has entered the call (for
//! barrier, allreduce, allgather, alltoall), as MPI's semantics need.

use crate::comm::CommObj;
use crate::error::MpiResult;
use crate::ffi::pending::UserBuffer;
use crate::ordered::Combine;
use crate::request::Pending;

use super::machine::{Incoming, PHASE_REMOTE, PHASE_SPREAD, Protocol, Wire, start};
use super::tree::{Fold, Tree};

/// How the other side's data reaches this group's members (module docs, step 3).
pub(super) enum DownPlan {
    /// It does not: the receiver keeps it (a root), or nothing comes.
    Here,
    /// All of it, this many bytes, to every member over the tree.
    Tree(usize),
    /// To each member its part, in rank order: their lengths, by rank.
    Deal(Vec<usize>),
}

/// A process's packed input, and the op that folds the inputs (`None`: concatenate).
pub(super) type Input = (Vec<u8>, Option<Box<dyn Combine + Send>>);

/// One process's part in an intercommunicator collective, as its arguments give it.
pub(super) struct Plan {
    /// Step 1: this process's packed input, and the op (`None`: concatenate).
    pub up: Option<Input>,
    /// Step 1 at the leader: the remote rank its group's result goes to.
    pub to_remote: Option<u32>,
    /// Alltoall: the up result is regrouped for this many remote ranks.
    pub regroup: Option<usize>,
    /// A root's message, sent at the start: (remote rank, packed data).
    pub direct: Option<(u32, Vec<u8>)>,
    /// Step 2 (at a leader or a root): the remote rank heard from, and the length.
    pub from_remote: Option<(u32, usize)>,
    /// Step 3.
    pub down: DownPlan,
    /// Where this process's result goes.
    pub target: Option<UserBuffer>,
}

impl Plan {
    /// No part at all (`MPI_PROC_NULL`); the calls fill in the rest.
    pub fn nothing() -> Plan {
        Plan {
            up: None,
            to_remote: None,
            regroup: None,
            direct: None,
            from_remote: None,
            down: DownPlan::Here,
            target: None,
        }
    }
}

/// Step 3 in flight.
enum Down {
    Here,
    Tree(Tree),
    /// At the leader, the members' parts' lengths; elsewhere the leader's message.
    Deal(Vec<usize>, Option<Incoming>),
}

/// The operation in flight at this process.
struct Inter {
    fold: Option<Fold>,
    to_remote: Option<u32>,
    regroup: Option<usize>,
    remote: Option<Incoming>,
    down: Down,
    target: Option<UserBuffer>,
}

impl Inter {
    fn start(w: &mut Wire, plan: Plan) -> MpiResult<Inter> {
        // Receives first, so that nothing waits in the unexpected queue for long.
        let remote = match plan.from_remote {
            Some((from, len)) => Some(w.post_remote(from, PHASE_REMOTE, len)?),
            None => None,
        };
        let down = match plan.down {
            DownPlan::Here => Down::Here,
            DownPlan::Tree(len) => Down::Tree(Tree::start(w, 0, len, None)?),
            DownPlan::Deal(parts) if w.rank == 0 => Down::Deal(parts, None),
            DownPlan::Deal(parts) => {
                let mine = w.post(0, PHASE_SPREAD, parts[w.rank as usize])?;
                Down::Deal(parts, Some(mine))
            }
        };
        let fold = match plan.up {
            Some((mine, combine)) => Some(Fold::start(w, 0, mine, combine)?),
            None => None,
        };
        if let Some((to, data)) = plan.direct {
            w.send_remote(to, PHASE_REMOTE, &data)?;
        }
        let (to_remote, regroup, target) = (plan.to_remote, plan.regroup, plan.target);
        Ok(Inter { fold, to_remote, regroup, remote, down, target })
    }
}

/// Whether the message in `slot` (if any) is in.
fn arrived(slot: &mut Option<Incoming>) -> MpiResult<bool> {
    slot.as_mut().map_or(Ok(true), Incoming::arrived)
}

impl Protocol for Inter {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        if let Some(fold) = &mut self.fold {
            if !fold.advance(w)? {
                return Ok(false);
            }
            // The leader's result (nothing elsewhere); the fold is over either way.
            if let (Some(ours), Some(to)) = (fold.result.take(), self.to_remote) {
                let ours = match self.regroup {
                    Some(rn) => by_destination(&ours, w.size() as usize, rn),
                    None => ours,
                };
                w.send_remote(to, PHASE_REMOTE, &ours)?;
            }
            self.fold = None;
        }
        let result = match &mut self.down {
            Down::Here => {
                if !arrived(&mut self.remote)? {
                    return Ok(false);
                }
                self.remote.take().map(|i| i.buf)
            }
            Down::Tree(tree) => {
                if tree.data.is_none() && self.remote.is_some() {
                    if !arrived(&mut self.remote)? {
                        return Ok(false);
                    }
                    tree.data = self.remote.take().map(|i| i.buf);
                }
                let Some(data) = tree.advance(w)? else { return Ok(false) };
                Some(data.to_vec())
            }
            Down::Deal(parts, from_leader) => {
                if let Some(i) = from_leader {
                    if !i.arrived()? {
                        return Ok(false);
                    }
                    from_leader.take().map(|i| i.buf)
                } else {
                    if !arrived(&mut self.remote)? {
                        return Ok(false);
                    }
                    // The remote message was exactly the parts' sum long.
                    let all = self.remote.take().map(|i| i.buf).unwrap_or_default();
                    let mut at = parts[0];
                    for (r, &len) in parts.iter().enumerate().skip(1) {
                        w.send(r as u32, PHASE_SPREAD, &all[at..at + len])?;
                        at += len;
                    }
                    Some(all[..parts[0]].to_vec())
                }
            }
        };
        if let (Some(target), Some(data)) = (&self.target, result) {
            target.unpack(&data)?;
        }
        Ok(true)
    }
}

/// Alltoall's regrouping at a leader: `lists` holds `n` local members' lists (rank
/// order) of `rn` equal blocks each; the result holds, for each remote rank `j` in
/// turn, block `j` of every local member's list, in local rank order: exactly what
/// remote rank `j` receives, in its receive buffer's order.
fn by_destination(lists: &[u8], n: usize, rn: usize) -> Vec<u8> {
    let b = lists.len() / (n * rn).max(1);
    let mut out = Vec::with_capacity(lists.len());
    for j in 0..rn {
        for i in 0..n {
            let at = (i * rn + j) * b;
            out.extend_from_slice(&lists[at..at + b]);
        }
    }
    out
}

/// Starts the intercommunicator collective `plan` on `c` (module docs).
pub(super) fn run(c: &CommObj, plan: Plan) -> MpiResult<Box<dyn Pending>> {
    start(c, |w| Inter::start(w, plan))
}

#[cfg(test)]
mod tests {
    use super::by_destination;

    #[test]
    fn regrouping_hands_each_remote_rank_its_blocks_in_local_rank_order() {
        // Two local members, three remote ranks, blocks of one byte: member i's block
        // j is 10 * i + j.
        let lists = [0, 1, 2, 10, 11, 12];
        assert_eq!(by_destination(&lists, 2, 3), vec![0, 10, 1, 11, 2, 12]);
    }
}
