//! Message matching, MPI style: which receive gets which message.
//!
//! Process-private state of one core. Fragments come out of the channels in order per
//! source; the first fragment of a message decides where the message goes:
//! 1. to the earliest *posted* non-blocking receive that matches (source, tag);
//! 2. else to the receive running in this call (the [`Target`]), straight into its
//!    buffer if the message fits ("direct": no extra copy);
//! 3. else to the *arrived* queue, in arrival order, for a later receive or probe.
//!
//! A message announced for the single-copy path (`rendezvous`) is matched the same way;
//! its bytes stay in the sender's memory until a receive with a buffer takes it (then
//! one [`Pull`] copies them straight into that buffer), or until the core is about to
//! wait ([`Inbox::pull_deferred`] copies them into memory the inbox owns). One whose
//! copy the kernel refused stays in its place with no bytes, set aside until its
//! sender's continuation fragments fill it, the earliest refused of that sender first
//! (`rendezvous`: a sender may have several announcements open). A message to
//! oneself arrives whole ([`Inbox::deliver_own`]): one copy into the memory of the
//! receive it goes to.
//!
//! A synchronous message (`synchronous`) is acknowledged when a receive first matches
//! it: as it arrives, when it goes to a posted receive or into the running one, or
//! when a receive later takes it out of the arrived queue.
//!
//! A new receive first takes the earliest matching message of the arrived queue. So
//! among messages that a receive matches, it always gets the earliest arrived, and
//! messages from one source arrive in the order they were sent: between one pair with
//! one tag, messages are never overtaken. A receive whose buffer is too small gets
//! [`Truncated`](crate::p2p::endpoint::RecvError::Truncated) and the message stays queued, in
//! its place, for a receive with a larger buffer; a message put back like this goes to
//! the earliest posted receive that matches it, if any, as a new message would.
//!
//! Here: the queues and which receive gets which message. How fragments become
//! messages (each source's assembly) is `assembly`; copying announced messages, and
//! what a refusal makes of them, is `pull`; the small-message path's question is `quiet`.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

mod arrived;
mod assembly;
mod pull;
mod quiet;

use crate::p2p::endpoint::{Source, Status, TagMatch};
use crate::p2p::progress::Fail;
use crate::p2p::rendezvous::Book;
use crate::p2p::spare::Spare;
use crate::p2p::synchronous::SyncBook;
use crate::p2p::timed;
use crate::protocol::ring::frag::{FragKind, Rendezvous};

use arrived::Arrived;
use assembly::Assembly;
pub(crate) use pull::{Pull, PullError};

/// Bytes reserved up front for a message's data: its length comes from shared memory
/// and is not trusted with a larger allocation; past this the data grows as fragments
/// arrive.
const PREALLOC: usize = 1 << 16;

/// A message not (yet) delivered to a user buffer, complete or still arriving, or
/// still in its sender's memory (`remote`).
struct Msg {
    seq: u64,
    status: Status,
    data: Vec<u8>,
    remote: Option<Rendezvous>,
    /// The number of a synchronous message that no receive has matched yet.
    sync: Option<u32>,
}

impl Msg {
    fn complete(&self) -> bool {
        self.remote.is_none() && self.data.len() == self.status.len
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sink {
    Arrived(u64),
    Assigned(u64),
    Direct,
}

#[derive(Clone, Copy)]
struct Posted {
    id: u64,
    src: Source,
    tag: TagMatch,
}

fn matches(src: Source, tag: TagMatch, s: &Status) -> bool {
    src.matches(s.source) && tag.matches(s.tag)
}

/// Where the receive running in this call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetState {
    Open,
    Direct {
        status: Status,
        filled: usize,
        seq: u64,
    },
    Done(Status),
    /// The matched message is longer than the buffer; it stays queued.
    Truncated(Status),
}

/// The receive running in this call.
pub(crate) struct Target<'b> {
    /// The non-blocking receive's id (it is in the posted list while Open).
    pub id: Option<u64>,
    pub src: Source,
    pub tag: TagMatch,
    pub buf: &'b mut [u8],
    pub state: TargetState,
}

/// One core's matching state.
#[derive(Default)]
pub(crate) struct Inbox {
    next_seq: u64,
    next_id: u64,
    /// In posting order; a message usually takes the first, so it leaves at the front.
    posted: VecDeque<Posted>,
    arrived: Arrived,
    /// Keyed by receive id: small sequential integers, which need no DoS-proof hash.
    assigned: FxHashMap<u64, Msg>,
    /// Indexed by source rank.
    assembling: Vec<Option<Assembly>>,
    /// Announced messages whose copy was refused, awaiting their bytes (`pull`): the
    /// source, the message's arrival number and where it is. Its first continuation
    /// fragment makes the source's earliest one its assembly.
    refused: Vec<(u32, u64, Assembly)>,
    /// This core's SRB consumer position (channel state, kept here so that draining
    /// needs one borrow).
    pub srb_pos: u32,
    /// The consumer position last published to senders (see `srb`).
    pub srb_published: u32,
    /// Where the next perpeer drain starts polling (round robin).
    pub next_source: u32,
    /// Rendezvous bookkeeping: announcements awaiting answers, answers owed (the
    /// acknowledgements of synchronous messages too).
    pub rdv: Book,
    /// Synchronous messages' numbers, and the sends awaiting acknowledgements.
    pub sync: SyncBook,
    /// Announced messages in `arrived` or `assigned` still in their senders' memory.
    deferred: usize,
    /// The data buffers of messages taken, for the next ones.
    spare: Spare,
}

impl Inbox {
    /// Whether non-blocking receives are posted or hold messages not yet taken.
    pub fn has_posted(&self) -> bool {
        !self.posted.is_empty() || !self.assigned.is_empty()
    }

    /// Whether messages wait for their posted receives' next tests (matched to them,
    /// whole or in part).
    pub fn has_assigned(&self) -> bool {
        !self.assigned.is_empty()
    }

    /// Whether announced messages wait in their senders' memory (their senders wait).
    pub fn has_deferred(&self) -> bool {
        self.deferred != 0
    }

    /// The earliest arrived message matching, if any.
    pub fn probe(&self, src: Source, tag: TagMatch) -> Option<Status> {
        self.arrived.first_match(src, tag).map(|at| self.arrived.at(at).status)
    }

    /// Starts a receive: takes the earliest matching arrived message into the target.
    pub fn start(&mut self, t: &mut Target<'_>, pull: &dyn Pull) -> Result<(), Fail> {
        let Some(at) = self.arrived.first_match(t.src, t.tag) else { return Ok(()) };
        let status = self.arrived.at(at).status;
        if status.len > t.buf.len() {
            t.state = TargetState::Truncated(status);
            return Ok(());
        }
        let mut msg = self.arrived.take(at);
        self.acknowledge(&msg.status, msg.sync.take());
        let seq = msg.seq;
        self.take_into(msg, Sink::Arrived(seq), t, pull)
    }

    /// A receive matched the message of `status`: if it is synchronous (`sync`, taken
    /// out of the message so that it is answered once), its sender is owed the
    /// acknowledgement.
    fn acknowledge(&mut self, status: &Status, sync: Option<u32>) {
        if let Some(number) = sync {
            let model = timed::acknowledgement(status.vtime);
            self.rdv.owe(status.source, (FragKind::SyncAck, number), model);
        }
    }

    /// Moves a matched message (complete, partial or announced) from `from` into the
    /// target's buffer.
    fn take_into(&mut self, msg: Msg, from: Sink, t: &mut Target<'_>, pull: &dyn Pull) -> Result<(), Fail> {
        if let Some(at) = msg.remote {
            self.deferred -= 1;
            t.state = TargetState::Direct { status: msg.status, filled: 0, seq: msg.seq };
            return self.pull_into_target(t, at, pull, true);
        }
        t.buf[..msg.data.len()].copy_from_slice(&msg.data);
        if msg.complete() {
            t.state = TargetState::Done(msg.status);
        } else {
            t.state = TargetState::Direct { status: msg.status, filled: msg.data.len(), seq: msg.seq };
            self.retarget(msg.status.source, from, Sink::Direct);
        }
        self.spare.keep(msg.data);
        Ok(())
    }

    /// Posts a non-blocking receive; it takes the earliest matching arrived message
    /// now, or waits in the posted list. Returns its id.
    pub fn post(&mut self, src: Source, tag: TagMatch) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        match self.arrived.first_match(src, tag) {
            Some(at) => {
                let mut msg = self.arrived.take(at);
                self.acknowledge(&msg.status, msg.sync.take());
                self.retarget(msg.status.source, Sink::Arrived(msg.seq), Sink::Assigned(id));
                self.assigned.insert(id, msg);
            }
            None => self.posted.push_back(Posted { id, src, tag }),
        }
        id
    }

    /// Starts a non-blocking receive on a message already here whole: if the earliest
    /// arrived message that (`src`, `tag`) matches is complete and fits `buf`, copies
    /// it in and returns its status and arrival number, so that the receive needs no
    /// place in the queues. Otherwise nothing changes, and the receive is posted
    /// ([`Inbox::post`]), which takes such a message as it would.
    #[inline]
    pub fn take_whole(&mut self, src: Source, tag: TagMatch, buf: &mut [u8]) -> Option<(Status, u64)> {
        if self.arrived.is_empty() {
            return None;
        }
        self.take_whole_queued(src, tag, buf)
    }

    fn take_whole_queued(&mut self, src: Source, tag: TagMatch, buf: &mut [u8]) -> Option<(Status, u64)> {
        let at = self.arrived.first_match(src, tag)?;
        let found = self.arrived.at(at);
        if !found.complete() || found.status.len > buf.len() {
            return None;
        }
        let mut msg = self.arrived.take(at);
        self.acknowledge(&msg.status, msg.sync.take());
        buf[..msg.data.len()].copy_from_slice(&msg.data);
        self.spare.keep(msg.data);
        Some((msg.status, msg.seq))
    }

    /// The arrival number of a new message: one that arrives now, or one that a
    /// receive takes straight out of the channel (`progress::small`).
    pub fn number_arrival(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// A receive that took a message at its start ([`Inbox::take_whole`]) is dropped
    /// unfinished: the message, `data`, goes back in its place, as a cancelled
    /// receive's does ([`Inbox::cancel`]).
    pub fn give_back(&mut self, status: Status, seq: u64, data: &[u8]) {
        let msg = self.copied(seq, status, data);
        self.queue(msg);
    }

    /// A posted receive being tested: picks up a message assigned to it earlier.
    pub fn resume(&mut self, t: &mut Target<'_>, pull: &dyn Pull) -> Result<(), Fail> {
        let id = t.id.expect("a posted receive");
        if t.state != TargetState::Open {
            return Ok(());
        }
        let Some(msg) = self.assigned.remove(&id) else { return Ok(()) };
        if msg.status.len > t.buf.len() {
            t.state = TargetState::Truncated(msg.status);
            self.unassign(id, msg);
            return Ok(());
        }
        self.take_into(msg, Sink::Assigned(id), t, pull)
    }

    /// Puts back a message that receive `id` did not take.
    fn unassign(&mut self, id: u64, msg: Msg) {
        let src = msg.status.source;
        let sink = self.queue(msg);
        self.retarget(src, Sink::Assigned(id), sink);
    }

    /// Queues a message no receive of this call takes: to the earliest posted receive
    /// that matches, else into the arrived queue, in its place. Posted receives look at
    /// the arrived queue only when posted, so a message that one of them matches must
    /// go to it, or it would wait behind later messages (overtaking) or forever.
    fn queue(&mut self, mut msg: Msg) -> Sink {
        match self.posted.iter().position(|p| matches(p.src, p.tag, &msg.status)) {
            Some(i) => {
                let id = self.posted.remove(i).expect("found").id;
                self.acknowledge(&msg.status, msg.sync.take());
                self.assigned.insert(id, msg);
                Sink::Assigned(id)
            }
            None => {
                let seq = msg.seq;
                self.arrived.insert(msg);
                Sink::Arrived(seq)
            }
        }
    }

    /// A non-blocking receive is dropped or finished: forget it; a message assigned to
    /// it goes back to the arrived queue (it is never lost). Returns whether one did.
    pub fn cancel(&mut self, id: u64) -> bool {
        self.posted.retain(|p| p.id != id);
        let Some(msg) = self.assigned.remove(&id) else { return false };
        self.unassign(id, msg);
        true
    }

    /// The call is returning (or releasing the state to sleep) with the target still
    /// receiving directly: the rest of the message must go to memory the inbox owns,
    /// where the target takes it back ([`Inbox::start`], [`Inbox::resume`]) if it
    /// resumes. (A blocking receive only returns mid-message on an error: its message
    /// goes back to the arrived queue.) Returns whether there was such a rest.
    pub fn spill(&mut self, t: &mut Target<'_>) -> bool {
        let TargetState::Direct { status, filled, seq } = t.state else { return false };
        let msg = self.copied(seq, status, &t.buf[..filled]);
        match t.id {
            Some(id) => {
                self.retarget(status.source, Sink::Direct, Sink::Assigned(id));
                self.assigned.insert(id, msg);
            }
            None => {
                self.retarget(status.source, Sink::Direct, Sink::Arrived(seq));
                self.arrived.insert(msg);
            }
        }
        t.state = TargetState::Open;
        true
    }

    /// The message queued at `sink`, which holds one (not `Direct`).
    fn msg(&mut self, sink: Sink) -> &mut Msg {
        match sink {
            Sink::Arrived(k) => self.arrived.get_mut(k),
            Sink::Assigned(k) => self.assigned.get_mut(&k),
            Sink::Direct => None,
        }
        .expect("a queued message")
    }

    /// Decides where a new message goes (module docs); an announced one (`remote`)
    /// that no target takes is counted as deferred; a synchronous one (`sync`) that a
    /// receive takes is acknowledged.
    fn place(
        &mut self,
        status: Status,
        target: Option<&mut Target<'_>>,
        remote: Option<Rendezvous>,
        sync: Option<u32>,
    ) -> Sink {
        let seq = self.number_arrival();
        let posted = self.posted.iter().position(|p| matches(p.src, p.tag, &status));
        let direct = |t: &mut Target<'_>| {
            if status.len <= t.buf.len() {
                t.state = TargetState::Direct { status, filled: 0, seq };
                true
            } else {
                t.state = TargetState::Truncated(status);
                false
            }
        };
        let direct_target = match (posted, target) {
            (Some(i), Some(t)) if t.id == Some(self.posted[i].id) && t.state == TargetState::Open => {
                self.posted.remove(i);
                Some(t)
            }
            (Some(i), _) => {
                let id = self.posted.remove(i).expect("found").id;
                let msg = self.new_msg(seq, status, remote, None);
                self.acknowledge(&status, sync);
                self.assigned.insert(id, msg);
                self.deferred += usize::from(remote.is_some());
                return Sink::Assigned(id);
            }
            (None, Some(t))
                if t.id.is_none() && t.state == TargetState::Open && matches(t.src, t.tag, &status) =>
            {
                Some(t)
            }
            _ => None,
        };
        if direct_target.is_some_and(direct) {
            self.acknowledge(&status, sync);
            return Sink::Direct;
        }
        // A posted target too small for it: the message goes on to the next one.
        self.deferred += usize::from(remote.is_some());
        let msg = self.new_msg(seq, status, remote, sync);
        self.queue(msg)
    }

    /// A message not delivered straight into a receive's buffer. An announced one's
    /// bytes come later, whole, into a buffer of their own; the others' as they arrive.
    fn new_msg(&mut self, seq: u64, status: Status, remote: Option<Rendezvous>, sync: Option<u32>) -> Msg {
        let data = if remote.is_some() { Vec::new() } else { self.buffer(status.len, 0) };
        Msg { seq, status, data, remote, sync }
    }

    /// The message numbered `seq` of `status`, of which `data` is at hand, in memory the
    /// inbox owns (what a receive hands back, whole or in part).
    fn copied(&mut self, seq: u64, status: Status, data: &[u8]) -> Msg {
        let mut copy = self.buffer(status.len, data.len());
        copy.extend_from_slice(data);
        Msg { seq, status, data: copy, remote: None, sync: None }
    }

    /// An empty buffer for a message of `len` bytes (`len` from shared memory, not
    /// trusted with an allocation past [`PREALLOC`]) of which `filled` are at hand.
    fn buffer(&mut self, len: usize, filled: usize) -> Vec<u8> {
        let mut data = self.spare.take(len);
        data.reserve(len.min(PREALLOC).max(filled));
        data
    }
}
