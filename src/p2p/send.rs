//! The sending side of [`Endpoint`]: blocking and non-blocking sends, to oneself, through
//! the channel, or by the single-copy path.
//!
//! - To oneself: the whole message goes into the inbox at once (`matching`): one copy
//!   into the memory of the receive it is for, never through a channel.
//! - Blocking, at least the single-copy threshold (`cma`), another core, single copy
//!   usable: announced, then copied by the receiver straight out of `data`; the send
//!   returns on the receiver's answer (`rendezvous`). Refused: the bytes follow through
//!   the channel as continuations of the announced message. To a core on another node
//!   the announcement goes to this node's gateway, which copies the bytes out of
//!   `data` and answers (`job::gateway`).
//! - Otherwise through the channel, fragment by fragment: a blocking send waits for
//!   room (draining its own channel meanwhile); a non-blocking one sends what fits and
//!   queues a copy of the rest (`progress`).
//! - Synchronous sends ([`Endpoint::ssend`], [`Endpoint::issend`]) go through the
//!   channel whatever their size (a single-copy answer says that the bytes were read,
//!   not that a receive matched them), or to oneself, and then wait for the
//!   receiver's acknowledgement (`synchronous`).
//!
//! Every path charges virtual time as the chip would move the message (`timed`), so a
//! program's virtual time does not depend on the path the host took.

use crate::p2p::endpoint::{Endpoint, SendError, Status};
use crate::p2p::engine::Locked;
use crate::p2p::progress::{Ctx, Frag};
use crate::p2p::request::Request;
use crate::p2p::timed::{self, Model};
use crate::protocol::ring::frag::{FragHeader, FragKind, RENDEZVOUS_BYTES, Rendezvous};
use crate::protocol::ring::srb;
use crate::timing::{self, Category};

/// What a send left behind: the id of its queued rest, if any, and a synchronous
/// message's number.
type Sent = (Option<u64>, Option<u32>);

impl<'c> Endpoint<'c> {
    /// Sends `data` to `dest` with `tag`; returns when `data` may be reused.
    pub(crate) fn send(&self, dest: u32, tag: u32, data: &[u8]) -> Result<(), SendError> {
        self.send_inner::<false>(dest, tag, data, true).map(|_| ())
    }

    /// Sends in the background: returns a request that completes when the message has
    /// left. The bytes that cannot leave at once are copied, so `data` is free again
    /// when this returns.
    pub(crate) fn isend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<Request<'c>, SendError> {
        let status = Status { source: self.ctx.rank(), tag, len: data.len(), vtime: 0 };
        let (id, _) = self.send_inner::<false>(dest, tag, data, false)?;
        Ok(Request::send(*self, id, status, None))
    }

    /// [`Endpoint::isend`] of a buffer the caller hands over: a large message to another
    /// core (the single-copy threshold, `cma`) is not copied but announced in its turn,
    /// and its receiver reads it out of `data`, which the engine holds until then
    /// (`progress`); any other is sent as by `isend`.
    pub(crate) fn isend_owned(&self, dest: u32, tag: u32, data: Box<dyn AsRef<[u8]> + Send>) -> Result<Request<'c>, SendError> {
        let len = (*data).as_ref().len();
        let single = self.engine.single_copy();
        // To another node, this node's gateway reads `data` (`job::gateway`).
        if dest == self.ctx.rank() || !single.applies(len) || !single.usable() {
            return self.isend(dest, tag, (*data).as_ref());
        }
        let status = Status { source: self.ctx.rank(), tag, len, vtime: 0 };
        let id = timing::in_call(Category::Send, "isend", || {
            let total = self.check_dest(dest, len)?;
            let (cx, mut st) = self.p2p().map_err(SendError::Unavailable)?;
            let model = timed::message_sent(dest, len, cx.message_path(dest, len));
            let id = st.enqueue_given(dest, (tag, total), data, model);
            // Announced now if nothing is ahead of it.
            cx.push_queued(&mut st)?;
            st.changed();
            Ok::<_, SendError>(id)
        })?;
        Ok(Request::send(*self, Some(id), status, None))
    }

    /// Sends synchronously: returns once a receive has matched the message (module
    /// docs).
    pub(crate) fn ssend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<(), SendError> {
        timing::in_call(Category::Send, "ssend", || {
            let (_, number) = self.send_now::<true>(dest, tag, data, true)?;
            let number = number.expect("a synchronous send has a number");
            let (cx, mut st) = self.p2p().map_err(SendError::Unavailable)?;
            let acked = self.await_ack(&cx, &mut st, dest, number);
            if acked.is_err() {
                st.inbox.sync.forget(dest, number);
            }
            acked
        })
    }

    /// [`Endpoint::ssend`] in the background: the request completes once the message
    /// has left and a receive has matched it. The bytes are copied as by
    /// [`Endpoint::isend`].
    pub(crate) fn issend(&self, dest: u32, tag: u32, data: &[u8]) -> Result<Request<'c>, SendError> {
        let status = Status { source: self.ctx.rank(), tag, len: data.len(), vtime: 0 };
        let (id, number) = self.send_inner::<true>(dest, tag, data, false)?;
        Ok(Request::send(*self, id, status, number.map(|n| (dest, n))))
    }

    /// Sends, blocking unless `block` is false, synchronously if `SYNC` (a constant, so
    /// that the standard sends carry none of it): the id of the queued rest, if any,
    /// and the synchronous message's number.
    fn send_inner<const SYNC: bool>(&self, dest: u32, tag: u32, data: &[u8], block: bool) -> Result<Sent, SendError> {
        let name = match (block, SYNC) {
            (true, _) => "send",
            (false, false) => "isend",
            (false, true) => "issend",
        };
        timing::in_call(Category::Send, name, || self.send_now::<SYNC>(dest, tag, data, block))
    }

    fn send_now<const SYNC: bool>(&self, dest: u32, tag: u32, data: &[u8], block: bool) -> Result<Sent, SendError> {
        let sync = SYNC;
        let total = self.check_dest(dest, data.len())?;
        let (cx, mut st) = self.p2p().map_err(SendError::Unavailable)?;
        if dest == self.ctx.rank() {
            let number = sync.then(|| st.inbox.sync.start(dest));
            let h = FragHeader::data(dest, tag, total, total, true);
            let stamp = timing::clock().map_or(0, |c| c.now());
            st.inbox.deliver_own(&h, data, (stamp, number));
            // A posted receive may have matched it: its acknowledgement, recorded now.
            cx.push_answers(&mut st.inbox)?;
            // Another thread of this core may wait for it.
            st.changed();
            return Ok((None, number));
        }
        let single = self.engine.single_copy();
        let large = single.applies(data.len()) && !sync;
        let model = timed::message_sent(dest, data.len(), cx.message_path(dest, data.len()));
        if !st.may_start(dest) {
            if !block {
                st.changed();
                let number = sync.then(|| st.inbox.sync.start(dest));
                return Ok((Some(st.enqueue(dest, (tag, total, sync), data, (false, model), None)), number));
            }
            while !st.may_start(dest) {
                if cx.progress(&mut st, None)? {
                    st.changed();
                } else {
                    self.wait(&cx, &mut st, None, None)?;
                }
            }
        }
        // From here on the message goes out: its number is the next the receiver counts.
        let number = sync.then(|| st.inbox.sync.start(dest));
        if !block {
            let queued = self.push_or_queue(&cx, &mut st, dest, (tag, total, sync), data, model)?;
            return Ok((queued, number));
        }
        if large && single.usable() {
            return self.send_single_copy(&cx, &mut st, dest, (tag, total), data, model).map(|()| (None, None));
        }
        // A small standard message: one fragment if its channel has room now
        // (`progress::small`); else the general loop, with the reservation it may hold.
        let mut held = None;
        if !SYNC && cx.push_small(dest, (tag, total), data, &mut held, model) {
            return Ok((None, None));
        }
        let mut busy = false;
        let first = Frag::message(tag, total, true, sync);
        let sent = self.push_all(&cx, &mut st, dest, (first, held), data, model, &mut busy);
        if busy {
            st.set_busy(dest, false);
            // Sends of other threads to `dest` may wait for it.
            st.changed();
        }
        sent.map(|()| (None, number))
    }

    /// Waits for the acknowledgement of synchronous message `number` to `dest`,
    /// progressing meanwhile (it comes through this core's own channel).
    fn await_ack(&self, cx: &Ctx<'_>, st: &mut Locked<'_>, dest: u32, number: u32) -> Result<(), SendError> {
        loop {
            if let Some(at) = st.inbox.sync.take(dest, number) {
                timed::acknowledged(at);
                return Ok(());
            }
            if cx.progress(st, None)? {
                st.changed();
            } else {
                self.wait(cx, st, None, None)?;
            }
        }
    }

    /// A non-blocking send: the fragments that go now, then the rest queued.
    fn push_or_queue(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        dest: u32,
        (tag, total, sync): (u32, u32, bool),
        data: &[u8],
        model: Model,
    ) -> Result<Option<u64>, SendError> {
        let (mut off, mut held) = (0, None);
        loop {
            let frag = Frag::message(tag, total, off == 0, sync);
            match cx.push(dest, (frag, false), &data[off..], &mut held, model)? {
                Some(n) => {
                    off += n;
                    if off == data.len() {
                        return Ok(None);
                    }
                }
                None => {
                    st.changed();
                    return Ok(Some(st.enqueue(dest, (tag, total, sync), &data[off..], (off > 0, model), held)));
                }
            }
        }
    }

    /// A blocking send of `data` as fragments starting with `first`: every fragment,
    /// progressing and waiting while `dest` is full. Before its first wait it marks
    /// `dest` busy (and sets `busy`): the thread may sleep mid-message with the state
    /// unlocked, and nothing else may start to `dest` meanwhile (see `progress`).
    #[allow(clippy::too_many_arguments)]
    fn push_all(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        dest: u32,
        (first, mut held): (Frag, Option<srb::Reservation>),
        data: &[u8],
        model: Model,
        busy: &mut bool,
    ) -> Result<(), SendError> {
        let mut off = 0;
        loop {
            // Only the first fragment says what the message is; the others are data.
            let frag = if off == 0 { first } else { Frag::data(first.tag, first.total, false) };
            // A ticket: this send waits for its reservation whatever happens (`srb`).
            match cx.push(dest, (frag, true), &data[off..], &mut held, model)? {
                Some(n) => {
                    off += n;
                    if off == data.len() {
                        return Ok(());
                    }
                }
                None if cx.progress(st, None)? => st.changed(),
                None => {
                    if !*busy {
                        st.set_busy(dest, true);
                        *busy = true;
                    }
                    self.wait(cx, st, Some((dest, data.len() - off, held)), None)?;
                }
            }
        }
    }

    /// A blocking send by the single-copy path (`rendezvous`): announce, wait for the
    /// answer; if the receiver was refused the copy, send the bytes as continuations.
    fn send_single_copy(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        dest: u32,
        (tag, total): (u32, u32),
        data: &[u8],
        model: Model,
    ) -> Result<(), SendError> {
        let token = st.inbox.rdv.announce(dest);
        let at = Rendezvous { addr: data.as_ptr() as u64, token };
        let result = self.announce_and_wait(cx, st, dest, (tag, total), data, at, model);
        st.inbox.rdv.close(dest);
        // Sends of other threads to `dest` may wait for it.
        st.changed();
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn announce_and_wait(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        dest: u32,
        (tag, total): (u32, u32),
        data: &[u8],
        at: Rendezvous,
        model: Model,
    ) -> Result<(), SendError> {
        let announcement = Frag { tag, total, first: true, kind: FragKind::Rendezvous };
        let mut busy = false;
        self.push_all(cx, st, dest, (announcement, None), &at.to_bytes(), model, &mut busy)?;
        debug_assert_eq!(at.to_bytes().len(), RENDEZVOUS_BYTES as usize);
        if busy {
            st.set_busy(dest, false);
        }
        loop {
            match st.inbox.rdv.answer(dest) {
                Some(FragKind::Done) => return Ok(()),
                Some(_) => {
                    // Refused: this process's memory cannot be read by its peers.
                    self.engine.single_copy().refused();
                    let rest = Frag::data(tag, total, false);
                    let sent = self.push_all(cx, st, dest, (rest, None), data, model, &mut busy);
                    if busy {
                        st.set_busy(dest, false);
                    }
                    return sent;
                }
                None if cx.progress(st, None)? => st.changed(),
                None => {
                    self.wait(cx, st, None, None)?;
                }
            }
        }
    }
}
