//! Point-to-point messaging on the core's channels: checked arguments, wire tags,
//! synchronous mode and MPI's truncation rule.
//!
//! A message of communicator `c` with user tag `t` travels as one sccemu message to
//! the destination's world rank, tagged `c.wire_tag(t)`. `MPI_Ssend` and `MPI_Issend`
//! are sccemu's synchronous sends, which the receiver's engine acknowledges as soon as
//! a receive matches the message, from whatever call the receiver is in; so they
//! complete once the matching receive has started, as MPI requires, and never wait
//! for the receive to complete.
//!
//! A receive whose buffer is too small receives the message anyway, keeps what fits,
//! and reports `MPI_ERR_TRUNCATE` (sccemu itself leaves such a message queued).

use std::ffi::c_int;

use sccemu::{RecvError, Source, TagMatch};

use crate::comm::CommObj;
use crate::error::{MpiError, MpiResult, class};
use crate::request::Status;
use crate::state::mpi;

/// `MPI_PROC_NULL`.
pub const PROC_NULL: c_int = -1;
/// `MPI_ANY_SOURCE`.
pub const ANY_SOURCE: c_int = -2;

/// The source a receive on `comm` accepts (`None`: `MPI_PROC_NULL`).
pub fn source(comm: &CommObj, rank: c_int) -> MpiResult<Option<Source>> {
    Ok(match rank {
        PROC_NULL => None,
        ANY_SOURCE => Some(Source::Any),
        r => Some(Source::Rank(comm.world_rank(r)?)),
    })
}

/// Checks a receive's tag (`MPI_ANY_TAG` or `0..=TAG_UB`) and gives what it matches.
pub fn tag_match(comm: &CommObj, tag: c_int) -> MpiResult<TagMatch> {
    comm.tag_match(tag)
}

/// Sends `data` to rank `dest` of `comm` (`MPI_PROC_NULL`: nothing), synchronously
/// if `sync`.
pub fn send(comm: &CommObj, dest: c_int, tag: c_int, data: &[u8], sync: bool) -> MpiResult<()> {
    let wire = comm.wire_tag(tag)?;
    if dest == PROC_NULL {
        return Ok(());
    }
    let to = comm.world_rank(dest)?;
    let core = mpi()?.core;
    if !sync {
        return core.send(to, wire, data).map_err(send_error);
    }
    // The nonblocking form and a wait that drives this process's requests, not the
    // engine's blocking `ssend`: the receiver may be waiting for one of our
    // nonblocking collectives first. The price: what cannot leave at once is copied.
    await_send(core.issend(to, wire, data).map_err(send_error)?)
}

/// Waits for a send to complete (a synchronous one's receive to match), driving this
/// process's own requests meanwhile ([`crate::request::drive_all`]): a nonblocking
/// collective started here may be what the receiver waits for before it receives.
pub fn await_send(mut send: sccemu::Request<'static>) -> MpiResult<()> {
    let core = mpi()?.core;
    let mut failed = None;
    let done = core.wait_on(core.rank(), || match send.test() {
        Ok(Some(_)) => Some(()),
        Ok(None) => {
            crate::request::drive_all();
            None
        }
        Err(e) => {
            failed = Some(e);
            Some(())
        }
    });
    done.map_err(|e| MpiError::new(class::OTHER, e.to_string()))?;
    failed.map_or(Ok(()), |e| Err(request_error(e)))
}

/// The MPI status of a received or probed sccemu message.
pub fn received(comm: &CommObj, s: sccemu::Status) -> Status {
    Status {
        source: comm.rank_of_world(s.source).map_or(ANY_SOURCE, |r| r as c_int),
        tag: CommObj::user_tag(s.tag),
        bytes: s.len,
        cancelled: false,
    }
}

/// Receives into `buf`; a longer message is received whole, cut to fit, and reported
/// as `MPI_ERR_TRUNCATE` with its status.
pub fn recv(comm: &CommObj, src: Source, tag: TagMatch, buf: &mut [u8]) -> MpiResult<Status> {
    let core = mpi()?.core;
    match core.recv(src, tag, buf) {
        Ok(s) => Ok(received(comm, s)),
        Err(RecvError::Truncated { status, capacity }) => truncated(comm, status, capacity, buf),
        Err(e) => Err(recv_error(e)),
    }
}

/// Completes a receive whose message (`status`) is longer than `buf`: takes it
/// whole, keeps the first `capacity` bytes, and reports the truncation.
pub fn truncated(
    comm: &CommObj,
    status: sccemu::Status,
    capacity: usize,
    buf: &mut [u8],
) -> MpiResult<Status> {
    let core = mpi()?.core;
    let mut whole = vec![0u8; status.len];
    let s =
        core.recv(Source::Rank(status.source), TagMatch::Tag(status.tag), &mut whole).map_err(recv_error)?;
    buf[..capacity].copy_from_slice(&whole[..capacity]);
    let st = received(comm, s);
    Err(MpiError::new(
        class::TRUNCATE,
        format!(
            "a message of {} bytes from rank {} with tag {} into a buffer of {capacity}",
            s.len, st.source, st.tag
        ),
    ))
}

/// MPI's error for a failed send.
pub fn send_error(e: sccemu::SendError) -> MpiError {
    let class = match e {
        sccemu::SendError::RankOutOfRange { .. } => class::RANK,
        sccemu::SendError::TooLarge { .. } => class::COUNT,
        _ => class::OTHER,
    };
    MpiError::new(class, e.to_string())
}

/// MPI's error for a failed receive or probe.
pub fn recv_error(e: RecvError) -> MpiError {
    let class = match e {
        RecvError::RankOutOfRange { .. } => class::RANK,
        RecvError::Truncated { .. } => class::TRUNCATE,
        _ => class::OTHER,
    };
    MpiError::new(class, e.to_string())
}

/// The MPI error of a failed sccemu request.
pub fn request_error(e: sccemu::RequestError) -> MpiError {
    match e {
        sccemu::RequestError::Send(e) => send_error(e),
        sccemu::RequestError::Recv(e) => recv_error(e),
    }
}
