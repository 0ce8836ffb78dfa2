//! Nonblocking collectives (`MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`,
//! `MPI_Iallreduce`, `MPI_Igather`, `MPI_Iallgather`): state machines over sccemu's
//! nonblocking point-to-point messages.
//!
//! Starting one posts its first messages and returns; [`Icoll`]'s `test` then advances
//! it as far as the messages already in allow, never blocking, and `wait` sleeps on the
//! core's doorbell between tests (MPI lets an operation progress only inside MPI calls,
//! which is where these tests run: `MPI_Test*`, `MPI_Wait*`, and the waits for
//! synchronous sends, which drive every request).
//!
//! Tags: communicator `c`'s nonblocking collectives travel in a context of their own,
//! `c.context | ICOLL_CONTEXT_BIT` (`crate::comm`), which no user message, blocking
//! collective or acknowledgement uses, so none of those can match them, even with
//! `MPI_ANY_TAG`. Below the context, each tag holds the operation's sequence number
//! on the communicator (every member starts its nonblocking collectives in the same
//! order, as MPI requires, so the numbers agree; they wrap at 2^14, so at most 2^14
//! operations may be in flight on one communicator at once) and a 6-bit phase:
//! barrier round `k` is phase `k`, a broadcast tree's messages phase [`PHASE_TREE`], a
//! reduction's or gather's inputs phase [`PHASE_GATHER`]. Every
//! receive names its source and the exact tag, and each (source, tag) pair carries one
//! message per operation, so two operations in flight never mix.
//!
//! Protocols:
//! - barrier: dissemination, ceil(log2 n) rounds; in round `k` rank `r` sends an empty
//!   message to `r + 2^k` and waits for one from `r - 2^k` (mod n) before the next
//!   round. Once the last round's message is in, every rank has entered.
//! - broadcast: binomial tree over ranks relative to the root; a rank receives from its
//!   parent (its relative rank less its lowest set bit) and then sends to its children.
//! - reduce: every rank sends its packed input to the root, which folds all inputs in
//!   rank order, `x0 op x1 op ... op x(n-1)`, left to right: the combination the
//!   blocking reductions make (`crate::ordered`), so the results are the same bit for
//!   bit, and non-commutative user ops get the rank-ordered result. O(n) at the root,
//!   fine at SCC scale.
//! - allreduce: a reduce to rank 0, then a broadcast of its result from rank 0 (the
//!   tree's receive is posted at the start: its phase differs from the gather's).
//! - gather and allgather: as reduce and allreduce, the root concatenating the inputs
//!   in rank order instead of folding them.
//!
//! An operation is complete once its own part is done (result unpacked into the user's
//! buffer) and every message it sent has left.

use sccemu::{Source, TagMatch};

use crate::comm::{CommObj, ICOLL_PHASE_BITS};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::pending::UserBuffer;
use crate::ordered::Combine;
use crate::p2p::{recv_error, request_error, send_error};
use crate::request::{Pending, Status};
use crate::state::mpi;

/// The phase of a broadcast tree's messages.
pub const PHASE_TREE: u32 = 32;
/// The phase of a reduction's inputs, sent to the root.
pub const PHASE_GATHER: u32 = 33;
const _: () = assert!(PHASE_GATHER < 1 << ICOLL_PHASE_BITS);

/// One operation's addressing: the communicator's members and the operation's tag base.
struct Wire {
    core: &'static sccemu::Core,
    members: Vec<u32>,
    rank: u32,
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
            rank: c.rank,
            base: c.next_icoll_tag(),
            sends: Vec::new(),
        })
    }

    fn size(&self) -> u32 {
        self.members.len() as u32
    }

    fn send(&mut self, to: u32, phase: u32, data: &[u8]) -> MpiResult<()> {
        let request =
            self.core.isend(self.members[to as usize], self.base | phase, data).map_err(send_error)?;
        self.sends.push(request);
        Ok(())
    }

    fn post(&self, from: u32, phase: u32, len: usize) -> MpiResult<Incoming> {
        let mut buf = vec![0u8; len];
        // SAFETY: the vector's heap block is owned by the `Incoming` built below, never
        // resized, and outlives the request that borrows it (declared first, so dropped
        // first); nothing reads it until the request completes.
        let target: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr(), len) };
        let source = Source::Rank(self.members[from as usize]);
        let request =
            self.core.irecv(source, TagMatch::Tag(self.base | phase), target).map_err(recv_error)?;
        Ok(Incoming { request: Some(request), buf })
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

/// A posted receive of one message of known length.
struct Incoming {
    // Field order matters: the request borrows `buf`'s heap block and must drop first.
    request: Option<sccemu::Request<'static>>,
    buf: Vec<u8>,
}

impl Incoming {
    /// Whether the message is in.
    fn arrived(&mut self) -> MpiResult<bool> {
        let Some(request) = &mut self.request else { return Ok(true) };
        let Some(status) = request.test().map_err(request_error)? else { return Ok(false) };
        self.request = None;
        if status.len != self.buf.len() {
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

/// Dissemination barrier: the current round and its awaited message.
struct Barrier {
    round: u32,
    rounds: u32,
    incoming: Option<Incoming>,
}

impl Barrier {
    fn start(w: &mut Wire) -> MpiResult<Barrier> {
        let n = w.size();
        let rounds = u32::BITS - (n - 1).leading_zeros();
        let mut b = Barrier { round: 0, rounds, incoming: None };
        b.post_round(w)?;
        Ok(b)
    }

    fn post_round(&mut self, w: &mut Wire) -> MpiResult<()> {
        if self.round == self.rounds {
            return Ok(());
        }
        let (n, dist) = (w.size(), 1u32 << self.round);
        self.incoming = Some(w.post((w.rank + n - dist % n) % n, self.round, 0)?);
        w.send((w.rank + dist) % n, self.round, &[])
    }

    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        while self.round < self.rounds {
            if let Some(i) = &mut self.incoming
                && !i.arrived()?
            {
                return Ok(false);
            }
            self.round += 1;
            self.post_round(w)?;
        }
        Ok(true)
    }
}

/// Binomial broadcast tree: the data, once here, and the parent's message until then.
struct Tree {
    root: u32,
    data: Option<Vec<u8>>,
    parent: Option<Incoming>,
    forwarded: bool,
}

impl Tree {
    /// Posts the receive from the parent (off the root); the root's `data` may come
    /// later ([`Tree::advance`] waits for it).
    fn start(w: &Wire, root: u32, len: usize, data: Option<Vec<u8>>) -> MpiResult<Tree> {
        let n = w.size();
        let rel = (w.rank + n - root) % n;
        let parent = if rel == 0 {
            None
        } else {
            let parent_rel = rel - (1 << rel.trailing_zeros());
            Some(w.post((parent_rel + root) % n, PHASE_TREE, len)?)
        };
        Ok(Tree { root, data, parent, forwarded: false })
    }

    /// The data once here and forwarded to the children.
    fn advance(&mut self, w: &mut Wire) -> MpiResult<Option<&[u8]>> {
        if self.data.is_none() {
            let Some(p) = &mut self.parent else { return Ok(None) };
            if !p.arrived()? {
                return Ok(None);
            }
            self.data = self.parent.take().map(|p| p.buf);
        }
        let data = self.data.as_deref().unwrap_or_default();
        if !self.forwarded {
            self.forwarded = true;
            let n = w.size();
            let rel = (w.rank + n - self.root) % n;
            // Children are rel + m for every power of two m below rel's lowest set bit
            // (below n for the root).
            let limit = if rel == 0 { n.next_power_of_two() } else { 1 << rel.trailing_zeros() };
            let mut m = 1;
            while m < limit {
                if rel + m < n {
                    w.send((rel + m + self.root) % n, PHASE_TREE, data)?;
                }
                m <<= 1;
            }
        }
        Ok(Some(data))
    }
}

/// Every rank's input moving to the root, and the root's fold of them (or, without an
/// op, their concatenation in rank order).
struct Fold {
    root: u32,
    mine: Vec<u8>,
    /// At the root, the other ranks' inputs by rank.
    parts: Vec<Option<Incoming>>,
    combine: Option<Box<dyn Combine + Send>>,
    result: Option<Vec<u8>>,
}

impl Fold {
    fn start(
        w: &mut Wire,
        root: u32,
        mine: Vec<u8>,
        combine: Option<Box<dyn Combine + Send>>,
    ) -> MpiResult<Fold> {
        let mut parts = Vec::new();
        if w.rank == root {
            for r in 0..w.size() {
                parts.push(if r == root { None } else { Some(w.post(r, PHASE_GATHER, mine.len())?) });
            }
        } else {
            w.send(root, PHASE_GATHER, &mine)?;
        }
        Ok(Fold { root, mine, parts, combine, result: None })
    }

    /// Whether this rank's part is done; the root's result is then in `result`.
    fn advance(&mut self, w: &Wire) -> MpiResult<bool> {
        if w.rank != self.root || self.result.is_some() {
            return Ok(true);
        }
        for p in self.parts.iter_mut().flatten() {
            if !p.arrived()? {
                return Ok(false);
            }
        }
        let input = |r: usize| match &self.parts[r] {
            Some(p) => &p.buf[..],
            None => &self.mine[..],
        };
        let Some(combine) = &self.combine else {
            self.result = Some((0..self.parts.len()).flat_map(|r| input(r).iter().copied()).collect());
            return Ok(true);
        };
        let mut acc = input(0).to_vec();
        for r in 1..self.parts.len() {
            let mut next = input(r).to_vec();
            combine.combine(&acc, &mut next)?;
            acc = next;
        }
        self.result = Some(acc);
        Ok(true)
    }
}

enum Protocol {
    Barrier(Barrier),
    Bcast(Tree),
    /// Reduce or gather.
    ToRoot(Fold),
    /// Allreduce or allgather: to rank 0, then its broadcast.
    ToAll(Fold, Tree),
}

/// A nonblocking collective in flight.
pub struct Icoll {
    wire: Wire,
    protocol: Protocol,
    /// Where this rank's result goes (`None`: nowhere, as at a broadcast's root).
    target: Option<UserBuffer>,
    /// Whether this rank's part is done (result unpacked); then only sends remain.
    finished: bool,
}

impl Icoll {
    /// Advances this rank's part; whether it is done.
    fn advance(&mut self) -> MpiResult<bool> {
        let w = &mut self.wire;
        let result: Option<Vec<u8>> = match &mut self.protocol {
            Protocol::Barrier(b) => return b.advance(w),
            Protocol::Bcast(t) => match t.advance(w)? {
                None => return Ok(false),
                Some(data) => Some(data.to_vec()),
            },
            Protocol::ToRoot(f) => {
                if !f.advance(w)? {
                    return Ok(false);
                }
                f.result.take()
            }
            Protocol::ToAll(f, t) => {
                if !f.advance(w)? {
                    return Ok(false);
                }
                if let Some(r) = f.result.take() {
                    t.data = Some(r);
                }
                match t.advance(w)? {
                    None => return Ok(false),
                    Some(data) => Some(data.to_vec()),
                }
            }
        };
        if let (Some(target), Some(data)) = (&self.target, result) {
            target.unpack(&data)?;
        }
        Ok(true)
    }
}

impl Pending for Icoll {
    fn test(&mut self) -> MpiResult<Option<Status>> {
        if !self.finished {
            self.finished = self.advance()?;
        }
        Ok((self.finished && self.wire.sent()?).then_some(Status::EMPTY))
    }

    fn wait(mut self: Box<Self>) -> MpiResult<Status> {
        let core = self.wire.core;
        let mut outcome = None;
        let woke = core.wait_on(core.rank(), || match self.test() {
            Ok(None) => {
                // Other requests of this process may be what the peers wait for (a
                // receive that acknowledges a synchronous send): drive them too.
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

/// Starts `MPI_Ibarrier` on `c`.
pub fn barrier(c: &CommObj) -> MpiResult<Box<dyn Pending>> {
    let mut wire = Wire::new(c)?;
    let protocol = Protocol::Barrier(Barrier::start(&mut wire)?);
    Ok(Box::new(Icoll { wire, protocol, target: None, finished: false }))
}

/// Starts `MPI_Ibcast` on `c` of `len` bytes: the root gives its packed `data`, the
/// others the `target` to unpack into.
pub fn bcast(
    c: &CommObj,
    root: u32,
    len: usize,
    data: Option<Vec<u8>>,
    target: Option<UserBuffer>,
) -> MpiResult<Box<dyn Pending>> {
    let wire = Wire::new(c)?;
    let protocol = Protocol::Bcast(Tree::start(&wire, root, len, data)?);
    Ok(Box::new(Icoll { wire, protocol, target, finished: false }))
}

/// Starts, on `c` with this rank's packed input `mine`, `MPI_Ireduce` (`root: Some`,
/// `combine: Some`), `MPI_Iallreduce` (`None`, `Some`), `MPI_Igather` (`Some`, `None`)
/// or `MPI_Iallgather` (`None`, `None`); the result goes to `target` (the root's
/// alone for a reduce or gather).
pub fn collect(
    c: &CommObj,
    root: Option<u32>,
    mine: Vec<u8>,
    combine: Option<Box<dyn Combine + Send>>,
    target: Option<UserBuffer>,
) -> MpiResult<Box<dyn Pending>> {
    let mut wire = Wire::new(c)?;
    let len = if combine.is_some() { mine.len() } else { mine.len() * c.size() as usize };
    let protocol = match root {
        Some(root) => Protocol::ToRoot(Fold::start(&mut wire, root, mine, combine)?),
        None => {
            let tree = Tree::start(&wire, 0, len, None)?;
            Protocol::ToAll(Fold::start(&mut wire, 0, mine, combine)?, tree)
        }
    };
    Ok(Box::new(Icoll { wire, protocol, target, finished: false }))
}
