//! Intercommunicators (MPI-3.1 section 6.6): creation, duplication and merging (their
//! splits are `crate::intersplit`).
//!
//! An intercommunicator is a [`CommObj`] whose `members` and sccemu communicator are
//! its local group's and whose `peers` are its remote group (`crate::comm`). Its context
//! id must be free on every process of *both* groups, so that its messages match no
//! other communicator's anywhere; each group learns the other's wishes through its
//! leader (local rank 0, or `local_leader` at creation), the only process that talks
//! to the other group. Every protocol here has the same three steps:
//!
//! 1. the local group ORs its members' context bitmaps (`comm::context_bits`) in one
//!    `BitOr` allreduce over its own communicator (`local_bits`). The same allreduce
//!    checks that every member passed the same value (`local_leader`): it ORs the value
//!    and its complement too, and values that differ leave a bit set in both;
//! 2. the two leaders swap their group's bitmap and whatever else the operation needs
//!    ([`swap`]: a nonblocking send, a blocking receive, then the send's completion, so
//!    neither waits on the other's send whatever the channel buffers). Each ORs the
//!    two bitmaps and takes the lowest id free in both (`comm::lowest_free`): the same
//!    id on both sides, since both compute it from the same two bitmaps;
//! 3. each leader broadcasts the outcome over its local group: the error class (0
//!    for none), the id, and what else the members need. So every member of a group
//!    returns the same error, and an error found by a comparison both leaders make
//!    (overlapping groups, no free id) reaches both groups.
//!
//! A group whose members passed different `local_leader`s fails, and its member named
//! by the lowest of them still swaps with the remote leader, its ask carrying the error
//! class, so that the remote group fails too instead of waiting for a leader. A leader
//! whose own `tag`, `peer_comm` or `remote_leader` is bad cannot name the other leader
//! or match its message, so that group alone gets the error: the other group's leader
//! waits, as MPI offers no way out there.
//!
//! Why the id stays apart from every live communicator of every member is
//! `crate::create_group`'s argument with "the leader" read as "the two leaders": every
//! member's bitmap is read in this call, before the id is chosen, and the id is
//! registered before the call returns.
//!
//! `MPI_Intercomm_create`'s leaders talk over `peer_comm`'s processes in a context of
//! their own (`comm::intercomm_tag`, reserved at `MPI_Init`), with the user's tag, so
//! that no user receive on `peer_comm` (not even `MPI_ANY_TAG`) takes their messages;
//! creations over one pair of leaders pair up by order, as messages with one tag
//! between two processes arrive in the order sent. Later operations on the
//! intercommunicator (this module's and `crate::intercoll`'s) send in its own hidden
//! context (`CommObj::inter_tag`), one phase per operation.
//!
//! The local group's sccemu communicator of a new intercommunicator is split off the
//! old local communicator (a collective the local group makes anyway); the merged
//! intracommunicator's spans both groups, so its first rank allocates the area and the
//! leaders carry the grant (`sccemu::Comm::grant_area`, `from_grant`), as
//! `crate::create_group` does.

use std::ffi::c_int;

use sccemu::coll::Grant;
use sccemu::{Comm, Op, Source, TagMatch};

use crate::comm::{self, CONTEXT_WORDS, CommObj, ContextBits, TAG_UB, coll_error};
use crate::create_group::{from_bytes, to_bytes};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::p2p::{self, send_error};
use crate::state::mpi;

/// The phases of an intercommunicator's own messages (`CommObj::inter_tag`).
pub mod phase {
    /// `MPI_Comm_dup`'s swap.
    pub const DUP: u32 = 0;
    /// `MPI_Intercomm_merge`'s swap.
    pub const MERGE: u32 = 1;
    /// `MPI_Intercomm_merge`'s grant, from the first group's leader to the other.
    pub const MERGE_GRANT: u32 = 2;
    /// `MPI_Barrier`.
    pub const BARRIER: u32 = 3;
    /// `MPI_Bcast`.
    pub const BCAST: u32 = 4;
    /// `MPI_Allreduce`.
    pub const ALLREDUCE: u32 = 5;
    /// `MPI_Allgather`.
    pub const ALLGATHER: u32 = 6;
    /// `MPI_Reduce`.
    pub const REDUCE: u32 = 7;
    /// `MPI_Gather` and `MPI_Gatherv`.
    pub const GATHER: u32 = 8;
    /// `MPI_Scatter` and `MPI_Scatterv`.
    pub const SCATTER: u32 = 9;
    /// `MPI_Allgatherv`.
    pub const ALLGATHERV: u32 = 10;
    /// `MPI_Alltoall` and `MPI_Alltoallv`.
    pub const ALLTOALL: u32 = 11;
    /// `MPI_Reduce_scatter_block` and `MPI_Reduce_scatter`.
    pub const REDUCE_SCATTER: u32 = 12;
    /// `MPI_Comm_split` and `MPI_Comm_create` of an intercommunicator
    /// (`crate::intersplit`).
    pub const SPLIT: u32 = 13;
}

/// Sends `mine` to world rank `other` and receives its message with the same `wire`
/// into `theirs`: the received length. Nonblocking send first, so that two leaders
/// swapping at once never wait on each other's send. `comm` only names the source of a
/// message too long for `theirs` (received whole and reported as `MPI_ERR_TRUNCATE`).
pub fn swap(comm: &CommObj, other: u32, wire: u32, mine: &[u8], theirs: &mut [u8]) -> MpiResult<usize> {
    let core = mpi()?.core;
    let send = core.isend(other, wire, mine).map_err(send_error)?;
    let got = p2p::recv(comm, Source::Rank(other), TagMatch::Tag(wire), theirs);
    let sent = p2p::await_send(send);
    let got = got?;
    sent?;
    Ok(got.bytes)
}

/// [`swap`] of exactly `theirs.len()` bytes: anything else is `MPI_ERR_TRUNCATE`, the
/// two groups' type signatures differing.
pub fn swap_exact(comm: &CommObj, phase: u32, mine: &[u8], theirs: &mut [u8]) -> MpiResult<()> {
    let got = swap(comm, comm.peers[0], comm.inter_tag(phase), mine, theirs)?;
    if got != theirs.len() {
        return fail(
            class::TRUNCATE,
            format!("the remote group sent {got} bytes where {} were expected", theirs.len()),
        );
    }
    Ok(())
}

/// Step 1 (module docs), collective over the local group `local`: the OR of its
/// members' context bitmaps, and whether every member passed the same `word`.
pub(crate) fn local_bits(local: &CommObj, word: u64) -> MpiResult<(ContextBits, bool)> {
    let mut mine = Vec::with_capacity(CONTEXT_WORDS + 2);
    mine.extend(comm::context_bits());
    mine.extend([word, !word]);
    let mut all = vec![0u64; mine.len()];
    local.coll().allreduce(&mine, &mut all, Op::BitOr).map_err(coll_error)?;
    let same = all[CONTEXT_WORDS] & all[CONTEXT_WORDS + 1] == 0;
    let bits = all[..CONTEXT_WORDS].try_into().expect("a bitmap's words");
    Ok((bits, same))
}

/// The lowest id free in both bitmaps.
pub(crate) fn lowest_free_in(mut ours: ContextBits, theirs: &[u64]) -> MpiResult<u32> {
    for (word, t) in ours.iter_mut().zip(theirs) {
        *word |= t;
    }
    comm::lowest_free(&ours)
}

/// Step 3 (module docs), collective over `local`: the leader `root`'s outcome (`Ok`:
/// `words`, which its caller fills) on every member. The leader keeps its own error,
/// with its message; the others learn the class.
pub(crate) fn share<const N: usize>(
    local: &CommObj,
    root: u32,
    outcome: MpiResult<[u64; N]>,
) -> MpiResult<[u64; N]> {
    let mut words = vec![0u64; N + 1];
    match &outcome {
        Ok(w) => words[1..].copy_from_slice(w),
        Err(e) => words[0] = e.class as u64,
    }
    local.coll().bcast(root, &mut words).map_err(coll_error)?;
    match (outcome, words[0]) {
        (Err(e), _) if local.rank == root => Err(e),
        (_, 0) => Ok(words[1..].try_into().expect("N words")),
        (_, failed) => fail(failed as c_int, "the group's leader failed the call (see its error)"),
    }
}

/// `MPI_Intercomm_create`, collective over `local` (an intracommunicator): the new
/// intercommunicator's handle. `peer`, `remote_leader` and `tag` matter at the leader
/// only (MPI's rule), which checks them; an error there reaches its group alone, as
/// the leader cannot reach the other. Errors found once it can (members that disagree
/// on the leader, overlapping groups, no free id) reach both groups.
pub fn create(
    local: &CommObj,
    leader: c_int,
    peer: c_int,
    remote_leader: c_int,
    tag: c_int,
) -> MpiResult<c_int> {
    let (bits, same) = local_bits(local, u64::from(leader as u32))?;
    if !same {
        return disagree(local, bits, leader, (peer, remote_leader, tag));
    }
    let leader = match u32::try_from(leader) {
        Ok(l) if l < local.size() => l,
        _ => {
            return fail(
                class::RANK,
                format!("local_leader {leader} is not in a communicator of {}", local.size()),
            );
        }
    };
    let mut remote = Vec::new();
    let outcome = if local.rank == leader {
        lead_create(local, bits, (peer, remote_leader, tag), None).map(|(context, group)| {
            remote = group;
            [u64::from(context), remote.len() as u64]
        })
    } else {
        Ok([0; 2])
    };
    let [context, remote_size] = share(local, leader, outcome)?;
    remote.resize(remote_size as usize, 0);
    local.coll().bcast(leader, &mut remote).map_err(coll_error)?;
    let child = local.coll().split(Some(0), local.rank as i32).map_err(coll_error)?;
    let child = child.expect("every member has colour 0");
    comm::adopt_inter(context as u32, child, remote.iter().map(|&w| w as u32).collect())
}

/// `MPI_Intercomm_create` where the local group's members passed different
/// `local_leader`s (`mine` here): an error on every member, and, so that the remote
/// group learns it instead of waiting for a leader, the member that the lowest valid
/// argument names swaps an ask that carries the error with the remote leader its own
/// arguments name (the remote group then fails too; if it waits on another member, it
/// waits still: MPI gives no way to tell which member it expects).
fn disagree(
    local: &CommObj,
    bits: ContextBits,
    mine: c_int,
    remote: (c_int, c_int, c_int),
) -> MpiResult<c_int> {
    let named = match u32::try_from(mine) {
        Ok(l) if l < local.size() => u64::from(l),
        _ => u64::MAX,
    };
    let mut lowest = [0u64];
    local.coll().allreduce(&[named], &mut lowest, Op::Min).map_err(coll_error)?;
    let error =
        MpiError::new(class::ARG, "the members of the local group passed different local_leader arguments");
    if u64::from(local.rank) == lowest[0] {
        // Its own error is the point; the swap's outcome only tells whether the remote
        // leader was reached.
        let _ = lead_create(local, bits, remote, Some(error.clone()));
    }
    Err(error)
}

/// The creating leader's part: checks its own arguments, swaps its group (error class,
/// size, bitmap, members) with the remote leader, checks that the groups are disjoint
/// and chooses the id; the id and the remote group. `failed`, an error the local group
/// found, travels in the ask instead (and is returned): the remote leader fails with
/// its class, and the remote ask is taken, so none is left queued.
fn lead_create(
    local: &CommObj,
    bits: ContextBits,
    (peer, remote_leader, tag): (c_int, c_int, c_int),
    failed: Option<MpiError>,
) -> MpiResult<(u32, Vec<u64>)> {
    if !(0..=TAG_UB).contains(&tag) {
        return fail(class::TAG, format!("tag {tag} is outside 0..={TAG_UB}"));
    }
    let other = comm::lookup(peer)?.world_rank(remote_leader)?;
    if local.members.contains(&other) {
        return fail(
            class::COMM,
            format!("the remote leader (world rank {other}) is in the local group: the groups overlap"),
        );
    }
    let mut ask = Vec::with_capacity(2 + CONTEXT_WORDS + local.members.len());
    ask.push(failed.as_ref().map_or(0, |e| e.class as u64));
    ask.push(local.size() as u64);
    ask.extend(bits);
    ask.extend(local.members.iter().map(|&w| u64::from(w)));
    let most = 2 + CONTEXT_WORDS + mpi()?.core.size() as usize;
    let mut theirs = vec![0u8; most * 8];
    let got = swap(local, other, comm::intercomm_tag(tag), &to_bytes(&ask), &mut theirs)?;
    if let Some(e) = failed {
        return Err(e);
    }
    let theirs: Vec<u64> = from_bytes(&theirs[..got]).collect();
    if theirs.len() < 2 || theirs[1].checked_add(2 + CONTEXT_WORDS as u64) != Some(theirs.len() as u64) {
        return fail(class::INTERN, format!("a leader's message of {got} bytes from world rank {other}"));
    }
    if theirs[0] != 0 {
        return fail(theirs[0] as c_int, "the remote group failed the creation (see its leader's error)");
    }
    let remote = theirs[2 + CONTEXT_WORDS..].to_vec();
    if let Some(w) = remote.iter().find(|&&w| local.members.contains(&(w as u32))) {
        return fail(class::COMM, format!("world rank {w} is in both groups: the groups overlap"));
    }
    Ok((lowest_free_in(bits, &theirs[2..2 + CONTEXT_WORDS])?, remote))
}

/// Steps 1 to 3 (module docs) on the intercommunicator `ic`, with `extra` from each
/// leader: the id free on both groups, the local leader's `extra` and the remote
/// leader's, on every member.
fn agree(ic: &CommObj, phase: u32, extra: u64) -> MpiResult<(u32, u64, u64)> {
    let (bits, _) = local_bits(ic, 0)?;
    let outcome = if ic.rank == 0 {
        let mut mine = vec![extra];
        mine.extend(bits);
        let mut theirs = vec![0u8; mine.len() * 8];
        swap_exact(ic, phase, &to_bytes(&mine), &mut theirs).and_then(|()| {
            let theirs: Vec<u64> = from_bytes(&theirs).collect();
            Ok([u64::from(lowest_free_in(bits, &theirs[1..])?), extra, theirs[0]])
        })
    } else {
        Ok([0; 3])
    };
    let [context, ours, theirs] = share(ic, 0, outcome)?;
    Ok((context as u32, ours, theirs))
}

/// `MPI_Comm_dup` of an intercommunicator, collective over both groups: same groups,
/// a new id, a new local communicator.
pub fn dup(ic: &CommObj) -> MpiResult<c_int> {
    let (context, _, _) = agree(ic, phase::DUP, 0)?;
    let child = ic.coll().split(Some(0), ic.rank as i32).map_err(coll_error)?;
    comm::adopt_inter(context, child.expect("every member has colour 0"), ic.peers.clone())
}

/// `MPI_Intercomm_merge`, collective over both groups: the intracommunicator of both,
/// the group whose leader passed `high` false first; if both leaders passed the same,
/// the group of the lower leader world rank first. The leaders' `high` decide for their
/// groups, so every member orders alike even if a group's members disagree.
pub fn merge(ic: &CommObj, high: bool) -> MpiResult<c_int> {
    let (context, ours, theirs) = agree(ic, phase::MERGE, u64::from(high))?;
    let we_first = (ours, ic.members[0]) < (theirs, ic.peers[0]);
    let (first, second) = if we_first { (&ic.members, &ic.peers) } else { (&ic.peers, &ic.members) };
    let merged: Vec<u32> = first.iter().chain(second).copied().collect();
    let core = mpi()?.core;
    if core.context().spans_nodes() {
        // No grant across nodes (`create_group::build`): both groups, having agreed
        // above, build the merged communicator over messages among its members.
        let child = crate::create_group::build(core.context(), &merged, 0)?;
        return comm::adopt(context, child);
    }
    let wire = ic.inter_tag(phase::MERGE_GRANT);
    // The merged rank 0, the first group's leader, allocates; it tells the other leader,
    // and each leader its group. An allocation failure travels in the grant.
    let outcome = match (ic.rank, we_first) {
        (0, true) => {
            let grant = Comm::grant_area(core.context(), merged.len()).word();
            core.send(ic.peers[0], wire, &grant.to_le_bytes()).map_err(send_error).map(|()| [grant])
        }
        (0, false) => {
            let mut word = [0u8; 8];
            let got = p2p::recv(ic, Source::Rank(ic.peers[0]), TagMatch::Tag(wire), &mut word)?;
            if got.bytes == 8 {
                Ok([u64::from_le_bytes(word)])
            } else {
                Err(MpiError::new(class::INTERN, format!("a merge grant of {} bytes", got.bytes)))
            }
        }
        _ => Ok([0]),
    };
    let [grant] = share(ic, 0, outcome)?;
    let child = Comm::from_grant(core.context(), &merged, Grant::from_word(grant)).map_err(coll_error)?;
    comm::adopt(context, child)
}
