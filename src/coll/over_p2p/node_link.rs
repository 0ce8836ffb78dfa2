//! What windows, MPBs and flags across nodes need (`rma::remote::RemoteLink`): requests
//! through this node's request channel (`rma::remote::channel`), answers and collective
//! steps over this core's endpoint; and the creation of windows across nodes.
//!
//! The answers carry the tags `rma::remote::wire` reserves, above every
//! communicator's (checked below). A window's collective steps (creation, fences, free)
//! run in a context id of its own, agreed among its members when it is created as a
//! communicator's is (`create`), and given back when the window goes: so windows
//! and communicators never take each other's messages, whatever order the ranks they
//! share use them in.

use crate::coll::allgather::Allgather;
use crate::coll::comm::CollError;
use crate::p2p::endpoint::{Endpoint, RESERVED_TAGS, Source, TagMatch};
use crate::p2p::{RecvError, RequestError, SendError};
use crate::protocol::abort::{AbortCause, JobAborted};
use crate::rma::accumulate::AccStrategy;
use crate::rma::create::Memory;
use crate::rma::remote::{RemoteLink, channel};
use crate::rma::remote::wire::TAGS;
use crate::rma::{Placement, Window, WindowError};
use crate::segment::CoreContext;
use crate::segment::view::Plain;
use crate::timing;

use super::{CONTEXTS, Link, endpoint};

const _: () = assert!(TAGS >= RESERVED_TAGS && RESERVED_TAGS | ((CONTEXTS as u32 - 1) << 4 | 15) < TAGS);

/// A window's members and the context id of its collective steps.
struct Members<'c> {
    link: Link<'c>,
    /// World ranks, by team rank.
    ranks: Vec<u32>,
    /// This core's team rank.
    me: u32,
}

/// This core's endpoint, as remote memory (windows, MPBs, flags) uses it; a window's
/// link also gathers over its members.
pub(crate) struct NodeLink<'c> {
    ctx: &'c CoreContext,
    ep: Endpoint<'c>,
    members: Option<Members<'c>>,
}

impl<'c> NodeLink<'c> {
    /// For requests only (MPBs and flags).
    pub(crate) fn new(ctx: &'c CoreContext, ep: Endpoint<'c>) -> NodeLink<'c> {
        NodeLink { ctx, ep, members: None }
    }
}

/// A window's context id goes back with its link, after the window's last step.
impl Drop for NodeLink<'_> {
    fn drop(&mut self) {
        if let Some(members) = &self.members {
            members.link.give_back();
        }
    }
}

impl NodeLink<'_> {
    /// A failure of the link: a job abort as such; anything else is this library's own
    /// fault (a request it could not send, an answer of the wrong size), which stops the
    /// job rather than leave a window half updated (fail-stop).
    fn failed(&self, e: RequestError) -> JobAborted {
        match e {
            RequestError::Send(SendError::Aborted(a)) | RequestError::Recv(RecvError::Aborted(a)) => a,
            other => self.broken(other),
        }
    }

    /// Runs remote memory traffic untimed: each operation is charged as the chip would
    /// pay it, by `rma::remote::timed` for windows and by the C interface for MPBs and
    /// flags (`core::remote_mpb`).
    fn carry<R>(&self, traffic: impl FnOnce() -> R) -> R {
        timing::untimed(traffic)
    }

    fn broken(&self, why: impl std::fmt::Display) -> JobAborted {
        let me = self.ctx.rank();
        eprintln!("sccemu: rank {me}: the link to another node's memory failed: {why}");
        self.ctx.segment().abort(Some(me), AbortCause::Corrupted);
        self.ctx.check_job().err().unwrap_or(JobAborted { rank: Some(me), cause: AbortCause::Corrupted })
    }
}

impl RemoteLink for NodeLink<'_> {
    fn request(&self, dest: u32, msg: &[u8]) -> Result<(), JobAborted> {
        // The plain waiter: the wait is for the gateway alone, and background work that
        // sent a request itself would wait for this one's turn (`channel::SENDING`).
        let waiter = self.ctx.plain_waiter();
        self.carry(|| channel::send(self.ctx.segment(), &waiter, (self.ctx.rank(), dest), msg))
    }

    fn recv(&self, src: u32, tag: u32, buf: &mut [u8]) -> Result<(), JobAborted> {
        let want = buf.len();
        let status = self.carry(|| self.ep.recv(Source::Rank(src), TagMatch::Tag(tag), buf));
        let got = status.map_err(|e| self.failed(RequestError::Recv(e)))?.len;
        if got != want {
            return Err(self.broken(format!("an answer of {got} bytes from rank {src}, not {want}")));
        }
        Ok(())
    }

    fn allgather(&self, mine: &[u8]) -> Result<Vec<u8>, JobAborted> {
        let Some(members) = &self.members else { return Err(self.broken("a gather without members")) };
        let group = members.link.group(&members.ranks, members.me);
        let block = mine.len();
        let mut out = vec![0u8; block * members.ranks.len()];
        out[group.me() * block..][..block].copy_from_slice(mine);
        match self.carry(|| group.allgather(&mut out, block, Allgather::Auto)) {
            Ok(()) => Ok(out),
            Err(CollError::Aborted(a)) => Err(a),
            Err(CollError::Messages(e)) => Err(self.failed(e)),
            Err(other) => Err(self.broken(other)),
        }
    }
}

/// Collective over `members` (world ranks; this core is member `me`), a job or a
/// communicator whose ranks span nodes: a window over `memory` (`rma::remote`) whose
/// accumulates use `strategy`. DRAM (MPBs for a job-wide window only, as yet: over a
/// communicator every member gets [`WindowError::AcrossNodes`], alike, since every
/// member must pass the same placement).
pub(crate) fn window_across<'c, T: Plain>(
    ctx: &'c CoreContext,
    (members, me): (Vec<u32>, u32),
    memory: Memory,
    strategy: AccStrategy,
) -> Result<Window<'c, T>, WindowError> {
    // The MPB window pool of communicators' windows is not reserved across nodes.
    if matches!(memory, Memory::Allocate(Placement::Mpb, _)) && members.len() != ctx.size() as usize {
        return Err(WindowError::AcrossNodes { what: "MPB placement over a communicator" });
    }
    // Untimed, as a window's creation on one node is (its traffic, `NodeLink::carry`).
    timing::untimed(|| {
        let ep = endpoint(ctx).map_err(|_| WindowError::AcrossNodes { what: "no two-sided channel" })?;
        let link = Link::among(ctx, &members, me).map_err(|e| match e {
            CollError::Aborted(a) => WindowError::Aborted(a),
            _ => WindowError::AcrossNodes { what: "a context id: every one is taken" },
        })?;
        let link = NodeLink { ctx, ep, members: Some(Members { link, ranks: members.clone(), me }) };
        Window::create_across(ctx, (members, me), (memory, strategy), Box::new(link))
    })
}
