//! The origin's side of owner-computes accumulate: building and enqueueing requests,
//! staging large operands, and waiting for completion. Every wait here ends on the
//! origin's own doorbell, which agents ring only while it registers as waiting, so that
//! streams of accumulates do not wake whatever else sleeps on it.

use std::cell::Cell;
use std::thread::JoinHandle;

use shm_layout::Region;

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::atomic::op::{Element, Op};
use crate::protocol::atomic::stripes::{SpanGuard, Striping, lock_span};
use crate::protocol::payload::Payload;
use crate::protocol::waiter::Waiter;
use crate::segment::mapping::Segment;
use crate::sync::{Ordering, fence};

use super::agent::agent;
use super::block::OwnerBlock;
use super::request::{INLINE_ACC, Req, STAGED_ACC, STAGED_GET_ACC};
use super::{HALF_BYTES, HALVES, HEADER, INLINE_BYTES, SLOT_BYTES};

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
        let for_agent = block.clone();
        let agent = std::thread::Builder::new()
            .name(format!("sccemu-acc-agent-{me}"))
            .spawn(move || agent(&agent_seg, for_agent, me, part, policy))?;
        // Until its setup is over the agent writes the heap unguarded, so the program
        // may not move pages yet (`segment::pages_still`): wait for it. Acquire: pairs
        // with the agent's Release of the flag.
        let ready = &block.origin(seg, me).agent_ready;
        let started = waiter.wait_until(block.bell(seg, me), || {
            (ready.load(Ordering::Acquire) != 0 || agent.is_finished()).then_some(())
        });
        if let Err(aborted) = started {
            block.queue(seg, me).request_stop();
            let _ = agent.join();
            return Err(std::io::Error::other(aborted));
        }
        if ready.load(Ordering::Acquire) == 0 {
            let _ = agent.join();
            return Err(std::io::Error::other("the accumulate agent stopped before it started"));
        }
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

    /// Waits until staging half `h` is free again (Acquire: `owner`'s module docs).
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
        let bell = self.block.bell(self.seg, self.me);
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

    /// Waits until every request this core issued has been applied (Acquire: `owner`'s
    /// module docs), so that it is complete at its target.
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

    /// Where `target`'s stripe locks lie, absolute in its node's segment.
    pub fn stripes_offset(&self, target: u32) -> usize {
        self.block.stripes_offset(target)
    }

    /// Enters the agent's atomicity domain for an ARMW on bytes `at..end` of `target`'s
    /// part, striped by `striping` (`owner`'s module docs): once this core's requests
    /// are applied, holds `target`'s stripes that guard those bytes until the guard
    /// drops.
    pub fn armw_domain(
        &self,
        target: u32,
        striping: Striping,
        at: usize,
        end: usize,
    ) -> Result<SpanGuard<'c>, JobAborted> {
        self.quiesce()?;
        let locks = self.block.stripes(self.seg, target);
        lock_span(locks, striping, at, end, &self.waiter(), self.block.bell(self.seg, target))
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
