//! Passive-target locks, per target: a fair ticket reader-writer lock in one word.
//! (`lock_all`, and how exclusive lockers stay out of its way, is in `lock_all`.)
//!
//! ## The word ([`TicketRwLock`], one 64-bit word and hints on one cache line)
//! Three 20-bit counters: `users` (next ticket, the top bits), `read` (next ticket
//! allowed to read) and `write` (next ticket allowed to write); beside them the
//! `STICKY` bit (this target is registered in the window's `AllLock` between epochs,
//! see `lock_all`) and the `CARRY` bit (absorbs a reader's carry out of `write`).
//! Everyone takes a ticket `t` from `users`.
//! - a writer waits for `write == t`; on unlock it advances `read` and `write` by one;
//! - a reader waits for `read == t`, then advances `read` at once (so that a run of
//!   readers enters together), and on unlock advances `write`.
//!
//! Invariants: tickets are served in order (FIFO, so no starvation); `write == t`
//! only once every earlier ticket has unlocked, so a writer is alone, and then `read ==
//! write == t`: nobody else moves either until it unlocks, so it advances them by an
//! exact difference (no carry leaves a field); `read` is only advanced by the one holder
//! whose ticket equals it (by an exact difference too), so readers never pass a waiting
//! writer. Readers' unlocks add to `write` concurrently: the one that wraps it carries
//! into `CARRY`, which everyone ignores and which it clears at once (the next wrap is
//! 2^20 unlocks away). `users` is the top field: its carry leaves the word. `STICKY`
//! changes only under an exclusive hold. A waiting ticket is never behind `read` or
//! `write` and at most `MAX_AHEAD` ahead; a waiter that sees otherwise reports the lock
//! corrupted instead of waiting forever.
//!
//! ## Cost
//! Every change of the word is one RMW, so the uncontended epochs are two atomics:
//! - exclusive: the ticket `fetch_add` (its turn is in the value it returns) and the
//!   unlock's `fetch_add`; on a `STICKY` target nothing else (otherwise the first epoch
//!   registers in `AllLock`, see `lock_all`);
//! - shared: one compare-and-swap that takes the ticket and advances `read` together
//!   when `read == users` (no ticket outstanding, no writer in), and the unlock's
//!   `fetch_add`. Otherwise the ticket, a wait, then the advance.
//!
//! ## Ordering
//! Every change is an RMW, so every unlock's Release heads a release sequence that every
//! later RMW continues; the Acquire that grants a lock (the ticket's RMW when the turn
//! came already, the shared CAS, or the wait's load) reads from it, and synchronizes
//! with every earlier unlock: each critical section happens-before the next conflicting
//! one. An unlock learns from its own RMW whether a ticket is outstanding behind it
//! (`users`, in the value it returns): RMWs of one word are totally ordered, so a
//! locker's ticket either came first (and the unlock sees it) or read the unlock's value
//! (and did not wait). Only a sleeper needs the Dekker pair of the waiter (module docs of
//! `waiter`): the unlock's RMW, then `ring_after_rmw`.
//!
//! ## Handoffs on shared CPUs
//! When cores outnumber CPUs (`Waiter::handoff_cpu`), a waiter that yields hands its
//! CPU to whichever core the scheduler picks, at a context switch (1.1 µs here) each:
//! with every waiter yielding, 7 cores contending on 2 CPUs took 14 µs an epoch each,
//! about two switches per handoff. So each ticket notes its taker's CPU in one of
//! `CPU_SLOTS` slots on the lock's line, tagged with the ticket so that a reused slot
//! reads as unknown, and:
//! - a waiter spins instead of yielding while every ticket ahead of it was taken on
//!   another CPU: nobody it waits for needs this CPU (bounded, `Waiter::wait_handoff`);
//! - an exclusive unlock whose next ticket was taken on this CPU yields at once, since
//!   that core cannot run before we give up the CPU.
//!
//! Handoffs between CPUs then move one cache line, and cores that share a CPU take
//! turns by time slice instead of by epoch. The hints are Relaxed and only choose
//! between spinning and yielding: nothing above reads them, so a stale one costs time,
//! never safety.
//!
//! ## Waking
//! Waiters sleep on the doorbell of the core that owns the lock (the target). A doorbell
//! serves every wait on its core's memory (barriers too), so a ring that finds any
//! sleeper costs a futex wake; an unlock rings only when a ticket is outstanding.

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::lock_all::{AllLock, Registration};
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, AtomicU64, Ordering, yield_now};

/// Lock type of a passive-target epoch, as `MPI_LOCK_SHARED` / `MPI_LOCK_EXCLUSIVE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LockKind {
    /// Any number of shared holders at once (`MPI_LOCK_SHARED`).
    Shared,
    /// One holder alone (`MPI_LOCK_EXCLUSIVE`).
    Exclusive,
}

/// One target's fair reader-writer lock (module docs).
#[repr(C)]
#[derive(Default)]
pub struct TicketRwLock {
    /// `users`, `read`, `write`, `STICKY` and `CARRY` (module docs).
    word: AtomicU64,
    /// Handoff hints (module docs): slot `t % CPU_SLOTS` holds ticket `t`'s low 16
    /// bits above its taker's CPU + 1 (0: unknown).
    cpus: [AtomicU32; CPU_SLOTS],
}

/// An exclusive hold: what its unlock must know. Returned by
/// [`TicketRwLock::lock_exclusive`], given back to [`TicketRwLock::unlock_exclusive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "an exclusive hold must be unlocked"]
pub struct Exclusive {
    /// The word when our turn came: `read` and `write` as they stay until we unlock.
    seen: u64,
    /// How this hold keeps lock_all out (`lock_all`).
    registration: Registration,
}

/// Fills the lock's 64-byte line: the word and 14 hint slots.
const CPU_SLOTS: usize = 14;

/// Bits of each counter.
const BITS: u32 = 20;
/// A counter's largest value; counters compare modulo `MASK + 1`.
const MASK: u32 = (1 << BITS) - 1;
const READ_SHIFT: u32 = 0;
const WRITE_SHIFT: u32 = BITS;
/// A reader's unlock carries into it when `write` wraps; it clears it at once.
const CARRY: u64 = 1 << (2 * BITS);
/// This target holds a registration in the window's `AllLock` (`lock_all`).
pub(crate) const STICKY: u64 = 1 << (2 * BITS + 1);
const USERS_SHIFT: u32 = 64 - BITS;
const USER_ONE: u64 = 1 << USERS_SHIFT;
const WRITE_ONE: u64 = 1 << WRITE_SHIFT;

/// Most tickets that can be ahead of a waiting one: each core holds at most one ticket
/// of a lock at a time (one lock epoch per target and window, or one revocation) and a
/// job has at most 4096 cores; the margin is generous, the check is for overwritten
/// counters. Far below half the counters' range, so wrapping comparisons hold.
const MAX_AHEAD: u32 = 1 << 16;

fn read_of(word: u64) -> u32 {
    (word >> READ_SHIFT) as u32 & MASK
}

fn write_of(word: u64) -> u32 {
    (word >> WRITE_SHIFT) as u32 & MASK
}

fn users_of(word: u64) -> u32 {
    (word >> USERS_SHIFT) as u32
}

/// The counter after `v`.
fn next(v: u32) -> u32 {
    v.wrapping_add(1) & MASK
}

/// What to add to the word to advance the counter at `shift` from `v` to [`next`]`(v)`
/// exactly: at the wrap, minus `MASK` in that field, so nothing carries out of it.
fn step(v: u32, shift: u32) -> u64 {
    if v == MASK { 0u64.wrapping_sub(u64::from(MASK) << shift) } else { 1 << shift }
}

impl TicketRwLock {
    /// An unlocked lock with no tickets taken.
    pub fn new() -> TicketRwLock {
        TicketRwLock::default()
    }

    /// Notes beside ticket `me` the CPU it was taken on. Relaxed: a hint, and the line
    /// is ours after the RMW, so it costs a store.
    #[inline]
    fn note_cpu(&self, me: u32, cpu: Option<u16>) {
        if let Some(cpu) = cpu {
            self.cpus[me as usize % CPU_SLOTS].store((me << 16) | (u32::from(cpu) + 1), Ordering::Relaxed);
        }
    }

    /// The CPU ticket `t` was taken on, if noted and not yet overwritten by a later one.
    fn cpu_of(&self, t: u32) -> Option<u16> {
        let slot = self.cpus[t as usize % CPU_SLOTS].load(Ordering::Relaxed);
        let cpu = (slot & 0xffff).checked_sub(1)?;
        (slot >> 16 == t & 0xffff).then_some(cpu as u16)
    }

    /// Whether every ticket from `first` (the oldest still holding or waiting: `write`)
    /// up to ours, `me`, was taken on a CPU other than ours, `cpu`: then nobody we wait
    /// for needs this CPU, and we spin rather than yield (module docs). False if any of
    /// them is unknown.
    fn ahead_on_other_cpus(&self, first: u32, me: u32, cpu: Option<u16>) -> bool {
        let ahead = me.wrapping_sub(first) & MASK;
        cpu.is_some()
            && ahead as usize <= CPU_SLOTS
            && (0..ahead).all(|k| self.cpu_of(first.wrapping_add(k) & MASK).is_some_and(|c| Some(c) != cpu))
    }

    /// Takes a ticket and waits until the counter that `turn` reads (`read` or `write`)
    /// reaches it. Returns the ticket and the word as it was when the turn came.
    #[inline(always)]
    fn take_turn(
        &self,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        turn: impl Fn(u64) -> u32 + Copy,
    ) -> Result<(u32, u64), JobAborted> {
        let cpu = waiter.handoff_cpu();
        // Acquire: if our turn has come already, the value we read continues the release
        // sequence of every earlier unlock (module docs), so their accesses happen-before
        // ours. No fence after it: the waiter's fence before it sleeps orders the ticket
        // before the check that decides the sleep.
        let old = self.word.fetch_add(USER_ONE, Ordering::Acquire);
        let me = users_of(old);
        self.note_cpu(me, cpu);
        if turn(old) == me {
            return Ok((me, old));
        }
        self.wait_turn(me, waiter, bell, turn)
    }

    /// A writer's turn (`take_turn` on `write`), which has `read == write` (module
    /// docs): a word that shows otherwise was overwritten, and its `release` would
    /// corrupt it further.
    #[inline]
    fn writer_turn(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<u64, JobAborted> {
        let (_, seen) = self.take_turn(waiter, bell, write_of)?;
        if read_of(seen) != write_of(seen) {
            return Err(JobAborted { rank: None, cause: AbortCause::Corrupted });
        }
        Ok(seen)
    }

    /// The waiting part of `take_turn`, for ticket `me`: spins rather than yields while
    /// every ticket ahead was taken on another CPU. Those start at `write`, not `read`:
    /// readers in between still hold the lock, and a writer waits for them.
    #[cold]
    #[inline(never)]
    fn wait_turn(
        &self,
        me: u32,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        turn: impl Fn(u64) -> u32,
    ) -> Result<(u32, u64), JobAborted> {
        let cpu = waiter.handoff_cpu();
        let outcome = waiter.wait_handoff(
            bell,
            || {
                // Acquire: as the ticket's, for the unlock that gave us the turn.
                let word = self.word.load(Ordering::Acquire);
                if turn(word) == me {
                    return Some(Ok(word));
                }
                // `read` and `write` never pass a waiting ticket, and trail it by the
                // tickets still ahead: fewer than MAX_AHEAD. Anything else means the
                // counters were overwritten, and waiting would never end.
                let far = |counter: u32| me.wrapping_sub(counter) & MASK > MAX_AHEAD;
                (far(write_of(word)) || far(read_of(word))).then_some(Err(()))
            },
            || self.ahead_on_other_cpus(write_of(self.word.load(Ordering::Relaxed)), me, cpu),
        )?;
        let word = outcome.map_err(|()| JobAborted { rank: None, cause: AbortCause::Corrupted })?;
        Ok((me, word))
    }

    /// Waits until this core may write alone, then, unless the target is `STICKY`,
    /// until no lock_all epoch is open (registering in `all`, whose doorbell is `home`;
    /// `target` names this lock there). `bell` is the target's. Counters that no
    /// sequence of tickets can produce (a ticket behind `write` or `read`, or more than
    /// `MAX_AHEAD` ahead) are corrupted shared state: the call fails with `JobAborted {
    /// rank: None, cause: Corrupted }` instead of waiting forever, and the caller stops
    /// the job.
    #[inline]
    pub fn lock_exclusive(
        &self,
        target: u32,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
    ) -> Result<Exclusive, JobAborted> {
        let seen = self.writer_turn(waiter, bell)?;
        if seen & STICKY != 0 {
            // Registered already: no lock_all can open until a revocation, which takes
            // a ticket here and so waits for our unlock (`lock_all`).
            return Ok(Exclusive { seen, registration: Registration::Sticky });
        }
        self.register(seen, target, waiter, bell, all, home)
    }

    /// The part of `lock_exclusive` on a target that is not `STICKY`, holding its turn
    /// (which found the word `seen`): registers in `all`.
    #[cold]
    #[inline(never)]
    fn register(
        &self,
        seen: u64,
        target: u32,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
    ) -> Result<Exclusive, JobAborted> {
        match all.writer_enter(target, waiter, home) {
            Ok(registration) => Ok(Exclusive { seen, registration }),
            Err(e) => {
                // Counted in `all` (see `writer_enter`): leave both.
                self.release(seen, 0, bell, None);
                all.writer_exit(home);
                Err(e)
            }
        }
    }

    /// Ends an exclusive hold taken with [`TicketRwLock::lock_exclusive`]: advances
    /// `read` and `write`, makes the target `STICKY` if this hold claimed a registration
    /// for it, leaves `all` if it only counted itself there, and wakes the next ticket if
    /// it is out. If that ticket was taken on `cpu`, this core's own (oversubscribed, see
    /// `Waiter::handoff_cpu`), yields to it at once.
    #[inline]
    pub fn unlock_exclusive(
        &self,
        hold: Exclusive,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
        cpu: Option<u16>,
    ) {
        let sticky = if hold.registration == Registration::Claimed { STICKY } else { 0 };
        self.release(hold.seen, sticky, bell, cpu);
        if hold.registration == Registration::Counted {
            all.writer_exit(home);
        }
    }

    /// Ends an exclusive turn that found the word `seen`: advances `read` and `write`
    /// (adding `extra` too, a change of `STICKY`), then rings `bell` if a ticket is
    /// outstanding behind us, and yields to it if it was taken on `cpu`.
    #[inline]
    fn release(&self, seen: u64, extra: u64, bell: &Doorbell, cpu: Option<u16>) {
        // An exclusive turn has `read == write` (module docs): one test of the wrap
        // serves both steps.
        let write = write_of(seen);
        debug_assert_eq!(read_of(seen), write);
        let delta = step(write, READ_SHIFT).wrapping_add(step(write, WRITE_SHIFT)).wrapping_add(extra);
        // Release: our accesses happen-before the next holder's Acquire (module docs).
        let old = self.word.fetch_add(delta, Ordering::Release);
        let after = next(write);
        if users_of(old) != after {
            self.hand_over(after, bell, cpu);
        }
    }

    /// After an exclusive unlock with ticket `after` outstanding: wakes it, and yields to
    /// it at once if it was taken on `cpu`, ours.
    #[cold]
    #[inline(never)]
    fn hand_over(&self, after: u32, bell: &Doorbell, cpu: Option<u16>) {
        bell.ring_after_rmw();
        if cpu.is_some() && self.cpu_of(after) == cpu {
            // It cannot run before we give up the CPU, which might be a time slice away.
            yield_now();
        }
    }

    /// For a lock_all that found `target` registered (`lock_all`): takes an exclusive
    /// turn, and if the target is `STICKY`, clears it and gives up its registration in
    /// `all`. Never waits while holding the turn.
    pub(crate) fn revoke(
        &self,
        target: u32,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
    ) -> Result<(), JobAborted> {
        let seen = self.writer_turn(waiter, bell)?;
        let sticky = seen & STICKY != 0;
        if sticky {
            // While we hold the turn: the registration's last writer happens-before us
            // (our Acquire), and so before the lock_all that `forget`'s Release admits.
            all.forget(target, home);
        }
        self.release(seen, if sticky { STICKY.wrapping_neg() } else { 0 }, bell, waiter.handoff_cpu());
        Ok(())
    }

    /// Waits until this core may read beside other readers. Like
    /// [`TicketRwLock::lock_exclusive`], fails with `JobAborted { rank: None, cause:
    /// Corrupted }` if the counters are found overwritten; the caller stops the job.
    #[inline]
    pub fn lock_shared(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        // Relaxed: only a guess at the word, which the CAS checks.
        let seen = self.word.load(Ordering::Relaxed);
        let me = users_of(seen);
        if read_of(seen) == me {
            // Nobody holds a ticket we would wait for: take ours and advance `read` past
            // it in one step. Acquire: as the ticket's in `take_turn`.
            let entered = seen.wrapping_add(USER_ONE).wrapping_add(step(me, READ_SHIFT));
            if self.word.compare_exchange(seen, entered, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                self.note_cpu(me, waiter.handoff_cpu());
                return Ok(());
            }
        }
        self.lock_shared_queued(waiter, bell)
    }

    /// The part of `lock_shared` that did not find the lock idle: a ticket, a wait for
    /// `read`, and the advance of `read`.
    #[cold]
    #[inline(never)]
    fn lock_shared_queued(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        let (me, _) = self.take_turn(waiter, bell, read_of)?;
        // Advance `read` past us (it equals our ticket, and only we may move it now).
        // Relaxed suffices for ordering: an RMW continues the release sequence, so later
        // readers still synchronize with the unlocks before us. A reader queued behind
        // us may be asleep.
        let old = self.word.fetch_add(step(me, READ_SHIFT), Ordering::Relaxed);
        if users_of(old) != next(me) {
            bell.ring_after_rmw();
        }
        Ok(())
    }

    /// Ends a shared hold.
    #[inline]
    pub fn unlock_shared(&self, bell: &Doorbell) {
        // Release: our reads happen-before the next writer's writes.
        let old = self.word.fetch_add(WRITE_ONE, Ordering::Release);
        let write = write_of(old);
        if write == MASK {
            // We wrapped `write` and carried into CARRY (module docs): take it back.
            // Relaxed: nobody reads CARRY.
            self.word.fetch_sub(CARRY, Ordering::Relaxed);
        }
        if users_of(old) != next(write) {
            bell.ring_after_rmw();
        }
    }

    /// Tickets handed out and not yet through (for diagnostics): 0 when idle.
    pub fn queued(&self) -> u32 {
        let word = self.word.load(Ordering::Relaxed);
        users_of(word).wrapping_sub(write_of(word)) & MASK
    }

    /// Whether the target holds a registration in its window's `AllLock` (diagnostics).
    pub fn is_sticky(&self) -> bool {
        self.word.load(Ordering::Relaxed) & STICKY != 0
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests;
