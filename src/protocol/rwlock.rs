//! Passive-target locks: a fair ticket reader-writer lock per target, and an O(1)
//! `lock_all` that shares every target at once.
//!
//! ## Ticket reader-writer lock ([`TicketRwLock`], one cache line per target)
//! Three counters: `users` (next ticket), and in one 64-bit word `read` (next ticket
//! allowed to read, low half) and `write` (next ticket allowed to write, high half).
//! Everyone takes a ticket `t` from `users`.
//! - a writer waits for `write == t`; on unlock it advances `read` and `write` by one,
//!   with one plain store of the word;
//! - a reader waits for `read == t`, then advances `read` at once (so that a run of
//!   readers enters together), and on unlock advances `write`.
//!
//! Invariants: tickets are served in order (FIFO, so no starvation); `write == t`
//! only once every earlier ticket has unlocked, so a writer is alone, and nobody else
//! writes the word until its store admits the next ticket; `read` is only advanced by
//! the one holder whose ticket equals it, so readers never pass a waiting writer.
//! A waiting ticket is never behind `read` or `write` and at most `MAX_AHEAD` ahead;
//! a waiter that sees otherwise reports the lock corrupted instead of waiting forever.
//! Every advance is a Release RMW or the holder's Release store, every wait an Acquire
//! load; each writer's store starts a release sequence that the readers' RMWs continue,
//! so every critical section happens-before the next conflicting one. An exclusive epoch thus costs
//! three locked RMWs: the ticket, and entering and leaving `AllLock`.
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
//! ## lock_all ([`AllLock`], one 64-bit word per window)
//! The word holds three 21-bit counts: `holders` (lock_all epochs), `writers`
//! (exclusive lockers of any target) and `parked` (lock_all calls backed off). A
//! lock_all adds a holder and an exclusive locker (after winning its target's ticket
//! lock) adds a writer, each with one RMW that returns the other count: the word's
//! modification order decides which came first, so at least one side sees the other.
//! A lock_all that sees a writer backs out and parks in one RMW and waits for `writers
//! == 0` before retrying, so writers are never blocked by a lock_all that arrived
//! later, and nobody deadlocks; a writer that sees holders waits for them to drain.
//! Shared per-target locks do not touch `AllLock`: they never conflict with lock_all.
//! (21 bits bound the counts: a job has at most 1024 cores, each holding at most one
//! lock_all and one exclusive lock per target, so at most 2^20 writers.)
//!
//! ## Waking
//! Waiters sleep on the doorbell of the core that owns the words: the target for its
//! ticket lock, the window's home core (rank 0) for `AllLock`. A doorbell serves every
//! wait on its core's memory (barriers too), so a ring that finds any sleeper costs a
//! futex wake; an uncontended epoch therefore rings only when someone may wait for
//! *this* change. For the ticket lock each such decision is another Dekker pair, a
//! SeqCst fence on each side between a store and a load: a locker takes its ticket
//! before the check of `read`/`write` that decides its sleep (the fence the waiter
//! issues before it sleeps), an unlocker advances before checking `users` for
//! outstanding tickets (`sync::fence_after_rmw`, placed after an RMW: the reader's
//! advance, `unlock_shared`'s add, or an exclusive unlock's `writer_exit` after its
//! store). Either the waker sees the waiter, or the waiter's check sees the change.
//! For the `AllLock` word the RMW that changes it returns the counts it decides on:
//! unlock_all rings if it saw writers, a leaving writer if it saw a parked lock_all.

use crossbeam_utils::CachePadded;

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence_after_rmw, yield_now};

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
    users: AtomicU32,
    /// `read` in the low half, `write` in the high half.
    served: AtomicU64,
    /// Handoff hints (module docs): slot `t % CPU_SLOTS` holds ticket `t`'s low 16
    /// bits above its taker's CPU + 1 (0: unknown).
    cpus: [AtomicU32; CPU_SLOTS],
}

/// Fills the lock's cache line: 16 bytes of counters and 12 hint slots.
const CPU_SLOTS: usize = 12;

/// Most tickets that can be ahead of a waiting one: each core holds at most one ticket
/// of a lock at a time (one lock epoch per target and window) and a job has at most
/// 1024 cores; the margin is generous, the check is for overwritten counters.
const MAX_AHEAD: u32 = 1 << 20;

/// One step of `write` in [`TicketRwLock::served`].
const WRITE_ONE: u64 = 1 << 32;

fn read_of(served: u64) -> u32 {
    served as u32
}

fn write_of(served: u64) -> u32 {
    (served >> 32) as u32
}

impl TicketRwLock {
    /// An unlocked lock with no tickets taken.
    pub fn new() -> TicketRwLock {
        TicketRwLock::default()
    }

    /// Takes a ticket, noting `cpu` beside it. Relaxed: the ticket only fixes our place
    /// in line; the Acquire wait on `served` is what orders us after earlier holders.
    /// No fence after it: the waiter's fence before it sleeps orders the ticket before
    /// the check that decides the sleep (Dekker pair with `wake`); earlier checks never
    /// sleep.
    #[inline]
    fn ticket(&self, cpu: Option<u16>) -> u32 {
        let me = self.users.fetch_add(1, Ordering::Relaxed);
        if let Some(cpu) = cpu {
            // Relaxed: a hint, and the line is ours after the RMW, so it costs a store.
            self.cpus[me as usize % CPU_SLOTS].store((me << 16) | (u32::from(cpu) + 1), Ordering::Relaxed);
        }
        me
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
        let ahead = me.wrapping_sub(first);
        cpu.is_some()
            && ahead as usize <= CPU_SLOTS
            && (0..ahead).all(|k| self.cpu_of(first.wrapping_add(k)).is_some_and(|c| Some(c) != cpu))
    }

    /// After an advance to `next` (of `read` or `write`), made by an RMW or followed by
    /// one: rings `bell` unless no ticket is outstanding beyond it (then nobody can be
    /// waiting for this lock). Returns whether one was.
    #[inline]
    fn wake(&self, next: u32, bell: &Doorbell) -> bool {
        // SeqCst fence: our advance before our check of `users` (Dekker pair with the
        // waiter's fence after a ticket, see `ticket`).
        fence_after_rmw();
        let waiting = self.users.load(Ordering::Relaxed) != next;
        if waiting {
            bell.ring();
        }
        waiting
    }

    /// Takes a ticket and waits until the half of `served` that `turn` reads (`read` or
    /// `write`) reaches it, spinning rather than yielding while every ticket ahead was
    /// taken on another CPU. Those start at `write`, not `read`: readers in between
    /// still hold the lock, and a writer waits for them. Returns the ticket.
    #[inline]
    fn take_turn(
        &self,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        turn: fn(u64) -> u32,
    ) -> Result<u32, JobAborted> {
        let cpu = waiter.handoff_cpu();
        let me = self.ticket(cpu);
        // Acquire: synchronizes with the Release advances of `served` by every earlier
        // holder (one release sequence), so their accesses happen-before ours.
        let outcome = waiter.wait_handoff(
            bell,
            || {
                let served = self.served.load(Ordering::Acquire);
                if turn(served) == me {
                    return Some(Ok(me));
                }
                // `read` and `write` never pass a waiting ticket, and trail it by the
                // tickets still ahead: fewer than MAX_AHEAD. Anything else means the
                // counters were overwritten, and waiting would never end.
                let far = |half: u32| me.wrapping_sub(half) > MAX_AHEAD;
                (far(write_of(served)) || far(read_of(served))).then_some(Err(()))
            },
            || self.ahead_on_other_cpus(write_of(self.served.load(Ordering::Relaxed)), me, cpu),
        )?;
        outcome.map_err(|()| JobAborted { rank: None, cause: AbortCause::Corrupted })
    }

    /// Waits until this core may write alone, then until no lock_all epoch is open
    /// (announcing itself in `all`, whose doorbell is `home`). `bell` is the target's.
    /// Counters that no sequence of tickets can produce (a ticket behind `write` or
    /// `read`, or more than `MAX_AHEAD` ahead) are corrupted shared state: the call
    /// fails with `JobAborted { rank: None, cause: Corrupted }` instead of waiting
    /// forever, and the caller stops the job.
    #[inline]
    pub fn lock_exclusive(
        &self,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
    ) -> Result<(), JobAborted> {
        self.take_turn(waiter, bell, write_of)?;
        let entered = all.writer_enter(waiter, home);
        if entered.is_err() {
            self.unlock_exclusive(bell, all, home, None);
        }
        entered
    }

    /// Waits until this core may read beside other readers. Like
    /// [`TicketRwLock::lock_exclusive`], fails with `JobAborted { rank: None, cause:
    /// Corrupted }` if the counters are found overwritten; the caller stops the job.
    #[inline]
    pub fn lock_shared(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        let me = self.take_turn(waiter, bell, read_of)?;
        // Advance `read` alone, wrapping within its half (a plain add would carry into
        // `write` once every 2^32 tickets). Relaxed suffices for ordering (an RMW
        // continues the release sequence of the writer's advance, so later readers
        // still synchronize with that writer); a reader queued behind us may be asleep.
        let mut seen = self.served.load(Ordering::Relaxed);
        loop {
            let advanced = (seen & !u64::from(u32::MAX)) | u64::from(read_of(seen).wrapping_add(1));
            match self.served.compare_exchange_weak(seen, advanced, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => seen = now,
            }
        }
        self.wake(me.wrapping_add(1), bell);
        Ok(())
    }

    /// Ends an exclusive hold taken with [`TicketRwLock::lock_exclusive`]: advances
    /// `read` and `write` together with one plain store, leaves `all`, and wakes the
    /// next ticket if it is out. If that ticket was taken on `cpu`, this core's own
    /// (oversubscribed, see `Waiter::handoff_cpu`), yields to it at once.
    #[inline]
    pub fn unlock_exclusive(&self, bell: &Doorbell, all: &AllLock, home: &Doorbell, cpu: Option<u16>) {
        // Nobody else writes `served` while we hold the lock alone: every earlier holder
        // advanced it before its unlock, which `write == our ticket` counted, and no
        // later ticket is admitted before this store. Release: our writes happen-before
        // the next holder's Acquire wait.
        let seen = self.served.load(Ordering::Relaxed);
        let next_write = write_of(seen).wrapping_add(1);
        let next = u64::from(next_write) << 32 | u64::from(read_of(seen).wrapping_add(1));
        self.served.store(next, Ordering::Release);
        // Its RMW also orders the store above before `wake`'s load of `users`.
        all.writer_exit(home);
        if self.wake(next_write, bell) && cpu.is_some() && self.cpu_of(next_write) == cpu {
            // It cannot run before we give up the CPU, which might be a time slice away.
            yield_now();
        }
    }

    /// Ends a shared hold.
    #[inline]
    pub fn unlock_shared(&self, bell: &Doorbell) {
        // Release: our reads happen-before the next writer's writes. The add carries
        // out of the word when `write` wraps, which is what `write` should do.
        let next = write_of(self.served.fetch_add(WRITE_ONE, Ordering::Release)).wrapping_add(1);
        self.wake(next, bell);
    }

    /// Tickets handed out and not yet through (for diagnostics): 0 when idle.
    pub fn queued(&self) -> u32 {
        self.users.load(Ordering::Relaxed).wrapping_sub(write_of(self.served.load(Ordering::Relaxed)))
    }
}

/// One field of the [`AllLock`] word: a count in its own 21 bits.
#[derive(Clone, Copy)]
struct Field(u32);

impl Field {
    const HOLDERS: Field = Field(0);
    const WRITERS: Field = Field(21);
    const PARKED: Field = Field(42);

    const fn one(self) -> u64 {
        1 << self.0
    }

    fn of(self, word: u64) -> u64 {
        (word >> self.0) & ((1 << 21) - 1)
    }
}

/// The window-wide word that makes `lock_all` one atomic (module docs).
#[repr(C)]
#[derive(Default)]
pub struct AllLock {
    word: CachePadded<AtomicU64>,
}

impl AllLock {
    /// No lock_all holders, writers or parked calls.
    pub fn new() -> AllLock {
        AllLock::default()
    }

    /// Opens a lock_all epoch: a shared lock on every target at once.
    pub fn lock_all(&self, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        loop {
            // Acquire: a writer that already left released its writes with its Release
            // decrement, earlier in this word's modification order.
            let seen = self.word.fetch_add(Field::HOLDERS.one(), Ordering::Acquire);
            if Field::WRITERS.of(seen) == 0 {
                return Ok(());
            }
            // Back out and park in one step: a writer (waiting for holders to drain) goes
            // first, and sees us parked when it leaves.
            let parked = Field::PARKED.one().wrapping_sub(Field::HOLDERS.one());
            self.word.fetch_add(parked, Ordering::Relaxed);
            home.ring();
            let free = waiter.wait_until(home, || (Field::WRITERS.of(self.load()) == 0).then_some(()));
            self.word.fetch_sub(Field::PARKED.one(), Ordering::Relaxed);
            free?;
        }
    }

    /// Closes a lock_all epoch.
    #[inline]
    pub fn unlock_all(&self, home: &Doorbell) {
        // Release: our accesses happen-before a writer's Acquire read of the drained word.
        let seen = self.word.fetch_sub(Field::HOLDERS.one(), Ordering::Release);
        if Field::WRITERS.of(seen) != 0 {
            home.ring();
        }
    }

    /// Called by an exclusive locker once it holds its target's ticket lock: waits
    /// until no lock_all epoch is open. Stays counted on error (see `writer_exit`).
    #[inline]
    fn writer_enter(&self, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        // Acquire: pairs with the Release decrement of the last `unlock_all`.
        let seen = self.word.fetch_add(Field::WRITERS.one(), Ordering::Acquire);
        if Field::HOLDERS.of(seen) == 0 {
            return Ok(());
        }
        waiter.wait_until(home, || (Field::HOLDERS.of(self.load()) == 0).then_some(()))
    }

    /// Called by an exclusive locker as it releases its ticket lock.
    #[inline]
    fn writer_exit(&self, home: &Doorbell) {
        // Release: our writes happen-before a lock_all's Acquire read of the word.
        let seen = self.word.fetch_sub(Field::WRITERS.one(), Ordering::Release);
        if Field::PARKED.of(seen) != 0 {
            home.ring();
        }
    }

    /// Acquire: a waiter that sees the change also sees what the changer released.
    fn load(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;
    use crate::protocol::abort::JobControl;
    use shm_layout::WaitPolicy;

    /// Readers and writers through the 2^32 wrap of every counter: `read` must not
    /// carry into `write`, and each lock must be granted at once (a wrong counter would
    /// make it wait forever).
    #[test]
    fn counters_wrap() {
        let start = u32::MAX - 1;
        let lock = TicketRwLock {
            users: AtomicU32::new(start),
            served: AtomicU64::new(u64::from(start) << 32 | u64::from(start)),
            cpus: Default::default(),
        };
        let (all, bell, home, job) = (AllLock::new(), Doorbell::new(), Doorbell::new(), JobControl::new());
        let waiter = Waiter::new(WaitPolicy::Spin, &job);
        for _ in 0..3 {
            lock.lock_shared(&waiter, &bell).unwrap();
            lock.lock_shared(&waiter, &bell).unwrap();
            lock.unlock_shared(&bell);
            lock.unlock_shared(&bell);
            lock.lock_exclusive(&waiter, &bell, &all, &home).unwrap();
            lock.unlock_exclusive(&bell, &all, &home, None);
        }
        assert_eq!(lock.queued(), 0);
        let served = lock.served.load(Ordering::Relaxed);
        assert_eq!((read_of(served), write_of(served)), (start.wrapping_add(9), start.wrapping_add(9)));
    }

    /// The handoff hints: a waiter spins only while every ticket ahead of it is known
    /// to be on another CPU, and a slot reused by a later ticket reads as unknown.
    #[test]
    fn handoff_hints() {
        let lock = TicketRwLock::new();
        let (a, b) = (Some(0), Some(1));
        assert_eq!([lock.ticket(a), lock.ticket(b), lock.ticket(b), lock.ticket(None)], [0, 1, 2, 3]);
        assert_eq!([lock.cpu_of(0), lock.cpu_of(1), lock.cpu_of(3)], [a, b, None]);
        assert!(lock.ahead_on_other_cpus(0, 1, b), "only ticket 0 ahead, on the other CPU");
        assert!(!lock.ahead_on_other_cpus(0, 2, b), "ticket 1 ahead shares our CPU");
        assert!(lock.ahead_on_other_cpus(1, 2, a));
        assert!(!lock.ahead_on_other_cpus(0, 1, None), "our own CPU unknown");
        assert!(!lock.ahead_on_other_cpus(3, 4, a), "ticket 3's CPU unknown");
        for _ in 4..=CPU_SLOTS as u32 {
            lock.ticket(b);
        }
        assert_eq!(lock.cpu_of(0), None, "slot 0 now holds ticket {CPU_SLOTS}");
        assert_eq!(lock.cpu_of(CPU_SLOTS as u32), b);
        assert!(!lock.ahead_on_other_cpus(0, CPU_SLOTS as u32 + 1, Some(2)), "more tickets ahead than slots");
    }
}
