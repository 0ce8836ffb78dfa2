//! The two-sided engine of one core: its channels' placement and its private state,
//! shared by every thread of the process (`MPI_THREAD_MULTIPLE`), and the background
//! progress that every other blocking call of the core drives (MPI's progress rule).
//!
//! Threads. The state is behind one mutex; a call holds it while it moves fragments.
//! A call that must wait ([`Engine::wait`]) first polls *with the state locked* (the
//! waiter's awake budget: the single-thread fast path pays nothing more), but lets go
//! at once if another thread asks for the lock (`contended`). Before it sleeps it
//! releases the state:
//! - a receive that was filling its buffer directly moves what it has to memory the
//!   inbox owns (`spill`), since other threads drain meanwhile and only the running
//!   call can reach its buffer; it takes the message back (or another) when it wakes;
//! - it copies what it watches ([`Watch`]: the SRB position, blocked destinations),
//!   counts itself in `sleeping` *while still holding the lock*, unlocks and sleeps on
//!   the core's own doorbell until the watch fires or `generation` moves;
//! - a thread that changes the state in a way other calls may wait for (a message
//!   delivered or queued, a send or receive posted, finished or cancelled) marks its
//!   guard ([`Locked::changed`]); on unlock, if `sleeping` is nonzero, it bumps
//!   `generation` and rings the core's own doorbell.
//!
//! No lost wake-up between threads: a sleeper's increment of `sleeping` precedes its
//! unlock, so a later holder (whose lock synchronises with that unlock) sees it; the
//! holder's `generation` RMW and its ring's fence, against the sleeper's registration
//! on the doorbell and the waiter's SeqCst fence before it reads `generation`, are the
//! waiter's Dekker pair (`protocol::waiter`). Wake-ups from other cores are as before:
//! whoever frees room or delivers a fragment rings this core's doorbell.
//!
//! Background progress ([`Background`]): registered in the core's context at attach,
//! so that every wait of a barrier, fence, epoch, lock, flag or collective polls it.
//! `poll` runs progress if the state has work (`active`: unfinished sends, posted
//! receives, unpublished SRB space, which it publishes at once) and the lock is free
//! (`try_lock`: never a lock the waiting caller might hold). Before each sleep `arm`
//! registers the wait as above (`sleeping`, SRB space waiters) and hands the waiter the
//! core's own doorbell to sleep on as well, with a watch that fires when the work can
//! move or the state changed. A corrupted channel found in the background disables
//! it; the next messaging call reports the corruption. An `eager` engine (a core with
//! an asynchronous progress thread, `core::async_progress`) also counts incoming
//! messages as work: its background drains them into the unexpected queue, so that
//! their senders get their room back while the program computes.
//!
//! No core waits holding an announced message (see `rendezvous`): every wait, of a
//! messaging call or in the background, first copies the deferred ones into memory the
//! inbox owns and answers their senders.

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::p2p::channel::{ChannelUnavailable, Placement};
use crate::p2p::cma::SingleCopy;
use crate::p2p::matching::Target;
use crate::p2p::progress::{Blocked, Ctx, Fail, State, Watch};
use crate::protocol::abort::JobAborted;
use crate::protocol::waiter::{Armed, Doorbell, Movable, Progress};
use crate::segment::CoreContext;
use crate::segment::context::Background;
use crate::segment::mapping::slot_state;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// A core's two-sided state: where its channels are, its private queues, and what its
/// threads need to share them (module docs). Process-local: none of it is shared memory.
pub struct Engine {
    place: Result<Placement, ChannelUnavailable>,
    /// The single-copy path's settings and what this process learnt of the host.
    single: SingleCopy,
    state: Mutex<State>,
    /// Threads that released the state to sleep and want to hear of changes.
    sleeping: AtomicU32,
    /// Bumped, then the own doorbell rung, by a change made while threads sleep.
    generation: AtomicU32,
    /// Threads waiting to lock the state: a holder that only polls lets go.
    contended: AtomicU32,
    /// Whether the state has background work (`State::active`, as of the last unlock):
    /// a hint that spares idle polls the lock.
    active: AtomicU32,
    /// The background found the channel corrupted and stopped (module docs).
    broken: AtomicU32,
    /// The background drains incoming messages even with nothing posted (module docs).
    eager: bool,
    /// The thread holding the state for a test round (`round`), or 0.
    round_thread: AtomicU64,
    /// `State::quiet_at` as of the last unlock, packed (`published << 32 | pos`), or
    /// [`NOT_QUIET`]: what [`Engine::nothing_new`] reads without the lock.
    quiet_at: AtomicU64,
}

/// `quiet_at` when the state was not quiet (a real position pair never packs to it but
/// for `u32::MAX` twice, which is then only taken for not quiet).
const NOT_QUIET: u64 = u64::MAX;

/// A number for the calling thread, unique among live threads: the address of a
/// thread-local.
fn this_thread() -> u64 {
    thread_local!(static MARK: u8 = const { 0 });
    MARK.with(|m| std::ptr::from_ref(m) as usize as u64)
}

impl Engine {
    /// The engine of `ctx`'s core; `eager` for a core with a progress thread.
    pub(crate) fn new(ctx: &CoreContext, eager: bool) -> Engine {
        let mut mpb = ctx.mpb_allocator.lock().unwrap_or_else(|e| e.into_inner());
        let place = Placement::setup(ctx.segment().config(), &mut mpb);
        Engine {
            place,
            single: SingleCopy::from_env(),
            state: Mutex::new(State::default()),
            sleeping: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            contended: AtomicU32::new(0),
            active: AtomicU32::new(0),
            broken: AtomicU32::new(0),
            eager,
            round_thread: AtomicU64::new(0),
            quiet_at: AtomicU64::new(NOT_QUIET),
        }
    }

    /// The single-copy path's settings.
    pub(crate) fn single_copy(&self) -> &SingleCopy {
        &self.single
    }

    /// The placement of the job's channels, or why it has none.
    pub(crate) fn place(&self) -> Result<&Placement, ChannelUnavailable> {
        self.place.as_ref().map_err(Clone::clone)
    }

    /// The channel context of this core (its waits drive no background: they are it).
    pub(crate) fn ctx<'c>(&'c self, ctx: &'c CoreContext) -> Result<Ctx<'c>, ChannelUnavailable> {
        let who = (ctx.rank(), ctx.size());
        Ok(Ctx::new(ctx.segment(), self.place()?, who, ctx.plain_waiter(), &self.single))
    }

    /// Whether a test of an open receive would find nothing, without locking the state:
    /// it was quiet for tests at its last unlock (`State::quiet_at`), and this core's
    /// SRB has no entry at the position it had reached then, nor senders waiting for
    /// space consumed before it (SRB only; false for `perpeer`). An idle `MPI_Test`
    /// poll then costs a look at one word instead of the lock and a progress round.
    ///
    /// Another thread may have moved on since that unlock: then `true` is the answer a
    /// test would have given before it did, and the news is seen by a later test (its
    /// unlock leaves the state not quiet, or the entry there). A thread always reads
    /// its own last unlock's value (coherence), so one thread alone gets exactly what
    /// a locked test would give.
    pub(crate) fn nothing_new(&self, ctx: &CoreContext) -> bool {
        // Relaxed: a stale value is allowed (above); the ring's words are read again,
        // with Acquire, by the locked test that any news sends the caller to.
        let at = self.quiet_at.load(Ordering::Relaxed);
        let Ok(place) = self.place.as_ref() else { return false };
        if at == NOT_QUIET || place.sizes.kind != shm_layout::ChannelKind::Srb {
            return false;
        }
        let (pos, published) = (at as u32, (at >> 32) as u32);
        let ring = place.srb(ctx.segment(), ctx.rank());
        !ring.has_entry(pos) && !ring.owes_space(pos, published)
    }

    /// Locks the state, telling a holder that only polls to let go.
    pub(crate) fn lock<'c>(&'c self, ctx: &'c CoreContext) -> Locked<'c> {
        let guard = self.try_lock().unwrap_or_else(|| self.lock_contended());
        Locked { engine: self, guard: Some(guard), own: &ctx.segment().slot(ctx.rank()).bell, changed: false }
    }

    fn try_lock(&self) -> Option<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// A test round (`round`) of this thread holds the state from now on.
    pub(crate) fn enter_round(&self) {
        // Relaxed: only the holding thread compares the mark with itself (below).
        self.round_thread.store(this_thread(), Ordering::Relaxed);
    }

    /// The test round ends (it still holds the state).
    pub(crate) fn leave_round(&self) {
        self.round_thread.store(0, Ordering::Relaxed);
    }

    fn lock_contended(&self) -> MutexGuard<'_, State> {
        // A thread that holds the state for a test round would wait for itself.
        if self.round_thread.load(Ordering::Relaxed) == this_thread() {
            panic!("a core's messaging used by the thread that holds its state for a test round");
        }
        // Relaxed: a hint for the holder's polls; the mutex orders the state itself.
        self.contended.fetch_add(1, Ordering::Relaxed);
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.contended.fetch_sub(1, Ordering::Relaxed);
        guard
    }

    /// Waits until something this call may want could have moved: a fragment for this
    /// core, room at a blocked destination (the queues' fronts and `extra`), or a
    /// change by another thread. Polls with `st` locked, then sleeps with it released
    /// (module docs); `target`, the call's receive, is spilled before that. Returns
    /// whether the state was released (then the caller looks at it afresh), or at once
    /// `false` after copying deferred announced messages (their senders then move on).
    pub(crate) fn wait(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        extra: Option<Blocked>,
        target: Option<&mut Target<'_>>,
    ) -> Result<bool, Fail> {
        if cx.pull_deferred(st)? {
            st.changed();
            return Ok(false);
        }
        // What this call changed, other threads hear of now, not after our spin.
        st.announce();
        if extra.is_none() && target.is_none() {
            // A wait for a send: its queue takes a ticket, to sleep on a space bell.
            cx.ticket_front(st);
        }
        let mut watch = cx.watch(st, extra, true);
        let result = self.wait_watching(cx, st, &mut watch, target);
        cx.unwatch(&watch);
        Ok(result?)
    }

    /// Before the core leaves the job: sends the answers it still owes (acknowledgements
    /// of synchronous messages it received, single-copy answers; see `rendezvous`),
    /// waiting for room at their destinations as long as those are in the job, waits
    /// for the answers to its queued sends' announcements (their receivers read this
    /// process's memory, which must still be there), and publishes the SRB space its
    /// queued sends reserved (a receiver stops at an entry reserved and not published). An answer to or from a core that
    /// left is not waited for: nothing of it waits any more. A leaving core rings its
    /// own doorbell once it is marked finalized (`CoreContext::leave`), which the wait
    /// here also sleeps on, so it never sleeps past its destination's departure. An
    /// aborted job ends it: then nobody waits.
    pub(crate) fn settle(&self, ctx: &CoreContext) {
        let Ok(cx) = self.ctx(ctx) else { return };
        let mut st = self.lock(ctx);
        // Acquire: pairs with the Release of the destination's `leave`.
        let left = |rank: u32| ctx.segment().slot(rank).state.load(Ordering::Acquire) == slot_state::FINALIZED;
        loop {
            st.inbox.rdv.owed.retain(|o| !left(o.dest));
            let owed = st.inbox.rdv.owed.front().map(|o| o.dest);
            let Some(dest) = owed.or_else(|| st.owing_to(left)) else { return };
            match cx.progress(&mut st, None) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(_) => return,
            }
            let watch = cx.watch(&st, None, false);
            let ready = || (cx.movable(&watch) || left(dest)).then_some(());
            let departure = SpaceBell(&ctx.segment().slot(dest).bell);
            let slept = cx.waiter.with_progress(&departure).sleep_until(st.own, ready);
            cx.unwatch(&watch);
            if slept.is_err() {
                return;
            }
        }
    }

    fn wait_watching(
        &self,
        cx: &Ctx<'_>,
        st: &mut Locked<'_>,
        watch: &mut Watch,
        target: Option<&mut Target<'_>>,
    ) -> Result<bool, JobAborted> {
        // Relaxed: a hint (module docs).
        let contended = || self.contended.load(Ordering::Relaxed) != 0;
        let ready = || (cx.movable(watch) || contended()).then_some(());
        // A send whose reservation is far from fitting sleeps at once (see `srb`).
        if !cx.far(watch) && cx.waiter.spin_until(ready)?.is_some() && !contended() {
            return Ok(false);
        }
        if let Some(t) = target {
            if st.inbox.spill(t) {
                st.changed();
            }
        }
        // No sender may wait on a sleeper for space it consumed (see `srb`).
        cx.flush_before_sleep(&mut st.inbox, watch);
        let watch = &*watch;
        // Tell the sleepers of a change now: once counted below, we would wake
        // ourselves with it.
        st.announce();
        // Relaxed, both: read and counted under the lock, which orders them for the
        // next holder (module docs).
        let generation = self.generation.load(Ordering::Relaxed);
        self.sleeping.fetch_add(1, Ordering::Relaxed);
        st.unlock();
        // Relaxed load of `generation`: the waiter's SeqCst fence before the condition,
        // against the changer's RMW and ring fence, decide (module docs); the state
        // itself is read under the lock once awake.
        let moved = || self.generation.load(Ordering::Relaxed) != generation;
        let ready = || (cx.movable(watch) || moved()).then_some(());
        // A send holding a ticket sleeps on its space bell as well (see `srb`).
        let result = match cx.space_bell(watch) {
            Some(bell) => cx.waiter.with_progress(&SpaceBell(bell)).sleep_until(st.own, ready),
            None => cx.waiter.sleep_until(st.own, ready),
        };
        st.relock();
        self.sleeping.fetch_sub(1, Ordering::Relaxed);
        result.map(|()| true)
    }
}

/// The state, locked: tells sleeping threads of changes when it unlocks (module docs).
pub(crate) struct Locked<'c> {
    engine: &'c Engine,
    guard: Option<MutexGuard<'c, State>>,
    /// The core's own doorbell, which sleeping threads of the core sleep on.
    own: &'c Doorbell,
    changed: bool,
}

impl Locked<'_> {
    /// Marks a change that other calls of the core may wait for.
    pub(crate) fn changed(&mut self) {
        self.changed = true;
    }

    /// If the state changed while other threads sleep, wakes them: bumps `generation`
    /// and rings the own doorbell. Call it holding the state.
    fn announce(&mut self) {
        // Relaxed load of `sleeping`: every sleeper counted itself before its unlock,
        // which our lock synchronises with (module docs).
        if std::mem::take(&mut self.changed) && self.engine.sleeping.load(Ordering::Relaxed) != 0 {
            // Relaxed: the ring's fence (free after this RMW) orders it before the load
            // of the doorbell's word, the waker's half of the Dekker pair.
            self.engine.generation.fetch_add(1, Ordering::Relaxed);
            self.own.ring_after_rmw();
        }
    }

    fn unlock(&mut self) {
        let Some(guard) = self.guard.as_ref() else { return };
        // Relaxed: a hint for `Background::poll`, which locks before it trusts it.
        self.engine.active.store(u32::from(guard.active()), Ordering::Relaxed);
        let quiet_at = guard.quiet_at().map_or(NOT_QUIET, |(pos, published)| u64::from(published) << 32 | u64::from(pos));
        // Relaxed: read as a hint by `nothing_new` (see there).
        self.engine.quiet_at.store(quiet_at, Ordering::Relaxed);
        self.announce();
        self.guard = None;
    }

    fn relock(&mut self) {
        let guard = self.engine.try_lock().unwrap_or_else(|| self.engine.lock_contended());
        self.guard = Some(guard);
    }
}

impl Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        self.guard.as_ref().expect("the state is locked outside waits")
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.guard.as_mut().expect("the state is locked outside waits")
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.unlock();
    }
}

impl Background for Engine {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn poll(&self, ctx: &CoreContext) -> bool {
        // Relaxed: hints; the state is looked at under the lock.
        if (self.active.load(Ordering::Relaxed) == 0 && !self.eager) || self.broken.load(Ordering::Relaxed) != 0 {
            return false;
        }
        let (Ok(cx), Some(guard)) = (self.ctx(ctx), self.try_lock()) else { return false };
        let mut st = Locked { engine: self, guard: Some(guard), own: &ctx.segment().slot(ctx.rank()).bell, changed: false };
        match cx.progress(&mut st, None).and_then(|moved| Ok(cx.pull_deferred(&mut st)? || moved)) {
            Ok(moved) => {
                if moved {
                    st.changed();
                }
                cx.flush_consumed(&mut st.inbox) || moved
            }
            Err(_) => {
                self.broken.store(1, Ordering::Relaxed);
                false
            }
        }
    }

    fn arm<'a>(&'a self, ctx: &'a CoreContext) -> Armed<'a> {
        let Ok(cx) = self.ctx(ctx) else { return Armed::Idle };
        if self.broken.load(Ordering::Relaxed) != 0 {
            return Armed::Idle;
        }
        let Some(guard) = self.try_lock() else { return Armed::Busy };
        let own = &ctx.segment().slot(ctx.rank()).bell;
        let mut st = Locked { engine: self, guard: Some(guard), own, changed: false };
        // Never sleep holding announced messages (module docs): normally `poll` copied
        // them already, but another thread may have deferred one since.
        match cx.pull_deferred(&mut st) {
            Ok(true) => {
                st.changed();
                return Armed::Busy;
            }
            Ok(false) => {}
            Err(_) => {
                self.broken.store(1, Ordering::Relaxed);
                return Armed::Idle;
            }
        }
        // Idle work watches only for changes (another thread may post some), unless
        // the background drains eagerly.
        let active = st.active() || self.eager;
        // It sleeps on `own` only: no ticket (see `Ctx::watch`).
        let watch = active.then(|| cx.watch(&st, None, false));
        // Relaxed, both: under the lock, as in `Engine::wait`.
        let generation = self.generation.load(Ordering::Relaxed);
        self.sleeping.fetch_add(1, Ordering::Relaxed);
        st.unlock();
        Armed::Watch(own, Box::new(BackgroundWait { engine: self, cx, watch, generation }))
    }
}

/// The space bell of a ticket, as a second doorbell for the waiter to sleep on: the
/// waiter's condition already covers what it rings for, so it watches nothing more.
/// A second doorbell a wait sleeps on: a ticket's space bell, or a departing core's own.
struct SpaceBell<'a>(&'a Doorbell);

impl Progress for SpaceBell<'_> {
    fn poll(&self) -> bool {
        false
    }

    fn arm(&self) -> Armed<'_> {
        Armed::Watch(self.0, Box::new(Nothing))
    }
}

struct Nothing;

impl Movable for Nothing {
    fn movable(&self) -> bool {
        false
    }
}

/// A background wait in progress (see [`Background::arm`]).
struct BackgroundWait<'a> {
    engine: &'a Engine,
    cx: Ctx<'a>,
    watch: Option<Watch>,
    generation: u32,
}

impl Movable for BackgroundWait<'_> {
    fn movable(&self) -> bool {
        // Relaxed: as in `Engine::wait`.
        self.engine.generation.load(Ordering::Relaxed) != self.generation
            || self.watch.as_ref().is_some_and(|w| self.cx.movable(w))
    }
}

impl Drop for BackgroundWait<'_> {
    fn drop(&mut self) {
        if let Some(w) = &self.watch {
            self.cx.unwatch(w);
        }
        self.engine.sleeping.fetch_sub(1, Ordering::Relaxed);
    }
}
