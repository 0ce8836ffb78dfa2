//! How a waiting messaging call decides what to sleep on: [`Watch`] copies what it
//! waits for (the SRB position, the destinations it cannot send to yet), registers the
//! core with the rings it waits for space in, and, where one reservation is all it
//! waits for, names the space bell that reservation's receiver will ring (a *ticket*,
//! see `srb`). A wait without one sleeps on its own doorbell, which such a receiver
//! rings by ringing every core, so the waits for a send take tickets
//! ([`Ctx::ticket_front`]). A ticket far from fitting also reserves, in one run, the
//! entries of the whole messages queued behind it (`Srb::run_behind`), and the wait
//! sleeps until the last of the run fits, not the ticket (`Srb::fits_behind` bounds
//! which), so that the one wake-up its bell brings sends them all.

use super::{Blocked, Ctx, State};
use crate::p2p::matching::Inbox;
use crate::protocol::ring::srb;
use crate::protocol::waiter::Doorbell;

impl Ctx<'_> {
    /// Before a sleep: publishes the SRB space this core consumed, so that no sender
    /// waits on a sleeper for it (senders do not ring receivers for it, see `srb`).
    pub fn flush_before_sleep(&self, inbox: &mut Inbox, w: &mut Watch) {
        if self.flush_consumed(inbox) {
            w.published = inbox.srb_published;
        }
    }

    /// Before a wait for a send sleeps: if the front of one destination's queue is all
    /// that is blocked, on a full SRB, it reserves its next fragment's space even so (a
    /// ticket, as a blocking send does; see `srb`). The wait then sleeps on that
    /// reservation's space bell, which the receiver rings once it fits, where a waiter
    /// without a reservation would have the receiver ring every core at every
    /// publication (47 MPI senders streaming isends into one core: a wake-up storm).
    /// A ticket far from fitting takes the whole messages queued behind it along, in a
    /// run of reservations (`Srb::run_behind`).
    pub fn ticket_front(&self, st: &mut State) {
        if !self.srb_mode() || !st.inbox.rdv.owed.is_empty() {
            return;
        }
        let mut waiting = st.waiting_queues();
        let (dest, bytes) = match (waiting.next(), waiting.next()) {
            (Some(front), None) => front,
            _ => return,
        };
        drop(waiting);
        let queue = &mut st.outbox[dest];
        let front = queue.front_mut().expect("a waiting queue has a front");
        if front.reserved.is_some() {
            return;
        }
        let ring = self.place.srb(self.seg, dest as u32);
        let max = ring.max_payload() as usize;
        let ticket = ring.reserve(srb::entry_len(bytes.min(max) as u32));
        front.reserved = Some(ticket);
        // The whole messages queued behind a front whose next fragment is its last may
        // join one run of reservations, if the ticket is far enough from fitting that
        // it will sleep (`Srb::run_behind`): one wake-up then sends them all.
        let budget = if bytes > max || front.single { 0 } else { ring.run_behind(&ticket) };
        let (mut run, mut members) = (0, 0);
        for len in queue.iter().skip(1).map_while(|p| p.whole_entry(max)) {
            if run + len > budget {
                break;
            }
            run += len;
            members += 1;
        }
        if members == 0 {
            return;
        }
        let mut reserved = ring.reserve(run);
        for p in queue.iter_mut().skip(1).take(members) {
            let len = p.whole_entry(max).expect("counted above");
            p.reserved = Some(reserved.split_first(len));
        }
    }

    /// Prepares a wait: what it watches (the SRB position, the destinations it cannot
    /// send to yet: the fronts of the queues and `extra`). For SRB destinations it
    /// counts this core among the ring's space waiters (see `srb`); [`Ctx::unwatch`]
    /// undoes that. With `bell` the wait also sleeps on [`Ctx::space_bell`], so a lone
    /// held reservation counts as a ticket; without (a background wait sleeps on the
    /// core's doorbell only) it must not, or no receiver would ring that doorbell.
    pub fn watch(&self, st: &State, extra: Option<Blocked>, bell: bool) -> Watch {
        let mut blocked: Vec<Blocked> = st
            .waiting_queues()
            .filter_map(|(d, bytes)| st.outbox[d].front().map(|p| (d as u32, bytes, p.reserved)))
            .chain(st.inbox.rdv.owed.iter().map(|o| (o.dest, 0, o.held)))
            .chain(extra)
            .collect();
        // One destination, a reservation held: the wait can sleep on its space bell,
        // until the last of the run behind it fits (`run_end`).
        let ticket = match blocked[..] {
            [(d, _, Some(r))] if bell && self.srb_mode() => {
                let last = self.run_end(st, d, r);
                blocked[0].2 = Some(last);
                Some((d, last))
            }
            _ => None,
        };
        if self.srb_mode() {
            // No need to ring the receivers: one that waits has published what it
            // consumed (it caught up), and one that drains publishes as it goes (`srb`).
            for &(d, ..) in &blocked {
                self.place.srb(self.seg, d).add_space_waiter(ticket.is_some());
            }
        }
        Watch { pos: st.inbox.srb_pos, published: st.inbox.srb_published, blocked, ticket }
    }

    /// What a wait for `dest`, whose queue's front holds `front`, sleeps until: the last
    /// of the reservations queued right behind the front (a run, [`Ctx::ticket_front`])
    /// that `Srb::fits_behind` allows, else the front itself. Every one before it fits
    /// by then, so one wake-up publishes them all, where waiting for the front alone cost
    /// each of them a sleep (47 MPI senders of 4 KiB, with the space bells over sixteen
    /// rings' worth: 10 800 sender sleeps a run, `docs/bench/2026-11-27-fanin`). A
    /// reservation `front` that is not the queue's front's (a blocking send's, an
    /// answer's) is waited for alone.
    fn run_end(&self, st: &State, dest: u32, front: srb::Reservation) -> srb::Reservation {
        let Some(queue) = st.outbox.get(dest as usize) else { return front };
        if queue.front().and_then(|p| p.reserved) != Some(front) {
            return front;
        }
        let ring = self.place.srb(self.seg, dest);
        let run = queue.iter().skip(1).map_while(|p| p.reserved);
        run.take_while(|r| ring.fits_behind(&front, r)).last().unwrap_or(front)
    }

    /// Undoes the registrations of [`Ctx::watch`].
    pub fn unwatch(&self, w: &Watch) {
        if self.srb_mode() {
            let ticketed = w.ticket.is_some();
            w.blocked.iter().for_each(|&(d, ..)| self.place.srb(self.seg, d).remove_space_waiter(ticketed));
        }
    }

    /// Whether the wait holds a ticket far from fitting: then waiting awake (spinning,
    /// or yielding when oversubscribed) only costs CPU and context switches.
    pub fn far(&self, w: &Watch) -> bool {
        w.ticket.is_some_and(|(d, r)| self.place.srb(self.seg, d).far_from_fitting(&r))
    }

    /// The space bell a wait sleeps on besides its own doorbell, if it holds a ticket.
    pub fn space_bell(&self, w: &Watch) -> Option<&Doorbell> {
        w.ticket.map(|(d, r)| self.place.srb(self.seg, d).space_bell(&r))
    }

    /// Whether something the watch covers could move: a fragment arrived (at the
    /// watched position), or a blocked destination has room.
    pub fn movable(&self, w: &Watch) -> bool {
        // A held reservation moves once it fits; the hint of `can_push` counts it as
        // taken space and could stay false.
        let movable = |&(d, n, r): &Blocked| match r {
            Some(r) => self.place.srb(self.seg, d).fits(&r),
            None => self.can_push(d, n),
        };
        self.incoming_at(w.pos, w.published) || w.blocked.iter().any(movable)
    }
}

/// What a waiting call watches (see [`Ctx::watch`]).
pub(crate) struct Watch {
    pub(super) pos: u32,
    pub(super) published: u32,
    pub(super) blocked: Vec<Blocked>,
    /// The one destination waited for and the reservation held there, if that is all.
    pub(super) ticket: Option<(u32, srb::Reservation)>,
}
