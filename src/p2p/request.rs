//! Requests of non-blocking sends and receives: `test`, `wait`, [`Core::wait_all`].
//!
//! A send request completes when its last fragment has left (the bytes still to go
//! were copied at `isend`), and a synchronous one once its acknowledgement is in too. A receive request owns the borrow of its buffer: while it
//! is tested, fragments of its message go straight into the buffer; between tests they
//! go to memory the inbox owns and are copied in at the next test. A receive whose
//! message is here whole when it starts copies it in at once and is posted nowhere; its
//! first test or wait completes it without looking at the state (an 8-message halo
//! step to oneself, sends first: 12 254 -> 10 482 instructions through the MPI
//! library). Dropping an unfinished receive cancels it; a message already matched to it
//! (or copied in) goes back to the queue in its place, so nothing is lost.
//!
//! [`Core::wait_all`]: crate::Core::wait_all

use std::fmt;

use crate::p2p::channel::ChannelUnavailable;
use crate::p2p::endpoint::{Endpoint, RecvError, SendError, Source, Status, TagMatch};
use crate::p2p::engine::Locked;
use crate::p2p::matching::{Target, TargetState};
use crate::p2p::progress::Ctx;
use crate::p2p::timed;
use crate::timing::{self, Category};

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// A send request failed.
    Send(SendError),
    /// A receive request failed.
    Recv(RecvError),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Send(e) => e.fmt(f),
            Self::Recv(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RequestError {}

enum Op<'a> {
    /// `id`: the queued rest, if any; `sync`: the destination and number of a
    /// synchronous message.
    Send { id: Option<u64>, status: Status, sync: Option<(u32, u32)> },
    Recv { id: u64, src: Source, tag: TagMatch, buf: &'a mut [u8] },
    /// A receive whose message was here whole when it started and is in `buf`
    /// already (`Inbox::take_whole`): its first test or wait completes it, and
    /// charges it in virtual time as a receive completing then; dropped before, it
    /// gives the message (`seq`, its arrival number) back to the queue.
    Taken { status: Status, seq: u64, buf: &'a mut [u8] },
}

/// A non-blocking operation in flight.
#[must_use = "a request must be tested or waited for"]
pub struct Request<'a> {
    ep: Endpoint<'a>,
    op: Op<'a>,
    finished: Option<Result<Status, RequestError>>,
}

impl<'a> Request<'a> {
    pub(crate) fn send(ep: Endpoint<'a>, id: Option<u64>, status: Status, sync: Option<(u32, u32)>) -> Request<'a> {
        let finished = (id.is_none() && sync.is_none()).then_some(Ok(status));
        Request { ep, op: Op::Send { id, status, sync }, finished }
    }

    pub(crate) fn recv(
        ep: Endpoint<'a>,
        id: u64,
        src: Source,
        tag: TagMatch,
        buf: &'a mut [u8],
    ) -> Request<'a> {
        Request { ep, op: Op::Recv { id, src, tag, buf }, finished: None }
    }

    pub(crate) fn taken(ep: Endpoint<'a>, status: Status, seq: u64, buf: &'a mut [u8]) -> Request<'a> {
        Request { ep, op: Op::Taken { status, seq, buf }, finished: None }
    }

    /// Makes progress; `Some(status)` once complete (again on every later call).
    pub fn test(&mut self) -> Result<Option<Status>, RequestError> {
        // A call whatever the host did meanwhile: whether a send already left depends
        // on its scheduling, so a finished request costs the same as an open one.
        let _op = timing::call(self.category(), "test");
        if let Some(settled) = self.settle() {
            return settled;
        }
        // An open receive with nothing new for it needs no lock (`Engine::nothing_new`).
        if self.is_open_recv() && self.ep.engine.nothing_new(self.ep.ctx) {
            return Ok(None);
        }
        let (cx, mut st) = self.ep.p2p().map_err(|e| self.unavailable(e))?;
        self.test_held(&cx, &mut st, &mut true)
    }

    /// One test of an open request under a hold of its core's state. `drive`: whether
    /// to make progress in it; left false if that moved nothing (a
    /// [`TestRound`](super::round::TestRound)'s later tests then need not look again).
    pub(super) fn test_held(
        &mut self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        drive: &mut bool,
    ) -> Result<Option<Status>, RequestError> {
        let outcome = match &mut self.op {
            Op::Send { id, status, sync } => Self::test_send(cx, st, (*id, *status, *sync), drive),
            Op::Recv { id, src, tag, buf } => {
                let mut t = Target { id: Some(*id), src: *src, tag: *tag, buf, state: TargetState::Open };
                let outcome = Self::test_recv(cx, st, &mut t, drive);
                if st.inbox.spill(&mut t) {
                    st.changed();
                }
                outcome
            }
            Op::Taken { .. } => unreachable!("completed without the state"),
        };
        self.finish(outcome)
    }

    /// What a test returns without the state: the outcome of a finished request, or
    /// the completion of one that took its message at its start; `None` for the rest.
    pub(super) fn settle(&mut self) -> Option<Result<Option<Status>, RequestError>> {
        if let Some(done) = &self.finished {
            return Some(done.clone().map(Some));
        }
        let Op::Taken { status, .. } = self.op else { return None };
        Some(self.finish(Some(Self::complete_taken(status))))
    }

    /// Whether `ep` is this request's endpoint (its core's state).
    pub(super) fn is_of(&self, ep: &Endpoint<'_>) -> bool {
        std::ptr::eq(self.ep.engine, ep.engine)
    }

    /// Waits until the request completes.
    pub fn wait(mut self) -> Result<Status, RequestError> {
        let _op = timing::call(self.category(), "wait");
        if let Some(done) = &self.finished {
            return done.clone();
        }
        if let Op::Taken { status, .. } = self.op {
            return self.finish(Some(Self::complete_taken(status))).map(|s| s.expect("finished"));
        }
        self.wait_open()
    }

    /// The wait of a request still open. Out of line: its frame (a target, the state's
    /// guard) cost the settled requests' waits above about 90 instructions each
    /// (callgrind, a halo step to oneself through the MPI library).
    #[inline(never)]
    fn wait_open(mut self) -> Result<Status, RequestError> {
        let ep = self.ep;
        let (cx, mut st) = ep.p2p().map_err(|e| self.unavailable(e))?;
        // Tests and waits under one hold of the state, so that no change between them
        // goes unseen (the wait's watch starts from what the test saw).
        let outcome = match &mut self.op {
            Op::Send { id, status, sync } => loop {
                if let Some(done) = Self::test_send(&cx, &mut st, (*id, *status, *sync), &mut true) {
                    break done;
                }
                if let Err(e) = ep.wait(&cx, &mut st, None, None) {
                    break Err(RequestError::Send(e.into()));
                }
            },
            Op::Recv { id, src, tag, buf } => {
                let mut t = Target { id: Some(*id), src: *src, tag: *tag, buf, state: TargetState::Open };
                let done = loop {
                    if let Some(done) = Self::test_recv(&cx, &mut st, &mut t, &mut true) {
                        break done;
                    }
                    if let Err(e) = ep.wait(&cx, &mut st, None, Some(&mut t)) {
                        break Err(RequestError::Recv(e.into()));
                    }
                };
                if st.inbox.spill(&mut t) {
                    st.changed();
                }
                done
            }
            Op::Taken { .. } => unreachable!("completed without the state"),
        };
        drop(st);
        self.finish(Some(outcome)).map(|s| s.expect("finished"))
    }

    fn category(&self) -> Category {
        match self.op {
            Op::Send { .. } => Category::Send,
            Op::Recv { .. } | Op::Taken { .. } => Category::Recv,
        }
    }

    pub(super) fn unavailable(&self, e: ChannelUnavailable) -> RequestError {
        match self.op {
            Op::Send { .. } => RequestError::Send(SendError::Unavailable(e)),
            Op::Recv { .. } | Op::Taken { .. } => RequestError::Recv(RecvError::Unavailable(e)),
        }
    }

    /// Records a finished outcome.
    fn finish(&mut self, outcome: Option<Result<Status, RequestError>>) -> Result<Option<Status>, RequestError> {
        match outcome {
            None => Ok(None),
            Some(done) => {
                self.finished = Some(done.clone());
                done.map(Some)
            }
        }
    }

    /// One test of a send (of `id`, its queued rest if any, and `sync`, its
    /// synchronous number), after a progress round if `drive` (see `test_held`).
    fn test_send(
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        (id, status, sync): (Option<u64>, Status, Option<(u32, u32)>),
        drive: &mut bool,
    ) -> Option<Result<Status, RequestError>> {
        if *drive {
            match cx.progress(st, None) {
                Err(e) => return Some(Err(RequestError::Send(e.into()))),
                Ok(true) => st.changed(),
                Ok(false) => *drive = false,
            }
        }
        if !id.is_none_or(|id| st.send_finished(id)) {
            return None;
        }
        // Taken only once it left: the acknowledgement cannot come before.
        if let Some((dest, number)) = sync {
            timed::acknowledged(st.inbox.sync.take(dest, number)?);
        }
        Some(Ok(status))
    }

    /// Completes a receive that took its message at its start.
    fn complete_taken(status: Status) -> Result<Status, RequestError> {
        timed::received(&status);
        Ok(status)
    }

    /// One test of a receive whose target is `t` (Open, or receiving directly from an
    /// earlier round of the same call); it drains the channel too if `drive` (see
    /// `test_held`).
    fn test_recv(
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        t: &mut Target<'_>,
        drive: &mut bool,
    ) -> Option<Result<Status, RequestError>> {
        let capacity = t.buf.len();
        let resumed = st.inbox.resume(t, cx).and_then(|()| cx.push_answers(&mut st.inbox));
        if let Err(e) = resumed {
            return Some(Err(RequestError::Recv(e.into())));
        }
        if *drive && matches!(t.state, TargetState::Open | TargetState::Direct { .. }) {
            match cx.progress(st, Some(t)) {
                Err(e) => return Some(Err(RequestError::Recv(e.into()))),
                Ok(true) => st.changed(),
                Ok(false) => *drive = false,
            }
        }
        match t.state {
            TargetState::Done(s) => {
                timed::received(&s);
                Some(Ok(s))
            }
            TargetState::Truncated(status) => Some(Err(RequestError::Recv(RecvError::Truncated { status, capacity }))),
            _ => None,
        }
    }

    /// Whether it is a receive still posted (not finished, and not one that took its
    /// message at its start).
    pub(super) fn is_open_recv(&self) -> bool {
        self.finished.is_none() && matches!(self.op, Op::Recv { .. })
    }

    /// Whether the request has completed (as of its last test).
    pub fn is_complete(&self) -> bool {
        self.finished.is_some()
    }

    /// Whether its wait returns success at once, without the engine, and nothing is
    /// left for its drop to do there: it completed successfully (as of its last test),
    /// or it is a receive that took its message whole at its start.
    pub fn is_settled(&self) -> bool {
        matches!(self.finished, Some(Ok(_))) || matches!(self.op, Op::Taken { .. })
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        // For receives that did not complete: an open or failed one may still be posted
        // or hold its message. One that completed holds nothing (its message was taken
        // out of the queues whole), and the state need not be locked again; nor for
        // a send that awaits no acknowledgement.
        if matches!(self.finished, Some(Ok(_))) || matches!(self.op, Op::Send { sync: None, .. }) {
            return;
        }
        let Ok((_, mut st)) = self.ep.p2p() else { return };
        match &self.op {
            Op::Recv { id, .. } => {
                // A message it held goes back to the queue, where another thread's
                // receive may wait for it.
                if st.inbox.cancel(*id) {
                    st.changed();
                }
            }
            Op::Taken { status, seq, buf } => {
                st.inbox.give_back(*status, *seq, &buf[..status.len]);
                st.changed();
            }
            // Its acknowledgement, if it ever comes, is for nobody.
            Op::Send { sync: Some((dest, number)), .. } => st.inbox.sync.forget(*dest, *number),
            Op::Send { .. } => {}
        }
    }
}
