//! `MPI_Comm_create_group`: a communicator over the members of a group, built by those
//! members alone; the parent's other processes do not call it.
//!
//! `MPI_Comm_create` and `MPI_Comm_split` agree on a context id and the shared state
//! over the whole parent (`comm::split`). Here only the group's members take part, by
//! point-to-point messages between them, with the leader the group's first member
//! (rank 0 of the new communicator):
//!
//! 1. every member checks its arguments alone; an error returns before any message;
//! 2. every other member sends the leader an *ask*: the parent's context id, the
//!    group's size and fingerprint, and its context bitmap as it is now
//!    (`comm::context_bits`), then waits for the leader's *answer*;
//! 3. the leader receives the asks in group order, ORs the bitmaps into its own, takes
//!    the lowest id clear everywhere, allocates and zeroes the communicator's area
//!    (`sccemu::Comm::grant_area`), and answers every member: the error class (0 for
//!    none), the id and the area's grant word. An ask whose parent or group differs from
//!    the leader's, or no free id, makes every answer the same error;
//! 4. every member builds its `sccemu::Comm` from the group and the grant
//!    (`sccemu::Comm::from_grant`; the answer's arrival orders the leader's zeroing of
//!    the area before the member's use of it) and registers it with the id. Across
//!    nodes, where no heap is shared, the members build it over messages instead
//!    ([`build`]).
//!
//! The messages go between the members' world ranks with wire tag
//! `comm::create_group_tag(tag)`: the user's tag in a context that no communicator gets
//! (`comm::CREATE_GROUP_CONTEXT`), so they never match a user's receive, not even an
//! `MPI_ANY_TAG` one, which matches its own communicator's context only. Disjoint groups
//! may create at once with one tag: their messages go between different processes.
//! Creations over overlapping groups in turn pair up by order, since messages between
//! two processes with one tag arrive in the order sent. Creations from two threads of a
//! process at once must differ in tag: the parent's context travels in the ask and is
//! checked, but it cannot steer which receive a message matches.
//!
//! Why the id stays apart from every other communicator of every member (`comm`'s
//! invariant: no two live communicators that share a process share an id):
//! - a process's bitmap changes only in its own calls: it gains an id when a
//!   communicator is registered there and loses it at free;
//! - every member reads its bitmap in this call before its ask (the leader before it
//!   chooses) and registers the id before it returns; meanwhile the calling thread
//!   creates and frees no other communicator. So the id is clear on every member, and
//!   so different from every live communicator of every member;
//! - every later creation that includes a member, over the whole parent
//!   (`agree_context`'s allreduce ORs every parent member's bitmap) or over another
//!   group, ORs in that member's bitmap, which holds the id from registration to free.
//!   So no communicator agreed later among overlapping members takes it while it lives;
//! - creations with no member in common may choose the same id, as the siblings of a
//!   split do: they share no process, so no message of one reaches a receive of the
//!   other. The parent's other processes need not be asked for that reason too.
//!
//! As for every creation here, two threads of one process creating communicators at
//! once could both be handed an id that is free in their own snapshot.

use std::ffi::c_int;

use sccemu::coll::Grant;
use sccemu::{Comm, Source, TagMatch};

use crate::comm::{self, CONTEXT_WORDS, CommObj, ContextBits, TAG_UB};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::p2p::{recv_error, send_error};
use crate::state::mpi;

/// Words of an ask ahead of the bitmap: parent context, group size, group fingerprint.
const ASK_HEAD: usize = 3;

/// The communicator over `group` (world ranks, every one a member of `parent`),
/// created by the group's members alone with `tag` (module docs): its handle.
pub fn create_group(parent: &CommObj, group: &[u32], tag: c_int) -> MpiResult<c_int> {
    if !(0..=TAG_UB).contains(&tag) {
        return fail(class::TAG, format!("tag {tag} is outside 0..={TAG_UB}"));
    }
    if let Some(w) = group.iter().find(|&&w| parent.rank_of_world(w).is_none()) {
        return fail(class::GROUP, format!("world rank {w} of the group is not in the communicator"));
    }
    let me = parent.members[parent.rank as usize];
    if !group.contains(&me) {
        return fail(class::GROUP, "the calling process is not a member of the group");
    }
    let core = mpi()?.core;
    let wire = comm::create_group_tag(tag);
    let head = [u64::from(parent.context), group.len() as u64, fingerprint(group)];
    let answer = if group[0] == me {
        lead(parent, group, wire, head)?
    } else {
        let mut ask = Vec::with_capacity(ASK_HEAD + CONTEXT_WORDS);
        ask.extend(head);
        ask.extend(comm::context_bits());
        core.send(group[0], wire, &to_bytes(&ask)).map_err(send_error)?;
        let mut answer = [0u64; 3];
        receive(group[0], wire, &mut answer)?;
        answer
    };
    let [failed, context, grant] = answer;
    if failed != 0 {
        return fail(failed as c_int, "the group's leader refused the creation (see its error)");
    }
    let child = build(core.context(), group, grant)?;
    comm::adopt(context as u32, child)
}

/// Every member's sccemu communicator over `members` (world ranks, in rank order): from
/// the leader's grant on one node; across nodes, where there is no shared heap for a
/// grant (the leader's then carries `AcrossNodes`, unread), over messages, its
/// collective id agreed among the members alone (`sccemu::Comm::from_members`), which
/// all reach this after the leader's answer.
pub fn build(
    ctx: &'static sccemu::segment::CoreContext,
    members: &[u32],
    grant: u64,
) -> MpiResult<Comm<'static>> {
    if ctx.spans_nodes() {
        return Comm::from_members(ctx, members).map_err(comm::coll_error);
    }
    Comm::from_grant(ctx, members, Grant::from_word(grant)).map_err(comm::coll_error)
}

/// The leader's part: gathers the asks, chooses, allocates, answers every member; its
/// own answer.
fn lead(parent: &CommObj, group: &[u32], wire: u32, head: [u64; ASK_HEAD]) -> MpiResult<[u64; 3]> {
    let core = mpi()?.core;
    let mut all: ContextBits = comm::context_bits();
    let mut refused = None;
    let mut ask = vec![0u64; ASK_HEAD + CONTEXT_WORDS];
    for &member in &group[1..] {
        receive(member, wire, &mut ask)?;
        if ask[..ASK_HEAD] != head {
            // Every ask is still received, so that none is left queued for a later call.
            refused.get_or_insert_with(|| {
                MpiError::new(
                    class::GROUP,
                    format!(
                        "world rank {member} passed another communicator or group (parent context {} \
                         and {} members, here {} and {})",
                        ask[0], ask[1], parent.context, head[1]
                    ),
                )
            });
        }
        for (word, theirs) in all.iter_mut().zip(&ask[ASK_HEAD..]) {
            *word |= theirs;
        }
    }
    let chosen = match refused {
        Some(e) => Err(e),
        None => comm::lowest_free(&all),
    };
    let answer = match &chosen {
        Ok(context) => [0, u64::from(*context), Comm::grant_area(core.context(), group.len()).word()],
        Err(e) => [e.class as u64, 0, 0],
    };
    for &member in &group[1..] {
        core.send(member, wire, &to_bytes(&answer)).map_err(send_error)?;
    }
    chosen.map(|_| answer)
}

/// Receives exactly `words.len()` words from world rank `from` with `wire`.
fn receive(from: u32, wire: u32, words: &mut [u64]) -> MpiResult<()> {
    let mut bytes = vec![0u8; words.len() * 8];
    let status = mpi()?.core.recv(Source::Rank(from), TagMatch::Tag(wire), &mut bytes).map_err(recv_error)?;
    if status.len != bytes.len() {
        return fail(class::INTERN, format!("a group-creation message of {} bytes from {from}", status.len));
    }
    for (word, read) in words.iter_mut().zip(from_bytes(&bytes)) {
        *word = read;
    }
    Ok(())
}

/// Words as the bytes of a message (little-endian), for the creation protocols' messages
/// (here and `crate::intercomm`).
pub fn to_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The words of a message's bytes ([`to_bytes`]' inverse; a trailing partial word is
/// dropped).
pub fn from_bytes(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().expect("eight bytes")))
}

/// FNV-1a over the group's world ranks: members that passed different groups (an
/// erroneous program) differ here, almost surely.
fn fingerprint(group: &[u32]) -> u64 {
    group
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}
