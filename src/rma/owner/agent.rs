//! The agent thread of owner-computes accumulate: one per process and window, the only
//! combiner of its owner's part, so that the data crosses once and the part stays in
//! the owner's cache. It validates every request before it touches memory, since a
//! request it cannot trust is corrupted shared memory (fail-stop).

use crossbeam_utils::CachePadded;
use shm_layout::{Region, WaitPolicy};

use crate::protocol::abort::AbortCause;
use crate::protocol::atomic::acc_queue::{Consumer, Next};
use crate::protocol::atomic::op::{ElemKind, Element, Op};
use crate::protocol::atomic::stripes::{Stripe, Striping, for_each_granule_locked, striped_combine};
use crate::protocol::payload::Payload;
use crate::protocol::waiter::Waiter;
use crate::rma::acc_view::combine_staged;
use crate::segment::pages_still::pages_stay;
use crate::segment::mapping::{Segment, SharedBytes};
use crate::sync::{Ordering, fence};

use super::block::OwnerBlock;
use super::request::{INLINE_ACC, Req, STAGED_ACC, STAGED_GET_ACC};
use super::{HALF_BYTES, HALVES, HEADER, SLOT_BYTES, owner_striping};

/// The agent thread: applies requests to `part` until stopped or the job aborts.
pub(super) fn agent(seg: &Segment, block: OwnerBlock, me: u32, part: Region, policy: WaitPolicy) {
    let waiter = Waiter::new(policy, seg.job());
    let queue = block.queue(seg, me);
    let part = seg.bytes(part);
    let mut consumer = Consumer::new();
    // On the stack: it is written while waiting, when pages may move (`adopt`).
    let mut msg = [0u8; SLOT_BYTES];
    // Scratch for the operands and previous values, in words so that every element
    // type is aligned in it.
    let mut scratch = Scratch::default();
    let locks = block.stripes(seg, me);
    let striping = owner_striping(part.len());
    // Stripe waiters sleep on the owner's doorbell, which ARMW holders ring on unlock.
    let bell = block.bell(seg, me);
    // The thread's setup is over: std's and glibc's (which free the spawn's boxes and
    // set up the allocator's cache, writing heap pages a buffer may share) and ours
    // above. Release: those writes happen before the creator's Acquire sees the flag,
    // and so before any page it moves afterwards (`segment::pages_still`).
    block.origin(seg, me).agent_ready.store(1, Ordering::Release);
    bell.ring();
    while let Ok(Next::Message(len)) = consumer.pop(&queue, &mut msg, &waiter) {
        // At most a slot's payload (`Queue::max_message`): the queue copies nothing out
        // of a longer one, so `msg` would hold a stale request.
        if !(HEADER..=SLOT_BYTES - 4).contains(&len) {
            // Corrupted: no origin to acknowledge, so its quiesce could never finish.
            seg.abort(Some(me), AbortCause::Corrupted);
            return;
        }
        // From here to the next wait this thread writes its heap (the scratch): pages
        // must not move meanwhile (`segment::pages_still`).
        let _stay = pages_stay();
        let req = Req::decode(&msg[..HEADER]);
        let (Some(kind), Some(op)) = (ElemKind::from_code(req.elem), Op::from_code(req.op, req.alpha)) else {
            seg.abort(Some(me), AbortCause::Corrupted);
            return;
        };
        let applied = crate::with_elem!(kind, E => {
            let at = Applying { seg, block: &block, part, locks, striping, waiter: &waiter, bell };
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
            block.bell(seg, req.origin).ring();
        }
    }
}

/// What the agent needs to apply one request to its part.
struct Applying<'a, 's> {
    seg: &'s Segment,
    block: &'a OwnerBlock,
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

/// The agent's operand and result buffers, reused from request to request; freed
/// while pages stay (`segment::pages_still`), as freeing writes the heap.
#[derive(Default)]
struct Scratch {
    data: Vec<u64>,
    old: Vec<u64>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _stay = pages_stay();
        (self.data, self.old) = (Vec::new(), Vec::new());
    }
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
            && self.block.reaches(req.origin)
            && half < HALVES
            && bytes <= if staged { HALF_BYTES } else { msg.len() - HEADER };
        if !in_bounds {
            return Applied::Corrupted;
        }
        let (locks, striping, waiter, bell) = (self.locks, self.striping, self.waiter, self.bell);
        // Each granule under its stripe (`owner`'s module docs).
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
