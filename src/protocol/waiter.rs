//! The one way to wait: spin briefly (only while cores have CPUs of their own), then
//! yield, then sleep on a futex in the segment.
//!
//! Every core's control slot holds a [`Doorbell`]: one futex word, `seq`, whose low bit
//! (`ARMED`) says that a sleeper may be asleep on its current value and whose other
//! bits count wakes. A core that waits for a condition on memory owned by core `o`
//! sleeps on `o`'s doorbell; whoever changes such memory rings `o`'s doorbell
//! afterwards. The abort protocol rings every doorbell, and a waiter checks the job
//! state before every sleep, so aborts wake everyone.
//!
//! No lost wake-up (checked by the loom model `waiter`):
//! - the sleeper sets `ARMED` with an RMW (`fetch_or`), which also reads `seq`, issues
//!   a SeqCst fence, then evaluates the condition, and sleeps only while `seq` still
//!   holds the armed value it read;
//! - the waker publishes its change, issues a SeqCst fence, and reads `seq`; if `ARMED`
//!   is set it replaces the armed value `s` by `s + 1` (which clears the bit and
//!   counts the wake) with one compare-and-swap, and if that succeeded wakes all.
//!
//! The two fences order each side's RMW or store before its load (a Dekker pair), so
//! either the waker's load sees the sleeper's `fetch_or` (or a later value of `seq`), or
//! the sleeper's condition sees the change. `seq` leaves an armed value only by a
//! waker's compare-and-swap, which that waker follows with a wake: so once the value a
//! sleeper armed is gone, the futex compare fails or the wake arrives. A waker whose
//! compare-and-swap fails skips its wake: another waker replaced the armed value it
//! read, after that read, and wakes whoever slept on it; a sleeper that armed since
//! armed after that read, so its fence follows the waker's (otherwise the waker's load
//! would have seen its arming) and its condition sees the change.
//!
//! So a doorbell wakes once per arming, not once per ring: a sleeper already woken but
//! not yet running (on an oversubscribed machine, for a while) costs further ringers
//! one load, where a count of sleepers, kept until the sleeper ran again, cost each of
//! them a wake syscall (48 MPI ranks, 64 KiB many-to-one: about 11 900 wake calls by
//! the receiver per run, mostly redundant). The price: a sleeper that armed but found
//! its condition true cannot disarm (another sleeper may be asleep on the same value),
//! so the next ring makes one wake call for nobody. A sleeper-free ring costs one fence
//! and one load.
//!
//! Background progress ([`Progress`]): a waiter may carry the core's background work
//! (its pending two-sided operations, registered by the layer that owns them). The
//! waiter drives it while it waits: [`Progress::poll`] between polls and after every
//! sleep, and [`Progress::arm`] before every sleep. Arming may name a second doorbell,
//! the one that the work's partners ring (the core's own): the sleeper then arms
//! both doorbells before its fence, evaluates its condition *and* the work's
//! ([`Movable::movable`]) after it, and sleeps on both words at once
//! (`FutexWord::wait_or`, `futex_waitv`), so a ring of either is a Dekker pair with the
//! sleeper exactly as above and neither can be lost. Work that cannot be looked at now
//! ([`Armed::Busy`]: another thread of the core holds it) is retried after a yield;
//! its holder holds it only for bounded stretches and never across a sleep.

use std::time::{Duration, Instant};

use shm_layout::WaitPolicy;

use crate::protocol::abort::{JobAborted, JobControl};
use crate::sync::{Backoff, FutexWord, Ordering, fence, fence_after_rmw, spin_pause, yield_now};

/// How long a waiter stays awake before it sleeps on the futex.
/// - `Adaptive` (no more cores than CPUs) spins, then yields: long enough to cover a
///   partner running on another CPU.
/// - `Block` (oversubscribed) yields at once, without spinning: when several ranks share
///   a CPU, a round of yields hands the CPU to the rank being waited for in a few
///   microseconds, while every futex sleep and wake costs a context switch (measured:
///   an 8-core barrier on 2 CPUs took 13.4 µs spinning before sleeping, 4.6 µs
///   yielding). Past the budget the partner is computing, and sleeping frees its CPU.
///   The one exception is [`Waiter::wait_handoff`], for a partner on another CPU.
///
/// The budget counts from the end of the spinning, when the clock is first read.
const AWAKE_BUDGET: Duration = Duration::from_micros(100);

/// Polls, one pause apart, that a [`Waiter::wait_handoff`] under `Block` makes instead
/// of yielding while its partner runs on another CPU (about 5 µs): long enough to cover
/// a partner that is running, short enough that one the scheduler has set aside costs
/// a few of the context switches (1.1 µs each here) that spinning saves.
/// (Two under loom, whose model need only see that the spin ends.)
const HANDOFF_SPINS: u32 = if cfg!(sccemu_loom) { 2 } else { 200 };

/// Polls, one pause apart, before the doubling backoff. A pause takes 25 ns on this
/// machine's CPUs, so a partner that answers within ~1.6 µs is seen within one pause,
/// where doubling pauses overshoot by up to the last one (2 cores: PSCW epoch 0.18 ->
/// 0.15 µs, 8 B ping-pong 0.19 -> 0.15 µs one way).
const TIGHT_POLLS: u32 = 64;

/// The bit of a doorbell's `seq` that says a sleeper may be asleep on its value
/// (module docs). A wake adds one to an armed value: the bit clears and the count
/// above it advances, so no armed value recurs before the count wraps (2^31 wakes).
const ARMED: u32 = 1;

/// One core's wake-up point (in its control slot).
#[derive(Default)]
pub struct Doorbell {
    seq: FutexWord,
}

impl Doorbell {
    /// A doorbell with no sleepers.
    pub fn new() -> Doorbell {
        Doorbell::default()
    }

    /// Wakes the sleepers, if any. Call it after the change they wait for is stored.
    pub fn ring(&self) {
        // SeqCst fence: the change stored before it and the load of `seq` after it form
        // a Dekker pair with the fence in `Waiter::wait_until` (module docs).
        fence(Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// [`Doorbell::ring`] when the change was the atomic RMW just before: that RMW
    /// already orders it before the load of `seq` (`sync::fence_after_rmw`).
    #[inline]
    pub fn ring_after_rmw(&self) {
        fence_after_rmw();
        self.wake_sleepers();
    }

    fn wake_sleepers(&self) {
        // Relaxed: the caller's fence orders it after the change (the Dekker pair).
        let seen = self.seq.load(Ordering::Relaxed);
        // Release: a sleeper whose arming RMW reads the new value (Acquire) sees the
        // change. Where the fence before this is a real SeqCst fence (`ring`, and
        // `ring_after_rmw` off x86 and under loom), Relaxed would do: that fence is a
        // release fence sequenced before this write, so the sleeper's Acquire
        // synchronizes with it (which is why the mutation script's Relaxed survives). On
        // x86, `ring_after_rmw`'s fence is only a compiler fence, and this Release is
        // what makes the edge in the language's model; it costs nothing there (one
        // `lock cmpxchg` either way). Failure Relaxed: a failed exchange means another
        // waker took this wake over (module docs); nothing is read after it.
        if seen & ARMED != 0
            && self
                .seq
                .compare_exchange(seen, seen.wrapping_add(1), Ordering::Release, Ordering::Relaxed)
                .is_ok()
        {
            self.seq.wake_all();
        }
    }
}

/// A core's background work, driven by every wait of the core (module docs).
pub trait Progress: Sync {
    /// Moves what can move now, without blocking and without waiting for a lock that
    /// the waiting caller may hold; true if anything moved.
    fn poll(&self) -> bool;

    /// Prepares a sleep: registers whatever the work's partners must see to ring this
    /// core, and says what to watch while asleep.
    fn arm(&self) -> Armed<'_>;
}

/// What background work asks of a sleep ([`Progress::arm`]).
pub enum Armed<'a> {
    /// Nothing to watch: sleep on the call's doorbell alone.
    Idle,
    /// The work is in another thread's hands for a moment: do not sleep; yield, poll
    /// and arm again.
    Busy,
    /// Sleep on this doorbell too (the one the work's partners ring), until the watch
    /// says the work can move. Dropping the watch undoes what arming registered.
    Watch(&'a Doorbell, Box<dyn Movable + 'a>),
}

/// The work's side of a sleeper's condition (see [`Armed::Watch`]).
pub trait Movable {
    /// Evaluated after the sleeper's SeqCst fence, like its own condition: whether the
    /// work could move now (the sleeper then polls instead of sleeping).
    fn movable(&self) -> bool;
}

/// Waits on behalf of one core, under the job's wait policy.
#[derive(Clone, Copy)]
pub struct Waiter<'a> {
    policy: WaitPolicy,
    job: &'a JobControl,
    /// The one CPU this core is pinned to, if it is (see [`Waiter::handoff_cpu`]).
    cpu: Option<u16>,
    /// The core's background work, driven while waiting.
    progress: Option<&'a dyn Progress>,
}

impl<'a> Waiter<'a> {
    /// A waiter under `policy` that checks `job` for aborts, pinned to no known CPU,
    /// with no background work.
    pub fn new(policy: WaitPolicy, job: &'a JobControl) -> Waiter<'a> {
        Waiter { policy, job, cpu: None, progress: None }
    }

    /// The same waiter, driving `progress` while it waits.
    pub fn with_progress(self, progress: &'a dyn Progress) -> Waiter<'a> {
        Waiter { progress: Some(progress), ..self }
    }

    /// The wait policy.
    pub fn policy(&self) -> WaitPolicy {
        self.policy
    }

    /// The same waiter, for a core pinned to `cpu` (if any).
    pub fn on_cpu(self, cpu: Option<u16>) -> Waiter<'a> {
        Waiter { cpu, ..self }
    }

    /// This core's CPU when it is pinned and shares it with other cores (`Block`): then
    /// which CPU a partner runs on decides whether to spin or yield for it (see
    /// [`Waiter::wait_handoff`] and `rwlock`). `None` otherwise.
    #[inline]
    pub fn handoff_cpu(&self) -> Option<u16> {
        self.cpu.filter(|_| self.policy == WaitPolicy::Block)
    }

    /// The job state this waiter checks before every sleep.
    pub fn job(&self) -> &'a JobControl {
        self.job
    }

    /// Polls `ready` until it yields a value, sleeping on `bell` between changes.
    /// Returns the job's abort error instead if the job aborts first.
    ///
    /// `ready` must read the memory that the ringers of `bell` change, with whatever
    /// ordering the caller's protocol needs (normally `Acquire`).
    #[inline]
    pub fn wait_until<T>(&self, bell: &Doorbell, ready: impl FnMut() -> Option<T>) -> Result<T, JobAborted> {
        self.wait_handoff(bell, ready, || false)
    }

    /// [`Waiter::wait_until`], except that under `Block` it polls instead of yielding
    /// (for at most `HANDOFF_SPINS` polls) while `partner_elsewhere` says that the core
    /// that will make `ready` true runs on another CPU. Yielding then would only hand
    /// this CPU to cores queued behind us, at a context switch each (1.1 µs here).
    #[inline]
    pub fn wait_handoff<T>(
        &self,
        bell: &Doorbell,
        mut ready: impl FnMut() -> Option<T>,
        partner_elsewhere: impl Fn() -> bool,
    ) -> Result<T, JobAborted> {
        // Fast path, inlined at the caller: one check when the condition already holds.
        match ready() {
            Some(v) => Ok(v),
            None => self.wait_slow(bell, ready, partner_elsewhere),
        }
    }

    /// The waiting part of [`Waiter::wait_until`] and [`Waiter::wait_handoff`], once
    /// `ready` has said no.
    #[inline(never)]
    fn wait_slow<T>(
        &self,
        bell: &Doorbell,
        mut ready: impl FnMut() -> Option<T>,
        partner_elsewhere: impl Fn() -> bool,
    ) -> Result<T, JobAborted> {
        match self.awake(&mut ready, partner_elsewhere)? {
            Some(v) => Ok(v),
            None => self.asleep(bell, ready),
        }
    }

    /// Only the awake part of [`Waiter::wait_until`] (spin, then yield): polls `ready`
    /// until it yields a value, or `Ok(None)` once the awake budget is spent; never
    /// sleeps. For a caller that must release something before it sleeps (then
    /// [`Waiter::sleep_until`]). Under `Spin` the budget never ends.
    pub fn spin_until<T>(&self, mut ready: impl FnMut() -> Option<T>) -> Result<Option<T>, JobAborted> {
        self.awake(&mut ready, || false)
    }

    /// Only the sleeping part of [`Waiter::wait_until`]: sleeps on `bell` between
    /// changes until `ready` yields a value, without spinning first (the caller spent
    /// the awake budget already, see [`Waiter::spin_until`]). Under `Spin`, which never
    /// sleeps, it polls.
    pub fn sleep_until<T>(
        &self,
        bell: &Doorbell,
        mut ready: impl FnMut() -> Option<T>,
    ) -> Result<T, JobAborted> {
        if self.policy == WaitPolicy::Spin {
            let spun = self.awake(&mut ready, || false)?;
            return Ok(spun.expect("a spinning waiter never gives up"));
        }
        self.asleep(bell, ready)
    }

    /// Polls `ready` (and the background work) while the awake budget lasts.
    fn awake<T>(
        &self,
        ready: &mut impl FnMut() -> Option<T>,
        partner_elsewhere: impl Fn() -> bool,
    ) -> Result<Option<T>, JobAborted> {
        let backoff = Backoff::new();
        // Read only once spinning is over: a clock read (22 ns here) at the start would
        // delay noticing a partner that answers at once.
        let mut started = None;
        let mut polls = 0u32;
        let mut handoff_spins = 0u32;
        loop {
            self.job.check()?;
            // Pauses between polls, not a bare loop: hammering the line being waited on
            // slows down the core that is about to write it (measured on the 2-core
            // barrier), and the pauses grow once the partner is evidently busy.
            let handoff =
                self.policy == WaitPolicy::Block && handoff_spins < HANDOFF_SPINS && partner_elsewhere();
            // A handoff spin is far inside the awake budget: no clock read.
            let done_spinning = !handoff && (backoff.is_completed() || self.policy == WaitPolicy::Block);
            if done_spinning && self.may_sleep(&mut started) {
                return Ok(None);
            }
            match self.policy {
                WaitPolicy::Block if handoff => {
                    handoff_spins += 1;
                    spin_pause();
                }
                WaitPolicy::Block => yield_now(),
                WaitPolicy::Adaptive | WaitPolicy::Spin if polls < TIGHT_POLLS => {
                    polls += 1;
                    std::hint::spin_loop();
                }
                WaitPolicy::Adaptive | WaitPolicy::Spin => backoff.snooze(),
            }
            if let Some(p) = self.progress {
                p.poll();
            }
            if let Some(v) = ready() {
                return Ok(Some(v));
            }
        }
    }

    /// Sleeps on `bell` (and on the background work's doorbell, if it has one) until
    /// `ready` yields a value (module docs).
    fn asleep<T>(&self, bell: &Doorbell, mut ready: impl FnMut() -> Option<T>) -> Result<T, JobAborted> {
        loop {
            let (other, watch) = match self.progress.map_or(Armed::Idle, |p| p.arm()) {
                Armed::Idle => (None, None),
                Armed::Busy => {
                    self.job.check()?;
                    yield_now();
                    if let Some(v) = ready() {
                        return Ok(v);
                    }
                    self.poll_progress();
                    continue;
                }
                Armed::Watch(own, watch) => (Some(own).filter(|&o| !std::ptr::eq(o, bell)), Some(watch)),
            };
            // Arms the bells (module docs). Acquire: a wake we read (its Release
            // compare-and-swap) makes its ringer's change visible to the condition, and,
            // for `other`, to the watch. As for that Release, the fences alone would do
            // where the ringer's is a real one (so a Relaxed mutant survives the models);
            // after `ring_after_rmw` on x86 this is the edge in the language's model.
            let seen = bell.seq.fetch_or(ARMED, Ordering::Acquire) | ARMED;
            let seen_other = other.map(|o| o.seq.fetch_or(ARMED, Ordering::Acquire) | ARMED);
            // SeqCst fence, free after the arming RMWs: pairs with the one in
            // `Doorbell::ring` of either doorbell (module docs); the condition and the
            // watch are read after it.
            fence_after_rmw();
            let value = ready();
            let movable = value.is_none() && watch.as_ref().is_some_and(|w| w.movable());
            let aborted = self.job.check();
            if value.is_none() && aborted.is_ok() && !movable {
                match (other, seen_other) {
                    (Some(o), Some(s)) => bell.seq.wait_or(seen, &o.seq, s),
                    _ => bell.seq.wait(seen),
                }
            }
            // Nothing to disarm: the bit stays until the next ring clears it (module docs).
            drop(watch);
            if let Some(v) = value {
                return Ok(v);
            }
            aborted?;
            // Work that could move but did not (its state busy in another thread):
            // give that thread the CPU rather than spin on it.
            if !self.poll_progress() && movable {
                yield_now();
            }
        }
    }

    /// Polls the background work, if any; true if it moved.
    fn poll_progress(&self) -> bool {
        self.progress.is_some_and(|p| p.poll())
    }

    /// Whether the awake budget, counted from the first call (`started`), is spent.
    fn may_sleep(&self, started: &mut Option<Instant>) -> bool {
        match self.policy {
            WaitPolicy::Spin => false,
            WaitPolicy::Block | WaitPolicy::Adaptive => {
                cfg!(sccemu_loom) || started.get_or_insert_with(Instant::now).elapsed() >= AWAKE_BUDGET
            }
        }
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;

    /// What a sleeper's arming does to the word (`Waiter::asleep`), without sleeping.
    fn arm(bell: &Doorbell) -> u32 {
        bell.seq.fetch_or(ARMED, Ordering::Acquire) | ARMED
    }

    /// A ring wakes (changes the word) only when a sleeper armed since the last wake:
    /// rings of a woken sleeper that has not armed again leave the word alone, which is
    /// what makes them skip the wake call.
    #[test]
    fn a_ring_wakes_once_per_arming() {
        let bell = Doorbell::new();
        bell.ring();
        assert_eq!(bell.seq.load(Ordering::Relaxed), 0, "nobody armed");
        assert_eq!(arm(&bell), 1);
        assert_eq!(arm(&bell), 1, "a second sleeper arms the same value");
        bell.ring();
        assert_eq!(bell.seq.load(Ordering::Relaxed), 2, "one wake, counted, the bit clear");
        bell.ring_after_rmw();
        bell.ring();
        assert_eq!(bell.seq.load(Ordering::Relaxed), 2, "woken already: no wake");
        assert_eq!(arm(&bell), 3, "armed again, on a value never armed before");
        bell.ring();
        assert_eq!(bell.seq.load(Ordering::Relaxed), 4);
    }

    /// The count wraps: the armed value before the wrap is woken to 0.
    #[test]
    fn the_wake_count_wraps() {
        let bell = Doorbell::new();
        bell.seq.fetch_add(u32::MAX - 1, Ordering::Relaxed);
        assert_eq!(arm(&bell), u32::MAX);
        bell.ring();
        assert_eq!(bell.seq.load(Ordering::Relaxed), 0);
    }
}
