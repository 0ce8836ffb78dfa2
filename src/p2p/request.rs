//! Requests of non-blocking sends and receives: `test`, `wait`, [`Core::wait_all`].
//!
//! A send request completes when its last fragment has left (the bytes still to go
//! were copied at `isend`). A receive request owns the borrow of its buffer: while it
//! is tested, fragments of its message go straight into the buffer; between tests they
//! go to memory the inbox owns and are copied in at the next test. Dropping an
//! unfinished receive cancels it; a message already matched to it goes back to the
//! queue in its place, so nothing is lost.
//!
//! [`Core::wait_all`]: crate::Core::wait_all

use std::fmt;

use crate::p2p::endpoint::Endpoint;
use crate::p2p::matching::{Target, TargetState};
use crate::p2p::endpoint::{RecvError, SendError, Source, Status, TagMatch};

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
    Send { id: Option<u64>, status: Status },
    Recv { id: u64, src: Source, tag: TagMatch, buf: &'a mut [u8] },
}

/// A non-blocking operation in flight.
#[must_use = "a request must be tested or waited for"]
pub struct Request<'a> {
    ep: Endpoint<'a>,
    op: Op<'a>,
    finished: Option<Result<Status, RequestError>>,
}

impl<'a> Request<'a> {
    pub(crate) fn send(ep: Endpoint<'a>, id: Option<u64>, status: Status) -> Request<'a> {
        let finished = id.is_none().then_some(Ok(status));
        Request { ep, op: Op::Send { id, status }, finished }
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

    /// Makes progress; `Some(status)` once complete (again on every later call).
    pub fn test(&mut self) -> Result<Option<Status>, RequestError> {
        if let Some(done) = &self.finished {
            return done.clone().map(Some);
        }
        let outcome = match &mut self.op {
            Op::Send { id, status } => {
                let id = id.expect("unfinished sends have an id");
                let (cx, mut st) =
                    self.ep.p2p().map_err(|e| RequestError::Send(SendError::Unavailable(e)))?;
                match cx.progress(&mut st, None) {
                    Err(e) => Some(Err(RequestError::Send(e.into()))),
                    Ok(_) => st.send_finished(id).then_some(Ok(*status)),
                }
            }
            Op::Recv { id, src, tag, buf } => {
                let capacity = buf.len();
                let (cx, mut st) =
                    self.ep.p2p().map_err(|e| RequestError::Recv(RecvError::Unavailable(e)))?;
                let mut t = Target { id: Some(*id), src: *src, tag: *tag, buf, state: TargetState::Open };
                st.inbox.resume(&mut t);
                let mut failed = None;
                if matches!(t.state, TargetState::Open | TargetState::Direct { .. }) {
                    failed = cx.progress(&mut st, Some(&mut t)).err();
                }
                match (failed, t.state) {
                    (Some(e), _) => {
                        st.inbox.spill(&mut t);
                        Some(Err(RequestError::Recv(e.into())))
                    }
                    (None, TargetState::Done(s)) => Some(Ok(s)),
                    (None, TargetState::Truncated(status)) => {
                        Some(Err(RequestError::Recv(RecvError::Truncated { status, capacity })))
                    }
                    (None, _) => {
                        st.inbox.spill(&mut t);
                        None
                    }
                }
            }
        };
        match outcome {
            None => Ok(None),
            Some(done) => {
                self.finished = Some(done.clone());
                done.map(Some)
            }
        }
    }

    /// Waits until the request completes.
    pub fn wait(mut self) -> Result<Status, RequestError> {
        loop {
            if let Some(s) = self.test()? {
                return Ok(s);
            }
            let err = |e| match self.op {
                Op::Send { .. } => RequestError::Send(SendError::Aborted(e)),
                Op::Recv { .. } => RequestError::Recv(RecvError::Aborted(e)),
            };
            let (cx, st) = self.ep.p2p().map_err(|e| match self.op {
                Op::Send { .. } => RequestError::Send(SendError::Unavailable(e)),
                Op::Recv { .. } => RequestError::Recv(RecvError::Unavailable(e)),
            })?;
            cx.wait(&st, None).map_err(err)?;
        }
    }

    /// Whether the request has completed (as of its last test).
    pub fn is_complete(&self) -> bool {
        self.finished.is_some()
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        // Always for receives: a request that failed may still hold its message.
        if let Op::Recv { id, .. } = &self.op {
            if let Ok((_, mut st)) = self.ep.p2p() {
                st.inbox.cancel(*id);
            }
        }
    }
}
