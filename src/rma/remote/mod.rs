//! Windows whose members span nodes: what an origin does for a target on another node.
//!
//! Each node's segment holds the window's control block (every target's lock words,
//! every pair of PSCW words) and the parts of that node's members; the creation
//! (`create`) tells every member where its peers' nodes put them. The team is the job
//! or a communicator's members; requests go to targets' world ranks. A target on this
//! node is reached as on one node. For a target on another node the origin sends a
//! request ([`wire`]) to a rank of that node through its node's request channel
//! ([`channel`], apart from two-sided messages, so it never waits behind them), which
//! the gateways carry; that node's gateway applies it to its own segment and answers
//! when asked (a two-sided message to the origin):
//! - put and atomic store: one-way writes; the target is then *dirty* until a
//!   [`Kind::Sync`] round trip completes them (flush, fence, and before free);
//! - get, fetch-and-op, get_accumulate and compare-and-swap: round trips;
//! - accumulate: one-way, applied on the owning node as an origin there would: under
//!   `Atomic` element by element as CPU atomics, so a remote read-modify-write racing a
//!   local one never loses an update; under a strategy with locks, holding the target
//!   part's stripes, whose place the request carries ([`wire::Domain`]: the caller's
//!   stripes under `CallerComputes`, the owner's under `OwnerComputes`, under which its
//!   agent combines);
//! - lock and unlock: round trips; the gateway takes the target's ticket lock for the
//!   origin (it waits in a thread of its own) and releases it;
//! - lock_all: the lock_all word of every node's control block, entered node by node in
//!   node order (the node's own locally, the others through their gateways); an
//!   exclusive lock of a target registers in the word of the target's node, which is
//!   where it meets lock_all. unlock_all syncs every target first, then leaves them;
//! - PSCW: a post or completion is a one-way count in the pair words on the waiter's
//!   node, whose gateway rings the waiter's doorbell, so the waiter sleeps on its own
//!   futex as on one node;
//! - fence: every dirty target synced, then the members' barrier (an allgather over
//!   the team: a window's team need not be the job).
//!
//! Ordering: the requests of one origin to one rank arrive and apply in the order they
//! were sent (the request channel keeps it, and the gateway applies on arrival), so an
//! unlock or a completion lands after the RMA of its epoch without a sync of its own.
//!
//! Rma may not use the two-sided layer, so the requests, answers and collective steps
//! go through [`RemoteLink`], which `coll` implements over it and the request channel.

pub(crate) mod channel;
pub(crate) mod create;
mod orphan;
pub(crate) mod timed;
pub mod wire;

use std::cell::RefCell;

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::acc_atomic::{bits_of, of_bits};
use crate::protocol::atomic::armw::{AtomicElem, Kind as WordKind, RmwOp};
use crate::protocol::atomic::op::{ElemKind, Element, Op};
use crate::protocol::pscw::PairWords;
use crate::protocol::rwlock::LockKind;
use crate::rma::error::RmaError;
use crate::rma::window::Window;
use crate::segment::view::{Plain, bytes_of_mut};
use crate::sync::{AtomicU32, Ordering};
use wire::{HEADER, Header, Kind, reply_tag};

/// Bytes of data one request carries at most: a large transfer is cut into requests of
/// this size, which the channels cut into fragments.
pub const CHUNK: usize = 32 * 1024;

const _: () = assert!(CHUNK + wire::DOMAIN <= wire::MAX_PAYLOAD);

/// Tokens of answers, per process (threads share it).
static TOKENS: AtomicU32 = AtomicU32::new(0);

/// Sends the request `head` with `payload` to world rank `dest` (on another node) and,
/// if `answer` is given, waits for its answer there (exactly its length).
pub(crate) fn request(
    link: &dyn RemoteLink,
    dest: u32,
    head: Header,
    payload: &[&[u8]],
    answer: Option<&mut [u8]>,
) -> Result<(), JobAborted> {
    let token = send(link, dest, head, payload, answer.is_some())?;
    match (answer, token) {
        (Some(buf), Some(token)) => link.recv(dest, reply_tag(token), buf),
        _ => Ok(()),
    }
}

/// Sends the request `head` with `payload` to world rank `dest`; if `answered`, with a
/// fresh token, which it returns: the answer's tag is `reply_tag(token)`.
fn send(link: &dyn RemoteLink, dest: u32, mut head: Header, payload: &[&[u8]], answered: bool) -> Result<Option<u32>, JobAborted> {
    if answered {
        // Relaxed: a counter; only its distinctness matters.
        head.token = Some(TOKENS.fetch_add(1, Ordering::Relaxed) & wire::TOKEN_MASK);
    }
    let mut msg = Vec::with_capacity(HEADER + payload.iter().map(|p| p.len()).sum::<usize>());
    head.encode(&mut msg);
    payload.iter().for_each(|p| msg.extend_from_slice(p));
    link.request(dest, &msg)?;
    Ok(head.token)
}

/// Completes every one-way request sent to the world ranks `dests` (on other nodes):
/// a [`Kind::Sync`] to each, all sent before any answer is awaited.
pub(crate) fn sync_all(link: &dyn RemoteLink, dests: &[u32]) -> Result<(), JobAborted> {
    let mut tokens = Vec::with_capacity(dests.len());
    for &dest in dests {
        tokens.push(send(link, dest, Header::new(Kind::Sync, 0), &[], true)?.expect("answered"));
    }
    dests.iter().zip(tokens).try_for_each(|(&dest, token)| link.recv(dest, reply_tag(token), &mut []))
}

/// Requests, and two-sided messages among the job's ranks, as windows across nodes
/// need them.
pub(crate) trait RemoteLink: Send {
    /// Sends the request `msg` to world rank `dest` (on another node) through this
    /// node's request channel ([`channel`]).
    fn request(&self, dest: u32, msg: &[u8]) -> Result<(), JobAborted>;
    /// Receives exactly `buf.len()` bytes from world rank `src` with tag `tag`.
    fn recv(&self, src: u32, tag: u32, buf: &mut [u8]) -> Result<(), JobAborted>;
    /// Collective over the job: every rank's `mine` (all of one length), by rank.
    fn allgather(&self, mine: &[u8]) -> Result<Vec<u8>, JobAborted>;
}

/// What a window across nodes keeps beside the one-node state.
pub(crate) struct Remote<'c> {
    pub(super) link: Box<dyn RemoteLink + 'c>,
    /// Per rank: whether it runs on this node.
    local: Vec<bool>,
    /// Per rank: where its node's copy of the control block starts (absolute).
    meta: Vec<usize>,
    /// Each node's first member, in order.
    pub(super) leaders: Vec<u32>,
    /// Whether this member is its node's first, which holds the node's memory.
    pub(super) leads: bool,
    /// Per rank: one-way requests went to it since its last sync.
    dirty: RefCell<Vec<bool>>,
}

impl<'c> Remote<'c> {
    pub(crate) fn new(
        link: Box<dyn RemoteLink + 'c>,
        local: Vec<bool>,
        meta: Vec<usize>,
        leaders: Vec<u32>,
        leads: bool,
    ) -> Remote<'c> {
        let dirty = RefCell::new(vec![false; local.len()]);
        Remote { link, local, meta, leaders, leads, dirty }
    }

    /// Whether `rank` runs on this node.
    pub(crate) fn is_local(&self, rank: u32) -> bool {
        self.local[rank as usize]
    }
}

/// The element kind whose combining code does what an ARMW on an `A` does.
fn word_elem<A: AtomicElem>() -> ElemKind {
    match (A::KIND, A::WIDTH) {
        (WordKind::F32, _) => ElemKind::F32,
        (WordKind::F64, _) => ElemKind::F64,
        (WordKind::Int, 4) => ElemKind::U32,
        (WordKind::Int, _) => ElemKind::U64,
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// The remote state, if `target` is a rank on another node.
    #[inline(always)]
    pub(crate) fn remote_to(&self, target: u32) -> Option<&Remote<'c>> {
        self.remote.as_ref().filter(|r| r.local.get(target as usize) == Some(&false))
    }

    /// Whether the window spans nodes.
    pub(crate) fn spans_nodes(&self) -> bool {
        self.remote.is_some()
    }

    /// Sends one request for `target`'s node; `answer` receives its answer if given.
    fn request(&self, target: u32, head: Header, payload: &[&[u8]], answer: Option<&mut [u8]>) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        if answer.is_none() {
            remote.dirty.borrow_mut()[target as usize] = true;
        }
        request(&*remote.link, self.team.world(target), head, payload, answer)
    }

    /// Where byte `at` of `target`'s part lies in its node's segment.
    fn remote_at(&self, target: u32, at: usize) -> usize {
        self.part_region(target).offset + at
    }

    /// Writes `src` at byte `at` of `target`'s part (range checked).
    pub(crate) fn remote_write(&self, target: u32, at: usize, src: &[u8]) -> Result<(), RmaError> {
        for (i, chunk) in src.chunks(CHUNK).enumerate() {
            let head = Header::new(Kind::Write, self.remote_at(target, at + i * CHUNK));
            self.request(target, head, &[chunk], None)?;
        }
        Ok(())
    }

    /// Reads byte `at..` of `target`'s part into `dst` (range checked): every chunk's
    /// request first, then their answers, so the round trips overlap.
    pub(crate) fn remote_read(&self, target: u32, at: usize, dst: &mut [u8]) -> Result<(), RmaError> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let dest = self.team.world(target);
        let mut tokens = Vec::with_capacity(dst.len().div_ceil(CHUNK));
        for (i, chunk) in dst.chunks(CHUNK).enumerate() {
            let mut head = Header::new(Kind::Read, self.remote_at(target, at + i * CHUNK));
            head.count = chunk.len() as u32;
            tokens.push(send(&*remote.link, dest, head, &[], true)?.expect("answered"));
        }
        for (chunk, token) in dst.chunks_mut(CHUNK).zip(tokens) {
            remote.link.recv(dest, reply_tag(token), chunk)?;
        }
        Ok(())
    }

    /// Combines `src` into byte `at..` of `target`'s part with `op`, element by element
    /// and atomically, on the target's node; the previous values go to `result` if
    /// given (everything already checked).
    pub(crate) fn remote_accumulate<E: Element>(
        &self,
        target: u32,
        at: usize,
        src: &[E],
        mut result: Option<&mut [E]>,
        op: Op,
    ) -> Result<(), RmaError> {
        if result.is_some() {
            timed::round_trip(size_of_val(src), size_of_val(src));
        }
        let domain = self.acc_domain(target).map(|d| d.encode());
        let per = (CHUNK / size_of::<E>()).max(1);
        for (i, chunk) in src.chunks(per).enumerate() {
            let mut head = Header::accumulate(self.remote_at(target, at + i * per * size_of::<E>()), E::KIND, op, chunk.len() as u32);
            // The stripes' waiters sleep on the target's doorbell.
            (head.locked, head.rank) = (domain.is_some(), self.team.world(target));
            let answer = result.as_deref_mut().map(|r| bytes_of_mut(&mut r[i * per..i * per + chunk.len()]));
            let domain = domain.as_ref().map_or(&[][..], |d| &d[..]);
            self.request(target, head, &[domain, bytemuck::cast_slice(chunk)], answer)?;
        }
        Ok(())
    }

    /// Compare-and-swap of the `E` at byte `at` of `target`'s part (checked).
    pub(crate) fn remote_compare_and_swap<E: Element>(
        &self,
        target: u32,
        at: usize,
        compare: E,
        value: E,
    ) -> Result<E, RmaError> {
        let mut head = Header::new(Kind::CompareAndSwap, self.remote_at(target, at));
        let domain = self.acc_domain(target).map(|d| d.encode());
        (head.elem, head.count, head.locked, head.rank) = (E::KIND as u8, 1, domain.is_some(), self.team.world(target));
        timed::round_trip(2 * size_of::<E>(), size_of::<E>());
        let mut old = [compare];
        let domain = domain.as_ref().map_or(&[][..], |d| &d[..]);
        let payload = [domain, bytemuck::bytes_of(&compare), bytemuck::bytes_of(&value)];
        self.request(target, head, &payload, Some(bytemuck::cast_slice_mut(&mut old)))?;
        Ok(old[0])
    }

    /// Checks an ARMW on the `A` at element `index` of `target`'s part (epoch, bounds,
    /// alignment); returns its byte offset in the part.
    fn check_word<A: AtomicElem>(&self, target: u32, index: usize) -> Result<usize, RmaError> {
        self.check_access(target)?;
        let at = self.check_bytes(target, index, A::WIDTH)?;
        if self.remote_at(target, at) % A::WIDTH != 0 {
            return Err(RmaError::Misaligned { rank: target, byte_offset: at, width: A::WIDTH });
        }
        self.issued();
        Ok(at)
    }

    /// An ARMW on the `A` at element `index` of `target`'s part: `op` (`None`: an atomic
    /// load) with `v`, answering the previous value if `fetch` (else 0).
    pub(crate) fn remote_armw<A: AtomicElem>(
        &self,
        target: u32,
        index: usize,
        op: Option<RmwOp>,
        v: A,
        fetch: bool,
    ) -> Result<A, RmaError> {
        let op = match op {
            None => Op::NoOp,
            Some(RmwOp::Add) => Op::Sum,
            Some(RmwOp::Or) => Op::BitOr,
            Some(RmwOp::And) => Op::BitAnd,
            Some(RmwOp::Xor) => Op::BitXor,
            Some(RmwOp::Swap) => Op::Replace,
        };
        self.update_call("armw", target, A::WIDTH, || {
            let at = self.check_word::<A>(target, index)?;
            let old = crate::with_elem!(word_elem::<A>(), E => {
                let mut prev = [of_bits::<E>(0)];
                let value = [of_bits::<E>(v.to_bits())];
                self.remote_accumulate(target, at, &value, fetch.then_some(&mut prev[..]), op)?;
                bits_of(prev[0])
            });
            Ok(A::from_bits(old))
        })
    }

    /// Compare-and-swap of the `A` at element `index` of `target`'s part.
    pub(crate) fn remote_word_cas<A: AtomicElem>(&self, target: u32, index: usize, current: A, new: A) -> Result<A, RmaError> {
        self.update_call("armw", target, A::WIDTH, || {
            let at = self.check_word::<A>(target, index)?;
            let old = crate::with_elem!(word_elem::<A>(), E => {
                let (current, new) = (of_bits::<E>(current.to_bits()), of_bits::<E>(new.to_bits()));
                bits_of(self.remote_compare_and_swap(target, at, current, new)?)
            });
            Ok(A::from_bits(old))
        })
    }

    /// Completes every one-way request to `target` at the target.
    pub(crate) fn remote_sync(&self, target: u32) -> Result<(), JobAborted> {
        let Some(remote) = self.remote_to(target) else { return Ok(()) };
        if std::mem::take(&mut remote.dirty.borrow_mut()[target as usize]) {
            timed::round_trip(0, 0);
            self.request(target, Header::new(Kind::Sync, 0), &[], Some(&mut []))?;
        }
        Ok(())
    }

    /// [`Window::remote_sync`] of every target.
    pub(crate) fn remote_sync_all(&self) -> Result<(), JobAborted> {
        (0..self.size()).try_for_each(|t| self.remote_sync(t))
    }

    /// Counts a PSCW post (`Kind::Post`) or completion (`Kind::Complete`) in the words
    /// of the pair (`origin`, `target`) on the node of `waiter` (one of the two), and
    /// rings its doorbell there.
    pub(crate) fn remote_pscw(&self, kind: Kind, origin: u32, target: u32, waiter: u32) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let at = self.ctl.posts + origin as usize * self.ctl.post_stride + target as usize * size_of::<PairWords>();
        let mut head = Header::new(kind, remote.meta[waiter as usize] + at);
        head.rank = self.team.world(waiter);
        self.request(waiter, head, &[], None)
    }

    /// Takes `target`'s lock on its node (returns once held). The request names the
    /// target's world rank (its doorbell) and team rank (its lock_all registration),
    /// and carries team rank 0's world rank (the lock_all word's doorbell).
    pub(crate) fn remote_lock(&self, target: u32, kind: LockKind) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let mut head = Header::new(Kind::Lock, remote.meta[target as usize] + self.lock_offset(target));
        head.op = u8::from(kind == LockKind::Exclusive);
        (head.rank, head.count, head.x) = (self.team.world(target), target, remote.meta[target as usize] as u64);
        self.request(target, head, &[&self.team.world(0).to_le_bytes()], Some(&mut []))
    }

    /// Makes sure every member has arrived (a barrier over the team's messages).
    pub(crate) fn remote_barrier(&self) -> Result<(), JobAborted> {
        self.remote.as_ref().expect("a window across nodes").link.allgather(&[0]).map(drop)
    }

    /// Enters (`Kind::LockAll`) or leaves (`Kind::UnlockAll`) the lock_all word of the
    /// node whose first member is `leader`, on that node (returns once done there). The
    /// request carries the members' world ranks (their doorbells), team rank 0's first.
    pub(crate) fn remote_all(&self, kind: Kind, leader: u32) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let mut head = Header::new(kind, 0);
        (head.x, head.count) = (remote.meta[leader as usize] as u64, self.size());
        let worlds: Vec<u8> = self.team.members().iter().flat_map(|w| w.to_le_bytes()).collect();
        timed::round_trip(0, 0);
        match kind {
            // Leaving needs only the lock_all word's doorbell: team rank 0's.
            Kind::UnlockAll => self.request(leader, head, &[&worlds[..4]], Some(&mut [])),
            _ => self.request(leader, head, &[&worlds], Some(&mut [])),
        }
    }

    /// Releases `target`'s lock once this origin's requests to it are applied.
    pub(crate) fn remote_unlock(&self, target: u32) -> Result<(), JobAborted> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        let head = Header::new(Kind::Unlock, remote.meta[target as usize] + self.lock_offset(target));
        timed::round_trip(0, 0);
        self.request(target, head, &[], Some(&mut []))?;
        remote.dirty.borrow_mut()[target as usize] = false;
        Ok(())
    }
}
