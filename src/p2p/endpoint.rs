//! Two-sided messaging with MPI's semantics: [`Core::send`], [`Core::recv`],
//! [`Core::isend`], [`Core::irecv`], [`Core::probe`], over the job's channel protocol
//! (`Config::channel`: [`crate::protocol::ring::perpeer`] or [`crate::protocol::ring::srb`]).
//!
//! - Tags are `u32`; receives select a [`Source`] (a rank or any) and a [`TagMatch`]
//!   (a tag or any), and report a [`Status`] (source, tag, length).
//! - Messages of any size up to 4 GiB - 1: larger than the channel, they are split into
//!   fragments that are pipelined through it.
//! - Between one pair with one tag, messages are never overtaken (see `matching`).
//! - A receive buffer that is too small gives [`RecvError::Truncated`]; the message
//!   stays queued in its place (probe, then receive into a larger buffer).
//! - Sends to oneself are delivered through the inbox directly.
//! - Blocking calls keep draining this core's incoming channel, so symmetric exchanges
//!   of large messages complete; a non-blocking send that cannot leave at once keeps
//!   the rest in a private queue that every later call pushes on (see `progress`).
//! - One thread per core should drive messaging: calls of one core are serialised.
//! - Progress happens inside messaging calls. A non-blocking send whose rest is still
//!   queued moves on at the next messaging call (any of them), not inside
//!   [`Core::barrier`]: complete it (`wait`/`test`) before a barrier that its receiver
//!   can only reach after receiving it. With `srb` this includes messages that other
//!   cores send to the same receiver later: a queued send may hold space in the
//!   receiver's ring, and entries reserved after it wait behind it (see `progress`).
//! - An SRB receiver frees consumed space lazily (see `srb`): up to half its ring can
//!   be consumed but not yet free for senders while it is outside messaging calls, so
//!   a program that relies on more buffering than that (MPI calls it unsafe) may wait
//!   for the receiver's next call.

//!
//! Choosing the protocol: `Job::channel`, `Config::channel` (and `sccrun --channel`).
//! The default is `srb`: it runs at every job size with constant shared memory per
//! core (a `ring_bytes` ring and 384 B of MPB), matches per-peer latency within a few
//! tens of nanoseconds between two cores, and is an order of magnitude faster when
//! many cores send to one, oversubscribed (`cargo bench -p sccemu-benches -- pt2pt
//! srb`). `perpeer` (RCKMPI) needs 64 B of MPB per possible sender, so with the SCC's
//! 8 KiB MPB it stops at 64 cores, and its DRAM grows as N^2 per job.
//!
//! [`Core::send`]: crate::Core::send
//! [`Core::recv`]: crate::Core::recv
//! [`Core::isend`]: crate::Core::isend
//! [`Core::irecv`]: crate::Core::irecv
//! [`Core::probe`]: crate::Core::probe
//! [`Core::barrier`]: crate::segment::CoreContext::barrier

use std::fmt;
use std::sync::{Mutex, MutexGuard};

use crate::protocol::abort::JobAborted;
use crate::p2p::channel::{ChannelUnavailable, Placement};
use crate::segment::CoreContext;
use crate::protocol::ring::frag::{CorruptError, CorruptKind, FragHeader};
use crate::p2p::matching::{Target, TargetState};
use crate::p2p::progress::{Ctx, Fail, State};
use crate::p2p::request::{Request, RequestError};

/// Which sources a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Source {
    /// Only messages from this rank.
    Rank(u32),
    /// `MPI_ANY_SOURCE`.
    Any,
}

/// Which tags a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TagMatch {
    /// Only messages with this tag.
    Tag(u32),
    /// `MPI_ANY_TAG`.
    Any,
}

/// Accepts a message from any rank.
pub const ANY_SOURCE: Source = Source::Any;
/// Accepts a message with any tag.
pub const ANY_TAG: TagMatch = TagMatch::Any;

impl From<u32> for Source {
    fn from(rank: u32) -> Self {
        Source::Rank(rank)
    }
}

impl From<u32> for TagMatch {
    fn from(tag: u32) -> Self {
        TagMatch::Tag(tag)
    }
}

impl Source {
    /// Whether a message from `rank` is accepted.
    pub fn matches(self, rank: u32) -> bool {
        self == Source::Any || self == Source::Rank(rank)
    }
}

impl TagMatch {
    /// Whether a message tagged `tag` is accepted.
    pub fn matches(self, tag: u32) -> bool {
        self == TagMatch::Any || self == TagMatch::Tag(tag)
    }
}

/// What a receive or probe matched (for a send: this core, the tag and the length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Status {
    /// Rank of the sender.
    pub source: u32,
    /// Tag the message was sent with.
    pub tag: u32,
    /// Bytes of the message.
    pub len: usize,
}

/// Why a send failed. Nothing was sent unless the error is `Corrupt` or `Aborted`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The destination is not a core of the job.
    RankOutOfRange {
        /// The destination.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// Messages are limited to `u32::MAX` bytes.
    TooLarge {
        /// Bytes of the message.
        len: usize,
        /// The largest message, in bytes.
        max: usize,
    },
    /// The job has no two-sided channel.
    Unavailable(ChannelUnavailable),
    /// This core's own channel turned out corrupted while the send waited.
    Corrupt(CorruptError),
    /// The job aborted (some core died) while the send waited; part of the message may
    /// have left.
    Aborted(JobAborted),
}

/// Why a receive or probe failed. The job stays usable after `RankOutOfRange` and
/// `Truncated`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecvError {
    /// The source is not a core of the job.
    RankOutOfRange {
        /// The requested source.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// The matched message is longer than the buffer; it was not received and stays
    /// first in line for the next matching receive.
    Truncated {
        /// The matched message (its `len` is the length needed).
        status: Status,
        /// Bytes of the buffer.
        capacity: usize,
    },
    /// The job has no two-sided channel.
    Unavailable(ChannelUnavailable),
    /// This core's own channel turned out corrupted while the receive waited.
    Corrupt(CorruptError),
    /// The job aborted (some core died) while the receive waited.
    Aborted(JobAborted),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "send to rank {rank}: not a core of this {size}-core job")
            }
            Self::TooLarge { len, max } => write!(f, "message of {len} bytes exceeds {max}"),
            Self::Unavailable(e) => e.fmt(f),
            Self::Corrupt(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "receive from rank {rank}: not a core of this {size}-core job")
            }
            Self::Truncated { status, capacity } => write!(
                f,
                "message of {} bytes from rank {} (tag {}) does not fit a {capacity}-byte buffer; it is still queued",
                status.len, status.source, status.tag
            ),
            Self::Unavailable(e) => e.fmt(f),
            Self::Corrupt(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SendError {}
impl std::error::Error for RecvError {}

impl From<Fail> for SendError {
    fn from(f: Fail) -> Self {
        match f {
            Fail::Corrupt(e) => SendError::Corrupt(e),
            Fail::Aborted(e) => SendError::Aborted(e),
        }
    }
}

impl From<Fail> for RecvError {
    fn from(f: Fail) -> Self {
        match f {
            Fail::Corrupt(e) => RecvError::Corrupt(e),
            Fail::Aborted(e) => RecvError::Aborted(e),
        }
    }
}

impl From<JobAborted> for SendError {
    fn from(e: JobAborted) -> Self {
        SendError::Aborted(e)
    }
}

impl From<JobAborted> for RecvError {
    fn from(e: JobAborted) -> Self {
        RecvError::Aborted(e)
    }
}

impl From<CorruptError> for RecvError {
    fn from(e: CorruptError) -> Self {
        RecvError::Corrupt(e)
    }
}

/// A core's two-sided state: where its channels are, and its private queues.
pub struct Engine {
    place: Result<Placement, ChannelUnavailable>,
    state: Mutex<State>,
}

impl Engine {
    pub(crate) fn new(ctx: &CoreContext) -> Engine {
        let mut mpb = ctx.mpb_allocator.lock().unwrap_or_else(|e| e.into_inner());
        let place = Placement::setup(ctx.segment().config(), &mut mpb);
        Engine { place, state: Mutex::new(State::default()) }
    }
}

/// One core's two-sided endpoint: its context and its engine. `Core`'s messaging
/// methods delegate here.
#[derive(Clone, Copy)]
pub(crate) struct Endpoint<'c> {
    ctx: &'c CoreContext,
    engine: &'c Engine,
}

impl<'c> Endpoint<'c> {
    pub(crate) fn new(ctx: &'c CoreContext, engine: &'c Engine) -> Endpoint<'c> {
        Endpoint { ctx, engine }
    }


    /// The channel context and this core's locked state.
    pub(crate) fn p2p(&self) -> Result<(Ctx<'c>, MutexGuard<'c, State>), ChannelUnavailable> {
        let place = self.engine.place.as_ref().map_err(Clone::clone)?;
        let cx =
            Ctx { seg: self.ctx.segment(), place, rank: self.ctx.rank(), size: self.ctx.size(), waiter: self.ctx.waiter() };
        Ok((cx, self.engine.state.lock().unwrap_or_else(|e| e.into_inner())))
    }

    /// The job's channel sizes, or why it has none.
    pub(crate) fn channel(&self) -> Result<crate::p2p::channel::Sizes, ChannelUnavailable> {
        self.engine.place.as_ref().map(|p| p.sizes).map_err(Clone::clone)
    }

    fn check_dest(&self, dest: u32, len: usize) -> Result<u32, SendError> {
        if dest >= self.ctx.size() {
            return Err(SendError::RankOutOfRange { rank: dest, size: self.ctx.size() });
        }
        u32::try_from(len).map_err(|_| SendError::TooLarge { len, max: u32::MAX as usize })
    }

    fn check_source(&self, src: Source) -> Result<(), RecvError> {
        match src {
            Source::Rank(rank) if rank >= self.ctx.size() => {
                Err(RecvError::RankOutOfRange { rank, size: self.ctx.size() })
            }
            _ => Ok(()),
        }
    }

    /// Sends `data` to `dest` with `tag`; returns when `data` may be reused.
    pub(crate) fn send(&self, dest: u32, tag: u32, data: &[u8]) -> Result<(), SendError> {
        self.send_inner(dest, tag, data, true).map(|_| ())
    }

    /// Sends in the background: returns a request that completes when the message has
    /// left. The bytes that cannot leave at once are copied, so `data` is free again
    /// when this returns.
    pub(crate) fn isend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<Request<'c>, SendError> {
        let status = Status { source: self.ctx.rank(), tag, len: data.len() };
        let id = self.send_inner(dest, tag, data, false)?;
        Ok(Request::send(*self, id, status))
    }

    /// Blocking unless `block` is false, then `Some(id)` of the queued rest.
    fn send_inner(&self, dest: u32, tag: u32, data: &[u8], block: bool) -> Result<Option<u64>, SendError> {
        let total = self.check_dest(dest, data.len())?;
        let (cx, mut st) = self.p2p().map_err(SendError::Unavailable)?;
        if dest == self.ctx.rank() {
            let h = FragHeader { src: dest, tag, len: total, total, first: true };
            let corrupt =
                |kind: CorruptKind| CorruptError { channel: "self", owner: dest, position: 0, kind };
            st.inbox.deliver(&h, None, |d| d.copy_from_slice(data), corrupt).map_err(SendError::Corrupt)?;
            return Ok(None);
        }
        if !st.queue_empty(dest) {
            if !block {
                return Ok(Some(st.enqueue(dest, (tag, total), data, false, None)));
            }
            while !st.queue_empty(dest) {
                if !cx.progress(&mut st, None)? {
                    cx.wait(&st, None)?;
                }
            }
        }
        let (mut off, mut started, mut held) = (0, false, None);
        loop {
            let st = &mut *st;
            let hold = (!block).then_some(&mut held);
            match cx.push(&mut st.inbox, None, dest, (tag, total, !started), &data[off..], hold)? {
                Some(n) => {
                    off += n;
                    started = true;
                    if off == data.len() {
                        return Ok(None);
                    }
                }
                None if !block => {
                    return Ok(Some(st.enqueue(dest, (tag, total), &data[off..], started, held)));
                }
                None => {
                    if !cx.progress(st, None)? {
                        cx.wait(st, Some((dest, data.len() - off)))?;
                    }
                }
            }
        }
    }

    /// Receives the earliest message matching `src` and `tag` into `buf`.
    pub(crate) fn recv(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
        buf: &mut [u8],
    ) -> Result<Status, RecvError> {
        let (src, tag) = (src.into(), tag.into());
        self.check_source(src)?;
        let capacity = buf.len();
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        let mut t = Target { id: None, src, tag, buf, state: TargetState::Open };
        st.inbox.start(&mut t);
        loop {
            match t.state {
                TargetState::Done(s) => return Ok(s),
                TargetState::Truncated(status) => return Err(RecvError::Truncated { status, capacity }),
                _ => {}
            }
            let moved = match cx.progress(&mut st, Some(&mut t)) {
                Ok(moved) => moved,
                Err(e) => {
                    st.inbox.spill(&mut t);
                    return Err(e.into());
                }
            };
            if !moved && matches!(t.state, TargetState::Open | TargetState::Direct { .. }) {
                if let Err(e) = cx.wait(&st, None) {
                    st.inbox.spill(&mut t);
                    return Err(e.into());
                }
            }
        }
    }

    /// Receives the earliest matching message whatever its size.
    pub(crate) fn recv_vec(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Vec<u8>, Status), RecvError> {
        let (src, tag) = (src.into(), tag.into());
        loop {
            let s = self.probe(src, tag)?;
            let mut buf = vec![0; s.len];
            // Another thread of this core may have taken it meanwhile: probe again.
            match self.recv(Source::Rank(s.source), TagMatch::Tag(s.tag), &mut buf) {
                Ok(got) if got.len == s.len => return Ok((buf, got)),
                Ok(got) => {
                    buf.truncate(got.len);
                    return Ok((buf, got));
                }
                Err(RecvError::Truncated { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits until a message matching `src` and `tag` is available; does not receive it.
    pub(crate) fn probe(&self, src: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Status, RecvError> {
        let (src, tag) = (src.into(), tag.into());
        self.check_source(src)?;
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        loop {
            if let Some(s) = st.inbox.probe(src, tag) {
                return Ok(s);
            }
            if !cx.progress(&mut st, None)? && st.inbox.probe(src, tag).is_none() {
                cx.wait(&st, None)?;
            }
        }
    }

    /// The status of an available matching message, without waiting.
    pub(crate) fn iprobe(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>, RecvError> {
        let (src, tag) = (src.into(), tag.into());
        self.check_source(src)?;
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        cx.progress(&mut st, None)?;
        Ok(st.inbox.probe(src, tag))
    }

    /// Posts a receive into `buf`; the request completes when a matching message is in.
    pub(crate) fn irecv<'a>(
        &self,
        src: impl Into<Source>,
        tag: impl Into<TagMatch>,
        buf: &'a mut [u8],
    ) -> Result<Request<'a>, RecvError>
    where
        'c: 'a,
    {
        let (src, tag) = (src.into(), tag.into());
        self.check_source(src)?;
        let (_, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        let id = st.inbox.post(src, tag);
        Ok(Request::recv(*self, id, src, tag, buf))
    }

    /// Sends `data` to `dest` and receives into `buf` from `src`, like `MPI_Sendrecv`:
    /// safe for exchanges in a ring, whatever the sizes.
    pub(crate) fn sendrecv(
        &self,
        (dest, send_tag, data): (u32, u32, &[u8]),
        src: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
        buf: &mut [u8],
    ) -> Result<Status, RequestError> {
        let recv = self.irecv(src, recv_tag, buf).map_err(RequestError::Recv)?;
        self.send(dest, send_tag, data).map_err(RequestError::Send)?;
        recv.wait()
    }
}
