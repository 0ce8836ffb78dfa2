//! Flow control of the shared receive buffer: senders waiting for space, and the
//! receiver's publications of `consumer` that wake them. Apart from the entries (the
//! parent module), because whom to wake, and when, is a mechanism of its own, tuned
//! against measurements (below).
//!
//! Waking: senders ring the receiver's doorbell after publishing. A sender that waits
//! for space counts itself in `space_waiters`. The receiver publishes `consumer` when
//! half the ring is unpublished; and, while senders wait for space, whenever it caught
//! up with its ring (it is about to wait) or a quarter of the ring is unpublished, and
//! before it sleeps (`flush_consumed`): so no sender ever waits for space that a
//! sleeping receiver owes, and senders need not ring it for that. After publishing it
//! rings a space bell (whose SeqCst fence is free after the publishing RMW) and reads
//! the waiters; each wake is a Dekker pair with the fence in `Waiter::wait_until` (as
//! in `waiter.rs`).
//! Whom it wakes:
//! - a sender holding a reservation that does not fit yet (a *ticket*: blocking sends,
//!   and waits for a queued non-blocking send, reserve even when the ring is full, and
//!   wait for their own reservation) sleeps on
//!   one of the [`SPACE_BELLS`] space bells, the one for the quarter of a ring's worth
//!   of positions (over sixteen rings' worth) where its reservation ends
//!   ([`Srb::space_bell`]). A publication from `c0` to `c1` makes exactly the
//!   reservations ending in `(c0 + cap, c1 + cap]` fit; it rings the bells of the
//!   quarters that range completes (all their waiters fit), and of the last one it
//!   reaches in part only if the receiver caught up or is leaving (it would otherwise
//!   wait for that waiter's entry). So a publication wakes about the senders that fit,
//!   not every sender; a ticket far from fitting sleeps at once rather than waiting
//!   awake ([`Srb::far_from_fitting`]). A ticket with a run of reservations behind it
//!   ([`Srb::run_behind`]) may sleep until a later member of the run fits instead,
//!   one that ends within three quarters of a ring of the ticket's start
//!   ([`Srb::fits_behind`]). Such a member fits with a quarter to spare once the
//!   receiver reaches the ticket, so the publication that gets it there completes the
//!   member's quarter and rings its bell. A member ending nearer could sit in a quarter
//!   that only a trailing publication rings, which a receiver stopped at the unpublished
//!   ticket, its position already published, never makes: a hang (2 of 18 jobs, before
//!   the bound);
//! - any other space waiter (no reservation yet, a wait on several destinations, or one
//!   that does not sleep on the space bell: the background wait of a barrier or lock
//!   holding a queued send's reservation) sleeps on its own doorbell, and the receiver
//!   rings every core while such a waiter is counted (the low half of `space_waiters`).
//!
//! Why: with 47 senders of 4 KiB into one 64 KiB ring on 2 CPUs, ringing every core at
//! every publication woke all of them to find room for a few, and each re-registered
//! and rang the receiver back: 66 futex calls and 41 voluntary context switches per
//! message, 57-320 µs per message (median 230 over 7 runs, by the machine's load),
//! against 3.5-6.5 µs for per-peer channels. With tickets and bells: 0.3 futex calls,
//! 1.4 context switches and 6.7-9.8 µs (median 8.7) per message (`examples/p2p_sweep`,
//! `--patterns m2o --sizes 4096`). With the bells over one ring's worth of positions
//! instead of four: 20 µs; over two: 15 µs; eighths instead of quarters: the same.
//! Waits for queued sends took no ticket at first: 47 MPI ranks streaming windows of
//! 64 isends of 8 B into one took 57-135 µs per message, with the time in the kernel's
//! wake-ups; with tickets, 2.8-5.2 µs (`benches/mpi/pt2pt.c`, many-to-one, 48 ranks).
//! Bells over sixteen rings' worth of positions instead of four: those 47 MPI senders
//! of 4 KiB hold up to about twelve rings' worth of reservations (a ticket and a run of
//! three each), so a bell over four rings' worth also woke, at each ring, senders one or
//! two laps from fitting, which slept again. Over eight rings' worth (32 bells, the
//! memory 16 took before the doorbell shrank to 4 bytes): 33 900 -> 23 000 sender sleeps
//! and 51 000 -> 39 000 context switches a run, 7.8 -> 5.3 µs per message; sleeping until
//! the run fits as well changed little there (20 600 sleeps), since its wake-ups still
//! aliased. Over sixteen (64 bells, 128 bytes more per receiver) with the runs: 10 800
//! sleeps, 18 100 context switches, 7.5 -> 5.1 µs against eight
//! (`docs/bench/2026-11-27-fanin`).

use crate::protocol::waiter::Doorbell;
use crate::sync::{AtomicU32, Ordering};

use super::{Reservation, RingMem, Srb};

/// Space bells per ring: each covers a quarter of a ring's worth of positions, over
/// sixteen rings' worth (see the flow-control docs in `srb/space.rs`).
pub const SPACE_BELLS: u32 = BELLS_PER_LAP * 16;
/// Space bells per ring's worth of positions (a power of two, so that a quarter is a
/// whole number of bytes in every ring).
const BELLS_PER_LAP: u32 = 4;
/// A ticketed space waiter counts this much in `space_waiters` (the low half counts
/// the others).
const TICKETED: u32 = 1 << 16;

/// Senders waiting for space: how many (ticketed ones in the high half), and the bells
/// the ticketed ones sleep on, by where their reservations end.
#[repr(C)]
pub(super) struct SpaceLine {
    waiters: AtomicU32,
    bells: [Doorbell; SPACE_BELLS as usize],
}

impl Default for SpaceLine {
    fn default() -> SpaceLine {
        SpaceLine { waiters: AtomicU32::new(0), bells: std::array::from_fn(|_| Doorbell::new()) }
    }
}

impl<'a, M: RingMem> Srb<'a, M> {
    /// Sender: whether the reservation is far from fitting: more than a quarter of the
    /// ring must still be published before it does (a hint, for whether waiting for it
    /// awake is worth it). Off by one either way, its comparisons would only move where
    /// a sender stops waiting awake; the loom model `bounds_are_exact` holds it to
    /// "more than".
    pub fn far_from_fitting(&self, r: &Reservation) -> bool {
        self.short_of(r).is_some_and(|short| short > self.cap() / BELLS_PER_LAP)
    }

    /// How many bytes must still be published before `r` fits, or `None` if it fits
    /// already (a hint; `fits` decides).
    fn short_of(&self, r: &Reservation) -> Option<u32> {
        // Relaxed: a hint; `fits` decides.
        let consumer = self.counters.consumer.load(Ordering::Relaxed);
        let short = r.pos.wrapping_add(r.len).wrapping_sub(consumer).wrapping_sub(self.cap());
        // Past half the counter space: it fits already (the subtraction wrapped).
        (short < 1 << 31).then_some(short)
    }

    /// Sender: how many bytes a sender holding `ticket` may reserve at once, as one run
    /// ([`Reservation::split_first`]), for the whole messages queued behind it: a
    /// quarter of the ring (the positions one space bell covers) if the ticket is more
    /// than half a ring from fitting, none otherwise (a hint, like
    /// [`Srb::far_from_fitting`]). Such a ticket sleeps until its bell rings, and one
    /// wake-up then sends the run, where a reservation each cost each message a sleep
    /// and a wake-up (47 MPI senders of 1 KiB into one core: 4.7-5.3 -> 1.7 µs per
    /// message). Nearer tickets are waited for awake; runs there only push the other
    /// senders' reservations away from fitting (7 senders of 4 KiB: 2.1 -> 2.3 µs with
    /// runs behind every ticket more than a quarter short).
    pub fn run_behind(&self, ticket: &Reservation) -> u32 {
        let far = self.short_of(ticket).is_some_and(|short| short > self.cap() / 2);
        if far { self.cap() / BELLS_PER_LAP } else { 0 }
    }

    /// Sender: whether `member`, reserved after `ticket` (behind it in its owner's
    /// queue, as a run is), ends at most three quarters of a ring past `ticket`'s start.
    /// Then it fits by the time the receiver has reached `ticket`, with a whole quarter
    /// to spare: the publication that brings `consumer` up to the ticket completes the
    /// quarter where `member` ends and so rings its bell (every publication rings the
    /// quarters it completes, only a trailing one the quarter it reaches in part). So a
    /// sender may sleep until such a member fits instead of until its ticket does, and
    /// its wait never outlasts its ticket's turn: the earliest unpublished reservation's
    /// owner is always woken (module docs). Off by one either way the bound keeps that
    /// spare quarter, less a byte.
    pub fn fits_behind(&self, ticket: &Reservation, member: &Reservation) -> bool {
        let reach = member.pos.wrapping_add(member.len).wrapping_sub(ticket.pos);
        reach <= self.cap() - self.cap() / BELLS_PER_LAP
    }

    /// Sender: counts itself among the senders that sleep until space frees up, as
    /// `ticketed` if it sleeps on the space bell of its reservation
    /// ([`Srb::space_bell`]) rather than only on its own doorbell. It need not ring
    /// the receiver: a receiver publishes what it consumed before it waits (module
    /// docs).
    pub fn add_space_waiter(&self, ticketed: bool) {
        // Relaxed: the waiter's SeqCst fence, before it sleeps, orders this increment
        // before its last check, and the receiver's fence after publishing orders its
        // publication before its load of the count (module docs).
        self.counters.space.waiters.fetch_add(if ticketed { TICKETED } else { 1 }, Ordering::Relaxed);
    }

    /// Sender: undoes [`Srb::add_space_waiter`] once it stops waiting for space.
    pub fn remove_space_waiter(&self, ticketed: bool) {
        self.counters.space.waiters.fetch_sub(if ticketed { TICKETED } else { 1 }, Ordering::Relaxed);
    }

    /// Sender: the bell to sleep on until reservation `r` fits: the receiver rings it
    /// when its publication makes reservations ending near `r`'s fit (module docs).
    pub fn space_bell(&self, r: &Reservation) -> &'a Doorbell {
        self.bell_at(r.pos.wrapping_add(r.len).wrapping_sub(1))
    }

    /// The space bell of the quarter of positions holding counter value `pos`. Sender
    /// and receiver both name a bell by a position (the counter, wrapped), never by a
    /// quarter's number plus an offset, so they agree across the counters' wrap whatever
    /// the ring's size (a 1 GiB ring has only 16 quarters in the counter space).
    fn bell_at(&self, pos: u32) -> &'a Doorbell {
        let granule = self.cap() / BELLS_PER_LAP;
        &self.counters.space.bells[((pos / granule) % SPACE_BELLS) as usize]
    }

    /// Receiver, after a batch of releases up to its position `pos`: publishes `pos` to
    /// `consumer` if half the ring is unpublished since `published` (updated), or if
    /// senders wait for space and either the receiver `caught_up` (it found no entry at
    /// `pos`, so it is about to wait) or a quarter of the ring is unpublished; it rings
    /// the space bells of the reservations that now fit. Returns whether senders wait
    /// that sleep on their own doorbells only: the caller then rings them.
    pub fn free_consumed(&self, pos: u32, published: &mut u32, caught_up: bool) -> bool {
        if pos == *published {
            return false;
        }
        let unpublished = pos.wrapping_sub(*published);
        if unpublished >= self.cap() / 2 {
            // Its bell ring fences (see `publish_consumer`): the publication and the load
            // below form a Dekker pair with a sleeping sender's increment and fence
            // (module docs): either we see the sender and ring it, or its check after its
            // fence sees what we published.
            self.publish_consumer(pos, published, caught_up);
        }
        // Without a publication above, Relaxed may miss a new waiter: nothing is owed to
        // it yet that the next check, or the flush before this receiver sleeps, would
        // not publish (module docs).
        let waiting = self.counters.space.waiters.load(Ordering::Relaxed);
        // While the receiver drains, a quarter at a time: each publication then rings
        // the bells of whole quarters, whose waiters all fit (module docs). A tuning
        // threshold, safe off by one, held to "a whole quarter" by the loom model
        // `bounds_are_exact`.
        let due = caught_up || unpublished >= self.cap() / BELLS_PER_LAP;
        if waiting != 0 && pos != *published && due {
            self.publish_consumer(pos, published, caught_up);
        }
        waiting % TICKETED != 0
    }

    /// Receiver leaving messaging for a while (a barrier, an epoch): publishes what it
    /// consumed up to `pos` now rather than lazily. Returns whether senders wait: the
    /// caller then rings them.
    pub fn flush_consumed(&self, pos: u32, published: &mut u32) -> bool {
        if pos == *published {
            // Nothing consumed since the last publication: nothing to give a sender.
            return false;
        }
        // Its bell ring fences, as in `free_consumed`: either we see a sleeping sender
        // and ring it, or its check after its fence sees what we published.
        self.publish_consumer(pos, published, true);
        self.counters.space.waiters.load(Ordering::Relaxed) % TICKETED != 0
    }

    /// Publishes `pos` and rings the space bells of the quarters of reservation ends it
    /// completes, and with `trailing` (the receiver caught up, or is leaving) the one
    /// it covers only in part.
    fn publish_consumer(&self, pos: u32, published: &mut u32, trailing: bool) {
        let from = *published;
        // Release: our reads and zeroing happen-before a sender's Acquire fetch_or that
        // sees the new value (`srb`'s invariants). An RMW rather than a store, although
        // only we write it: every access to `consumer` is then an RMW, totally ordered,
        // which is also what lets loom relate our advances to the senders' `fetch_or`s.
        self.counters.consumer.swap(pos, Ordering::Release);
        *published = pos;
        // Reservations ending in (from + cap, pos + cap] fit now. Ring the bells of the
        // quarters of positions whose last end that range reaches: all their waiters fit.
        // A quarter reached only in part waits for the next publication, unless this is
        // the last for a while (`trailing`): a receiver that caught up will wait for
        // such a waiter's entry. Each ring, after our publishing RMW, is the Dekker pair
        // of a ticketed sender's count on the bell and its fence before it checks `fits`
        // (module docs). Every call rings at least one bell (its callers pass `trailing`
        // or publish a whole quarter or more), so the first ring's SeqCst fence
        // (`ring_after_rmw`) also orders the publication before the callers' load of
        // the waiter count: no separate fence.
        let granule = self.cap() / BELLS_PER_LAP;
        let start = from.wrapping_add(self.cap());
        let reach = start % granule + pos.wrapping_sub(from);
        let complete = reach / granule;
        let rung = (complete + u32::from(trailing && reach % granule != 0)).min(BELLS_PER_LAP + 1);
        debug_assert!(rung > 0, "a publication that rings no bell has no fence");
        for i in 0..rung {
            self.bell_at(start.wrapping_add(i * granule)).ring_after_rmw();
        }
    }

    /// Receiver: whether senders wait for space that this receiver consumed up to `pos`
    /// but has not published since `published`: a reason to stop waiting and drain.
    pub fn owes_space(&self, pos: u32, published: u32) -> bool {
        // Relaxed: a waiter's fence, before it sleeps, orders this load (module docs).
        pos != published && self.counters.space.waiters.load(Ordering::Relaxed) != 0
    }
}
