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
//! ## lock_all ([`AllLock`], one line per counter, one set per window)
//! `holders` counts lock_all epochs, `writers` counts exclusive lockers of any target.
//! A lock_all increments `holders`, then checks `writers`; an exclusive locker (after
//! winning its target's ticket lock) increments `writers`, then waits for `holders`
//! to drain. SeqCst fences between each side's increment and its check form a Dekker
//! pair: at least one side sees the other. A lock_all that sees a writer backs out
//! (counted in `parked`) and waits for `writers == 0` before retrying, so writers are
//! never blocked by a lock_all that arrived later, and nobody deadlocks. Shared
//! per-target locks do not touch `AllLock`: they never conflict with lock_all.
//!
//! ## Waking
//! Waiters sleep on the doorbell of the core that owns the words: the target for its
//! ticket lock, the window's home core (rank 0) for `AllLock`. A doorbell serves every
//! wait on its core's memory (barriers too), so a ring that finds any sleeper costs a
//! futex wake; an uncontended epoch therefore rings only when someone may wait for
//! *this* change. Each such decision is another Dekker pair, a SeqCst fence on each
//! side between a store and a load (`sync::fence_after_rmw`, since each store is an
//! RMW): a locker takes its ticket before its first check of `read`/`write`, an
//! unlocker advances before checking `users` for outstanding tickets; unlock_all
//! decrements `holders` before checking `writers`; a writer leaves `writers` before
//! checking `parked`, a parked lock_all counts itself before checking `writers`.
//! Either the waker sees the waiter, or the waiter's check sees the change.

use crossbeam_utils::CachePadded;

use crate::abort::JobAborted;
use crate::sync::{AtomicU32, Ordering, fence_after_rmw};
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
    fn ticket(&self) -> u32 {
        let me = self.users.fetch_add(1, Ordering::Relaxed);
        // SeqCst fence: our ticket before our first check (Dekker pair with `wake`).
        fence_after_rmw();
        me
    }

    /// After an advance to `served`: rings `bell` unless no ticket is outstanding
    /// beyond it (then nobody can be waiting for this lock).
    fn wake(&self, served: u32, bell: &Doorbell) {
        // SeqCst fence: our advance before our check of `users` (Dekker pair with `ticket`).
        fence_after_rmw();
        if self.users.load(Ordering::Relaxed) != served {
            bell.ring();
        }
    }

    /// Waits until this core may write alone. `bell` is the target's doorbell.
    pub fn lock_exclusive(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        let me = self.ticket();
        // Acquire: synchronizes with the Release advances of `write` by every earlier
        // holder (one release sequence), so their accesses happen-before ours.
        let ready = || (self.write.load(Ordering::Acquire) == me).then_some(());
        // Uncontended fast path: no waiter set-up (it reads the clock).
        if ready().is_some() {
            return Ok(());
        }
        waiter.wait_until(bell, ready)
    }

    /// Waits until this core may read beside other readers.
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

    /// Ends an exclusive hold.
    pub fn unlock_exclusive(&self, bell: &Doorbell) {
        // Nobody else writes `read` while we hold the lock alone (every earlier reader
        // advanced it before unlocking; no later one is admitted yet), so a load and a
        // store advance it without a locked RMW. Release: our writes happen-before the
        // next reader's Acquire wait (its own advance continues this release sequence).
        let read = self.read.load(Ordering::Relaxed);
        self.read.store(read.wrapping_add(1), Ordering::Release);
        // Release: our writes happen-before the next writer's Acquire wait.
        let served = self.write.fetch_add(1, Ordering::Release).wrapping_add(1);
        self.wake(served, bell);
    }

    /// Ends a shared hold.
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

/// The window-wide words that make `lock_all` one atomic (module docs).
#[repr(C)]
#[derive(Default)]
pub struct AllLock {
    holders: CachePadded<AtomicU32>,
    writers: CachePadded<AtomicU32>,
    parked: CachePadded<AtomicU32>,
}

impl AllLock {
    pub fn new() -> AllLock {
        AllLock::default()
    }

    /// Opens a lock_all epoch: a shared lock on every target at once.
    pub fn lock_all(&self, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        loop {
            self.holders.fetch_add(1, Ordering::Relaxed);
            // SeqCst fence: Dekker pair with `writer_enter` (module docs).
            fence_after_rmw();
            // Acquire: a writer that already left released its writes with its
            // Release decrement of `writers`.
            if self.writers.load(Ordering::Acquire) == 0 {
                return Ok(());
            }
            // Back out: a writer (waiting for `holders` to drain) goes first.
            self.parked.fetch_add(1, Ordering::Relaxed);
            self.holders.fetch_sub(1, Ordering::Relaxed);
            // `ring` fences (SeqCst) before checking for sleepers: the writer we saw may
            // sleep; and `parked` is published before our checks of `writers` below
            // (Dekker pair with `writer_exit`).
            home.ring();
            let free = waiter.wait_until(home, || (self.writers.load(Ordering::Relaxed) == 0).then_some(()));
            self.parked.fetch_sub(1, Ordering::Relaxed);
            free?;
        }
    }

    /// Closes a lock_all epoch.
    pub fn unlock_all(&self, home: &Doorbell) {
        // Release: our accesses happen-before a writer's Acquire wait on `holders`.
        self.holders.fetch_sub(1, Ordering::Release);
        // SeqCst fence: Dekker pair with `writer_enter`; only a writer waits for this.
        fence_after_rmw();
        if self.writers.load(Ordering::Relaxed) != 0 {
            home.ring();
        }
    }

    /// Called by an exclusive locker once it holds its target's ticket lock: waits
    /// until no lock_all epoch is open.
    pub fn writer_enter(&self, waiter: &Waiter<'_>, home: &Doorbell) -> Result<(), JobAborted> {
        self.writers.fetch_add(1, Ordering::Relaxed);
        // SeqCst fence: Dekker pair with `lock_all` and `unlock_all` (module docs).
        fence_after_rmw();
        // Acquire: pairs with the Release decrement in `unlock_all`.
        let ready = || (self.holders.load(Ordering::Acquire) == 0).then_some(());
        let drained = if ready().is_some() { Ok(()) } else { waiter.wait_until(home, ready) };
        if drained.is_err() {
            self.writer_exit(home);
        }
        drained
    }

    /// Called by an exclusive locker before it releases its ticket lock.
    pub fn writer_exit(&self, home: &Doorbell) {
        // Release: our writes happen-before a lock_all's Acquire check of `writers`.
        self.writers.fetch_sub(1, Ordering::Release);
        // SeqCst fence: Dekker pair with a parking lock_all; only it waits for this.
        fence_after_rmw();
        if self.parked.load(Ordering::Relaxed) != 0 {
            home.ring();
        }
    }
}
