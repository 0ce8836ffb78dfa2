//! The outbox: a core's queues of unfinished non-blocking sends, one per destination,
//! and how they move (the module docs of `progress` say why they exist).
//!
//! Invariants: a queue's sends leave in order, one message's fragments at a time. Only
//! the front of a queue sends fragments, with one exception: behind a front of
//! announced single copies the single copies that follow are announced too, in order,
//! up to `rendezvous::MAX_OPEN` open per destination; each is removed from the queue
//! when its answer says it was read, wherever it stands (see `rendezvous`). A send
//! holds its bytes until its last fragment has left (`Bytes::Copy`, returned to
//! `spare` then), or, a large buffer handed over (`Bytes::Given`), until its receiver
//! answered the announcement: the receiver reads those bytes in place, so they must
//! outlive the answer, and the core waits for open announcements (and publishes the SRB
//! space its queued sends reserved) before it leaves (`Engine::settle`,
//! [`State::owing_to`]). A front announced and not yet answered waits for an incoming
//! fragment, not for room, so waits do not count it among the destinations they cannot
//! send to ([`Pending::next_push`]); nor do they count the sends behind it, which move
//! when answers come.

use std::collections::VecDeque;

use crate::p2p::rendezvous::{Book, MAX_OPEN};
use crate::p2p::timed::Model;
use crate::protocol::ring::frag::{FragKind, RENDEZVOUS_BYTES, Rendezvous};
use crate::protocol::ring::srb;

use super::{Ctx, Fail, Frag, State};

/// The bytes of a queued send: a copy of its own, or the buffer its caller handed over.
enum Bytes {
    Copy(Vec<u8>),
    Given(Box<dyn AsRef<[u8]> + Send>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Copy(v) => v,
            Bytes::Given(b) => (**b).as_ref(),
        }
    }
}

/// A non-blocking send that has not left completely; owns the bytes still to go.
pub(super) struct Pending {
    id: u64,
    tag: u32,
    total: u32,
    data: Bytes,
    off: usize,
    started: bool,
    /// Announced as a single copy when its turn comes (module docs).
    pub(super) single: bool,
    /// Its announcement's token, once announced.
    token: u32,
    /// A synchronous message (its first fragment says so, see `synchronous`).
    sync: bool,
    /// SRB space reserved for the next fragment that did not fit yet (module docs).
    pub(super) reserved: Option<srb::Reservation>,
    /// How its fragments are charged in virtual time.
    model: Model,
}

impl Pending {
    /// The bytes its next fragment carries at most: the announcement's, for a single
    /// copy not announced yet; none for one announced, which waits for its answer (an
    /// incoming fragment), not for room.
    pub(super) fn next_push(&self) -> Option<usize> {
        match (self.single, self.started) {
            (true, true) => None,
            (true, false) => Some(RENDEZVOUS_BYTES as usize),
            (false, _) => Some(self.data.as_slice().len() - self.off),
        }
    }
}

impl Pending {
    /// The SRB entry bytes of this send if it is a whole message that goes in one entry
    /// of at most `max_payload` bytes and holds no reservation yet: one that a run of
    /// reservations may include (`Ctx::ticket_front`).
    pub(super) fn whole_entry(&self, max_payload: usize) -> Option<u32> {
        let rest = self.data.as_slice().len() - self.off;
        let whole = !self.single && !self.started && self.reserved.is_none() && rest <= max_payload;
        whole.then(|| srb::entry_len(rest as u32))
    }
}

/// Where a queued single-copy send stands (`Ctx::announce_queued`).
enum Announced {
    /// Announced, not answered yet (`true`: the announcement left now).
    Open(bool),
    /// Not announced: no room, or announcements to its destination are at the bound or
    /// a blocking send's is open.
    Blocked,
    /// The receiver read it: the send is finished.
    Read,
    /// The receiver may not read this process: the bytes go through the channel.
    Refused,
    /// Never announced, since a receiver refused this process before: an ordinary send.
    Ordinary,
}

impl State {
    /// Queues a copy of the rest of a send (synchronous if `sync`), with the space
    /// reserved for its next fragment if any; returns its id.
    pub fn enqueue(
        &mut self,
        dest: u32,
        (tag, total, sync): (u32, u32, bool),
        rest: &[u8],
        (started, model): (bool, Model),
        reserved: Option<srb::Reservation>,
    ) -> u64 {
        let data = Bytes::Copy(self.spare.copy_of(rest));
        let p = Pending { id: 0, tag, total, data, off: 0, started, single: false, token: 0, sync, reserved, model };
        self.queue(dest, p)
    }

    /// Queues a large message whose buffer the caller hands over, to be announced as a
    /// single copy in its turn (module docs); returns its id.
    pub fn enqueue_given(
        &mut self,
        dest: u32,
        (tag, total): (u32, u32),
        data: Box<dyn AsRef<[u8]> + Send>,
        model: Model,
    ) -> u64 {
        let data = Bytes::Given(data);
        let p = Pending { id: 0, tag, total, data, off: 0, started: false, single: true, token: 0, sync: false, reserved: None, model };
        self.queue(dest, p)
    }

    fn queue(&mut self, dest: u32, mut p: Pending) -> u64 {
        p.id = self.next_send;
        self.next_send += 1;
        if self.outbox.len() <= dest as usize {
            self.outbox.resize_with(dest as usize + 1, VecDeque::new);
        }
        self.unfinished.insert(p.id);
        let id = p.id;
        self.outbox[dest as usize].push_back(p);
        id
    }

    /// A destination still in the job (not `left`) that a queued send still owes
    /// something before this core may leave: the answer to its announcement (the
    /// receiver reads the bytes in place), or the publication of SRB space it reserved
    /// (the receiver, and every sender behind it in that ring, stop at it).
    pub fn owing_to(&self, left: impl Fn(u32) -> bool) -> Option<u32> {
        (0..self.outbox.len() as u32).find(|&d| {
            self.outbox[d as usize].iter().any(|p| (p.single && p.started) || p.reserved.is_some()) && !left(d)
        })
    }

    pub fn send_finished(&self, id: u64) -> bool {
        !self.unfinished.contains(&id)
    }
}

impl Ctx<'_> {
    /// Pushes queued non-blocking sends as far as they go; true if any fragment left.
    /// Skips destinations that a blocking send is in the middle of.
    pub fn push_queued(&self, st: &mut State) -> Result<bool, Fail> {
        let mut any = self.push_answers(&mut st.inbox)?;
        let State { outbox, unfinished, busy, spare, inbox, .. } = st;
        for (dest, queue) in outbox.iter_mut().enumerate() {
            if queue.is_empty() || busy.get(dest).is_some_and(|&b| b) {
                continue;
            }
            // The announced single copies at the front are passed over (they wait for
            // their answers, and the sends behind them may be announced too); anything
            // else moves only at the front (module docs).
            let mut i = 0;
            while let Some(p) = queue.get_mut(i) {
                if p.single {
                    match self.announce_queued(dest as u32, p, &mut inbox.rdv)? {
                        Announced::Open(moved) => {
                            any |= moved;
                            i += 1;
                            continue;
                        }
                        Announced::Blocked => break,
                        Announced::Read => {
                            any = true;
                            unfinished.remove(&p.id);
                            queue.remove(i);
                            continue;
                        }
                        // Through the channel after all, as continuation fragments, in
                        // its turn at the front.
                        Announced::Refused => any = true,
                        Announced::Ordinary => {}
                    }
                }
                if i > 0 {
                    break;
                }
                let rest = &p.data.as_slice()[p.off..];
                let frag = Frag::message(p.tag, p.total, !p.started, p.sync);
                match self.push(dest as u32, (frag, false), rest, &mut p.reserved, p.model)? {
                    None => break,
                    Some(n) => {
                        any = true;
                        p.off += n;
                        p.started = true;
                        if p.off == p.data.as_slice().len() {
                            unfinished.remove(&p.id);
                            if let Some(Pending { data: Bytes::Copy(buffer), .. }) = queue.pop_front() {
                                spare.keep(buffer);
                            }
                        }
                    }
                }
            }
        }
        Ok(any)
    }

    /// Announces queued send `p` to `dest` as a single copy, or looks for the answer to
    /// its announcement (module docs). Every send ahead of `p` in its queue is an open
    /// announcement.
    fn announce_queued(&self, dest: u32, p: &mut Pending, rdv: &mut Book) -> Result<Announced, Fail> {
        let mut moved = false;
        if !p.started {
            // A receiver refused this process's memory: the bytes go through the
            // channel without asking again.
            if !self.single.usable() {
                p.single = false;
                return Ok(Announced::Ordinary);
            }
            // A blocking send of another thread may hold an announcement to `dest` still
            // (it started before this send was queued): this one waits its turn. So
            // does one past the bound.
            let (open, blocking) = rdv.open_to(dest);
            if blocking || open >= MAX_OPEN {
                return Ok(Announced::Blocked);
            }
            // The buffer stays where it is, held by this queue, until the answer.
            p.token = rdv.announce_queued(dest);
            let at = Rendezvous { addr: p.data.as_slice().as_ptr() as u64, token: p.token };
            let frag = Frag { tag: p.tag, total: p.total, first: true, kind: FragKind::Rendezvous };
            if self.push(dest, (frag, false), &at.to_bytes(), &mut p.reserved, p.model)?.is_none() {
                // No room for the announcement yet; it is made again, with the same
                // reservation if it took one.
                rdv.close_token(dest, p.token);
                return Ok(Announced::Blocked);
            }
            (p.started, moved) = (true, true);
        }
        let answer = rdv.answer_to(dest, p.token);
        if answer.is_some() {
            rdv.close_token(dest, p.token);
        }
        Ok(match answer {
            None => Announced::Open(moved),
            Some(FragKind::Done) => Announced::Read,
            Some(_) => {
                self.single.refused();
                p.single = false;
                Announced::Refused
            }
        })
    }
}
