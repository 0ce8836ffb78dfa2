//! Two-sided messaging with MPI's semantics: [`Core::send`], [`Core::recv`],
//! [`Core::isend`], [`Core::irecv`], [`Core::probe`], synchronous [`Core::ssend`] and
//! [`Core::issend`], over the job's channel protocol
//! (`Config::channel`: [`crate::protocol::ring::perpeer`] or [`crate::protocol::ring::srb`]).
//!
//! - Tags are `u32`; receives select a [`Source`] (a rank or any) and a [`TagMatch`]
//!   (a tag or any), and report a [`Status`] (source, tag, length).
//! - Tags from [`RESERVED_TAGS`] up are the library's own (the collectives of
//!   communicators that span nodes run over messages with them, `coll::over_p2p`):
//!   `Core`'s sends refuse them ([`SendError::ReservedTag`]), its receives and probes
//!   refuse to name one ([`RecvError::ReservedTag`]), and neither [`ANY_TAG`] nor a
//!   [`TagMatch::Masked`] ever matches one. So the library's traffic never reaches a
//!   user's receive, and a user's message never reaches the library's. (The MPI
//!   library's wire tags stay below them: its highest context is 8189 of 8192.)
//! - Messages of any size up to 4 GiB - 1: larger than the channel, they are split into
//!   fragments that are pipelined through it.
//! - Between one pair with one tag, messages are never overtaken (see `matching`).
//! - A receive buffer that is too small gives [`RecvError::Truncated`]; the message
//!   stays queued in its place (probe, then receive into a larger buffer).
//! - Sends to oneself never touch a channel: one copy into the memory of the receive
//!   the message goes to (`matching`).
//! - A synchronous send (`MPI_Ssend`) returns, and its request completes, only once a
//!   receive has matched the message: the receiver's engine acknowledges it at the
//!   match, from whatever call of the receiver drains its channel (`synchronous`).
//! - Blocking sends of large messages to other cores take the single-copy path: the
//!   receiver copies the bytes straight out of the sender's buffer (`rendezvous`,
//!   `cma`); the send returns once they are copied.
//! - Blocking calls keep draining this core's incoming channel, so symmetric exchanges
//!   of large messages complete; a non-blocking send that cannot leave at once keeps
//!   the rest in a private queue that every later call pushes on (see `progress`).
//! - Threads (`MPI_THREAD_MULTIPLE`): any number of threads of a core may send,
//!   receive, probe and wait at once. A thread that waits releases the core's state
//!   before it sleeps, so a thread blocked in a receive never keeps another from
//!   sending; whoever changes what another thread waits for wakes it (see `engine`).
//!   Messages of one thread to one destination keep their order; messages of
//!   different threads are ordered as their calls happen to run, as in MPI.
//! - Progress (MPI's progress rule): once a send and its matching receive are both
//!   posted, one of them completes, whatever else the two cores block in. Every
//!   blocking call of a core drives its pending sends and receives and publishes the
//!   SRB space it consumed: messaging calls, and also [`Core::barrier`], window
//!   fences, PSCW and lock waits, flag waits and collectives, whose waits run this
//!   engine in the background (see `engine`). Between calls, while the program
//!   computes, nothing moves (MPI's weak progress): a queued send waits for the
//!   sender's next call of any kind. With `srb` this includes messages that other
//!   cores send to the same receiver later: a queued send may hold space in the
//!   receiver's ring, and entries reserved after it wait behind it (see `progress`).
//! - An SRB receiver frees consumed space lazily (see `srb`) while it is in messaging
//!   calls, and publishes all of it as soon as it blocks in anything else: only while
//!   it computes can up to half its ring be consumed but not yet free for senders, so
//!   a program that relies on more buffering than that (MPI calls it unsafe) may wait
//!   for the receiver's next call.
//!
//! Choosing the protocol: `Job::channel`, `Config::channel` (and `sccrun --channel`).
//! The default is `srb`: it runs at every job size with constant shared memory per
//! core (a `ring_bytes` ring and 640 B of MPB), matches per-peer latency within a few
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
//! [`Core::ssend`]: crate::Core::ssend
//! [`Core::issend`]: crate::Core::issend
//! [`Core::barrier`]: crate::segment::CoreContext::barrier

use crate::p2p::channel::ChannelUnavailable;
use crate::p2p::engine::{Engine, Locked};
use crate::p2p::matching::{Target, TargetState};
use crate::p2p::progress::{Blocked, Ctx, Fail};
use crate::p2p::request::{Request, RequestError};
use crate::p2p::timed;

pub use crate::p2p::error::{RecvError, SendError};
use crate::segment::CoreContext;
use crate::timing::{self, Category};

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
    /// `MPI_ANY_TAG`: any tag below [`RESERVED_TAGS`].
    Any,
    /// Any tag below [`RESERVED_TAGS`] that agrees with `tag` on the bits of `mask`: how a layer above keeps
    /// contexts apart (a communicator's id in the high bits) while accepting any
    /// user tag in the low ones.
    Masked {
        /// The bits to agree with.
        tag: u32,
        /// Which bits must agree.
        mask: u32,
    },
}

/// Accepts a message from any rank.
pub const ANY_SOURCE: Source = Source::Any;
/// Accepts a message with any tag (below [`RESERVED_TAGS`]).
pub const ANY_TAG: TagMatch = TagMatch::Any;

/// The lowest of the tags that the library keeps for its own messages (module docs):
/// tags `RESERVED_TAGS..=u32::MAX` are refused to users and never matched by
/// [`ANY_TAG`] or [`TagMatch::Masked`].
pub const RESERVED_TAGS: u32 = 0xffff_0000;

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
    /// Whether a message tagged `tag` is accepted. Only an exact tag accepts a
    /// reserved one (module docs).
    #[inline]
    pub fn matches(self, tag: u32) -> bool {
        match self {
            TagMatch::Any => tag < RESERVED_TAGS,
            TagMatch::Tag(t) => t == tag,
            TagMatch::Masked { tag: t, mask } => (t ^ tag) & mask == 0 && tag < RESERVED_TAGS,
        }
    }

    /// The match, if a user may ask for it: not an exact reserved tag (module docs).
    pub(crate) fn user(self) -> Result<TagMatch, RecvError> {
        match self {
            TagMatch::Tag(tag) if tag >= RESERVED_TAGS => Err(RecvError::ReservedTag { tag }),
            other => Ok(other),
        }
    }
}

/// `tag`, if a user may send with it: below [`RESERVED_TAGS`] (module docs).
#[inline]
pub(crate) fn user_tag(tag: u32) -> Result<u32, SendError> {
    if tag >= RESERVED_TAGS { Err(SendError::ReservedTag { tag }) } else { Ok(tag) }
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
    /// In virtual-time mode, the sender's virtual time (picoseconds) when the
    /// message's last fragment left it; 0 otherwise.
    pub vtime: u64,
}

/// One core's two-sided endpoint: its context and its engine. `Core`'s messaging
/// methods delegate here.
#[derive(Clone, Copy)]
pub(crate) struct Endpoint<'c> {
    pub(super) ctx: &'c CoreContext,
    pub(super) engine: &'c Engine,
}

impl<'c> Endpoint<'c> {
    pub(crate) fn new(ctx: &'c CoreContext, engine: &'c Engine) -> Endpoint<'c> {
        Endpoint { ctx, engine }
    }

    /// The endpoint of the core behind `ctx`: its engine is the context's background
    /// work (`Core::attach` registers it). `None` if the job has no channel.
    pub(crate) fn of(ctx: &'c CoreContext) -> Option<Endpoint<'c>> {
        Some(Endpoint { ctx, engine: ctx.background_as::<Engine>()? })
    }

    /// The channel context and this core's locked state. Inlined: every messaging call
    /// starts with it, and returned through memory the pair costs the hot path
    /// (callgrind, 2-core 8 B ping-pong: about 40 instructions a call).
    #[inline(always)]
    pub(crate) fn p2p(&self) -> Result<(Ctx<'c>, Locked<'c>), ChannelUnavailable> {
        let cx = self.engine.ctx(self.ctx)?;
        Ok((cx, self.engine.lock(self.ctx)))
    }

    /// Waits in a messaging call (see [`Engine::wait`]).
    #[inline]
    pub(crate) fn wait(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        extra: Option<Blocked>,
        target: Option<&mut Target<'_>>,
    ) -> Result<bool, Fail> {
        self.engine.wait(cx, st, extra, target)
    }

    /// The job's channel sizes, or why it has none.
    pub(crate) fn channel(&self) -> Result<crate::p2p::channel::Sizes, ChannelUnavailable> {
        self.engine.place().map(|p| p.sizes)
    }

    pub(super) fn check_dest(&self, dest: u32, len: usize) -> Result<u32, SendError> {
        if dest >= self.ctx.size() {
            return Err(SendError::RankOutOfRange { rank: dest, size: self.ctx.size() });
        }
        u32::try_from(len).map_err(|_| SendError::TooLarge { len, max: u32::MAX as usize })
    }

    pub(super) fn check_source(&self, src: Source) -> Result<(), RecvError> {
        match src {
            Source::Rank(rank) if rank >= self.ctx.size() => {
                Err(RecvError::RankOutOfRange { rank, size: self.ctx.size() })
            }
            _ => Ok(()),
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
        timing::in_call(Category::Recv, "recv", || self.recv_now(src, tag, buf))
    }

    fn recv_now(&self, src: Source, tag: TagMatch, buf: &mut [u8]) -> Result<Status, RecvError> {
        self.check_source(src)?;
        let capacity = buf.len();
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        let mut t = Target { id: None, src, tag, buf, state: TargetState::Open };
        let mut fresh = true;
        loop {
            if t.state == TargetState::Open && cx.take_small(&mut st, &mut t) {
                st.changed();
            } else if fresh && t.state == TargetState::Open {
                // First, or back from a sleep: take what arrived meanwhile (perhaps
                // this receive's own message, spilled before the sleep).
                if let Err(e) = st.inbox.start(&mut t, &cx) {
                    return Err(e.into());
                }
                // A message pulled out of its sender's memory, or a synchronous one,
                // owes an answer now (to this core itself, perhaps, and to a thread
                // of it that waits for it).
                if cx.push_answers(&mut st.inbox)? {
                    st.changed();
                }
            }
            match t.state {
                TargetState::Done(s) => {
                    timed::received(&s);
                    return Ok(s);
                }
                TargetState::Truncated(status) => return Err(RecvError::Truncated { status, capacity }),
                _ => {}
            }
            let waited = match cx.progress(&mut st, Some(&mut t)) {
                Ok(true) => {
                    st.changed();
                    Ok(false)
                }
                Ok(false) if matches!(t.state, TargetState::Open | TargetState::Direct { .. }) => {
                    self.wait(&cx, &mut st, None, Some(&mut t))
                }
                Ok(false) => Ok(false),
                Err(e) => Err(e),
            };
            match waited {
                Ok(released) => fresh = released,
                Err(e) => {
                    if st.inbox.spill(&mut t) {
                        st.changed();
                    }
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
            if cx.progress(&mut st, None)? {
                st.changed();
            } else if st.inbox.probe(src, tag).is_none() {
                self.wait(&cx, &mut st, None, None)?;
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
        if cx.progress(&mut st, None)? {
            st.changed();
        }
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
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        // A message here whole is copied in now: the request holds no place in the
        // queues, and its wait need not look at the state again.
        if let Some((status, seq)) = st.inbox.take_whole(src, tag, buf) {
            // A synchronous message is acknowledged now.
            cx.push_answers(&mut st.inbox)?;
            st.changed();
            return Ok(Request::taken(*self, status, seq, buf));
        }
        // So is one whole at the front of the channel, where nothing queued comes
        // first (`progress::small`); it is numbered as an arrival, so that a drop
        // before the wait gives it back in its place.
        let mut t = Target { id: None, src, tag, buf, state: TargetState::Open };
        if cx.take_small(&mut st, &mut t) {
            let TargetState::Done(status) = t.state else { unreachable!("take_small completes its target") };
            let seq = st.inbox.number_arrival();
            st.changed();
            return Ok(Request::taken(*self, status, seq, t.buf));
        }
        let buf = t.buf;
        let id = st.inbox.post(src, tag);
        // A synchronous message it took is acknowledged now.
        cx.push_answers(&mut st.inbox)?;
        // Background waits of other threads must now watch for its message.
        st.changed();
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

#[cfg(test)]
mod tests {
    use super::TagMatch;

    #[test]
    fn masked_tags_match_on_the_masked_bits_only() {
        let context_7 = TagMatch::Masked { tag: 7 << 16, mask: 0xffff_0000 };
        assert!(context_7.matches(7 << 16));
        assert!(context_7.matches((7 << 16) | 0xffff));
        assert!(!context_7.matches(8 << 16));
        assert!(!context_7.matches(0x8007_0000));
    }

    #[test]
    fn reserved_tags_match_only_exactly() {
        use super::RESERVED_TAGS;
        assert!(TagMatch::Any.matches(RESERVED_TAGS - 1));
        assert!(!TagMatch::Any.matches(RESERVED_TAGS));
        assert!(!TagMatch::Any.matches(u32::MAX));
        let top = TagMatch::Masked { tag: u32::MAX, mask: 0xfff8_0000 };
        assert!(top.matches(0xfff8_0000));
        assert!(!top.matches(RESERVED_TAGS));
        assert!(TagMatch::Tag(RESERVED_TAGS).matches(RESERVED_TAGS));
        assert!(TagMatch::Tag(RESERVED_TAGS).user().is_err());
        assert!(super::user_tag(RESERVED_TAGS).is_err() && super::user_tag(7).is_ok());
    }
}
