//! Owner-computes accumulate: origins hand their operand to the target's owner, whose
//! agent thread combines it into the owner's part. The data crosses once, and the
//! target's memory stays in the owner's cache.
//!
//! Per owner (rank r) the window's accumulate block holds a request queue
//! ([`crate::protocol::atomic::acc_queue`]: `CAP` slots of `SLOT_BYTES`) and, per origin (also rank r,
//! as an origin), an [`OriginCtl`] and `HALVES` staging buffers of `HALF_BYTES`.
//! - Small accumulates (payload ≤ `INLINE_BYTES`) travel inline in a queue slot.
//! - Larger ones are cut into staging-sized chunks. For each, the origin waits until
//!   the staging half is free (`busy == 0`, Acquire: pairs with the agent's Release
//!   after it read it), copies the chunk in, marks it busy and enqueues a descriptor;
//!   the owner's agent pulls the chunk from the origin's staging. `HALVES` buffers
//!   (4) let the origin fill some while the owner combines others.
//! - get_accumulate and fetch_and_op go through staging: the agent writes the
//!   previous values back into the half before releasing it; the origin waits for it.
//! - After applying any request the agent clears `busy` (if staged), then increments
//!   the origin's `applied` counter (Release: the combined data happens before the
//!   origin's Acquire load in `quiesce`), and rings the origin's doorbell if the
//!   origin registered as waiting (`OriginCtl::waiting`).
//! - Flow control is the queue's: a full queue blocks the origin on the queue's
//!   `space` doorbell (the owner's slot doorbell) until the agent frees a slot; a busy
//!   staging buffer blocks it on its own doorbell.
//!
//! Footprint: `OwnerBlock::STRIDE` (about 400 KiB: 130 KiB of queue, 8 KiB of stripe
//! locks, 256 KiB of staging) of shared heap per core and owner-computes window.
//!
//! Completion: `accumulate` returns once the request is enqueued (the origin buffer is
//! free). Every call that completes RMA (flush, unlock, fence, complete, free) first
//! waits until `applied == issued` (all this origin's requests applied everywhere).
//! get_accumulate and fetch_and_op return when their own request has been applied.
//! Order: one origin's requests to one owner are applied in queue (issue) order.
//!
//! The agent is the only combiner of its owner's part under this strategy (the owner's
//! own accumulates go through its queue too). It combines each request granule by
//! granule (`OWNER_GRANULE` bytes), holding that granule's stripe lock from the owner's
//! share of the block (`stripes`); ARMW on the part (`transfer`) takes the same locks,
//! after waiting for its origin's own pending requests ([`OwnerState::armw_domain`]), so that
//! an ARMW is atomic with the agent's combines and lands after the accumulates its
//! origin issued before it. The agent never waits for anything else while it holds a
//! stripe, and ARMW holders only run one CPU atomic, so the agent waits at most that
//! long. One agent
//! thread per process and window maps the segment itself (a second mapping of the
//! job's memfd), sleeps on the queue's own doorbell through the waiter when idle, and
//! stops when the window is freed or dropped (which the owner's process does when its
//! calls fail on a job abort; the launcher reaps the process in any case). Origins
//! blocked on a dead owner (full queue, completion) sleep on slot doorbells, which the
//! abort protocol rings, and return the abort error.

use std::cell::Cell;
use std::thread::JoinHandle;

use crossbeam_utils::CachePadded;
use shm_layout::{LINE, Region, WaitPolicy};

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::atomic::op::{ElemKind, Element};
use crate::protocol::atomic::acc_queue::{Bells, Consumer, Next, Queue, QueueCtl};
use crate::rma::acc_view::{combine_staged, stripes_at, u64s_at};
use crate::protocol::atomic::op::Op;
use crate::protocol::payload::Payload;
use crate::segment::mapping::{Segment, SharedBytes};
use crate::protocol::atomic::stripes::{
    MAX_STRIPES, Stripe, Striping, SpanGuard, for_each_granule_locked, lock_span, striped_combine,
};
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};
use crate::segment::view::atomics_at;
use crate::protocol::waiter::Waiter;

/// Request queue slots per owner.
pub const CAP: usize = 32;
/// Bytes per queue slot (a 4-byte length, the header, the inline payload): the
/// contention pattern's sizes (200 B to 4 KB) travel inline.
pub const SLOT_BYTES: usize = 4096 + 64;
const HEADER: usize = 40;
/// Largest payload sent inline.
pub const INLINE_BYTES: usize = SLOT_BYTES - 4 - HEADER;
/// Staging buffers per origin.
pub const HALVES: usize = 4;
/// Bytes per staging buffer (the largest chunk of a staged request).
pub const HALF_BYTES: usize = 64 * 1024;
/// Bytes the agent combines under one stripe lock: an ARMW waits for at most one such
/// granule of a concurrent combine.
pub const OWNER_GRANULE: usize = 4096;

/// How an owner's part of `part_bytes` is striped: the same for the agent and for ARMW
/// origins, and for every element type (granules are multiples of
/// [`ACC_ALIGN`](crate::rma::accumulate::ACC_ALIGN)).
pub fn owner_striping(part_bytes: usize) -> Striping {
    Striping::new(OWNER_GRANULE, part_bytes, crate::rma::accumulate::ACC_ALIGN)
}

const INLINE_ACC: u32 = 0;
const STAGED_ACC: u32 = 1;
const STAGED_GET_ACC: u32 = 2;

/// An origin's completion words (owned by the origin).
#[repr(C)]
#[derive(Default)]
pub struct OriginCtl {
    applied: CachePadded<AtomicU64>,
    busy: [CachePadded<AtomicU32>; HALVES],
    /// Nonzero while the origin waits for a completion: agents ring its doorbell only
    /// then (a Dekker pair of SeqCst fences, as in the queue's flow control), so that
    /// streams of accumulates do not wake whatever else sleeps on that doorbell.
    waiting: CachePadded<AtomicU32>,
}

const fn lines(bytes: usize) -> usize {
    bytes.div_ceil(LINE) * LINE
}

/// Offsets of one rank's share of the block; the block is `n` shares.
#[derive(Clone, Copy, Debug)]
pub struct OwnerBlock {
    /// The whole block, absolute in the segment.
    pub abs: Region,
}

impl OwnerBlock {
    const SEQS: usize = lines(size_of::<QueueCtl>());
    const SLOTS: usize = Self::SEQS + lines(CAP * 8);
    const ORIGIN: usize = Self::SLOTS + CAP * SLOT_BYTES;
    const STRIPES: usize = Self::ORIGIN + lines(size_of::<OriginCtl>());
    const STAGING: usize = Self::STRIPES + MAX_STRIPES * size_of::<CachePadded<Stripe>>();
    /// Bytes of one rank's share: its queue, completion words and staging.
    pub const STRIDE: usize = Self::STAGING + HALVES * HALF_BYTES;

    /// Bytes of the block for a window of `n` cores.
    pub fn bytes(n: usize) -> usize {
        n * Self::STRIDE
    }

    fn share<'s>(&self, seg: &'s Segment, rank: u32) -> SharedBytes<'s> {
        let offset = self.abs.offset + rank as usize * Self::STRIDE;
        seg.bytes(Region { offset, len: Self::STRIDE })
    }

    /// `rank`'s request queue, which its agent consumes.
    pub fn queue<'s>(&self, seg: &'s Segment, rank: u32) -> Queue<'s, SharedBytes<'s>> {
        let b = self.share(seg, rank);
        let ctl: &QueueCtl = atomics_at(b, 0);
        let seqs = u64s_at(b, Self::SEQS, CAP);
        let slots_abs = Region {
            offset: self.abs.offset + rank as usize * Self::STRIDE + Self::SLOTS,
            len: CAP * SLOT_BYTES,
        };
        // `space` on the owner's slot doorbell, which the abort protocol rings (see `Bells`).
        let bells = Bells { work: ctl.work_bell(), space: &seg.slot(rank).bell };
        Queue::new(ctl, bells, seqs, seg.bytes(slots_abs), SLOT_BYTES)
    }

    /// `rank`'s queue as absolute regions: control words, `seq` words, slots.
    pub fn regions(&self, rank: u32) -> [Region; 3] {
        let at = |offset: usize, len: usize| Region { offset: self.abs.offset + rank as usize * Self::STRIDE + offset, len };
        [at(0, Self::SEQS), at(Self::SEQS, CAP * 8), at(Self::SLOTS, CAP * SLOT_BYTES)]
    }

    fn origin<'s>(&self, seg: &'s Segment, rank: u32) -> &'s OriginCtl {
        atomics_at(self.share(seg, rank), Self::ORIGIN)
    }

    /// `rank`'s stripe locks, which guard its part (zeroed by `init`).
    pub fn stripes<'s>(&self, seg: &'s Segment, rank: u32) -> &'s [CachePadded<Stripe>] {
        stripes_at(self.share(seg, rank), Self::STRIPES, MAX_STRIPES)
    }

    fn staging<'s>(&self, seg: &'s Segment, rank: u32, half: usize) -> SharedBytes<'s> {
        let offset = self.abs.offset + rank as usize * Self::STRIDE + Self::STAGING + half * HALF_BYTES;
        seg.bytes(Region { offset, len: HALF_BYTES })
    }

    /// Zeroes and initialises `rank`'s share (by `rank`, before a barrier).
    pub fn init(&self, seg: &Segment, rank: u32) {
        self.share(seg, rank).zero(0, Self::STAGING);
        self.queue(seg, rank).init();
    }
}

/// A request's header.
#[derive(Clone, Copy, Debug)]
struct Req {
    kind: u32,
    origin: u32,
    at: u64,
    count: u32,
    half: u32,
    op: u32,
    /// The element type, as its [`ElemKind`] code.
    elem: u32,
    alpha: f64,
}

impl Req {
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.kind.to_le_bytes());
        out[4..8].copy_from_slice(&self.origin.to_le_bytes());
        out[8..16].copy_from_slice(&self.at.to_le_bytes());
        out[16..20].copy_from_slice(&self.count.to_le_bytes());
        out[20..24].copy_from_slice(&self.half.to_le_bytes());
        out[24..28].copy_from_slice(&self.op.to_le_bytes());
        out[28..32].copy_from_slice(&self.elem.to_le_bytes());
        out[32..40].copy_from_slice(&self.alpha.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Req {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Req {
            kind: u32_at(0),
            origin: u32_at(4),
            at: u64_at(8),
            count: u32_at(16),
            half: u32_at(20),
            op: u32_at(24),
            elem: u32_at(28),
            alpha: f64::from_bits(u64_at(32)),
        }
    }
}

/// This process's side of an owner-computes window.
pub struct OwnerState<'c> {
    block: OwnerBlock,
    seg: &'c Segment,
    me: u32,
    /// This core's waiter (which drives its background work while it waits).
    waiter: Waiter<'c>,
    /// Requests this core issued, and the staging half to use next.
    issued: Cell<u64>,
    next_half: Cell<usize>,
    /// A message being built (a slot's worth).
    scratch: std::cell::RefCell<Vec<u8>>,
    agent: Option<JoinHandle<()>>,
}

impl<'c> OwnerState<'c> {
    /// Starts this process's agent for `part` (this core's part, absolute), serving
    /// `block`'s queue of rank `me`. `agent_seg` is a second mapping of the segment;
    /// `waiter` is this core's, under whose policy the agent waits too.
    pub fn start(
        seg: &'c Segment,
        agent_seg: Segment,
        block: OwnerBlock,
        me: u32,
        part: Region,
        waiter: Waiter<'c>,
    ) -> std::io::Result<OwnerState<'c>> {
        let policy = waiter.policy();
        let agent = std::thread::Builder::new()
            .name(format!("sccemu-acc-agent-{me}"))
            .spawn(move || agent(&agent_seg, block, me, part, policy))?;
        Ok(OwnerState {
            block,
            seg,
            me,
            waiter,
            issued: Cell::new(0),
            next_half: Cell::new(0),
            scratch: std::cell::RefCell::new(vec![0; SLOT_BYTES - 4]),
            agent: Some(agent),
        })
    }

    fn waiter(&self) -> Waiter<'c> {
        self.waiter
    }

    fn push(&self, target: u32, msg: &[u8]) -> Result<(), JobAborted> {
        let pushed = self.block.queue(self.seg, target).push(msg, &self.waiter());
        // A queue found corrupted (`rank: None`, see `acc_queue`) stops the job here.
        pushed.map_err(|e| if e.cause == AbortCause::Corrupted && e.rank.is_none() { corrupted(self.seg, self.me) } else { e })?;
        self.issued.set(self.issued.get() + 1);
        Ok(())
    }

    /// Waits until staging half `h` is free again (Acquire: module docs).
    fn wait_half(&self, h: usize) -> Result<(), JobAborted> {
        let busy = &self.block.origin(self.seg, self.me).busy[h];
        self.wait_completion(|| busy.load(Ordering::Acquire) == 0)
    }

    /// Waits on this core's doorbell until `done`, registered in `waiting` (Dekker
    /// pair with the agent's fence before it checks `waiting`).
    fn wait_completion(&self, done: impl Fn() -> bool) -> Result<(), JobAborted> {
        if done() {
            return Ok(());
        }
        let waiting = &self.block.origin(self.seg, self.me).waiting;
        waiting.fetch_add(1, Ordering::Relaxed);
        // SeqCst fence: our registration before our checks of `done`, against the
        // agent's completion before its load of `waiting`.
        fence(Ordering::SeqCst);
        let bell = &self.seg.slot(self.me).bell;
        let result = self.waiter().wait_until(bell, || done().then_some(()));
        waiting.fetch_sub(1, Ordering::Relaxed);
        result
    }

    fn stage(&self, data: &[u8]) -> Result<usize, JobAborted> {
        let h = self.next_half.get();
        self.next_half.set((h + 1) % HALVES);
        self.wait_half(h)?;
        self.block.staging(self.seg, self.me, h).write(0, data);
        // Relaxed: published to the agent by the queue's Release; the agent only
        // overwrites it, after reading the staged data.
        self.block.origin(self.seg, self.me).busy[h].store(1, Ordering::Relaxed);
        Ok(h)
    }

    /// Enqueues `target.part[at..] op= src` (`at` in bytes, checked by the caller).
    /// With `result`, waits for the previous values (get_accumulate).
    pub fn request<T: Element>(
        &self,
        target: u32,
        at: usize,
        op: Op,
        src: &[T],
        mut result: Option<&mut [T]>,
    ) -> Result<(), JobAborted> {
        let (code, alpha) = op.code();
        let elem = size_of::<T>();
        let bytes: &[u8] = bytemuck::cast_slice(src);
        let mut msg = self.scratch.borrow_mut();
        let msg = &mut msg[..];
        let mut req =
            Req { kind: INLINE_ACC, origin: self.me, at: at as u64, count: 0, half: 0, op: code, elem: T::KIND as u32, alpha };
        if result.is_none() && bytes.len() <= INLINE_BYTES {
            req.count = src.len() as u32;
            req.encode(msg);
            msg[HEADER..HEADER + bytes.len()].copy_from_slice(bytes);
            return self.push(target, &msg[..HEADER + bytes.len()]);
        }
        let per_chunk = HALF_BYTES / elem;
        for (i, chunk) in src.chunks(per_chunk.max(1)).enumerate() {
            let h = self.stage(bytemuck::cast_slice(chunk))?;
            req.kind = if result.is_some() { STAGED_GET_ACC } else { STAGED_ACC };
            req.at = (at + i * per_chunk * elem) as u64;
            req.count = chunk.len() as u32;
            req.half = h as u32;
            req.encode(msg);
            self.push(target, &msg[..HEADER])?;
            if let Some(out) = result.as_deref_mut() {
                self.wait_half(h)?;
                let out = &mut out[i * per_chunk..i * per_chunk + chunk.len()];
                self.block.staging(self.seg, self.me, h).read(0, bytemuck::cast_slice_mut(out));
            }
        }
        Ok(())
    }

    /// Waits until every request this core issued has been applied (Acquire: module
    /// docs), so that it is complete at its target.
    pub fn quiesce(&self) -> Result<(), JobAborted> {
        let applied = &self.block.origin(self.seg, self.me).applied;
        let issued = self.issued.get();
        // More applied than issued (every push counted before this, on this thread):
        // a request in some queue claimed this core as its origin, so shared memory is
        // corrupted, and the count would never match again (a hang).
        let ahead = || applied.load(Ordering::Acquire).wrapping_sub(issued) as i64 > 0;
        self.wait_completion(|| applied.load(Ordering::Acquire) == issued || ahead())?;
        if ahead() {
            return Err(corrupted(self.seg, self.me));
        }
        Ok(())
    }

    /// `owner`'s request queue as absolute regions (for the corruption tests).
    pub fn queue_regions(&self, owner: u32) -> [Region; 3] {
        self.block.regions(owner)
    }

    /// Enters the agent's atomicity domain for an ARMW on bytes `at..end` of `target`'s
    /// part, striped by `striping` (module docs): once this core's requests are applied,
    /// holds `target`'s stripes that guard those bytes until the guard drops.
    pub fn armw_domain(
        &self,
        target: u32,
        striping: Striping,
        at: usize,
        end: usize,
    ) -> Result<SpanGuard<'c>, JobAborted> {
        self.quiesce()?;
        let locks = self.block.stripes(self.seg, target);
        lock_span(locks, striping, at, end, &self.waiter(), &self.seg.slot(target).bell)
    }
}

impl Drop for OwnerState<'_> {
    fn drop(&mut self) {
        self.block.queue(self.seg, self.me).request_stop();
        if let Some(agent) = self.agent.take() {
            let _ = agent.join();
        }
    }
}

/// Stops the job (fail-stop) on corrupted shared state found by core `me`; returns the
/// abort error every core now gets.
fn corrupted(seg: &Segment, me: u32) -> JobAborted {
    seg.abort(Some(me), AbortCause::Corrupted);
    seg.job().check().err().unwrap_or(JobAborted { rank: Some(me), cause: AbortCause::Corrupted })
}

/// The agent thread: applies requests to `part` until stopped or the job aborts.
fn agent(seg: &Segment, block: OwnerBlock, me: u32, part: Region, policy: WaitPolicy) {
    let waiter = Waiter::new(policy, seg.job());
    let queue = block.queue(seg, me);
    let part = seg.bytes(part);
    let mut consumer = Consumer::new();
    let mut msg = vec![0u8; SLOT_BYTES];
    // Scratch for the operands and previous values, in words so that every element
    // type is aligned in it.
    let mut scratch = Scratch::default();
    let locks = block.stripes(seg, me);
    let striping = owner_striping(part.len());
    // Stripe waiters sleep on the owner's doorbell, which ARMW holders ring on unlock.
    let bell = &seg.slot(me).bell;
    while let Ok(Next::Message(len)) = consumer.pop(&queue, &mut msg, &waiter) {
        // At most a slot's payload (`Queue::max_message`): the queue copies nothing out
        // of a longer one, so `msg` would hold a stale request.
        if !(HEADER..=SLOT_BYTES - 4).contains(&len) {
            // Corrupted: no origin to acknowledge, so its quiesce could never finish.
            seg.abort(Some(me), AbortCause::Corrupted);
            return;
        }
        let req = Req::decode(&msg[..HEADER]);
        let (Some(kind), Some(op)) = (ElemKind::from_code(req.elem), Op::from_code(req.op, req.alpha)) else {
            seg.abort(Some(me), AbortCause::Corrupted);
            return;
        };
        let applied = crate::with_elem!(kind, E => {
            let at = Applying { seg, block, part, locks, striping, waiter: &waiter, bell };
            at.apply::<E>(&req, op, &msg[..len], &mut scratch)
        });
        match applied {
            Applied::Done => {}
            Applied::Corrupted => {
                // Origins validate every request before queueing it, so a malformed one
                // is corrupted shared memory: not trusted, and fatal to the job
                // (fail-stop), since acknowledging it could credit the wrong origin.
                seg.abort(Some(me), AbortCause::Corrupted);
                return;
            }
            // A wait for a stripe fails only when the job aborts; the agent stops.
            Applied::Aborted => return,
        }
        let origin = block.origin(seg, req.origin);
        if req.kind != INLINE_ACC {
            // Release: our reads (and result writes) of the staging half happen before
            // the origin reuses it.
            origin.busy[req.half as usize].store(0, Ordering::Release);
        }
        // Release: the combined target data happens before the origin's quiesce.
        origin.applied.fetch_add(1, Ordering::Release);
        // SeqCst fence: the completions above before the load of `waiting` (Dekker
        // pair with `OwnerState::wait_completion`).
        fence(Ordering::SeqCst);
        if origin.waiting.load(Ordering::Relaxed) != 0 {
            seg.slot(req.origin).bell.ring();
        }
    }
}

/// What the agent needs to apply one request to its part.
struct Applying<'a, 's> {
    seg: &'s Segment,
    block: OwnerBlock,
    part: SharedBytes<'s>,
    locks: &'s [CachePadded<Stripe>],
    striping: Striping,
    waiter: &'a Waiter<'s>,
    bell: &'s crate::protocol::waiter::Doorbell,
}

/// The outcome of applying one request.
enum Applied {
    Done,
    Corrupted,
    Aborted,
}

/// The agent's operand and result buffers, reused from request to request.
#[derive(Default)]
struct Scratch {
    data: Vec<u64>,
    old: Vec<u64>,
}

/// The first `count` elements of type `E` of `words`, grown as needed (words are
/// 8-aligned, and every element type's alignment divides 8).
fn elems<E: Element>(words: &mut Vec<u64>, count: usize) -> &mut [E] {
    let bytes = count * size_of::<E>();
    words.clear();
    words.resize(bytes.div_ceil(8), 0);
    bytemuck::cast_slice_mut(&mut bytemuck::cast_slice_mut::<u64, u8>(words)[..bytes])
}

impl Applying<'_, '_> {
    /// Applies `req` (whose message is `msg`) with elements of type `E`.
    fn apply<E: Element>(&self, req: &Req, op: Op, msg: &[u8], scratch: &mut Scratch) -> Applied {
        let (count, at, half) = (req.count as usize, req.at as usize, req.half as usize);
        let staged = req.kind != INLINE_ACC;
        let bytes = count * size_of::<E>();
        let in_bounds = [INLINE_ACC, STAGED_ACC, STAGED_GET_ACC].contains(&req.kind)
            && E::check(op).is_ok()
            && at % size_of::<E>() == 0
            && at.checked_add(bytes).is_some_and(|end| end <= self.part.len())
            && req.origin < self.seg.config().cores
            && half < HALVES
            && bytes <= if staged { HALF_BYTES } else { msg.len() - HEADER };
        if !in_bounds {
            return Applied::Corrupted;
        }
        let (locks, striping, waiter, bell) = (self.locks, self.striping, self.waiter, self.bell);
        // Each granule under its stripe (module docs).
        let locked = if req.kind == STAGED_ACC {
            // Straight from the origin's staging buffer into the part: one pass.
            let staging = self.block.staging(self.seg, req.origin, half);
            for_each_granule_locked(locks, striping, at, at + bytes, waiter, bell, |p0, p1| {
                let src = staging.slice(p0 - at, p1 - p0);
                combine_staged::<E>(self.part, p0, op, src, (p1 - p0) / size_of::<E>());
            })
        } else {
            let data = elems::<E>(&mut scratch.data, count);
            let raw: &mut [u8] = bytemuck::cast_slice_mut(data);
            if staged {
                self.block.staging(self.seg, req.origin, half).read(0, raw);
            } else {
                raw.copy_from_slice(&msg[HEADER..HEADER + bytes]);
            }
            let data: &[E] = bytemuck::cast_slice(raw);
            if req.kind == STAGED_GET_ACC {
                let old = elems::<E>(&mut scratch.old, count);
                let done = striped_combine(locks, striping, &self.part, at, op, data, Some(old), waiter, bell);
                self.block.staging(self.seg, req.origin, half).write(0, bytemuck::cast_slice(old));
                done
            } else {
                striped_combine(locks, striping, &self.part, at, op, data, None, waiter, bell)
            }
        };
        if locked.is_err() { Applied::Aborted } else { Applied::Done }
    }
}
