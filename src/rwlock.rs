//! Passive-target locks: a fair ticket reader-writer lock per target, and an O(1)
//! `lock_all` that shares every target at once.
//!
//! ## Ticket reader-writer lock ([`TicketRwLock`], one cache line per target)
//! Three counters: `users` (next ticket), `read` (next ticket allowed to read) and
//! `write` (next ticket allowed to write). Everyone takes a ticket `t` from `users`.
//! - a writer waits for `write == t`; on unlock it advances `read` and `write` by one;
//! - a reader waits for `read == t`, then advances `read` at once (so that a run of
//!   readers enters together), and on unlock advances `write`.
//!
//! Invariants: tickets are served in order (FIFO, so no starvation); `write == t`
//! only once every earlier ticket has unlocked, so a writer is alone; `read` is only
//! advanced by the one holder whose ticket equals it, so readers never pass a waiting
//! writer (and a writer, alone, may advance it with a plain store). Each advance is a `Release` RMW and each wait an `Acquire` load, and the
//! advances on one counter form a release sequence, so every critical section
//! happens-before the next conflicting one.
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
//! SeqCst fence on each side between a store and a load (`sync::fence_after_rmw`, since
//! each store is an RMW): a locker takes its ticket before its first check of
//! `read`/`write`, an unlocker advances before checking `users` for outstanding
//! tickets. Either the waker sees the waiter, or the waiter's check sees the change.
//! For the `AllLock` word the RMW that changes it returns the counts it decides on:
//! unlock_all rings if it saw writers, a leaving writer if it saw a parked lock_all.

use crossbeam_utils::CachePadded;

use crate::abort::JobAborted;
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence_after_rmw};
use crate::waiter::{Doorbell, Waiter};

/// Lock type of a passive-target epoch, as `MPI_LOCK_SHARED` / `MPI_LOCK_EXCLUSIVE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LockKind {
    Shared,
    Exclusive,
}

/// One target's fair reader-writer lock (module docs).
#[repr(C)]
#[derive(Default)]
pub struct TicketRwLock {
    users: AtomicU32,
    read: AtomicU32,
    write: AtomicU32,
}

impl TicketRwLock {
    pub fn new() -> TicketRwLock {
        TicketRwLock::default()
    }

    /// Takes a ticket. Relaxed: the ticket only fixes our place in line; the Acquire
    /// wait on `read`/`write` is what orders us after earlier holders.
    #[inline]
    fn ticket(&self) -> u32 {
        let me = self.users.fetch_add(1, Ordering::Relaxed);
        // SeqCst fence: our ticket before our first check (Dekker pair with `wake`).
        fence_after_rmw();
        me
    }

    /// After an advance to `served`: rings `bell` unless no ticket is outstanding
    /// beyond it (then nobody can be waiting for this lock).
    #[inline]
    fn wake(&self, served: u32, bell: &Doorbell) {
        // SeqCst fence: our advance before our check of `users` (Dekker pair with `ticket`).
        fence_after_rmw();
        if self.users.load(Ordering::Relaxed) != served {
            bell.ring();
        }
    }

    /// Waits until this core may write alone, then until no lock_all epoch is open
    /// (announcing itself in `all`, whose doorbell is `home`). `bell` is the target's.
    #[inline]
    pub fn lock_exclusive(
        &self,
        waiter: &Waiter<'_>,
        bell: &Doorbell,
        all: &AllLock,
        home: &Doorbell,
    ) -> Result<(), JobAborted> {
        let me = self.ticket();
        // Acquire: synchronizes with the Release advances of `write` by every earlier
        // holder (one release sequence), so their accesses happen-before ours.
        let ready = || (self.write.load(Ordering::Acquire) == me).then_some(());
        // Uncontended fast path: no waiter set-up (it reads the clock).
        if ready().is_none() {
            waiter.wait_until(bell, ready)?;
        }
        let entered = all.writer_enter(waiter, home);
        if entered.is_err() {
            self.unlock_exclusive(bell, all, home);
        }
        entered
    }

    /// Waits until this core may read beside other readers.
    #[inline]
    pub fn lock_shared(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        let me = self.ticket();
        // Acquire: pairs with the Release advance of `read` by the previous writer.
        let ready = || (self.read.load(Ordering::Acquire) == me).then_some(());
        if ready().is_none() {
            waiter.wait_until(bell, ready)?;
        }
        // Relaxed suffices for ordering (an RMW continues the release sequence of the
        // writer's advance, so later readers still synchronize with that writer); a
        // reader queued behind us may be asleep.
        let next = self.read.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        self.wake(next, bell);
        Ok(())
    }

    /// Ends an exclusive hold taken with [`TicketRwLock::lock_exclusive`].
    #[inline]
    pub fn unlock_exclusive(&self, bell: &Doorbell, all: &AllLock, home: &Doorbell) {
        all.writer_exit(home);
        // Nobody else writes `read` while we hold the lock alone (every earlier reader
        // advanced it before unlocking; no later one is admitted yet), so a load and a
        // store advance it without a locked RMW. Release: our writes happen-before the
        // next reader's Acquire wait (its own advance continues this release sequence).
        // `write` needs the RMW: a reader admitted by that store may advance it at once.
        let read = self.read.load(Ordering::Relaxed);
        self.read.store(read.wrapping_add(1), Ordering::Release);
        // Release: our writes happen-before the next writer's Acquire wait.
        let served = self.write.fetch_add(1, Ordering::Release).wrapping_add(1);
        self.wake(served, bell);
    }

    /// Ends a shared hold.
    #[inline]
    pub fn unlock_shared(&self, bell: &Doorbell) {
        // Release: our reads happen-before the next writer's writes.
        let served = self.write.fetch_add(1, Ordering::Release).wrapping_add(1);
        self.wake(served, bell);
    }

    /// Tickets handed out and not yet through (for diagnostics): 0 when idle.
    pub fn queued(&self) -> u32 {
        self.users.load(Ordering::Relaxed).wrapping_sub(self.write.load(Ordering::Relaxed))
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
