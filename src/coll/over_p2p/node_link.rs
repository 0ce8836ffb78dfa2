//! The two-sided messages that windows, MPBs and flags across nodes need
//! (`rma::remote::RemoteLink`), over this core's endpoint, and the creation of windows
//! across nodes.
//!
//! The requests and answers carry the tags `rma::remote::wire` reserves; the creation
//! and free allgathers run as a group of every rank in the context
//! [`CREATE_CONTEXT`], whose tags sit above every communicator's (checked below), and so
//! do the fences' barriers. So the ranks two windows share call those steps of the two
//! in the same order, one thread of a process at a time: they share those tags.

use crate::coll::allgather::Allgather;
use crate::coll::comm::CollError;
use crate::p2p::endpoint::{Endpoint, RESERVED_TAGS, Source, TagMatch};
use crate::p2p::{RecvError, RequestError, SendError};
use crate::protocol::abort::{AbortCause, JobAborted};
use crate::rma::accumulate::AccStrategy;
use crate::rma::remote::RemoteLink;
use crate::rma::remote::wire::{CREATE_CONTEXT, TAGS};
use crate::rma::create::Memory;
use crate::rma::{Placement, Window, WindowError};
use crate::segment::CoreContext;
use crate::segment::view::Plain;

use super::{CONTEXTS, Link, endpoint};

const _: () = assert!(TAGS >= RESERVED_TAGS && RESERVED_TAGS | ((CONTEXTS as u32 - 1) << 4 | 15) < TAGS);
const _: () = assert!(RESERVED_TAGS | CREATE_CONTEXT << 4 == TAGS);

/// This core's endpoint, as remote memory (windows, MPBs, flags) uses it; collectives
/// (`allgather`) run over `members` (world ranks; this core is member `me`).
pub(crate) struct NodeLink<'c> {
    ctx: &'c CoreContext,
    ep: Endpoint<'c>,
    members: Vec<u32>,
    me: u32,
}

impl<'c> NodeLink<'c> {
    /// Over every rank of the job.
    pub(crate) fn new(ctx: &'c CoreContext, ep: Endpoint<'c>) -> NodeLink<'c> {
        NodeLink { ctx, ep, members: (0..ctx.size()).collect(), me: ctx.rank() }
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

    fn broken(&self, why: impl std::fmt::Display) -> JobAborted {
        let me = self.ctx.rank();
        eprintln!("sccemu: rank {me}: the link to another node's memory failed: {why}");
        self.ctx.segment().abort(Some(me), AbortCause::Corrupted);
        self.ctx.check_job().err().unwrap_or(JobAborted { rank: Some(me), cause: AbortCause::Corrupted })
    }
}

impl RemoteLink for NodeLink<'_> {
    fn send(&self, dest: u32, tag: u32, msg: &[u8]) -> Result<(), JobAborted> {
        self.ep.send(dest, tag, msg).map_err(|e| self.failed(RequestError::Send(e)))
    }

    fn recv(&self, src: u32, tag: u32, buf: &mut [u8]) -> Result<(), JobAborted> {
        let want = buf.len();
        let status = self.ep.recv(Source::Rank(src), TagMatch::Tag(tag), buf);
        let got = status.map_err(|e| self.failed(RequestError::Recv(e)))?.len;
        if got != want {
            return Err(self.broken(format!("an answer of {got} bytes from rank {src}, not {want}")));
        }
        Ok(())
    }

    fn allgather(&self, mine: &[u8]) -> Result<Vec<u8>, JobAborted> {
        let link = Link { ep: self.ep, context: CREATE_CONTEXT };
        let group = link.group(&self.members, self.me);
        let block = mine.len();
        let mut out = vec![0u8; block * self.members.len()];
        out[group.me() * block..][..block].copy_from_slice(mine);
        match group.allgather(&mut out, block, Allgather::Auto) {
            Ok(()) => Ok(out),
            Err(CollError::Aborted(a)) => Err(a),
            Err(CollError::Messages(e)) => Err(self.failed(e)),
            Err(other) => Err(self.broken(other)),
        }
    }
}

/// Collective over `members` (world ranks; this core is member `me`), a job or a
/// communicator whose ranks span nodes: a window over `memory` (`rma::remote`). DRAM
/// (MPBs for a job-wide window) and the `Atomic` strategy, and no virtual time, as yet:
/// anything else gives every member [`WindowError::AcrossNodes`] (alike, since every member must pass the same
/// placement and strategy and the mode is the job's).
pub(crate) fn window_across<'c, T: Plain>(
    ctx: &'c CoreContext,
    (members, me): (Vec<u32>, u32),
    memory: Memory,
    strategy: AccStrategy,
) -> Result<Window<'c, T>, WindowError> {
    let what = match (memory, strategy) {
        _ if ctx.segment().config().timing != 0 => Some("virtual time"),
        // The MPB window pool of communicators' windows is not reserved across nodes.
        (Memory::Allocate(Placement::Mpb, _), _) if members.len() != ctx.size() as usize => {
            Some("MPB placement over a communicator")
        }
        (_, AccStrategy::Atomic) => None,
        _ => Some("an accumulate strategy other than Atomic"),
    };
    if let Some(what) = what {
        return Err(WindowError::AcrossNodes { what });
    }
    let ep = endpoint(ctx).map_err(|_| WindowError::AcrossNodes { what: "no two-sided channel" })?;
    let link = NodeLink { ctx, ep, members: members.clone(), me };
    Window::create_across(ctx, (members, me), memory, Box::new(link))
}
