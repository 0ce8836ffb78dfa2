//! Communicators whose members span nodes: every collective over two-sided messages.
//!
//! A job over several nodes has no heap that all its cores share
//! (`AllocError::AcrossNodes`), so a communicator created there ([`Comm::world`], a
//! `split` of one) holds no area and no staging but a [`Link`]: this core's message
//! endpoint and the communicator's *context id*. Its collectives run over the `p2p`
//! layer's messages, which the node gateways carry across (`algorithms`, `reduce`). The
//! choice is made once, when the world is created (`CoreContext::spans_nodes`), and
//! inherited by every communicator split from it; on one node nothing here runs.
//!
//! Isolation. Every message of a communicator's collectives carries the tag
//! [`RESERVED_TAGS`]` | context << 4 | phase` (phase: [`AGREE`] for the argument
//! agreement, [`DATA`] for the rest). Those tags are the library's own (`p2p::endpoint`):
//! `Core`'s sends refuse them and its receives, `ANY_TAG` and masked ones included,
//! never match them, so collective and user traffic never meet, on any thread.
//! Within the library:
//! - every receive here names its source and exact tag; messages of one sender with
//!   one tag are never overtaken;
//! - every member calls a communicator's collectives in the same order (as MPI
//!   requires), and within a call each member receives from a given peer in the order
//!   that peer sent to it (the algorithms' steps run in the same order everywhere);
//! - a call ends on a member only once it has received everything sent to it in that
//!   call, errors included (the agreement completes before anyone returns one);
//!
//! so each message is taken by the receive of the call and step it was sent for, and
//! nothing of a call is left over for the next. Communicators that share a process
//! have different context ids (below), so their calls may interleave in any order.
//!
//! Context ids (11 bits; 0 is kept for creating worlds, and the communicators that their
//! members create alone, `Comm::from_members`). Each process keeps the set of
//! ids its live communicators over messages hold ([`IN_USE`]). Creating one ORs the
//! members' sets together (an allreduce over the parent, or over every rank with
//! context 0 for a world) and takes the lowest id clear in the OR: every member computes
//! the same OR, so they agree without shared memory, and the id is free on each member,
//! so no two live communicators of one process share it. The siblings of one split
//! share their id: they share no process. An id comes back at `free`, `release` or the
//! drop. A freed id's old traffic cannot reach its next holder: a member frees a
//! communicator only after its last call, which ended with everything sent to it
//! received (above), and a new communicator with that id over some of the same members
//! can exist only once each of them has freed the old one. Threads of one process that
//! create communicators at once (over different parents) cannot end up sharing an id:
//! a member takes its id only if still free, and the members choose again if any could
//! not (`create`).
//!
//! Errors. Each call first agrees on its arguments as the shared-memory rounds do
//! (`collectives`): the members allgather a header each (block bytes and whether their
//! own arguments were valid), and every member returns the same error as on one node,
//! nothing moved. A dead rank fails the receives waiting for it, so every survivor's
//! call returns [`CollError::Aborted`] naming it. Checking mode does not cross nodes
//! (`sccrun` refuses `--check` with `--nodes`); virtual time does, as the messages'
//! stamps carry it (`p2p::timed`).
//!
//! Memory: no shared heap at all; per call, private buffers of at most the call's
//! data (a reduction's partial sums, a received block) and the agreement's 16 bytes per
//! member; per communicator, its member list and the link.

use std::sync::Mutex;

use crate::coll::comm::CollError;
use crate::p2p::endpoint::{Endpoint, RESERVED_TAGS, Source, TagMatch};
use crate::p2p::{ChannelUnavailable, RecvError, RequestError, SendError};
use crate::segment::CoreContext;

mod algorithms;
mod create;
mod reduce;
mod node_link;

pub(crate) use node_link::{NodeLink, window_across};

/// The phase of a call's argument agreement (module docs).
pub(crate) const AGREE: u32 = 0;
/// The phase of a call's data.
pub(crate) const DATA: u32 = 1;
/// Context ids: 11 bits, so that tags stay in the lower half of [`RESERVED_TAGS`]'s
/// range (remote memory across nodes takes the upper half: `node_link`).
const CONTEXTS: usize = 1 << 11;
/// Words of a set of context ids.
const CONTEXT_WORDS: usize = CONTEXTS / 64;

/// The context ids this process's live communicators over messages hold; id 0, that
/// of world creation, always (module docs).
static IN_USE: Mutex<[u64; CONTEXT_WORDS]> = Mutex::new(const {
    let mut set = [0; CONTEXT_WORDS];
    set[0] = 1;
    set
});

/// A communicator's messages: this core's endpoint and the communicator's context id.
pub(crate) struct Link<'c> {
    ep: Endpoint<'c>,
    context: u32,
}

impl<'c> Link<'c> {
    /// Gives the context id back to this process's set (once: `Comm::release` calls it
    /// the first time only).
    pub(crate) fn give_back(&self) {
        let mut set = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        set[self.context as usize / 64] &= !(1u64 << (self.context % 64));
    }

    /// The group of `members` (world ranks, in rank order) seen from member `rank`.
    pub(crate) fn group<'a>(&'a self, members: &'a [u32], rank: u32) -> Group<'a, 'c> {
        Group { ep: self.ep, context: self.context, members, me: rank as usize }
    }
}

/// The endpoint of the core behind `ctx`, or why it has none.
fn endpoint(ctx: &CoreContext) -> Result<Endpoint<'_>, CollError> {
    Endpoint::of(ctx).ok_or_else(|| {
        let why = ChannelUnavailable::Allocation("no two-sided channel for collectives across nodes".into());
        CollError::Messages(RequestError::Send(SendError::Unavailable(why)))
    })
}

/// A communicator's members as the algorithms see them: ranks `0..n`, this member
/// `me`, and the tags of its context.
pub(crate) struct Group<'a, 'c> {
    ep: Endpoint<'c>,
    context: u32,
    members: &'a [u32],
    me: usize,
}

impl Group<'_, '_> {
    pub(crate) fn n(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn me(&self) -> usize {
        self.me
    }

    fn tag(&self, phase: u32) -> u32 {
        RESERVED_TAGS | self.context << 4 | phase
    }

    /// Sends `data` to member `to`.
    pub(crate) fn send(&self, phase: u32, to: usize, data: &[u8]) -> Result<(), CollError> {
        self.ep.send(self.members[to], self.tag(phase), data).map_err(|e| failed(RequestError::Send(e), to))
    }

    /// Receives exactly `buf.len()` bytes from member `from`.
    pub(crate) fn recv(&self, phase: u32, from: usize, buf: &mut [u8]) -> Result<(), CollError> {
        let want = buf.len();
        let status = self.ep.recv(Source::Rank(self.members[from]), TagMatch::Tag(self.tag(phase)), buf);
        expect_whole(status.map_err(|e| failed(RequestError::Recv(e), from))?.len, want, from)
    }

    /// Sends `data` to member `to` while receiving exactly `buf.len()` bytes from member
    /// `from`: the receive is posted first, so exchanges in rings and pairs complete
    /// whatever their sizes.
    pub(crate) fn exchange(
        &self,
        phase: u32,
        (to, data): (usize, &[u8]),
        (from, buf): (usize, &mut [u8]),
    ) -> Result<(), CollError> {
        let (want, tag) = (buf.len(), self.tag(phase));
        let (dest, src) = (self.members[to], Source::Rank(self.members[from]));
        let got = self.ep.sendrecv((dest, tag, data), src, TagMatch::Tag(tag), buf);
        expect_whole(got.map_err(|e| failed(e, from))?.len, want, from)
    }
}

/// A message of another length than the step expects: the members disagree on the
/// call (a program that breaks `Comm`'s rules; the agreement catches the others).
fn expect_whole(got: usize, want: usize, from: usize) -> Result<(), CollError> {
    if got == want { Ok(()) } else { Err(CollError::Disagreement { rank: from as u32 }) }
}

/// The error of a failed message to or from member `peer`: a job abort as such (it
/// names the dead rank), a message too long for its step as `expect_whole`.
fn failed(e: RequestError, peer: usize) -> CollError {
    match e {
        RequestError::Send(SendError::Aborted(a)) | RequestError::Recv(RecvError::Aborted(a)) => CollError::Aborted(a),
        RequestError::Recv(RecvError::Truncated { .. }) => CollError::Disagreement { rank: peer as u32 },
        other => CollError::Messages(other),
    }
}
