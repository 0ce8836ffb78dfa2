//! The gateway's side of windows across nodes: it applies the requests of origins on
//! other nodes to this node's segment, and answers them (`rma::remote` has the
//! origin's side, `rma::remote::wire` the format).
//!
//! A request arrives as the fragments of a message to one of this node's ranks with the
//! request tag (sent through its origin node's request channel, `requests`); the gateway
//! keeps them out of that rank's ring, reassembles the message (one origin's fragments
//! arrive in order and one request at a time) and applies it at once, in arrival order:
//! - data moves with plain copies; an accumulate or compare-and-swap is applied as an
//!   origin on this node would under the window's strategy (`combine`), so a remote
//!   update racing a local one loses nothing;
//! - a post or completion is counted in the pair words and rings the waiter's doorbell
//!   (`PairWords`, as a local origin does);
//! - a request may ask for a doorbell to be rung once it is applied: a flag's writer
//!   (an update of a word in the owner's MPB) wakes the flag's owner, as on one node;
//! - a lock, an entry into the node's lock_all word of a window, or a test-and-set word
//!   (`Core::lock_word`), waits in a thread of its own (a waiting lock must not stop the
//!   gateway), which takes it exactly as a local origin would and reports back; a
//!   window lock's hold is kept, by origin and lock, until its unlock (a test-and-set
//!   word's holder releases it with an atomic swap of its own).
//!
//! An answer is a message from the rank the request went to, with the answer tag,
//! queued for the origin's node and sent at the next collect. The gateway trusts
//! nothing in a request: one that names memory outside the heap and this node's MPBs, a
//! misaligned or
//! unknown element, or an unlock of nothing is refused, and the job aborts
//! (fail-stop).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use shm_layout::{Region, WaitPolicy};

use crate::job::node::NodeSpec;
use crate::protocol::atomic::op::ElemKind;
use crate::protocol::payload::Payload;
use crate::protocol::pscw::PairWords;
use crate::protocol::ring::frag::{FragHeader, FragKind};
use crate::protocol::rwlock::Exclusive;
use crate::protocol::waiter::Waiter;
use crate::protocol::abort::JobAborted;
use crate::rma::control::{CtlLayout, TargetCtl, WindowCtl, lines};
use crate::rma::remote::wire::{Domain, HEADER, Header, Kind, MAX_PAYLOAD, reply_tag};
use crate::segment::mapping::Segment;
use crate::sync::Ordering;
use crate::timing::clock::mpb_stamp;
use crate::protocol::test_and_set;
use crate::segment::view::{atomic_u32_at, atomics_at};

use super::combine::{Locked, Refused, combine};
use super::credit::Credit;
use super::frame::{self, Frame};

/// A lock held for an origin on another node: what its unlock needs.
#[derive(Clone, Copy)]
struct Hold {
    /// The target's world rank, whose doorbell waiters sleep on.
    target: u32,
    /// The world rank of the window's team rank 0, whose doorbell the lock_all word's
    /// waiters sleep on.
    home: u32,
    /// Where the window's control block lies (its lock_all word).
    meta: u64,
    /// An exclusive hold's state; `None` for a shared one.
    exclusive: Option<Exclusive>,
}

/// What a waiting thread obtained for an origin.
enum Held {
    /// A target's lock.
    One(Hold),
    /// This node's lock_all word of a window.
    All,
    /// A test-and-set word, which its holder releases with an atomic swap of its own.
    Word,
}

/// A lock a waiting thread obtained.
struct Granted {
    origin: u32,
    to: u32,
    token: Option<u32>,
    /// The lock's offset, or the control block's for lock_all.
    at: u64,
    held: Held,
}

/// An answer waiting for the next collect.
struct Answer {
    /// The origin.
    origin: u32,
    /// The rank the request went to: the answer's source.
    from: u32,
    token: u32,
    data: Vec<u8>,
}

/// The gateway's request service (module docs).
#[derive(Default)]
pub(super) struct Serve {
    /// Requests still arriving, by (source, destination).
    partial: HashMap<(u32, u32), Vec<u8>>,
    answers: Vec<Answer>,
    /// Locks held for remote origins, by (origin, lock offset).
    held: HashMap<(u32, u64), Hold>,
    /// lock_all words held for remote origins, by (origin, control block offset).
    held_all: HashSet<(u32, u64)>,
    /// Locks the waiting threads obtained since the last collect.
    granted: Arc<Mutex<Vec<Granted>>>,
}

impl Serve {
    /// Takes one fragment of a request to this node's rank `frame.dest`.
    pub(super) fn take(&mut self, seg: &Arc<Segment>, spec: &NodeSpec, frame: Frame) -> Result<(), String> {
        let key = (frame.header.src, frame.dest);
        if frame.header.kind != FragKind::Data {
            return Err(format!("rank {} sent a request as a {:?} fragment", key.0, frame.header.kind));
        }
        let total = frame.header.total as usize;
        if total > HEADER + MAX_PAYLOAD {
            return Err(format!("rank {} sent a request of {total} bytes", key.0));
        }
        let msg = if frame.header.first {
            if self.partial.contains_key(&key) {
                return Err(format!("rank {} began a request before its last one ended", key.0));
            }
            let mut msg = frame.payload;
            msg.reserve(total.saturating_sub(msg.len()));
            msg
        } else {
            let mut msg = self.partial.remove(&key).ok_or_else(|| format!("rank {} continued no request", key.0))?;
            msg.extend_from_slice(&frame.payload);
            msg
        };
        if msg.len() < total {
            self.partial.insert(key, msg);
            return Ok(());
        }
        self.apply(seg, spec, key, &msg)
    }

    /// Applies the whole request `msg` from `origin` to `to`.
    fn apply(&mut self, seg: &Arc<Segment>, spec: &NodeSpec, (origin, to): (u32, u32), msg: &[u8]) -> Result<(), String> {
        let bad = |what: &str| format!("rank {origin} sent a bad remote memory request: {what}");
        let (head, payload) = Header::decode(msg).ok_or_else(|| bad("no header"))?;
        let region = |len: usize| reachable(seg, spec, head.at, len).ok_or_else(|| bad("memory it cannot reach"));
        let mut answer = Vec::new();
        match head.kind {
            Kind::Write => seg.bytes(region(payload.len())?).write(0, payload),
            Kind::Read => {
                let r = region(head.count as usize)?;
                answer.resize(r.len, 0);
                seg.bytes(r).read(0, &mut answer);
            }
            Kind::Accumulate | Kind::CompareAndSwap => {
                let kind = ElemKind::from_code(u32::from(head.elem)).ok_or_else(|| bad("an unknown element"))?;
                let (domain, operands) = match head.locked {
                    true => Domain::decode(payload).map(|(d, rest)| (Some(d), rest)).ok_or_else(|| bad("no domain"))?,
                    false => (None, payload),
                };
                let locked = domain.map(|d| Locked::of(seg, spec, &head, d)).transpose().map_err(&bad)?;
                match crate::with_elem!(kind, E => combine::<E>(seg, &head, operands, region, locked)) {
                    Ok(old) => answer = old,
                    Err(Refused::Bad(why)) => return Err(bad(why)),
                    // Nothing more crosses once the job aborts.
                    Err(Refused::Aborted) => return Ok(()),
                }
            }
            Kind::Sync => {}
            Kind::Post | Kind::Complete => {
                if !spec.is_local(head.rank) {
                    return Err(bad("a doorbell of another node"));
                }
                let r = region(size_of::<PairWords>())?;
                if r.offset % align_of::<PairWords>() != 0 {
                    return Err(bad("misaligned PSCW words"));
                }
                let words: &PairWords = atomics_at(seg.bytes(r), 0);
                let bell = &seg.slot(head.rank).bell;
                match head.kind {
                    Kind::Post => words.post(bell),
                    _ => words.complete(bell),
                }
            }
            Kind::Lock => {
                let home = worlds(payload, spec).filter(|w| w.len() == 1).ok_or_else(|| bad("a lock's ranks"))?[0];
                return self.lock(seg, spec, (origin, to), (head, home), region(size_of::<TargetCtl>())?);
            }
            Kind::LockAll => {
                let members = worlds(payload, spec).filter(|w| w.len() == head.count as usize);
                return self.lock_all(seg, spec, (origin, to), head, members.ok_or_else(|| bad("a window's ranks"))?);
            }
            Kind::UnlockAll => {
                let home = worlds(payload, spec).and_then(|w| w.first().copied()).ok_or_else(|| bad("a window's ranks"))?;
                if !self.held_all.remove(&(origin, head.x)) {
                    return Err(bad("an unlock_all of nothing held"));
                }
                views(seg, None, head.x).1.all.unlock_all(&seg.slot(home).bell);
            }
            Kind::Unlock => {
                let hold = self.held.remove(&(origin, head.at)).ok_or_else(|| bad("an unlock of nothing held"))?;
                release(seg, head.at as usize, hold);
            }
            Kind::Stamp => {
                let at = usize::try_from(head.count).expect("u32 fits");
                let stamp = spec.is_local(head.rank).then(|| mpb_stamp(seg, head.rank, at)).flatten();
                // Relaxed: published by the flag update this origin sent after it, an
                // AcqRel RMW this thread applies later. A reader's (`x` = 0) is an RMW
                // too, so it sees the stamp of every flag write this thread applied or
                // read before it (`Core::mpb_stamp_of`).
                let old = stamp.ok_or_else(|| bad("a stamp outside this node's timed MPBs"))?.fetch_max(head.x, Ordering::Relaxed);
                answer = old.max(head.x).to_le_bytes().to_vec();
            }
            Kind::TestAndSet => {
                let word = region(4)?;
                if word.offset % 4 != 0 || !spec.is_local(head.rank) || head.token.is_none() {
                    return Err(bad("a test-and-set word"));
                }
                let owner = head.rank;
                self.in_thread(seg, (origin, to, head.token, head.at), move |seg, waiter| {
                    let word = atomic_u32_at(seg.bytes(word), 0).expect("checked aligned");
                    test_and_set::take(word, waiter, &seg.slot(owner).bell)?;
                    Ok(Held::Word)
                });
                return Ok(());
            }
        }
        if head.ring {
            if !spec.is_local(head.rank) {
                return Err(bad("a doorbell of another node"));
            }
            let bell = &seg.slot(head.rank).bell;
            match head.kind {
                // The update was an atomic RMW, which orders the ring (`Doorbell`).
                Kind::Accumulate | Kind::CompareAndSwap => bell.ring_after_rmw(),
                _ => bell.ring(),
            }
        }
        if let Some(token) = head.token {
            self.answers.push(Answer { origin, from: to, token, data: answer });
        }
        Ok(())
    }

    /// Starts the wait for a lock: a thread takes it and reports to `granted`.
    fn lock(
        &mut self,
        seg: &Arc<Segment>,
        spec: &NodeSpec,
        (origin, to): (u32, u32),
        (head, home): (Header, u32),
        lock: Region,
    ) -> Result<(), String> {
        let aligned = lock.offset % align_of::<TargetCtl>() == 0;
        if !aligned || !spec.is_local(head.rank) || !control_block(seg, spec, head.x, 1) || self.held.contains_key(&(origin, head.at)) {
            return Err(format!("rank {origin} sent a bad lock request"));
        }
        let (target, team_rank, meta, exclusive) = (head.rank, head.count, head.x, head.op == 1);
        self.in_thread(seg, (origin, to, head.token, head.at), move |seg, waiter| {
            let (ctl, all) = views(seg, Some(lock.offset), meta);
            let (ctl, bell, home_bell) = (ctl.expect("asked for"), &seg.slot(target).bell, &seg.slot(home).bell);
            let exclusive = match exclusive {
                true => Some(ctl.lock.lock_exclusive(team_rank, waiter, bell, &all.all, home_bell)?),
                false => ctl.lock.lock_shared(waiter, bell).map(|()| None)?,
            };
            Ok(Held::One(Hold { target, home, meta, exclusive }))
        });
        Ok(())
    }

    /// Starts the wait to enter this node's lock_all word of the window whose control
    /// block is at `head.x`, for `head.count` ranks.
    fn lock_all(
        &mut self,
        seg: &Arc<Segment>,
        spec: &NodeSpec,
        (origin, to): (u32, u32),
        head: Header,
        members: Vec<u32>,
    ) -> Result<(), String> {
        let (meta, n) = (head.x, head.count);
        if n == 0 || n > spec.cores || !control_block(seg, spec, meta, n) || self.held_all.contains(&(origin, meta)) {
            return Err(format!("rank {origin} sent a bad lock_all request"));
        }
        let layout = CtlLayout::new(n as usize, false);
        self.in_thread(seg, (origin, to, head.token, meta), move |seg, waiter| {
            let all = &views(seg, None, meta).1.all;
            // A target's lock words and doorbell, for the revocation of its registration.
            let targets = |t: u32| {
                let at = meta as usize + layout.targets + t as usize * lines(size_of::<TargetCtl>());
                (t < n).then(|| (&*views(seg, Some(at), meta).0.expect("asked for").lock, &*seg.slot(members[t as usize]).bell))
            };
            all.lock_all(waiter, &seg.slot(members[0]).bell, targets)?;
            Ok(Held::All)
        });
        Ok(())
    }

    /// Runs `take` (a wait for a lock) in a thread of its own, which reports what it
    /// took for the request (origin, destination, token, lock offset). A lock found
    /// corrupted stops the job; an abort ends the wait.
    fn in_thread(
        &self,
        seg: &Arc<Segment>,
        (origin, to, token, at): (u32, u32, Option<u32>, u64),
        take: impl FnOnce(&Segment, &Waiter<'_>) -> Result<Held, JobAborted> + Send + 'static,
    ) {
        let (seg, report) = (Arc::clone(seg), Arc::clone(&self.granted));
        std::thread::spawn(move || {
            let waiter = Waiter::new(WaitPolicy::Block, seg.job());
            match take(&seg, &waiter) {
                Ok(held) => report.lock().unwrap_or_else(|e| e.into_inner()).push(Granted { origin, to, token, at, held }),
                Err(e) => drop(seg.abort(e.rank, e.cause)),
            }
        });
    }

    /// Appends the answers ready, as frames for their origins' nodes, counted in their
    /// flows' credit but never held back (`credit`); whether any.
    pub(super) fn answer(&mut self, spec: &NodeSpec, max_payload: u32, (out, credit): (&mut [Vec<u8>], &mut Credit)) -> bool {
        let granted = std::mem::take(&mut *self.granted.lock().unwrap_or_else(|e| e.into_inner()));
        for g in granted {
            match g.held {
                Held::One(hold) => drop(self.held.insert((g.origin, g.at), hold)),
                Held::All => drop(self.held_all.insert((g.origin, g.at))),
                Held::Word => {}
            }
            if let Some(token) = g.token {
                self.answers.push(Answer { origin: g.origin, from: g.to, token, data: Vec::new() });
            }
        }
        let any = !self.answers.is_empty();
        for a in self.answers.drain(..) {
            let (tag, total) = (reply_tag(a.token), a.data.len() as u32);
            let batch = &mut out[spec.node_of(a.origin) as usize];
            let start = batch.len();
            let mut chunks: Vec<&[u8]> = a.data.chunks(max_payload.max(1) as usize).collect();
            if chunks.is_empty() {
                chunks.push(&[]);
            }
            for (i, chunk) in chunks.into_iter().enumerate() {
                let header = FragHeader::data(a.from, tag, chunk.len() as u32, total, i == 0);
                frame::encode_with(batch, (a.origin, &header, 0), |p| p.copy_from_slice(chunk));
            }
            credit.spend(credit.key(spec, a.from, a.origin), (batch.len() - start) as u64);
        }
        any
    }

    /// Whether answers wait to be sent.
    pub(super) fn pending(&self) -> bool {
        !self.answers.is_empty()
    }
}

/// The `len` bytes at `at`, if they lie in memory a request may reach: the heap (the
/// windows' parts and control blocks) or one of this node's ranks' MPBs.
pub(super) fn reachable(seg: &Segment, spec: &NodeSpec, at: u64, len: usize) -> Option<Region> {
    let layout = seg.layout();
    let r = Region { offset: usize::try_from(at).ok()?, len };
    let end = r.offset.checked_add(len)?;
    let inside = |area: Region| r.offset >= area.offset && end <= area.end();
    if inside(layout.heap) {
        return Some(r);
    }
    // The MPBs lie in rank order, one per stride.
    let mpbs = &layout.mpbs;
    let rank = r.offset.checked_sub(mpbs.offset)? / mpbs.stride.max(1);
    (spec.is_local(rank as u32) && inside(mpbs.get(rank)?)).then_some(r)
}

/// The world ranks a request carries (each a rank of the job), if they are whole.
fn worlds(payload: &[u8], spec: &NodeSpec) -> Option<Vec<u32>> {
    let ranks: Vec<u32> = payload.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes"))).collect();
    (payload.len() % 4 == 0 && ranks.iter().all(|&r| r < spec.cores)).then_some(ranks)
}

/// Whether a window's control block for `n` ranks at `meta` lies in the heap, aligned.
fn control_block(seg: &Segment, spec: &NodeSpec, meta: u64, n: u32) -> bool {
    let heap = seg.layout().heap;
    let bytes = CtlLayout::new(n as usize, false).total;
    // Every word in the block is then aligned: its parts start on lines (`control`).
    let align = align_of::<WindowCtl>().max(align_of::<TargetCtl>());
    reachable(seg, spec, meta, bytes).is_some_and(|m| m.offset >= heap.offset && m.offset % align == 0)
}

/// The target's lock words at `lock`, if asked, and the window's words at `meta`.
fn views(seg: &Segment, lock: Option<usize>, meta: u64) -> (Option<&TargetCtl>, &WindowCtl) {
    let ctl = lock.map(|at| atomics_at(seg.bytes(Region { offset: at, len: size_of::<TargetCtl>() }), 0));
    let all = atomics_at(seg.bytes(Region { offset: meta as usize, len: size_of::<WindowCtl>() }), 0);
    (ctl, all)
}

/// Releases a lock held for a remote origin.
fn release(seg: &Segment, lock: usize, hold: Hold) {
    let (ctl, all) = views(seg, Some(lock), hold.meta);
    let (ctl, bell) = (ctl.expect("asked for"), &seg.slot(hold.target).bell);
    match hold.exclusive {
        Some(x) => ctl.lock.unlock_exclusive(x, bell, &all.all, &seg.slot(hold.home).bell, None),
        None => ctl.lock.unlock_shared(bell),
    }
}
