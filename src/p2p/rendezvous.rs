//! The single-copy path for large messages between cores: a rendezvous through the
//! channel, and a copy straight out of the sender's memory (see `cma`).
//!
//! Protocol, for a blocking send of at least the threshold to another core whose
//! process may be read (`cma::SingleCopy::usable`):
//! 1. the sender takes a token, records the announcement for the destination
//!    ([`Book::announce`]) and publishes one [`FragKind::Rendezvous`] fragment through
//!    the channel: tag and length of the message, the buffer's address and the token.
//!    It is stamped and charged in virtual time like any fragment (see `timed`);
//! 2. the receiver matches it like the first fragment of any message (so probes see the
//!    message's length, `ANY_SOURCE` receives see it in its place, a receive whose
//!    buffer is too small gets `Truncated`) and copies the bytes with one
//!    `process_vm_readv`: at once into the buffer of the receive running in this call,
//!    or into the buffer of the receive that later takes it ("deferred": a posted
//!    receive's buffer is only reachable while it is tested or waited for);
//! 3. the receiver then owes the sender a [`FragKind::Done`] answer naming the token
//!    ([`Book::owe`]), sent at once or as soon as the sender's channel has room;
//! 4. the sender, which kept draining its own channel meanwhile, sees the answer and
//!    returns: its buffer was read.
//!
//! Queued sends (`progress::outbox`, buffers handed over with `Core::isend_owned`) are
//! announced the same way, but several at once: the single copies at the front of a
//! destination's queue are all announced, in queue order, up to [`MAX_OPEN`] open at a
//! time, each with its own token, and each send finishes on its own answer, in any
//! order. So a sender with a window of large sends to one receiver wakes up once for
//! many answers, not once per message.
//!
//! Invariants:
//! - messages between one pair keep their order: announcements leave in the order of
//!   the sends, and the receiver matches each as it arrives, like a first fragment;
//! - between a blocking send's announcement and its answer the sender starts no other
//!   message to that destination (`State::may_start`); behind open announcements of
//!   queued sends only more announcements leave, and any other message (or a refused
//!   one's bytes) starts only at the front of its queue, once every announcement ahead
//!   of it is answered. So fragments of two messages never interleave, and the bytes of
//!   refused messages follow in the order of their announcements;
//! - no core waits while it holds a deferred announcement: before any wait (a messaging
//!   call's, or the background progress of any other blocking call) the engine copies
//!   every deferred message into memory the inbox owns and answers it
//!   ([`Ctx::pull_deferred`]). A sender waits only for cores that are running, so every
//!   pattern that completed when large messages were buffered in the channel still
//!   completes (a program that never calls the library again while a sender waits on it
//!   keeps that sender waiting, as MPI allows of a standard-mode send);
//! - answers need no order and no assembly: the receiver handles them whenever they
//!   come, between fragments of another message of the same sender too.
//!
//! Refusal: if the kernel refuses the copy (`EPERM`: the receiver may not read the
//! sender), the receiver treats the announcement as the first fragment of an ordinary
//! message, with no bytes yet, and answers [`FragKind::Refused`]; the sender then sends
//! the bytes as continuation fragments, which fill the message in its place, and
//! announces no more (its queued sends not yet announced go as ordinary messages).
//! With several announcements of one sender open, several may be refused, in any
//! order: the receiver keeps each refused message aside (`Inbox::refuse`) and the
//! first continuation fragment with nothing assembling fills the earliest of that
//! sender, which is the one the sender is sending: it sends a refused message's bytes
//! only after hearing the refusal and after every earlier announcement was answered
//! and, if refused, filled. If the sender died (`ESRCH`), the receiver waits for the job's
//! abort, which names it; an address that cannot be read is a corrupted announcement.
//!
//! Failure: a receiver that dies before or during the copy never answers; its sender
//! waits like any waiter, and returns the job's abort when the launcher declares it.

use std::collections::VecDeque;

use crate::p2p::cma::{self, ReadError};
use crate::p2p::matching::{Inbox, Pull, PullError};
use crate::p2p::progress::{Ctx, Fail, Frag, State};
use crate::p2p::timed::Model;
use crate::protocol::ring::frag::{CorruptError, CorruptKind, FragKind, Rendezvous};
use crate::protocol::ring::srb;
use crate::segment::mapping::slot_state;
use crate::sync::Ordering;

/// An answer this core owes a sender (to an announcement, or a synchronous message's
/// acknowledgement, see `synchronous`).
pub(crate) struct Owed {
    /// The sender, to whom the answer goes.
    pub dest: u32,
    pub kind: FragKind,
    pub token: u32,
    /// How it is stamped: an acknowledgement carries the receiver's time.
    pub model: Model,
    /// SRB space reserved for it that did not fit yet (see `progress`).
    pub held: Option<srb::Reservation>,
}

/// An announcement awaiting its answer (or heard and not yet closed).
#[derive(Clone, Copy)]
struct Open {
    token: u32,
    answer: Option<FragKind>,
    /// Made by a queued send (`progress::outbox`), not a blocking one.
    queued: bool,
}

/// Both sides' rendezvous bookkeeping of one core.
#[derive(Default)]
pub(crate) struct Book {
    /// By destination: the open announcements, oldest first (module docs: a blocking
    /// send's alone, or up to `MAX_OPEN` of queued sends).
    announced: Vec<Vec<Open>>,
    next_token: u32,
    /// Answers this core owes, oldest first.
    pub owed: VecDeque<Owed>,
}

/// The most announcements of queued sends open to one destination at a time: a bound
/// on the announcements (ring entries of 32 bytes: a header and
/// [`RENDEZVOUS_BYTES`](crate::protocol::ring::frag::RENDEZVOUS_BYTES)) one sender puts
/// in a receiver's ring, 2 KiB, and on the messages of one sender that a receiver about
/// to wait copies at once (`pull_deferred`). Measured (48 and 8 MPI ranks streaming
/// windows of 64 isends of 64 KiB into one, `docs/bench/2026-11-27-m2o-large`): 16
/// open took 9.2 and 13.5 µs a message, 64 took 7.6 and 7.8.
pub(crate) const MAX_OPEN: usize = 64;

impl Book {
    fn record(&mut self, dest: u32, queued: bool) -> u32 {
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1);
        let i = dest as usize;
        if self.announced.len() <= i {
            self.announced.resize_with(i + 1, Vec::new);
        }
        self.announced[i].push(Open { token, answer: None, queued });
        token
    }

    fn opened(&self, dest: u32) -> &[Open] {
        self.announced.get(dest as usize).map_or(&[], Vec::as_slice)
    }

    /// Records the announcement of a blocking send to `dest`, which must have none
    /// open (`State::may_start`); returns its token.
    pub fn announce(&mut self, dest: u32) -> u32 {
        debug_assert!(!self.open(dest), "a blocking announcement starts alone");
        self.record(dest, false)
    }

    /// Records the announcement of a queued send to `dest`; returns its token.
    pub fn announce_queued(&mut self, dest: u32) -> u32 {
        self.record(dest, true)
    }

    /// Whether an announcement to `dest` is open (answered or not).
    pub fn open(&self, dest: u32) -> bool {
        !self.opened(dest).is_empty()
    }

    /// How many announcements to `dest` are open, and whether one of them is a
    /// blocking send's.
    pub fn open_to(&self, dest: u32) -> (usize, bool) {
        let opened = self.opened(dest);
        (opened.len(), opened.iter().any(|o| !o.queued))
    }

    /// The answer to the blocking send's open announcement to `dest`, once heard.
    pub fn answer(&self, dest: u32) -> Option<FragKind> {
        self.opened(dest).iter().find(|o| !o.queued).and_then(|o| o.answer)
    }

    /// The answer to open announcement `token` to `dest`, once heard.
    pub fn answer_to(&self, dest: u32, token: u32) -> Option<FragKind> {
        self.opened(dest).iter().find(|o| o.token == token).and_then(|o| o.answer)
    }

    /// Closes the blocking send's announcement to `dest` (answered, or given up on an
    /// error).
    pub fn close(&mut self, dest: u32) {
        if let Some(a) = self.announced.get_mut(dest as usize) {
            a.retain(|o| o.queued);
        }
    }

    /// Closes announcement `token` to `dest` (answered, or never sent).
    pub fn close_token(&mut self, dest: u32, token: u32) {
        if let Some(a) = self.announced.get_mut(dest as usize) {
            a.retain(|o| o.token != token);
        }
    }

    /// An answer arrived from `from`. One that names no open announcement (its send
    /// gave up on an error) is dropped.
    pub fn answered(&mut self, from: u32, kind: FragKind, token: u32) {
        let open = self.announced.get_mut(from as usize).and_then(|a| a.iter_mut().find(|o| o.token == token));
        if let Some(o) = open {
            o.answer = Some(kind);
        }
    }

    /// This core owes `dest` an answer, stamped as `model` says.
    pub fn owe(&mut self, dest: u32, (kind, token): (FragKind, u32), model: Model) {
        self.owed.push_back(Owed { dest, kind, token, model, held: None });
    }
}

impl Ctx<'_> {
    /// Sends the answers this core owes, oldest first, as far as the channels take
    /// them now; true if any left. The acknowledgement of a synchronous message to
    /// this core itself is recorded without a channel.
    #[inline]
    pub fn push_answers(&self, inbox: &mut Inbox) -> Result<bool, Fail> {
        // Every receive and send asks; almost always nothing is owed.
        if inbox.rdv.owed.is_empty() {
            return Ok(false);
        }
        self.push_owed(inbox)
    }

    fn push_owed(&self, inbox: &mut Inbox) -> Result<bool, Fail> {
        let mut any = false;
        let mut i = 0;
        while let Some(o) = inbox.rdv.owed.get_mut(i) {
            if o.dest == self.rank {
                debug_assert_eq!(o.kind, FragKind::SyncAck, "only synchronous sends go to oneself");
                let (number, at) = (o.token, if let Model::Timed { at } = o.model { at } else { 0 });
                inbox.rdv.owed.remove(i);
                inbox.sync.acknowledged(self.rank, number, at);
                any = true;
                continue;
            }
            let frag = Frag { tag: o.token, total: 0, first: true, kind: o.kind };
            match self.push(o.dest, (frag, false), &[], &mut o.held, o.model)? {
                Some(_) => {
                    inbox.rdv.owed.remove(i);
                    any = true;
                }
                // Answers need no order: try the others.
                None => i += 1,
            }
        }
        Ok(any)
    }

    /// Copies every deferred announced message into memory the inbox owns and answers
    /// its sender: this core is about to wait (module docs). True if any was copied.
    pub fn pull_deferred(&self, st: &mut State) -> Result<bool, Fail> {
        if !st.inbox.has_deferred() {
            return Ok(false);
        }
        st.inbox.pull_deferred(self)?;
        self.push_answers(&mut st.inbox)?;
        Ok(true)
    }

    fn corrupt_announcement(&self, src: u32, addr: u64, errno: i32) -> Fail {
        Fail::Corrupt(CorruptError {
            channel: "rendezvous",
            owner: self.rank,
            position: src,
            kind: CorruptKind::BadRendezvousAddress { addr, errno },
        })
    }
}

impl Pull for Ctx<'_> {
    fn pull(&self, src: u32, at: Rendezvous, dst: &mut [u8]) -> Result<(), PullError> {
        // Relaxed: written at the sender's attach, before it could send anything; the
        // channel's Acquire that saw the announcement orders it.
        let slot = self.seg.slot(src);
        let pid = slot.pid.load(Ordering::Relaxed);
        // A sender gives up on an announced send only when the job aborts, and may then
        // reuse or free its buffer, finalize and exit before this read. Its abort was
        // visible before it gave up, so a check after the read reports the abort rather
        // than the bytes read, the fault or the missing process.
        let aborted = || self.waiter.job().check().map_err(|e| PullError::Fail(Fail::Aborted(e)));
        match cma::read(pid, at.addr, dst) {
            Ok(()) => aborted(),
            Err(ReadError::Refused) => Err(PullError::Refused),
            Err(ReadError::Fault(errno)) => {
                aborted()?;
                Err(PullError::Fail(self.corrupt_announcement(src, at.addr, errno)))
            }
            Err(ReadError::Gone) => {
                aborted()?;
                // Relaxed: a diagnosis; a sender that finalized while its send was
                // still announced, with the job running, broke the protocol.
                if slot.state.load(Ordering::Relaxed) == slot_state::FINALIZED {
                    return Err(PullError::Fail(self.corrupt_announcement(src, at.addr, nix::errno::Errno::ESRCH as i32)));
                }
                // It died: the launcher aborts the job, naming it, and rings us.
                let own = &self.seg.slot(self.rank).bell;
                let aborted = self.waiter.wait_until(own, || None::<()>);
                Err(PullError::Fail(Fail::Aborted(aborted.expect_err("only an abort ends this wait"))))
            }
        }
    }
}
