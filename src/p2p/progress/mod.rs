//! The progress engine: moves fragments between this core and the channels.
//!
//! Every blocking two-sided call is a loop of *progress* (drain this core's incoming
//! channel(s) through [`Inbox`](crate::p2p::matching::Inbox), push queued sends as far as
//! they go without blocking) and *wait* (`engine`: poll, then sleep on this core's own
//! doorbell until something [`Ctx::watch`] covers may have changed). The waits of every
//! other blocking call of the core run the same progress in the background (`engine`).
//! A core that waits for anything (an incoming message, room in a peer's channel)
//! sleeps on its own doorbell, so one sleep covers both:
//! senders ring the receiver after publishing; a perpeer receiver rings the sender
//! whose slot or DRAM bytes it frees; an SRB sender that waits for space counts itself
//! in the receiver's `space_waiters`, and the receiver publishes what it consumed
//! whenever it catches up with its ring (or every quarter of it), ringing the space
//! bell that a sender holding a reservation sleeps on as well, or every core for the
//! other waiters (see `srb`); a wait for a send takes such a reservation (`watch`).
//!
//! Because every blocked call keeps draining its own channel, two cores that send
//! large messages to each other at the same time both complete: neither channel stays
//! full while its owner waits. Sends to one destination leave in order: a send starts
//! only when the destination's queue of unfinished non-blocking sends is empty.
//!
//! SRB reservations are a fetch-add, decided on a hint: two senders can both see room
//! for one entry, and the later one's reservation does not fit until the receiver
//! drains. No send waits for it in place (the receiver may only drain once the
//! sender's core has made progress elsewhere): the reservation stays with the send (a
//! blocking send's loop, or the queued send at the front of its destination's queue),
//! and a later push fills it once it fits, which the waits watch for. Until then the
//! receiver stops at the unpublished entry, as at any reservation being written, so
//! later entries (from any sender) wait behind it.
//!
//! A non-blocking send copies what cannot leave at once into a buffer of its own, and
//! the buffers of finished ones are reused (`spare`). A large one whose buffer the
//! caller hands over (`Core::isend_owned`, what the MPI library does with the user's
//! buffer) is neither copied nor pushed: when its turn comes it is announced
//! (`rendezvous`; several such sends in a row are announced together), the receiver
//! reads it straight out of this process, and the send finishes on the answer; one
//! copy, not the ring's four (into a copy of its own, into the ring, out of it, out of
//! the receiver's staging). On a refusal its bytes go
//! through the channel after all. (Copying a large message whole at `isend` to announce
//! the copy was measured and refused: a window of 64 isends of 1 MiB then held 64 MiB
//! of fresh copies, faulted in page by page, and took twice as long.)
//!
//! Sends to one destination never interleave their fragments (the receiver assembles
//! one message per source at a time): a blocking send in the middle of a message marks
//! its destination busy ([`State::set_busy`]), and nothing else starts to it until it
//! is done.

use std::cell::OnceCell;
use std::collections::VecDeque;

use rustc_hash::FxHashSet;

use crate::p2p::channel::Placement;
use crate::segment::ring::ShmRing;
use crate::p2p::cma::SingleCopy;
use crate::p2p::matching::{Inbox, Target, TargetState};
use crate::p2p::spare::Spare;
use crate::p2p::timed::{self, Model};
use crate::protocol::abort::JobAborted;
use crate::protocol::ring::frag::{CorruptError, CorruptKind, FragHeader, FragKind, MAX_FRAGMENT};
use crate::protocol::ring::srb::{self, Srb};
use crate::protocol::waiter::Waiter;
use crate::segment::mapping::Segment;

use self::outbox::Pending;

/// Why progress stopped.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fail {
    Corrupt(CorruptError),
    Aborted(JobAborted),
}

impl From<CorruptError> for Fail {
    fn from(e: CorruptError) -> Self {
        Fail::Corrupt(e)
    }
}

impl From<JobAborted> for Fail {
    fn from(e: JobAborted) -> Self {
        Fail::Aborted(e)
    }
}

/// The header fields of a fragment a sender pushes (the source is the sender).
#[derive(Clone, Copy)]
pub(crate) struct Frag {
    pub tag: u32,
    pub total: u32,
    pub first: bool,
    pub kind: FragKind,
}

impl Frag {
    /// A data fragment of a message of `total` bytes.
    pub fn data(tag: u32, total: u32, first: bool) -> Frag {
        Frag { tag, total, first, kind: FragKind::Data }
    }

    /// A fragment of a message of `total` bytes: the first of a synchronous one
    /// (`sync`) says so, all others are data.
    pub fn message(tag: u32, total: u32, first: bool, sync: bool) -> Frag {
        let kind = if first && sync { FragKind::SyncData } else { FragKind::Data };
        Frag { tag, total, first, kind }
    }
}

/// One core's private two-sided state.
#[derive(Default)]
pub(crate) struct State {
    pub inbox: Inbox,
    outbox: Vec<VecDeque<Pending>>,
    /// Send ids: small sequential integers, which need no DoS-proof hash.
    unfinished: FxHashSet<u64>,
    next_send: u64,
    /// By destination: whether a blocking send is in the middle of a message to it
    /// (its thread may sleep with the state unlocked): no other message to it may
    /// start meanwhile.
    busy: Vec<bool>,
    /// Buffers of finished queued sends, kept for the next ones.
    spare: Spare,
}

/// A destination that a waiting call cannot send to yet: the rank, the bytes still to
/// go, and the SRB reservation held for them, if any.
pub(crate) type Blocked = (u32, usize, Option<srb::Reservation>);

impl State {
    /// Whether a new message to `dest` may start now: no queued send, no blocking send
    /// of another thread in the middle of one, no announcement awaiting its answer
    /// (sends to one destination leave in order and never interleave their fragments).
    pub fn may_start(&self, dest: u32) -> bool {
        self.outbox.get(dest as usize).is_none_or(VecDeque::is_empty) && !self.is_busy(dest) && !self.inbox.rdv.open(dest)
    }

    /// The destinations whose queued sends wait for room and may move (no blocking send
    /// of another thread holds them back), with the bytes their next fragment carries at
    /// most: what a wait watches. A single copy awaiting its answer waits for nothing
    /// here.
    fn waiting_queues(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.outbox.len())
            .filter(|&d| !self.is_busy(d as u32))
            .filter_map(|d| Some((d, self.outbox[d].front()?.next_push()?)))
    }

    fn is_busy(&self, dest: u32) -> bool {
        self.busy.get(dest as usize).is_some_and(|&b| b)
    }

    /// Marks `dest` as being sent to by a blocking send (or no longer).
    pub fn set_busy(&mut self, dest: u32, busy: bool) {
        if self.busy.len() <= dest as usize {
            self.busy.resize(dest as usize + 1, false);
        }
        self.busy[dest as usize] = busy;
    }

    /// Whether the state has work that other calls' waits should drive: unfinished
    /// sends, posted receives, SRB space consumed but not yet published, announced
    /// messages whose senders wait, answers owed.
    pub fn active(&self) -> bool {
        !self.unfinished.is_empty()
            || self.inbox.has_posted()
            || self.inbox.srb_pos != self.inbox.srb_published
            || self.inbox.has_deferred()
            || !self.inbox.rdv.owed.is_empty()
    }

    /// The SRB consumer position and the one last published, if a test of an open
    /// receive can find nothing here but news from the channel (`Engine::nothing_new`):
    /// no sends queued and no answers owed (which its progress would push), no
    /// announced message to pull, no message matched to a posted receive and not yet
    /// taken by its test.
    pub fn quiet_at(&self) -> Option<(u32, u32)> {
        let quiet = self.unfinished.is_empty()
            && self.inbox.rdv.owed.is_empty()
            && !self.inbox.has_deferred()
            && !self.inbox.has_assigned();
        quiet.then_some((self.inbox.srb_pos, self.inbox.srb_published))
    }

}

/// What a core needs to move fragments.
pub(crate) struct Ctx<'c> {
    pub seg: &'c Segment,
    pub place: &'c Placement,
    pub rank: u32,
    pub size: u32,
    pub waiter: Waiter<'c>,
    /// This process's single-copy settings (queued large sends announce, see `cma`).
    pub single: &'c SingleCopy,
    /// This core's own receive ring, in SRB mode: made at its first use in a call,
    /// since every poll of a wait looks at it and making the view checks the layout.
    own_srb: OnceCell<Srb<'c, ShmRing<'c>>>,
}

type Tgt<'t, 'b> = Option<&'t mut Target<'b>>;

/// The receive of this call has its message: stop draining, and leave the rest in the
/// channel for the next receive to take without a detour through the inbox.
fn satisfied(target: &Tgt<'_, '_>) -> bool {
    target.as_ref().is_some_and(|t| matches!(t.state, TargetState::Done(_) | TargetState::Truncated(_)))
}

impl<'c> Ctx<'c> {
    pub fn new(
        seg: &'c Segment,
        place: &'c Placement,
        (rank, size): (u32, u32),
        waiter: Waiter<'c>,
        single: &'c SingleCopy,
    ) -> Ctx<'c> {
        Ctx { seg, place, rank, size, waiter, single, own_srb: OnceCell::new() }
    }

    /// This core's own receive ring, in SRB mode.
    fn own_srb(&self) -> Option<&Srb<'c, ShmRing<'c>>> {
        self.srb_mode().then(|| self.own_srb.get_or_init(|| self.place.srb(self.seg, self.rank)))
    }

    /// Where a message of `len` bytes to `dest` goes, for virtual time: a per-peer
    /// message that fits the inline slot goes to the receiver's MPB, all else to DRAM.
    pub(crate) fn message_path(&self, dest: u32, len: usize) -> timed::Into {
        if self.srb_mode() {
            return timed::Into::Dram;
        }
        let ch = self.place.perpeer(self.seg, self.rank, dest);
        if len <= ch.inline_capacity() || ch.dram_capacity() == 0 { timed::Into::Mpb } else { timed::Into::Dram }
    }

    fn srb_mode(&self) -> bool {
        self.place.sizes.kind == shm_layout::ChannelKind::Srb
    }

    fn corrupt(&self, channel: &'static str, position: u32) -> impl Fn(CorruptKind) -> CorruptError {
        let owner = self.rank;
        move |kind| CorruptError { channel, owner, position, kind }
    }

    /// Whether a fragment waits for this core, an SRB consumer at `pos` that last
    /// published `published` (a waiter's copy of its inbox's: another thread may move
    /// on meanwhile, and then wakes it, see `engine`).
    pub fn incoming_at(&self, pos: u32, published: u32) -> bool {
        if let Some(ring) = self.own_srb() {
            return ring.has_entry(pos) || ring.owes_space(pos, published);
        }
        (0..self.size).any(|s| s != self.rank && self.place.perpeer(self.seg, s, self.rank).has_incoming())
    }

    /// Publishes the SRB space this core consumed, now rather than lazily (it leaves
    /// messaging for a while: see `engine`), ringing the senders that wait for it.
    /// True if anything was published.
    pub fn flush_consumed(&self, inbox: &mut Inbox) -> bool {
        let Some(ring) = self.own_srb().filter(|_| inbox.srb_pos != inbox.srb_published) else {
            return false;
        };
        if ring.flush_consumed(inbox.srb_pos, &mut inbox.srb_published) {
            self.seg.ring_all();
        }
        true
    }

    /// Delivers the fragments waiting for this core; true if there were any. Unless
    /// `greedy`, stops once the target has its message (the rest stays in the channel
    /// for the next receive); a core that waits for room elsewhere drains greedily, so
    /// that its own channel never stays full while it waits.
    pub fn drain(&self, inbox: &mut Inbox, mut target: Tgt<'_, '_>, greedy: bool) -> Result<bool, Fail> {
        let mut any = false;
        if let Some(ring) = self.own_srb() {
            let mut caught_up = true;
            while let Some(e) = ring.peek(inbox.srb_pos)? {
                let read = |dst: &mut [u8]| ring.read(&e, 0, dst);
                let stamp = timed::stamp(|c| c.ring_stamp(self.rank, e.pos()));
                let corrupt = self.corrupt("srb", e.header.src);
                inbox.deliver(&e.header, target.as_deref_mut(), read, corrupt, (stamp, self))?;
                inbox.srb_pos = e.next();
                ring.release(e);
                any = true;
                if !greedy && satisfied(&target) {
                    caught_up = false;
                    break;
                }
            }
            if ring.free_consumed(inbox.srb_pos, &mut inbox.srb_published, caught_up) {
                self.seg.ring_all();
            }
            return Ok(any);
        }
        // Round robin from where the last drain stopped, so that no sender starves.
        let start = inbox.next_source;
        for src in (0..self.size).map(|i| (start + i) % self.size).filter(|&s| s != self.rank) {
            let ch = self.place.perpeer(self.seg, src, self.rank);
            let bell = &self.seg.slot(src).bell;
            while let Some(inc) = ch.peek()? {
                let corrupt = self.corrupt("perpeer", src);
                let stamp = timed::stamp(|c| c.pair_stamp(self.rank, src));
                if inc.in_dram {
                    // Free the slot first: the sender can publish its next chunk while
                    // we copy this one (the pipeline).
                    ch.take();
                    bell.ring();
                    inbox.deliver(&inc.header, target.as_deref_mut(), |d| ch.read_dram(0, d), corrupt, (stamp, self))?;
                    ch.free_dram(inc.header.len as usize);
                } else {
                    let read = |d: &mut [u8]| ch.read_inline(0, d);
                    inbox.deliver(&inc.header, target.as_deref_mut(), read, corrupt, (stamp, self))?;
                    ch.take();
                }
                bell.ring();
                any = true;
                if !greedy && satisfied(&target) {
                    inbox.next_source = src + 1;
                    return Ok(any);
                }
            }
        }
        Ok(any)
    }

    fn header(&self, f: Frag, len: usize) -> FragHeader {
        FragHeader { src: self.rank, tag: f.tag, len: len as u32, total: f.total, first: f.first, kind: f.kind }
    }

    /// Whether a fragment of `rest` bytes could go to `dest` now.
    fn can_push(&self, dest: u32, rest: usize) -> bool {
        if self.srb_mode() {
            let ring = self.place.srb(self.seg, dest);
            return ring.likely_fits(srb::entry_len(rest.min(ring.max_payload() as usize) as u32));
        }
        let ch = self.place.perpeer(self.seg, self.rank, dest);
        ch.is_free()
            && (rest <= ch.inline_capacity()
                || ch.dram_capacity() == 0
                || ch.dram_fits(rest.min(ch.dram_capacity() / 4).min(MAX_FRAGMENT as usize)))
    }

    /// Sends the next fragment of a message to `dest` if the channel has room:
    /// `Some(bytes sent)`, or `None` when it is full. `held` keeps an SRB reservation
    /// that does not fit yet; a later call with the same `rest` fills it once it fits
    /// (module docs). With `ticket` (a blocking send, which waits for it) an SRB
    /// reservation is taken even when the ring looks full (see `srb`: the sender then
    /// sleeps on its space bell). Control fragments (`frag.kind`) carry all of `rest`.
    /// Never waits.
    pub fn push(
        &self,
        dest: u32,
        (frag, ticket): (Frag, bool),
        rest: &[u8],
        held: &mut Option<srb::Reservation>,
        model: Model,
    ) -> Result<Option<usize>, Fail> {
        if self.srb_mode() {
            let ring = self.place.srb(self.seg, dest);
            let n = rest.len().min(ring.max_payload() as usize);
            let len = srb::entry_len(n as u32);
            let (r, fits) = match *held {
                Some(r) => (r, ring.fits(&r)),
                None => match ring.try_reserve(len) {
                    Some(reserved) => reserved,
                    None if ticket => {
                        let r = ring.reserve(len);
                        (r, ring.fits(&r))
                    }
                    None => return Ok(None),
                },
            };
            *held = (!fits).then_some(r);
            if !fits {
                return Ok(None);
            }
            timed::fragment_sent(model, |c| c.ring_stamp(dest, r.pos()));
            ring.publish(r, &self.header(frag, n), &rest[..n]);
            self.seg.slot(dest).bell.ring();
            return Ok(Some(n));
        }
        let ch = self.place.perpeer(self.seg, self.rank, dest);
        if !ch.is_free() {
            return Ok(None);
        }
        let n = if rest.len() <= ch.inline_capacity() || ch.dram_capacity() == 0 {
            let n = rest.len().min(ch.inline_capacity());
            timed::fragment_sent(model, |c| c.pair_stamp(dest, self.rank));
            ch.send_inline(&self.header(frag, n), &rest[..n]);
            n
        } else {
            let n = rest.len().min(ch.dram_capacity() / 4).min(MAX_FRAGMENT as usize);
            if !ch.dram_fits(n) {
                return Ok(None);
            }
            timed::fragment_sent(model, |c| c.pair_stamp(dest, self.rank));
            ch.send_dram(&self.header(frag, n), &rest[..n]);
            n
        };
        self.seg.slot(dest).bell.ring();
        Ok(Some(n))
    }

    /// Drains, then pushes queued sends; true if anything moved.
    pub fn progress(&self, st: &mut State, target: Tgt<'_, '_>) -> Result<bool, Fail> {
        let drained = self.drain(&mut st.inbox, target, false)?;
        Ok(self.push_queued(st)? || drained)
    }

}

mod outbox;
mod small;
mod watch;

pub(crate) use watch::Watch;

#[cfg(test)]
mod tests;
