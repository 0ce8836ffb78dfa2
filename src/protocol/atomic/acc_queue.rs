//! The owner-computes request queue: a bounded multi-producer, single-consumer ring of
//! fixed-size slots in shared memory (one per owner and window). Origins enqueue
//! requests; the owner's agent thread dequeues and applies them.
//!
//! Protocol (Vyukov's bounded queue, one consumer). `seq[i]` tells the state of slot
//! `i` for ring position `pos` (`i = pos % cap`): `seq == pos` free for the producer of
//! `pos`, `seq == pos + 1` full, to be consumed; the consumer frees it for the next lap
//! with `seq = pos + cap`. `init` sets `seq[i] = i`. `cap >= 2`, or "full" and "free
//! for the next lap" would be the same value.
//! - produce: read `tail`; if `seq[tail % cap] == tail`, claim the position with a
//!   CAS `tail -> tail + 1` (Relaxed: the slot's `seq` carries the data, not `tail`),
//!   copy the message in, store `seq = pos + 1` (Release: the copy happens before the
//!   consumer's Acquire load of `seq`), ring the `work` doorbell;
//! - consume: if `seq[head % cap] == head + 1` (Acquire), copy the message out, store
//!   `seq = head + cap` (Release: the copy-out happens before the next producer's
//!   Acquire load, which may then overwrite the slot), and ring `space` if a producer
//!   registered in `full_waiters` (a Dekker pair of SeqCst fences: the consumer's after
//!   its free, and on the producer's side the one the waiter issues before it sleeps).
//! - flow control: a producer that finds `seq < pos` (the consumer has not freed the
//!   slot from the previous lap: the queue is full) sleeps on `space` until it has.
//!   A fast origin therefore never overruns the owner, and never loses a request.
//!
//! Invariants: every message is delivered exactly once; messages of one producer are
//! delivered in the order it enqueued them (its positions increase); the consumer only
//! reads a slot after its producer's copy, a producer only writes it after the
//! consumer's copy-out. Blocking (full queue, empty queue) goes through the waiter and
//! returns the abort error when the job aborts. Messages carry their own length in
//! their first 4 bytes.

use crossbeam_utils::CachePadded;

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::payload::Payload;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};

/// What `push` returns for a `seq` word that was overwritten.
const CORRUPTED: JobAborted = JobAborted { rank: None, cause: AbortCause::Corrupted };

/// The queue's shared control words (owned by the consumer's core).
#[repr(C)]
#[derive(Default)]
pub struct QueueCtl {
    tail: CachePadded<AtomicU64>,
    /// Set (then `work` rung) to stop the consumer.
    stop: CachePadded<AtomicU32>,
    /// Producers waiting for a free slot (flow control); the consumer rings `space`
    /// only when it is nonzero.
    full_waiters: CachePadded<AtomicU32>,
    /// The agent's own doorbell (production's `work`).
    work: CachePadded<Doorbell>,
}

/// Where the queue's sleepers sleep. In production `work` is the queue's own doorbell
/// ([`QueueCtl::work_bell`]: only the owner's agent sleeps there, and its own process
/// stops it) and `space` the owner core's slot doorbell, which the abort protocol
/// rings, so a producer blocked on the full queue of a dead owner returns the abort
/// error. `space` is rung only while a producer waits (`full_waiters`, a Dekker pair
/// of SeqCst fences like the waiter's), so that the consumer does not wake whatever
/// else sleeps on the owner's doorbell at every dequeue.
#[derive(Clone, Copy)]
pub struct Bells<'a> {
    /// The consumer sleeps here when the queue is empty.
    pub work: &'a Doorbell,
    /// Producers sleep here when the queue is full.
    pub space: &'a Doorbell,
}

impl QueueCtl {
    /// An empty queue, not stopping.
    pub fn new() -> QueueCtl {
        QueueCtl::default()
    }

    /// The agent's own doorbell, for [`Bells::work`].
    pub fn work_bell(&self) -> &Doorbell {
        &self.work
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire) != 0
    }
}

/// A view of one queue: control words, the slots' sequence words and their bytes.
pub struct Queue<'a, P: Payload> {
    ctl: &'a QueueCtl,
    bells: Bells<'a>,
    seqs: &'a [AtomicU64],
    slots: P,
    slot_bytes: usize,
}

/// What a consumer's wait ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A message of this many bytes was copied out.
    Message(usize),
    /// The queue is empty and a stop was requested.
    Stopped,
}

impl<'a, P: Payload> Queue<'a, P> {
    /// `slots` holds `seqs.len()` slots of `slot_bytes` each.
    pub fn new(
        ctl: &'a QueueCtl,
        bells: Bells<'a>,
        seqs: &'a [AtomicU64],
        slots: P,
        slot_bytes: usize,
    ) -> Self {
        // At least 2 slots: with one, "full for lap k" and "free for lap k + 1" would be
        // the same sequence value (the loom model `acc_queue` found this). Slots of more
        // than the 4-byte length word, so that a request fits: `>= 4` would be as safe
        // (a 4-byte slot carries the length of an empty message, and nothing else reads
        // it), which is why the mutation script's shift of this bound survives; the
        // owner's slots are `rma::owner::SLOT_BYTES` (4160).
        assert!(seqs.len() >= 2 && slots.len() >= seqs.len() * slot_bytes && slot_bytes > 4);
        Queue { ctl, bells, seqs, slots, slot_bytes }
    }

    /// Slots in the queue: messages that may be in flight at once.
    pub fn capacity(&self) -> usize {
        self.seqs.len()
    }

    /// Largest message.
    pub fn max_message(&self) -> usize {
        self.slot_bytes - 4
    }

    /// Makes every slot free for the first lap (the consumer's core, before any
    /// producer may see the queue: a barrier follows).
    pub fn init(&self) {
        for (i, s) in self.seqs.iter().enumerate() {
            s.store(i as u64, Ordering::Relaxed);
        }
        self.ctl.tail.store(0, Ordering::Relaxed);
        self.ctl.stop.store(0, Ordering::Relaxed);
        self.ctl.full_waiters.store(0, Ordering::Relaxed);
    }

    /// Asks the consumer to stop once the queue is empty.
    pub fn request_stop(&self) {
        // Release: the consumer's Acquire load then sees every push made before.
        self.ctl.stop.store(1, Ordering::Release);
        self.bells.work.ring();
    }

    fn seq(&self, pos: u64) -> &AtomicU64 {
        &self.seqs[(pos % self.seqs.len() as u64) as usize]
    }

    /// Enqueues `msg`, waiting (on `space`) while the queue is full. Fails with
    /// `JobAborted { rank: None, cause: Corrupted }` if the `seq` word of its position
    /// holds a value no lap can give (the caller stops the job).
    pub fn push(&self, msg: &[u8], waiter: &Waiter<'_>) -> Result<(), JobAborted> {
        assert!(msg.len() <= self.max_message(), "message larger than a slot");
        let cap = self.seqs.len() as u64;
        let mut pos = self.ctl.tail.load(Ordering::Relaxed);
        loop {
            // Acquire: pairs with the consumer's Release when it freed the slot, so our
            // copy-in happens after its copy-out.
            let seq = self.seq(pos).load(Ordering::Acquire);
            let lag = seq.wrapping_sub(pos) as i64;
            if lag == 0 {
                // Relaxed: claiming the position orders nothing; `seq` carries the data.
                match self.ctl.tail.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => break,
                    Err(now) => pos = now,
                }
                crate::sync::Backoff::new().snooze();
            } else if lag < 0 {
                // A slot is at most one lap behind (claimed for `pos - cap` and not yet
                // written, or written and not yet consumed); farther is corrupted.
                if lag < -(cap as i64) {
                    return Err(CORRUPTED);
                }
                // Full: the slot still holds the message of position pos - cap. Wait
                // for the consumer to free it (flow control), then try again.
                let slot = self.seq(pos);
                // No fence of our own after this registration: the waiter issues a
                // SeqCst fence before it sleeps and checks the slot after it, which
                // pairs with the consumer's fence after its free (Dekker pair): either
                // the consumer sees us and rings `space`, or that check sees the slot
                // freed. Checks before that fence may miss the free, but never sleep.
                self.ctl.full_waiters.fetch_add(1, Ordering::Relaxed);
                // Relaxed: the check only ends the wait; the Acquire load of `seq` at
                // the top of the loop, before we claim the slot, orders our copy-in
                // after the consumer's copy-out.
                let freed = waiter.wait_until(self.bells.space, || {
                    (slot.load(Ordering::Relaxed).wrapping_sub(pos) as i64 >= 0).then_some(())
                });
                self.ctl.full_waiters.fetch_sub(1, Ordering::Relaxed);
                freed?;
                pos = self.ctl.tail.load(Ordering::Relaxed);
            } else {
                // Another producer took this position: look again. Its claim of `tail`
                // happened before its store of `seq` (or the consumer's, after it),
                // which our Acquire load saw, so `tail` has moved past `pos`; if it has
                // not, `seq` was overwritten, and looking again would spin forever.
                crate::sync::Backoff::new().snooze();
                let now = self.ctl.tail.load(Ordering::Relaxed);
                if now == pos {
                    return Err(CORRUPTED);
                }
                pos = now;
            }
        }
        let at = (pos % cap) as usize * self.slot_bytes;
        self.slots.write(at, &(msg.len() as u32).to_le_bytes());
        self.slots.write(at + 4, msg);
        // Release: the copy above happens before the consumer's Acquire load.
        self.seq(pos).store(pos + 1, Ordering::Release);
        self.bells.work.ring();
        Ok(())
    }
}

/// The single consumer's side: its position lives with it, not in shared memory.
pub struct Consumer {
    head: u64,
}

impl Default for Consumer {
    fn default() -> Self {
        Consumer::new()
    }
}

impl Consumer {
    /// A consumer at the start of a fresh queue.
    pub fn new() -> Consumer {
        Consumer { head: 0 }
    }

    /// Dequeues one message into `buf` (at least a slot's `max_message` long), or
    /// returns `None` at once if the queue is empty.
    pub fn try_pop<P: Payload>(&mut self, q: &Queue<'_, P>, buf: &mut [u8]) -> Option<usize> {
        let pos = self.head;
        let seq = q.seq(pos);
        // Acquire: pairs with the producer's Release after its copy-in.
        if seq.load(Ordering::Acquire) != pos + 1 {
            return None;
        }
        let at = (pos % q.seqs.len() as u64) as usize * q.slot_bytes;
        let mut len = [0u8; 4];
        q.slots.read(at, &mut len);
        let len = u32::from_le_bytes(len) as usize;
        // A length past the slot is corrupted shared state: not trusted, nothing copied;
        // the caller sees a length larger than any message and fails the job.
        if len <= q.max_message() {
            q.slots.read(at + 4, &mut buf[..len]);
        }
        // Release: our copy-out happens before the next lap's producer writes the slot.
        seq.store(pos + q.seqs.len() as u64, Ordering::Release);
        // SeqCst fence: the free above before the load below (Dekker pair with `push`).
        fence(Ordering::SeqCst);
        if q.ctl.full_waiters.load(Ordering::Relaxed) != 0 {
            q.bells.space.ring();
        }
        self.head = pos + 1;
        Some(len)
    }

    /// Waits (on `work`) for the next message, or for a stop request once the queue
    /// is empty.
    pub fn pop<P: Payload>(
        &mut self,
        q: &Queue<'_, P>,
        buf: &mut [u8],
        waiter: &Waiter<'_>,
    ) -> Result<Next, JobAborted> {
        waiter.wait_until(q.bells.work, || {
            if let Some(n) = self.try_pop(q, buf) {
                return Some(Next::Message(n));
            }
            // Acquire on `stop` makes every push before the stop request visible: look
            // once more, so a message enqueued just before it is not lost.
            q.ctl.stopping().then(|| self.try_pop(q, buf).map_or(Next::Stopped, Next::Message))
        })
    }
}
