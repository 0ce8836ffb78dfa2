//! The requests of point-to-point calls in flight, as the request table holds them
//! (`crate::request::Op`): a send keeps only sccemu's request (the data left or was
//! copied at the start, or is the user's buffer, read in place), and so does a
//! synchronous one; a standard send that completed at its start keeps only its result
//! (`send_op`); a receive keeps the user's buffer, or a staging buffer for a
//! non-contiguous datatype, unpacked at completion, and can be cancelled until it
//! completes. `MPI_Isend` and `MPI_Irecv` build them on the general path
//! ([`super::p2p`]) and on the fast one ([`super::fast_p2p`]).

use std::borrow::Cow;
use std::ffi::{c_int, c_void};

use crate::comm::CommObj;
use crate::datatype;
use crate::error::{MpiError, MpiResult};
use crate::ffi::buffer::Buffer;
use crate::p2p::{self, request_error};
use crate::request::{Op, Pending, Status};

/// A user's send buffer of a started non-blocking send, handed to sccemu as it is
/// (`Core::isend_owned`): built only by [`start_isend`].
struct UserBytes {
    at: usize,
    len: usize,
}

// SAFETY: the address is a user send buffer, which MPI leaves to the library until the
// send completes, from whichever thread completes it.
unsafe impl Send for UserBytes {}

impl AsRef<[u8]> for UserBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `start_isend`'s contract: `len` bytes at `at`, unchanged and valid until
        // the send completes; sccemu holds this no longer (it drops it once the receiver
        // read the bytes or they left through the channel).
        unsafe { std::slice::from_raw_parts(self.at as *const u8, self.len) }
    }
}

/// Starts sccemu's non-blocking send of `data` to `to`: a large message is handed over
/// rather than copied (`Core::isend_owned`, read by the receiver in place): the user's
/// buffer itself, or the packed copy of a non-contiguous one.
///
/// # Safety
/// A borrowed `data` is the user's buffer of a non-blocking send (`MPI_Isend` and the
/// like), which MPI leaves to the library, unchanged, until the send completes.
#[inline(always)]
pub(super) unsafe fn start_isend(
    core: &'static sccemu::Core,
    to: u32,
    wire: u32,
    data: Cow<'_, [u8]>,
) -> Result<sccemu::Request<'static>, sccemu::SendError> {
    let large = core.single_copy_threshold().is_some_and(|t| data.len() >= t);
    match data {
        Cow::Borrowed(b) if large => {
            core.isend_owned(to, wire, UserBytes { at: b.as_ptr() as usize, len: b.len() })
        }
        Cow::Owned(v) if large => core.isend_owned(to, wire, v),
        data => core.isend(to, wire, &data),
    }
}

/// The table's form of a standard send that `start_isend` started: its result if it
/// completed already (a small message that left, or was delivered to this core, at
/// once: the usual case), so that the request holds neither sccemu's request nor a
/// box; else sccemu's request in a box of this thread's pool (`recv_pool`).
///
/// The early wait is the one the request's completion would make: a finished sccemu
/// request's wait returns what it recorded, without the engine, and charges the call
/// in virtual time as the later one would have.
#[inline(always)]
pub(super) fn send_op(request: sccemu::Request<'static>) -> Op {
    if !request.is_complete() {
        return Op::Send(super::recv_pool::boxed_send(PendingSend { request: Some(request) }));
    }
    match request.wait() {
        Ok(_) => Op::Done(Status::EMPTY),
        Err(e) => Op::Failed(request_error(e)),
    }
}

/// A standard send that had not completed at its start: sccemu's request, in a box
/// that goes back to the thread's pool at completion (`None` only there).
pub struct PendingSend {
    pub(crate) request: Option<sccemu::Request<'static>>,
}

impl PendingSend {
    /// Drives the send without blocking; `Some(status)` once it is complete.
    pub fn test(&mut self) -> MpiResult<Option<Status>> {
        let Some(request) = &mut self.request else { return Ok(Some(Status::EMPTY)) };
        Ok(request.test().map_err(request_error)?.map(|_| Status::EMPTY))
    }

    /// Blocks until the send completes; its box goes back to this thread's pool.
    pub fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let result = match self.request.take() {
            None => Ok(Status::EMPTY),
            Some(request) => request.wait().map(|_| Status::EMPTY).map_err(request_error),
        };
        super::recv_pool::give_back_send(self);
        result
    }

    /// Disposes of a send whose test completed it (its result kept by the caller): its
    /// box goes back to this thread's pool, as its wait would give it.
    pub fn retire(self: Box<Self>) {
        super::recv_pool::give_back_send(self);
    }

    /// Whether the send is known complete (module docs of `crate::request::op`): a
    /// standard send's request, complete or failed, holds nothing that its drop
    /// returns to the engine, and its wait then returns what it recorded.
    pub fn is_finished(&self) -> bool {
        self.request.as_ref().is_none_or(sccemu::Request::is_complete)
    }
}

/// A user buffer that MPI leaves to the library until its operation completes:
/// `count` elements of `map` at `base`, checked when the operation started.
pub struct UserBuffer {
    /// The buffer's address.
    pub base: usize,
    /// Elements.
    pub count: c_int,
    /// Their type.
    pub map: datatype::TypeRef,
}

impl UserBuffer {
    /// The buffer, to read or unpack into.
    pub fn buffer(&self) -> MpiResult<Buffer<'_>> {
        // SAFETY: the buffer the call was given, which MPI leaves to the library until
        // the operation completes; its arguments were checked when it started.
        unsafe { Buffer::new(self.base as *const c_void, self.count, &self.map) }
    }

    /// Unpacks `data` (at most the buffer's bytes) into it.
    pub fn unpack(&self, data: &[u8]) -> MpiResult<()> {
        self.buffer()?.unpack(data)
    }
}

/// A receive in flight, into the user's buffer or, for a non-contiguous datatype,
/// into `staging`, unpacked into the user's buffer at completion.
pub struct PendingRecv {
    // Field order matters: the request borrows `staging`'s heap buffer and must drop
    // first.
    pub(crate) request: Option<sccemu::Request<'static>>,
    /// The staging buffer and the user's buffer it is unpacked into (only a
    /// non-contiguous receive has them, so that a contiguous one keeps no datatype).
    pub(super) staging: Option<(Vec<u8>, UserBuffer)>,
    pub(super) comm: &'static CommObj,
    /// The user buffer when it is received into in place.
    pub(super) direct: Option<(usize, usize)>,
}

// SAFETY: the raw buffer address is the user's receive buffer, which MPI hands to the
// library until completion, from whichever thread completes it.
unsafe impl Send for PendingRecv {}

impl PendingRecv {
    // Inline: out of line, its frame cost a third of what it does for a contiguous
    // receive (callgrind).
    #[inline(always)]
    fn finish(&mut self, s: sccemu::Status) -> MpiResult<Status> {
        let status = p2p::received(self.comm, s);
        if let Some((staging, user)) = &self.staging {
            user.unpack(&staging[..s.len])?;
        }
        Ok(status)
    }

    #[cold]
    #[inline(never)]
    fn failed(&mut self, e: sccemu::RequestError) -> MpiError {
        match e {
            sccemu::RequestError::Recv(sccemu::RecvError::Truncated { status, capacity }) => {
                self.request = None;
                let result = match (&mut self.staging, self.direct) {
                    (Some((staging, _)), _) => p2p::truncated(self.comm, status, capacity, staging),
                    (None, Some((at, len))) => {
                        // SAFETY: as in `irecv`: the user's receive buffer, the
                        // library's until completion; the sccemu request that borrowed
                        // it is gone.
                        let buf = unsafe { std::slice::from_raw_parts_mut(at as *mut u8, len) };
                        p2p::truncated(self.comm, status, capacity, buf)
                    }
                    (None, None) => p2p::truncated(self.comm, status, capacity, &mut []),
                };
                if let Some((staging, user)) = &self.staging {
                    let _ = user.unpack(&staging[..capacity]);
                }
                result.expect_err("a truncated receive reports it")
            }
            e => request_error(e),
        }
    }
}

impl PendingRecv {
    /// Drives the receive without blocking; `Some(status)` once it is complete.
    pub fn test(&mut self) -> MpiResult<Option<Status>> {
        let Some(request) = &mut self.request else { return Ok(Some(Status::EMPTY)) };
        match request.test() {
            Ok(Some(s)) => self.finish(s).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// Blocks until the receive completes; its box goes back to this thread's pool
    /// (`recv_pool`).
    pub fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let result = match self.request.take() {
            None => Ok(Status::EMPTY),
            Some(request) => match request.wait() {
                Ok(s) => self.finish(s),
                Err(e) => Err(self.failed(e)),
            },
        };
        super::recv_pool::give_back(self);
        result
    }

    /// Whether the receive's wait returns success at once, without sccemu's engine
    /// (`sccemu::Request::is_settled`: a receive that took its message at its start,
    /// or one a test saw complete), so that neither it nor its drop locks the engine.
    pub fn is_finished(&self) -> bool {
        self.request.as_ref().is_none_or(sccemu::Request::is_settled)
    }

    /// Disposes of a receive whose test completed it (its result kept by the caller):
    /// its box goes back to this thread's pool, as its wait would give it.
    pub fn retire(self: Box<Self>) {
        super::recv_pool::give_back(self);
    }

    /// Withdraws the receive if it has not completed (`MPI_Cancel`); whether it was.
    pub fn cancel(&mut self) -> bool {
        // Dropping sccemu's unfinished receive withdraws it; a message it held goes back
        // to the queue whole.
        self.request.take().is_some()
    }
}

/// An `MPI_Issend` in flight: sccemu's synchronous send, complete once the message
/// left and a receive matched it.
pub(super) struct PendingSsend {
    pub(super) request: sccemu::Request<'static>,
}

impl Pending for PendingSsend {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        Ok(self.request.test().map_err(request_error)?.map(|_| Status::EMPTY))
    }

    fn wait(self: Box<Self>) -> MpiResult<Status> {
        p2p::await_send(self.request)?;
        Ok(Status::EMPTY)
    }
}
