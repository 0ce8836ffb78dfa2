//! `lock_all` in O(1) atomics, and exclusive lockers that pay for it only once per
//! target ([`AllLock`], one cache line per window, home: rank 0).
//!
//! ## The word
//! Three counts in one 64-bit word: `holders` (open lock_all epochs), `parked`
//! (lock_all calls backed off) and `writers` (registrations of exclusive lockers). A
//! lock_all adds a holder, and an exclusive locker (after winning its target's ticket
//! lock, `rwlock`) adds a writer, each with one RMW that returns the other count: the
//! word's modification order decides which came first, so at least one side sees the
//! other. A lock_all that sees a writer backs out and parks in one RMW (or parks at
//! once, never counted as a holder, when a plain load first shows writers) and waits for
//! `writers == 0` before entering again (unparking and entering in one RMW), so writers
//! are held up by a lock_all that arrived later only while it revokes (below), and
//! nobody deadlocks; a writer that sees holders waits for them to drain. Shared
//! per-target locks do not touch the word: they never conflict with lock_all.
//! Fairness between the two sides is as before: writers go first, so a lock_all can wait
//! as long as exclusive epochs keep coming on some target.
//!
//! ## Sticky registrations
//! Entering and leaving the word would cost an exclusive epoch two atomics on top of its
//! target's two. So a registration may outlive its epoch: the target keeps it while it
//! is `STICKY` (a bit of its lock word), and later exclusive epochs there, finding the
//! bit under their ticket, skip the word altogether. A lock_all must then be able to
//! find every sticky target in O(1): each holds one of the `SLOTS` slots beside the word
//! (its rank + 1), and only targets that won a slot become sticky (the others count in
//! and out as before). Invariant, for every target t, whenever nobody holds t's ticket
//! lock exclusively: t is `STICKY` ⟺ exactly one slot holds t + 1 ⟺ one unit of
//! `writers` is t's. All three change only under t's exclusive turn.
//! - A writer that registers (`writer_enter`) claims a free slot, then (SeqCst fence)
//!   checks `parked`: if a lock_all is parked it gives the slot back and counts out at
//!   unlock (`Counted`); otherwise it sets `STICKY` with its unlock (`Claimed`).
//! - A lock_all that parks (SeqCst fence after its RMW) revokes every slot it finds
//!   (`revoke_all`): it takes the slot's target's ticket lock exclusively (so it waits for
//!   a holder), and if the target is `STICKY`, frees the slot, gives up the registration
//!   (`writers - 1`) and clears `STICKY` with its unlock. Then it waits for `writers ==
//!   0` as before.
//!
//! The fences make a Dekker pair (claim, fence, load `parked` / park, fence, load the
//! slots): either the writer sees the parked lock_all and stays counted, or the lock_all
//! sees the claim and revokes it after the writer's unlock. While a lock_all is parked,
//! no new registration sticks, so its wait for `writers == 0` ends once the writers
//! counted in it unlock. A revocation never waits while it holds a turn, and a lock_all
//! holds no other lock (MPI forbids it), so revocations add no cycle to the waits.
//! Stuck registrations cost what they save elsewhere: a lock_all after exclusive epochs
//! revokes at most `SLOTS` targets, and the next exclusive epoch there registers again.
//!
//! ## Ordering
//! A lock_all that enters (Acquire RMW, or the Acquire load of its wait) reads from the
//! Release RMWs of every leaving writer and revocation (`writer_exit`, `forget`); a
//! revocation holds its target's turn (Acquire), so the target's last writer
//! happens-before it. A registering writer's Acquire RMW (or the load of its wait) reads
//! from the last `unlock_all`'s Release, and every later holder of a sticky target
//! synchronizes with it through the ticket lock. So every lock_all epoch and every
//! exclusive epoch on any target are ordered one way or the other.
//!
//! ## Waking
//! Waiters sleep on the home doorbell. The RMW that changes the word returns the counts
//! it decides on: unlock_all rings if it saw writers, a leaving writer if it saw a
//! parked lock_all, a revocation if it saw another parked lock_all than its own, and a
//! lock_all that backs out rings for the writers that may have seen it as a holder. (A
//! ring that finds a sleeper costs a futex wake even when the sleeper waits for
//! something else on the same doorbell, such as a barrier: hence the care.)
//!
//! (Counts: a job has at most 4096 cores, each holding at most one lock_all, so 16 bits
//! hold `holders` and `parked`; each holds at most one exclusive lock per target, so at
//! most 2^24 registrations (plus `SLOTS`) fit the 32 bits of `writers`.)

use crossbeam_utils::CachePadded;

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::rwlock::TicketRwLock;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence_after_rmw};

/// How an exclusive hold keeps lock_all out (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// The target was `STICKY`: its registration covers this hold.
    Sticky,
    /// Registered, with a slot claimed: the unlock makes the target `STICKY`.
    Claimed,
    /// Registered without a slot: the unlock counts out.
    Counted,
}

/// Slots for sticky targets: the rest of the word's 128-byte line. (One under loom,
/// so that a model of two writers on two targets also runs the path of a writer that
/// finds every slot taken.)
const SLOTS: usize = if cfg!(sccemu_loom) { 1 } else { 30 };

/// Where the slots lie in an [`AllLock`] and their length in bytes (for the corruption
/// tests; `CachePadded` puts its value first).
#[doc(hidden)]
pub const SLOTS_FOR_TESTS: (usize, usize) = (std::mem::offset_of!(Words, slots), SLOTS * 4);

/// One field of the word.
#[derive(Clone, Copy)]
struct Field {
    shift: u32,
    bits: u32,
}

impl Field {
    const HOLDERS: Field = Field { shift: 0, bits: 16 };
    const PARKED: Field = Field { shift: 16, bits: 16 };
    const WRITERS: Field = Field { shift: 32, bits: 32 };

    const fn one(self) -> u64 {
        1 << self.shift
    }

    fn of(self, word: u64) -> u64 {
        (word >> self.shift) & ((1 << self.bits) - 1)
    }
}

/// One step: this field's count up by one, that one's down by one.
const fn trade(up: Field, down: Field) -> u64 {
    up.one().wrapping_sub(down.one())
}

#[repr(C)]
#[derive(Default)]
struct Words {
    /// `holders`, `parked`, `writers` (module docs).
    word: AtomicU64,
    /// Sticky targets' ranks + 1; 0: free.
    slots: [AtomicU32; SLOTS],
}

/// The window-wide word that makes `lock_all` one atomic, and the slots of the sticky
/// targets (module docs). Valid as zero bytes.
#[repr(C)]
#[derive(Default)]
pub struct AllLock {
    words: CachePadded<Words>,
}

impl AllLock {
    /// No lock_all holders, writers, parked calls or sticky targets.
    pub fn new() -> AllLock {
        AllLock::default()
    }

    /// Opens a lock_all epoch: a shared lock on every target at once. `targets` gives a
    /// target's ticket lock and doorbell, or `None` for a rank that does not exist (a
    /// slot naming one is corrupted: the call fails with `JobAborted { rank: None, cause:
    /// Corrupted }`, and the caller stops the job).
    pub fn lock_all<'t>(
        &self,
        waiter: &Waiter<'_>,
        home: &Doorbell,
        targets: impl Fn(u32) -> Option<(&'t TicketRwLock, &'t Doorbell)>,
    ) -> Result<(), JobAborted> {
        // Relaxed: a guess, which the RMW below checks. Where a registration is left
        // (sticky targets), park at once: never counted as a holder, we need not ring
        // for writers that might have seen us as one.
        let guess = self.words.word.load(Ordering::Relaxed);
        if Field::WRITERS.of(guess) != 0 {
            self.words.word.fetch_add(Field::PARKED.one(), Ordering::Relaxed);
        } else {
            // Acquire: a writer that already left released its writes with its Release
            // decrement, earlier in this word's modification order.
            let seen = self.words.word.fetch_add(Field::HOLDERS.one(), Ordering::Acquire);
            if Field::WRITERS.of(seen) == 0 {
                return Ok(());
            }
            self.back_out(home);
        }
        let parked = self.parked(waiter, home, targets);
        if parked.is_err() {
            self.words.word.fetch_sub(Field::PARKED.one(), Ordering::Relaxed);
        }
        parked
    }

    /// A lock_all counted as a holder that saw writers: backs out and parks in one step.
    /// A writer waiting for holders to drain goes first (we ring for it), and sees us
    /// parked when it leaves.
    fn back_out(&self, home: &Doorbell) {
        self.words.word.fetch_add(trade(Field::PARKED, Field::HOLDERS), Ordering::Relaxed);
        home.ring_after_rmw();
    }

    /// A parked lock_all: revokes the sticky targets, waits for the writers to leave
    /// and enters, or parks again (module docs). Returns still parked on error.
    fn parked<'t>(
        &self,
        waiter: &Waiter<'_>,
        home: &Doorbell,
        targets: impl Fn(u32) -> Option<(&'t TicketRwLock, &'t Doorbell)>,
    ) -> Result<(), JobAborted> {
        loop {
            // SeqCst fence: our park (the RMW just before) before our loads of the slots
            // (Dekker pair with `writer_enter`'s claim, module docs).
            fence_after_rmw();
            self.revoke_all(waiter, home, &targets)?;
            waiter.wait_until(home, || (Field::WRITERS.of(self.load()) == 0).then_some(()))?;
            // Unpark and enter in one step, so that no registration sticks in between.
            // Acquire: as the first attempt's.
            let seen = self.words.word.fetch_add(trade(Field::HOLDERS, Field::PARKED), Ordering::Acquire);
            if Field::WRITERS.of(seen) == 0 {
                return Ok(());
            }
            self.back_out(home);
        }
    }

    /// Revokes the registration of every target found in a slot (module docs).
    fn revoke_all<'t>(
        &self,
        waiter: &Waiter<'_>,
        home: &Doorbell,
        targets: &impl Fn(u32) -> Option<(&'t TicketRwLock, &'t Doorbell)>,
    ) -> Result<(), JobAborted> {
        for slot in &self.words.slots {
            // Relaxed: the fence before the loop orders it after our park; the value
            // only names a target, whose turn (Acquire) is what we rely on.
            let Some(target) = slot.load(Ordering::Relaxed).checked_sub(1) else { continue };
            let (lock, bell) =
                targets(target).ok_or(JobAborted { rank: None, cause: AbortCause::Corrupted })?;
            lock.revoke(target, waiter, bell, self, home)?;
        }
        Ok(())
    }

    /// Closes a lock_all epoch.
    #[inline]
    pub fn unlock_all(&self, home: &Doorbell) {
        // Release: our accesses happen-before a writer's Acquire read of the drained word.
        let seen = self.words.word.fetch_sub(Field::HOLDERS.one(), Ordering::Release);
        if Field::WRITERS.of(seen) != 0 {
            home.ring_after_rmw();
        }
    }

    /// Called by an exclusive locker of `target` that holds its ticket lock and found
    /// it not `STICKY`: registers, waits until no lock_all epoch is open, and claims a
    /// slot unless a lock_all is parked. Stays counted on error (see `writer_exit`).
    pub(crate) fn writer_enter(
        &self,
        target: u32,
        waiter: &Waiter<'_>,
        home: &Doorbell,
    ) -> Result<Registration, JobAborted> {
        // Acquire: pairs with the Release decrement of the last `unlock_all`.
        let seen = self.words.word.fetch_add(Field::WRITERS.one(), Ordering::Acquire);
        if Field::HOLDERS.of(seen) != 0 {
            waiter.wait_until(home, || (Field::HOLDERS.of(self.load()) == 0).then_some(()))?;
        }
        if Field::PARKED.of(seen) != 0 {
            return Ok(Registration::Counted);
        }
        let Some(slot) = self.claim(target) else { return Ok(Registration::Counted) };
        // SeqCst fence: the claim's RMW before the check of `parked` (Dekker pair with
        // the fence after a lock_all's park, module docs).
        fence_after_rmw();
        // Relaxed: the fence orders it; the decision needs no data from the parker.
        if Field::PARKED.of(self.words.word.load(Ordering::Relaxed)) == 0 {
            return Ok(Registration::Claimed);
        }
        // A lock_all parked meanwhile: it may have missed the claim, so do not stick.
        // Relaxed: a parker that saw the claim takes our target's turn after us, and
        // then sees this store (our unlock's Release, its Acquire).
        slot.store(0, Ordering::Relaxed);
        Ok(Registration::Counted)
    }

    /// A free slot, now holding `target + 1`; none if every slot is taken.
    fn claim(&self, target: u32) -> Option<&AtomicU32> {
        let start = target as usize % SLOTS;
        (0..SLOTS).map(|k| &self.words.slots[(start + k) % SLOTS]).find(|slot| {
            // Relaxed: the slot's meaning is guarded by the target's turn (module docs).
            slot.load(Ordering::Relaxed) == 0
                && slot.compare_exchange(0, target + 1, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        })
    }

    /// Called by an exclusive locker that counted itself in (`Counted`) as it releases
    /// its ticket lock.
    #[inline]
    pub(crate) fn writer_exit(&self, home: &Doorbell) {
        // Release: our writes happen-before a lock_all's Acquire read of the word.
        let seen = self.words.word.fetch_sub(Field::WRITERS.one(), Ordering::Release);
        if Field::PARKED.of(seen) != 0 {
            home.ring_after_rmw();
        }
    }

    /// Called by a revocation holding `target`'s turn and finding it `STICKY`: frees its
    /// slot and gives up its registration.
    pub(crate) fn forget(&self, target: u32, home: &Doorbell) {
        // Relaxed: slots change only under the target's turn, which we hold; the next
        // holder sees this through the ticket lock. A slot overwritten by garbage is
        // simply not found (the registration still goes).
        if let Some(slot) = self.words.slots.iter().find(|s| s.load(Ordering::Relaxed) == target + 1) {
            slot.store(0, Ordering::Relaxed);
        }
        // Release: as `writer_exit`'s. We are parked ourselves: ring only for another.
        let seen = self.words.word.fetch_sub(Field::WRITERS.one(), Ordering::Release);
        if Field::PARKED.of(seen) > 1 {
            home.ring_after_rmw();
        }
    }

    /// Acquire: a waiter that sees the change also sees what the changer released.
    fn load(&self) -> u64 {
        self.words.word.load(Ordering::Acquire)
    }
}
