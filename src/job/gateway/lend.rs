//! The receiving gateway's half of a large message from another node: it announces the
//! message to the receiver as a rendezvous from the sender, and the receiver copies it
//! straight out of the gateway's memory.
//!
//! A whole frame (`frame`: a message its sending gateway read out of its sender,
//! `pull`) reaches the front of its destination's queue. The gateway then publishes,
//! in its place, a [`FragKind::Rendezvous`] fragment from the message's source, with
//! the address of the frame's bytes in this process and a token of its own, and keeps
//! the bytes (a [`Loan`]). The receiver matches it like any announcement
//! (`p2p::rendezvous`): it reads the source's pid in its control slot, which in this
//! node's segment is a stand-in that the gateway filled with its own pid
//! ([`Lender::new`]), copies the bytes with one `process_vm_readv` into the receive's
//! buffer, and answers the source through the stand-in channel. The gateway drains that
//! channel, finds the answer (`channel`) and ends the loan ([`Lender::answered`]).
//!
//! Invariants:
//! - a pair (source, destination) has at most one loan, and while it has one nothing
//!   more of that pair is published ([`Lender::waits`]): a receiver never holds two
//!   announcements of one sender, and a refused announcement's continuations come next
//!   from that sender, as the rendezvous protocol requires. The destination's other
//!   sources wait behind it in the queue, as they would behind a full ring; the
//!   receiver answers every announcement before it waits (`p2p::rendezvous`), so the
//!   wait ends;
//! - a loan's bytes are neither moved nor freed until its answer: the announcement
//!   names their address. A loan to a rank that has left is dropped with its queue;
//! - refused (the receiver may not read this process, `EPERM`): the announcement was
//!   the first fragment of an ordinary message, and the loan's bytes go as its
//!   continuations, ahead of anything else of the pair; from then on the gateway
//!   announces no more and cuts whole frames into ring-sized fragments.
//!
//! Virtual time: the announcement carries the whole frame's stamp, which arrived with
//! the link's cost of the whole message: its last fragment's, had it come in pieces.

use std::collections::HashMap;

use crate::job::node::NodeSpec;
use crate::protocol::ring::frag::{FragHeader, FragKind, RENDEZVOUS_BYTES, Rendezvous};
use crate::segment::mapping::Segment;
use crate::sync::Ordering;

use super::frame::Frame;

/// A message lent to its receiver: its announcement's token, and the frame whose bytes
/// it reads.
struct Loan {
    token: u32,
    frame: Frame,
}

/// The loans of one gateway (module docs).
pub(super) struct Lender {
    /// By (source, destination).
    loans: HashMap<(u32, u32), Loan>,
    next_token: u32,
    /// False once a receiver was refused the copy: whole frames are cut instead.
    readable: bool,
}

impl Lender {
    /// Writes this process's pid into the control slot of every other node's rank (the
    /// stand-ins a receiver reads an announcement's source from) and lets this node's
    /// ranks, its children, read its memory where Yama would not (as `p2p::cma` does
    /// for each rank).
    pub(super) fn new(seg: &Segment, spec: &NodeSpec) -> Lender {
        for rank in (0..spec.cores).filter(|&r| !spec.is_local(r)) {
            // Relaxed: a receiver reads it only after an announcement of this gateway,
            // published with a Release store after this one.
            seg.slot(rank).pid.store(std::process::id(), Ordering::Relaxed);
        }
        // Best effort: without it, under Yama's scope 1, receivers are refused the copy
        // and the gateway falls back to fragments (module docs).
        let _ = rustix::process::set_ptracer(rustix::process::PTracer::Any);
        Lender { loans: HashMap::new(), next_token: 0, readable: true }
    }

    /// Whether `(src, dest)` has a loan: nothing more of the pair may be published.
    pub(super) fn waits(&self, src: u32, dest: u32) -> bool {
        self.loans.contains_key(&(src, dest))
    }

    /// Whether whole frames are announced (else cut, [`cut`]).
    pub(super) fn readable(&self) -> bool {
        self.readable
    }

    /// Whether any loan waits for its answer.
    pub(super) fn lending(&self) -> bool {
        !self.loans.is_empty()
    }

    /// The announcement of the whole frame `whole` and its token.
    pub(super) fn announcement(&self, whole: &Frame) -> (Frame, u32) {
        let token = self.next_token;
        let at = Rendezvous { addr: whole.payload.as_ptr() as u64, token };
        let header = FragHeader { len: RENDEZVOUS_BYTES, kind: FragKind::Rendezvous, ..whole.header };
        // The loan keeps the whole frame's charge (`credit`) until its answer.
        let payload = at.to_bytes().to_vec();
        let frame = Frame { dest: whole.dest, header, stamp: whole.stamp, whole: false, payload, charge: 0 };
        (frame, token)
    }

    /// The announcement of `whole` with `token` was published: its bytes are lent.
    pub(super) fn lend(&mut self, whole: Frame, token: u32) {
        debug_assert_eq!(token, self.next_token);
        self.next_token = self.next_token.wrapping_add(1);
        self.loans.insert((whole.header.src, whole.dest), Loan { token, frame: whole });
    }

    /// Takes `answer`, a receiver's answer to an announcement of this gateway (a frame
    /// for the announced message's source). Refused: the message's continuations, of
    /// at most `max_payload` bytes each, to publish next for the pair. With them, the
    /// charge (`credit`) of the pair's flow that left this gateway with the loan: all
    /// of it once the receiver copied the bytes, none while continuations carry it. An
    /// answer to no loan of this gateway is an error.
    pub(super) fn answered(&mut self, answer: &Frame, max_payload: u32) -> Result<(Vec<Frame>, u32), String> {
        let (src, dest) = (answer.dest, answer.header.src);
        let bad = || format!("rank {dest} answered an announcement from rank {src} that it did not get");
        let loan = self.loans.remove(&(src, dest)).ok_or_else(bad)?;
        if loan.token != answer.header.tag {
            return Err(bad());
        }
        match answer.header.kind {
            FragKind::Done => Ok((Vec::new(), loan.frame.charge)),
            _ => {
                self.readable = false;
                let mut rest = cut(loan.frame, max_payload);
                // The announcement was the message's first fragment, with no bytes (and
                // the charge, if nothing follows it).
                let first = rest.remove(0);
                Ok((rest, first.charge))
            }
        }
    }

    /// Drops the loans to rank `dest`, which has left: their frames.
    pub(super) fn forget(&mut self, dest: u32) -> Vec<Frame> {
        let gone: Vec<(u32, u32)> = self.loans.keys().copied().filter(|&(_, d)| d == dest).collect();
        gone.into_iter().filter_map(|key| self.loans.remove(&key)).map(|loan| loan.frame).collect()
    }
}

/// The fragments of a whole frame's message, of at most `max_payload` bytes each: a
/// first one with no bytes, then the continuations (as a refused announcement's).
/// Announce-less, the first fragment is kept and the bytes follow it. The last carries
/// the whole frame's charge (`credit`): the flow drains once all have left.
pub(super) fn cut(whole: Frame, max_payload: u32) -> Vec<Frame> {
    let h = whole.header;
    let first = Frame { payload: Vec::new(), whole: false, header: FragHeader { len: 0, ..h }, charge: 0, ..whole };
    let rest = whole.payload.chunks(max_payload.max(1) as usize).map(|chunk| Frame {
        dest: whole.dest,
        header: FragHeader::data(h.src, h.tag, chunk.len() as u32, h.total, false),
        stamp: whole.stamp,
        whole: false,
        payload: chunk.to_vec(),
        charge: 0,
    });
    let mut parts: Vec<Frame> = std::iter::once(first).chain(rest).collect();
    parts.last_mut().expect("a first fragment").charge = whole.charge;
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(src: u32, dest: u32, len: u32) -> Frame {
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        Frame { dest, header: FragHeader::data(src, 7, len, len, true), stamp: 5, whole: true, payload, charge: 9 }
    }

    fn answer(src: u32, dest: u32, token: u32, kind: FragKind) -> Frame {
        let header = FragHeader { src: dest, tag: token, len: 0, total: 0, first: true, kind };
        Frame { dest: src, header, stamp: 0, whole: false, payload: Vec::new(), charge: 0 }
    }

    #[test]
    fn a_whole_message_is_cut_into_an_empty_first_fragment_and_continuations() {
        let parts = cut(whole(3, 1, 10), 4);
        let shape: Vec<_> = parts.iter().map(|f| (f.header.len, f.header.first, f.header.total, f.payload.len())).collect();
        assert_eq!(shape, [(0, true, 10, 0), (4, false, 10, 4), (4, false, 10, 4), (2, false, 10, 2)]);
        assert!(parts.iter().all(|f| !f.whole && f.stamp == 5 && f.dest == 1 && f.header.src == 3));
        let charges: Vec<_> = parts.iter().map(|f| f.charge).collect();
        assert_eq!(charges, [0, 0, 0, 9], "the last carries the charge");
        assert_eq!(parts[3].payload, [8, 9]);
    }

    #[test]
    fn a_loan_holds_its_pair_until_the_answer_and_a_refusal_sends_the_bytes() {
        let mut lender = Lender { loans: HashMap::new(), next_token: 0, readable: true };
        let first = whole(3, 1, 10);
        let (announcement, token) = lender.announcement(&first);
        assert_eq!(announcement.header.kind, FragKind::Rendezvous);
        assert_eq!((announcement.header.src, announcement.header.total, announcement.stamp), (3, 10, 5));
        let at = Rendezvous::from_bytes(&announcement.payload);
        assert_eq!((at.addr, at.token), (first.payload.as_ptr() as u64, token));
        lender.lend(first, token);
        assert!(lender.waits(3, 1) && !lender.waits(2, 1) && lender.lending());
        assert!(lender.answered(&answer(3, 1, token + 1, FragKind::Done), 4).is_err(), "another token");

        let mut lender = Lender { loans: HashMap::new(), next_token: 0, readable: true };
        lender.lend(whole(3, 1, 10), 0);
        assert_eq!(lender.answered(&answer(3, 1, 0, FragKind::Done), 4).unwrap(), (Vec::new(), 9));
        assert!(!lender.waits(3, 1) && lender.readable());
        assert!(lender.answered(&answer(3, 1, 0, FragKind::Done), 4).is_err(), "no loan");

        let (_, token) = lender.announcement(&whole(3, 1, 10));
        lender.lend(whole(3, 1, 10), token);
        let (rest, freed) = lender.answered(&answer(3, 1, token, FragKind::Refused), 4).unwrap();
        let lens: Vec<_> = rest.iter().map(|f| (f.header.len, f.header.first, f.charge)).collect();
        assert_eq!(lens, [(4, false, 0), (4, false, 0), (2, false, 9)]);
        assert_eq!(freed, 0, "the continuations carry the charge");
        assert!(!lender.readable() && !lender.lending());

        for (src, dest) in [(3, 2), (4, 1)] {
            let (_, token) = lender.announcement(&whole(src, dest, 10));
            lender.lend(whole(src, dest, 10), token);
        }
        let gone: Vec<_> = lender.forget(2).into_iter().map(|f| (f.header.src, f.dest, f.charge)).collect();
        assert_eq!(gone, [(3, 2, 9)], "a rank that left: its loans' frames, with their charges");
        assert!(lender.waits(4, 1));
    }
}
