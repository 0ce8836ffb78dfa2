//! Communicators that their members build alone, as `MPI_Comm_create_group` needs.
//!
//! [`Comm::split`] learns each new leader's area through the parent's collectives, so
//! every member of the parent takes part. A communicator over a *subset* of the cores is
//! built by its own members only, over messages of the caller's choosing (the `coll`
//! layer has no message endpoint of its own; the MPI library uses point-to-point
//! messages on the parent's processes):
//!
//! 1. the leader, the first member, allocates and zeroes the area
//!    ([`Comm::grant_area`]) and gets a [`Grant`]: one word, the area's offset or why
//!    the allocation failed;
//! 2. the leader sends that word to every other member, each of which waits for it;
//! 3. every member, the leader included, builds its communicator from the same member
//!    list and that grant ([`Comm::from_grant`]), once.
//!
//! What the caller keeps true:
//! - every member passes the same members in the same order, and the grant its first
//!   member made for that many members;
//! - the word travels by something that orders the leader's zeroing before the member's
//!   first use of the area. A message does: its payload is published with Release and
//!   received after an Acquire of its arrival, the edge that `split`'s allgather gives;
//! - each member builds exactly once per grant: the area goes back to the heap when as
//!   many drops as there are members have been counted (`memory`), so a member that
//!   never builds leaks it, and one that builds twice returns it under the others.
//!
//! Not across nodes: a subset's area would be in one node's heap only, so in a job that
//! spans nodes [`Comm::from_grant`] returns [`CollError::Alloc`] with
//! `AllocError::AcrossNodes` on every member (communicators over messages need their
//! context id agreed by the members, which this protocol's one word does not carry).
//! There the members build their communicator over messages with [`Comm::from_members`]
//! instead, which agrees on that id among them.
//!
//! A failed allocation reaches every member as the same [`CollError::Alloc`] (the grant
//! carries it), so no member holds a communicator that the others lack. Nothing here
//! blocks: the only waiting is the caller's, for the grant's message.

use crate::coll::over_p2p::Link;
use crate::p2p::{ChannelUnavailable, RequestError, SendError};
use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::alloc::heap::{decode_result, encode_result};
use crate::protocol::payload::Payload;
use crate::segment::CoreContext;

use super::memory::area_bytes;
use super::{CollError, Comm};

/// A subset communicator's area as its leader allocated it (module docs): the word to
/// send to the other members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant(u64);

impl Grant {
    /// The word that carries the grant to the other members.
    pub fn word(self) -> u64 {
        self.0
    }

    /// The grant a member received as `word`.
    pub fn from_word(word: u64) -> Grant {
        Grant(word)
    }
}

impl<'c> Comm<'c> {
    /// The leader of a communicator of `size` members, alone: allocates and zeroes its
    /// area. The grant holds the failure if the heap had no room, for every member to
    /// learn (module docs); nothing waits for another core.
    pub fn grant_area(ctx: &'c CoreContext, size: usize) -> Grant {
        // Across nodes the heap is this node's alone: nothing to allocate, and
        // `from_grant` refuses on every member.
        if ctx.spans_nodes() {
            return Grant(encode_result(&Err(AllocError::AcrossNodes)));
        }
        let area = ctx.heap_alloc_local(area_bytes(size.max(1)));
        if let Ok(area) = area {
            ctx.heap_bytes(area).zero(0, area.len);
        }
        Grant(encode_result(&area))
    }

    /// Every member of `members` (world ranks, in the new communicator's rank order),
    /// once the leader's `grant` has reached it (module docs): its communicator.
    /// Fails, without touching the grant's area, if `members` names a core outside the
    /// job or one core twice, or leaves out this core; and with the grant's allocation
    /// error on every member if the leader's allocation failed.
    pub fn from_grant(ctx: &'c CoreContext, members: &[u32], grant: Grant) -> Result<Comm<'c>, CollError> {
        if ctx.spans_nodes() {
            return Err(CollError::Alloc(AllocError::AcrossNodes));
        }
        let rank = member_rank(ctx, members)?;
        let area = decode_result(grant.0, area_bytes(members.len()))?;
        Ok(Comm::new(ctx, members.to_vec(), rank, area))
    }

    /// In a job that spans nodes, where [`Comm::from_grant`] cannot: collective over
    /// `members` alone (world ranks, in the new communicator's rank order), which all
    /// pass the same list: a communicator over messages (`coll::over_p2p`), its context
    /// id agreed among them. Cores that share several such creations (or world
    /// creations) make them in one order. Fails as `from_grant` does on a bad list,
    /// before any message; on one node with [`CollError::Messages`] (use a grant).
    pub fn from_members(ctx: &'c CoreContext, members: &[u32]) -> Result<Comm<'c>, CollError> {
        if !ctx.spans_nodes() {
            let why = ChannelUnavailable::Allocation("Comm::from_members is for jobs across nodes".into());
            return Err(CollError::Messages(RequestError::Send(SendError::Unavailable(why))));
        }
        let rank = member_rank(ctx, members)?;
        let link = Link::among(ctx, members, rank)?;
        Ok(Comm::over(ctx, members.to_vec(), rank, link))
    }
}

/// This core's rank in `members`, checked to name cores of the job, each once.
fn member_rank(ctx: &CoreContext, members: &[u32]) -> Result<u32, CollError> {
    let mut seen = vec![false; ctx.size() as usize];
    for &world in members {
        let slot = seen.get_mut(world as usize).ok_or(CollError::RankOutOfRange { rank: world, size: ctx.size() })?;
        if std::mem::replace(slot, true) {
            return Err(CollError::DuplicateMember { rank: world });
        }
    }
    let rank = members.iter().position(|&w| w == ctx.rank()).ok_or(CollError::NotAMember { rank: ctx.rank() })?;
    Ok(rank as u32)
}
