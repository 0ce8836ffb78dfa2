//! Matched probes (`MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`, `MPI_Imrecv`): a probe
//! that also takes the message out of matching, so that no other receive, of this
//! thread or another, can take it before the receive that names it.
//!
//! Protocol: the probe finds the earliest arrived message matching (source, tag), as
//! [`Core::probe`] does, and in the same hold of the core's state posts a receive with
//! that selector. A new receive takes the earliest matching arrived message, so it takes
//! exactly the probed one, which then belongs to that receive's id (the inbox's
//! `assigned` map) while its later fragments arrive. The [`Matched`] handle is that
//! receive without a buffer yet: [`Matched::recv`] and [`Matched::irecv`] resume it
//! with one, through the posted receives' own path (`request`). Matching the message
//! acknowledges a synchronous one (`synchronous`), as MPI counts a matched probe as
//! the match.
//!
//! Invariants: a matched message is never lost. A handle dropped without a receive
//! puts its message back in its place in the queue, as dropping an unfinished receive
//! does; a receive whose buffer is too small gets [`RecvError::Truncated`] and the
//! message goes back likewise.
//!
//! [`Core::probe`]: crate::Core::probe

use crate::p2p::endpoint::{Endpoint, RecvError, Source, Status, TagMatch};
use crate::p2p::engine::Locked;
use crate::p2p::progress::Ctx;
use crate::p2p::request::{Request, RequestError};

/// A message taken out of matching by a matched probe, to be received with
/// [`Matched::recv`] or [`Matched::irecv`] (module docs).
#[must_use = "a matched message is received through its handle (dropping it requeues the message)"]
pub struct Matched<'c> {
    ep: Endpoint<'c>,
    /// The id of the receive that holds the message.
    id: u64,
    status: Status,
    received: bool,
}

impl<'c> Matched<'c> {
    /// The message's source, tag and length.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Receives the message into `buf` (at least its length).
    pub fn recv(self, buf: &mut [u8]) -> Result<Status, RecvError> {
        self.irecv(buf).wait().map_err(|e| match e {
            RequestError::Recv(e) => e,
            RequestError::Send(_) => unreachable!("a receive request fails as a receive"),
        })
    }

    /// Receives the message into `buf` in the background.
    pub fn irecv<'a>(mut self, buf: &'a mut [u8]) -> Request<'a>
    where
        'c: 'a,
    {
        self.received = true;
        let (src, tag) = (Source::Rank(self.status.source), TagMatch::Tag(self.status.tag));
        Request::recv(self.ep, self.id, src, tag, buf)
    }
}

impl Drop for Matched<'_> {
    fn drop(&mut self) {
        if self.received {
            return;
        }
        if let Ok((_, mut st)) = self.ep.p2p() {
            if st.inbox.cancel(self.id) {
                // Another thread's receive may wait for it.
                st.changed();
            }
        }
    }
}

impl<'c> Endpoint<'c> {
    /// Waits for a message matching `src` and `tag` and takes it out of matching.
    pub(crate) fn mprobe(&self, src: Source, tag: TagMatch) -> Result<Matched<'c>, RecvError> {
        self.check_source(src)?;
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        loop {
            if let Some(status) = st.inbox.probe(src, tag) {
                return self.take(&cx, &mut st, (src, tag), status);
            }
            if cx.progress(&mut st, None)? {
                st.changed();
            } else if st.inbox.probe(src, tag).is_none() {
                self.wait(&cx, &mut st, None, None)?;
            }
        }
    }

    /// [`Endpoint::mprobe`] without waiting: `None` if no matching message is here.
    pub(crate) fn improbe(&self, src: Source, tag: TagMatch) -> Result<Option<Matched<'c>>, RecvError> {
        self.check_source(src)?;
        let (cx, mut st) = self.p2p().map_err(RecvError::Unavailable)?;
        if cx.progress(&mut st, None)? {
            st.changed();
        }
        let Some(status) = st.inbox.probe(src, tag) else { return Ok(None) };
        self.take(&cx, &mut st, (src, tag), status).map(Some)
    }

    /// Takes the probed message (`status`, the earliest matching `src` and `tag`) out
    /// of matching: the receive posted now takes exactly it (module docs).
    fn take(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        (src, tag): (Source, TagMatch),
        status: Status,
    ) -> Result<Matched<'c>, RecvError> {
        let id = st.inbox.post(src, tag);
        // Matched: a synchronous message is acknowledged now.
        cx.push_answers(&mut st.inbox)?;
        Ok(Matched { ep: *self, id, status, received: false })
    }
}
