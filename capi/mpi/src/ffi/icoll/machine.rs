//! The engine of the nonblocking collectives: an operation in flight is an [`Icoll`]
//! request, which holds the operation's wire (its communicator's members, its tag
//! base, its sends not yet known to have left) and its protocol, a state machine over
//! sccemu's nonblocking point-to-point messages. The protocols live by mechanism in
//! the sibling modules: [`super::tree`] (barrier, broadcast tree, reductions and
//! gathers to a root), [`super::spread`] (blocks exchanged directly between the ranks:
//! scatter, alltoall, reduce-scatter and the v-forms), [`super::chain`] (the prefix
//! reductions) and [`super::neighbor`] (blocks exchanged with a topology's
//! neighbours).
//!
//! Starting one posts its first messages and returns; [`Icoll`]'s `test` then advances
//! it as far as the messages already in allow, never blocking, and `wait` sleeps on the
//! core's doorbell between tests (MPI lets an operation progress only inside MPI calls,
//! which is where these tests run: `MPI_Test*`, `MPI_Wait*`, and the waits for
//! synchronous sends and for other nonblocking collectives, which drive every request).
//!
//! Tags: communicator `c`'s nonblocking collectives travel in a context of their own,
//! `c.context | ICOLL_CONTEXT_BIT` (`crate::comm`), which no user message or blocking
//! collective uses, so none of those can match them, even with
//! `MPI_ANY_TAG`. Below the context, each tag holds the operation's sequence number
//! on the communicator (every member starts its nonblocking collectives in the same
//! order, as MPI requires, so the numbers agree; they wrap at 2^13, so at most 2^13
//! operations may be in flight on one communicator at once) and a 6-bit phase:
//! barrier round `k` is phase `k`, a broadcast tree's messages phase [`PHASE_TREE`], a
//! reduction's or gather's inputs phase [`PHASE_GATHER`], the blocks of a direct
//! exchange phase [`PHASE_SPREAD`], a prefix chain's partial results phase
//! [`PHASE_CHAIN`], a neighbourhood exchange's blocks phase 0, or on a grid their
//! direction ([`super::neighbor`]); on an intercommunicator ([`super::inter`]) the
//! messages between the groups phase [`PHASE_REMOTE`], and `MPI_Comm_idup`'s
//! ([`super::idup`]) phases of their own from [`PHASE_IDUP`] up. Every receive names
//! its source and the exact tag, and each (source, tag) pair carries one message per
//! operation (but for a graph's repeated edges, and idup's rounds, whose messages the
//! channels' order pairs), so two operations in flight never mix.
//!
//! A receive expects a length: exactly (the equal-block calls, whose members' type
//! signatures must match: anything else is `MPI_ERR_TRUNCATE` "the members' counts
//! differ") or at most (the v-forms, which, as the blocking ones, take a shorter
//! message and refuse a longer one with `MPI_ERR_TRUNCATE`).
//!
//! An operation is complete once its own part is done (result unpacked into the user's
//! buffer) and every message it sent has left.

use sccemu::{Source, TagMatch};

use crate::comm::{CommObj, ICOLL_PHASE_BITS};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ordered::Combine;
use crate::p2p::{recv_error, request_error, send_error};
use crate::request::{Pending, Status};
use crate::state::mpi;

/// The phase of a broadcast tree's messages.
pub const PHASE_TREE: u32 = 32;
/// The phase of a reduction's or gather's inputs, sent to the root.
pub const PHASE_GATHER: u32 = 33;
/// The phase of the blocks of a direct exchange (`super::spread`).
pub const PHASE_SPREAD: u32 = 34;
/// The phase of a prefix chain's partial results (`super::chain`).
pub const PHASE_CHAIN: u32 = 35;
/// The phase of an intercommunicator's messages between its groups (`super::inter`).
pub const PHASE_REMOTE: u32 = 36;
/// The first of `MPI_Comm_idup`'s phases (`super::idup`), which takes six.
pub const PHASE_IDUP: u32 = 40;
const _: () = assert!(PHASE_IDUP + 6 < 1 << ICOLL_PHASE_BITS);

/// One operation's addressing: the communicator's members and the operation's tag base.
pub(super) struct Wire {
    pub(super) core: &'static sccemu::Core,
    members: Vec<u32>,
    /// An intercommunicator's remote group (world ranks, by rank); empty otherwise.
    peers: Vec<u32>,
    /// This process's rank in the communicator.
    pub(super) rank: u32,
    base: u32,
    /// Sends not yet known to have left.
    sends: Vec<sccemu::Request<'static>>,
}

impl Wire {
    /// Takes the communicator's next sequence number: call once all arguments are
    /// checked, so that a call refused everywhere consumes none.
    fn new(c: &CommObj) -> MpiResult<Wire> {
        let core = mpi()?.core;
        Ok(Wire {
            core,
            members: c.members.clone(),
            peers: c.remote().map(<[u32]>::to_vec).unwrap_or_default(),
            rank: c.rank,
            base: c.next_icoll_tag(),
            sends: Vec::new(),
        })
    }

    /// The communicator's size.
    pub(super) fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// Sends `data` to rank `to` in `phase` (sccemu copies what cannot leave at once).
    pub(super) fn send(&mut self, to: u32, phase: u32, data: &[u8]) -> MpiResult<()> {
        self.send_world(self.members[to as usize], phase, data)
    }

    /// Sends `data` to world rank `world` in `phase`, keeping the request.
    fn send_world(&mut self, world: u32, phase: u32, data: &[u8]) -> MpiResult<()> {
        let request = self.core.isend(world, self.base | phase, data).map_err(send_error)?;
        self.sends.push(request);
        Ok(())
    }

    /// Posts the receive of exactly `len` bytes from rank `from` in `phase`.
    pub(super) fn post(&self, from: u32, phase: u32, len: usize) -> MpiResult<Incoming> {
        self.post_receive(self.members[from as usize], phase, len, true)
    }

    /// The local group's world ranks, by rank.
    pub(super) fn members(&self) -> &[u32] {
        &self.members
    }

    /// An intercommunicator's remote group's size (0 on an intracommunicator).
    pub(super) fn remote_size(&self) -> u32 {
        self.peers.len() as u32
    }

    /// Sends `data` to rank `to` of an intercommunicator's remote group in `phase`.
    pub(super) fn send_remote(&mut self, to: u32, phase: u32, data: &[u8]) -> MpiResult<()> {
        self.send_world(self.peers[to as usize], phase, data)
    }

    /// Posts the receive of exactly `len` bytes from rank `from` of an
    /// intercommunicator's remote group in `phase`.
    pub(super) fn post_remote(&self, from: u32, phase: u32, len: usize) -> MpiResult<Incoming> {
        self.post_receive(self.peers[from as usize], phase, len, true)
    }

    /// Posts the receive of at most `len` bytes from rank `from` of an
    /// intercommunicator's remote group in `phase`.
    pub(super) fn post_remote_most(&self, from: u32, phase: u32, len: usize) -> MpiResult<Incoming> {
        self.post_receive(self.peers[from as usize], phase, len, false)
    }

    /// Posts the receive of at most `len` bytes from rank `from` in `phase`.
    pub(super) fn post_most(&self, from: u32, phase: u32, len: usize) -> MpiResult<Incoming> {
        self.post_receive(self.members[from as usize], phase, len, false)
    }

    /// Posts the receive of `len` bytes (exactly, or at most) from world rank `from`.
    fn post_receive(&self, from: u32, phase: u32, len: usize, exact: bool) -> MpiResult<Incoming> {
        let mut buf = vec![0u8; len];
        // SAFETY: the vector's heap block is owned by the `Incoming` built below, never
        // resized while the request lives, and outlives the request that borrows it
        // (declared first, so dropped first); nothing reads it until the request
        // completes.
        let target: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr(), len) };
        let source = Source::Rank(from);
        let request =
            self.core.irecv(source, TagMatch::Tag(self.base | phase), target).map_err(recv_error)?;
        Ok(Incoming { request: Some(request), buf, exact })
    }

    /// Whether every send has left.
    fn sent(&mut self) -> MpiResult<bool> {
        let mut failure = None;
        self.sends.retain_mut(|r| match r.test() {
            Ok(done) => done.is_none(),
            Err(e) => {
                failure = Some(request_error(e));
                false
            }
        });
        failure.map_or(Ok(self.sends.is_empty()), Err)
    }
}

/// A posted receive of one message of known (or largest) length.
pub(super) struct Incoming {
    // Field order matters: the request borrows `buf`'s heap block and must drop first.
    request: Option<sccemu::Request<'static>>,
    /// The message, once in (cut to its length when it may be shorter).
    pub(super) buf: Vec<u8>,
    exact: bool,
}

impl Incoming {
    /// Whether the message is in.
    pub(super) fn arrived(&mut self) -> MpiResult<bool> {
        let Some(request) = &mut self.request else { return Ok(true) };
        let Some(status) = request.test().map_err(request_error)? else { return Ok(false) };
        self.request = None;
        if !self.exact {
            // No longer borrowed: the request is gone.
            self.buf.truncate(status.len);
        } else if status.len != self.buf.len() {
            return fail(
                class::TRUNCATE,
                format!(
                    "{} bytes where {} were expected: the members' counts differ",
                    status.len,
                    self.buf.len()
                ),
            );
        }
        Ok(true)
    }
}

/// The ordered combination `parts[0] op parts[1] op ... op parts[n-1]`, left to right:
/// the fold the blocking reductions make (`crate::ordered`), so results agree bit for
/// bit and a non-commutative op gets the rank-ordered result.
pub(super) fn fold_in_order<'a>(
    mut parts: impl Iterator<Item = &'a [u8]>,
    combine: &dyn Combine,
) -> MpiResult<Vec<u8>> {
    let mut acc = parts.next().unwrap_or_default().to_vec();
    for part in parts {
        let mut next = part.to_vec();
        combine.combine(&acc, &mut next)?;
        acc = next;
    }
    Ok(acc)
}

/// One protocol's state machine at this rank.
pub(super) trait Protocol: Send {
    /// Advances this rank's part as far as the messages already in allow, never
    /// blocking: whether it is done (its result, if any, unpacked into the user's
    /// buffer). Not called again once done.
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool>;
}

/// A nonblocking collective in flight.
pub struct Icoll {
    wire: Wire,
    protocol: Box<dyn Protocol>,
    /// Whether this rank's part is done (result unpacked); then only sends remain.
    finished: bool,
}

/// Starts an operation on `c`: takes its sequence number (every argument is checked by
/// now), then `build` posts its first messages and gives its protocol.
pub(super) fn start<P: Protocol + 'static>(
    c: &CommObj,
    build: impl FnOnce(&mut Wire) -> MpiResult<P>,
) -> MpiResult<Box<dyn Pending>> {
    let mut wire = Wire::new(c)?;
    let protocol = Box::new(build(&mut wire)?);
    Ok(Box::new(Icoll { wire, protocol, finished: false }))
}

impl Pending for Icoll {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        if !self.finished {
            self.finished = self.protocol.advance(&mut self.wire)?;
        }
        Ok((self.finished && self.wire.sent()?).then_some(Status::EMPTY))
    }

    fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let core = self.wire.core;
        let mut outcome = None;
        let woke = core.wait_on(core.rank(), || match self.test() {
            Ok(None) => {
                // Other requests of this process may be what the peers wait for
                // (another nonblocking collective): drive them too.
                crate::request::drive_all();
                None
            }
            done => {
                outcome = Some(done);
                Some(())
            }
        });
        woke.map_err(|e| MpiError::new(class::OTHER, e.to_string()))?;
        match outcome {
            Some(Ok(Some(status))) => Ok(status),
            Some(Err(e)) => Err(e),
            _ => fail(class::INTERN, "a nonblocking collective's wait ended unfinished"),
        }
    }
}
