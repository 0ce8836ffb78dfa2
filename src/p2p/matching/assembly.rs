//! Fragments into messages: what each fragment that comes out of a channel does to the
//! inbox. A first fragment, or an announcement, is matched (`Inbox::place`, in the
//! parent module) and opens its source's *assembly*: where the message's bytes go (the
//! running receive's buffer, a posted receive's message or an arrived one) and how many
//! have come. Continuation fragments fill it, in order, until the message is whole.
//! Answers to announcements and acknowledgements of synchronous messages go to their
//! books. When a receive takes or puts back a message still arriving, its assembly
//! follows it ([`Inbox::retarget`]).
//!
//! Invariants (each breach is a [`CorruptError`], never trusted):
//! - at most one assembly per source: fragments of one source come in order, and a
//!   sender never interleaves two messages' fragments, so a first fragment or an
//!   announcement while one is open is `MessageInterrupted`;
//! - a continuation carries its assembly's tag (else `StrayContinuation`) and stays
//!   within its message's length (else `FragmentPastMessage`);
//! - a continuation with no assembly open fills the earliest refused announced message
//!   of its source (`pull`), which becomes the assembly.

use crate::p2p::endpoint::Status;
use crate::p2p::progress::Fail;
use crate::protocol::ring::frag::{CorruptError, CorruptKind, FragHeader, FragKind, RENDEZVOUS_BYTES, Rendezvous};

use super::{Inbox, Pull, Sink, Target, TargetState};

/// The message being assembled from one source.
#[derive(Clone, Copy)]
pub(super) struct Assembly {
    pub(super) sink: Sink,
    pub(super) tag: u32,
    pub(super) total: usize,
    pub(super) filled: usize,
}

impl Inbox {
    /// The assembly slot of a source.
    pub(super) fn slot(&mut self, src: u32) -> &mut Option<Assembly> {
        let i = src as usize;
        if self.assembling.len() <= i {
            self.assembling.resize(i + 1, None);
        }
        &mut self.assembling[i]
    }

    /// A partial message of `src` moved: its assembly, or its refused record, follows.
    pub(super) fn retarget(&mut self, src: u32, from: Sink, to: Sink) {
        if let Some(a) = self.slot(src).as_mut().filter(|a| a.sink == from) {
            a.sink = to;
            return;
        }
        if let Some((_, _, a)) = self.refused.iter_mut().find(|(s, _, a)| *s == src && a.sink == from) {
            a.sink = to;
        }
    }

    /// Delivers one fragment; `read(dst)` copies its payload bytes. `stamp` is its
    /// sender's virtual time (0 outside virtual time): the message's is its latest
    /// fragment's. An announcement is matched like a first fragment and, if the
    /// target takes it, pulled at once; an answer goes to the rendezvous book.
    pub fn deliver(
        &mut self,
        h: &FragHeader,
        target: Option<&mut Target<'_>>,
        read: impl FnOnce(&mut [u8]),
        corrupt: impl Fn(CorruptKind) -> CorruptError,
        (stamp, pull): (u64, &dyn Pull),
    ) -> Result<(), Fail> {
        match h.kind {
            FragKind::Data | FragKind::SyncData => {
                let sync = (h.kind == FragKind::SyncData).then(|| self.sync.arrived(h.src));
                Ok(self.deliver_data(h, target, read, corrupt, (stamp, sync))?)
            }
            FragKind::Done | FragKind::Refused => {
                self.rdv.answered(h.src, h.kind, h.tag);
                Ok(())
            }
            FragKind::SyncAck => {
                self.sync.acknowledged(h.src, h.tag, stamp);
                Ok(())
            }
            FragKind::Rendezvous => {
                let src = h.src;
                if self.slot(src).is_some() {
                    return Err(corrupt(CorruptKind::MessageInterrupted { src }).into());
                }
                let mut desc = [0u8; RENDEZVOUS_BYTES as usize];
                read(&mut desc);
                let at = Rendezvous::from_bytes(&desc);
                let status = Status { source: src, tag: h.tag, len: h.total as usize, vtime: stamp };
                let mut target = target;
                match (self.place(status, target.as_deref_mut(), Some(at), None), target) {
                    (Sink::Direct, Some(t)) => self.pull_into_target(t, at, pull, false),
                    _ => Ok(()),
                }
            }
        }
    }

    /// A whole message of this core to itself: one copy, into memory of the receive it
    /// goes to (posted, or the arrived queue's); never through a channel. `sync`: the
    /// number of a synchronous one.
    pub fn deliver_own(&mut self, h: &FragHeader, data: &[u8], (stamp, sync): (u64, Option<u32>)) {
        let status = Status { source: h.src, tag: h.tag, len: data.len(), vtime: stamp };
        let sink = self.place(status, None, None, sync);
        self.msg(sink).data.extend_from_slice(data);
    }

    /// A message whole in its first fragment (the usual small one): placed and filled
    /// at once, without opening its source's assembly, which it would close again
    /// before returning. The same checks and outcome as the general path.
    #[inline]
    fn deliver_whole(
        &mut self,
        h: &FragHeader,
        target: Option<&mut Target<'_>>,
        read: impl FnOnce(&mut [u8]),
        corrupt: impl Fn(CorruptKind) -> CorruptError,
        (stamp, sync): (u64, Option<u32>),
    ) -> Result<(), CorruptError> {
        let src = h.src;
        if self.assembling.get(src as usize).is_some_and(Option::is_some) {
            return Err(corrupt(CorruptKind::MessageInterrupted { src }));
        }
        let len = h.len as usize;
        let status = Status { source: src, tag: h.tag, len, vtime: stamp };
        let mut target = target;
        match self.place(status, target.as_deref_mut(), None, sync) {
            Sink::Direct => {
                let t = target.expect("direct delivery only within its call");
                read(&mut t.buf[..len]);
                t.state = TargetState::Done(status);
            }
            sink => {
                let msg = self.msg(sink);
                msg.data.resize(len, 0);
                read(&mut msg.data);
            }
        }
        Ok(())
    }

    #[inline]
    fn deliver_data(
        &mut self,
        h: &FragHeader,
        target: Option<&mut Target<'_>>,
        read: impl FnOnce(&mut [u8]),
        corrupt: impl Fn(CorruptKind) -> CorruptError,
        (stamp, sync): (u64, Option<u32>),
    ) -> Result<(), CorruptError> {
        let src = h.src;
        let len = h.len as usize;
        let mut target = target;
        if h.first && h.len == h.total {
            return self.deliver_whole(h, target, read, corrupt, (stamp, sync));
        }
        if h.first {
            if self.slot(src).is_some() {
                return Err(corrupt(CorruptKind::MessageInterrupted { src }));
            }
            let status = Status { source: src, tag: h.tag, len: h.total as usize, vtime: stamp };
            let sink = self.place(status, target.as_deref_mut(), None, sync);
            *self.slot(src) = Some(Assembly { sink, tag: h.tag, total: status.len, filled: 0 });
        } else if self.slot(src).is_none() {
            self.resume_refused(src);
        }
        let Some(a) = (*self.slot(src)).filter(|a| a.tag == h.tag) else {
            return Err(corrupt(CorruptKind::StrayContinuation { src }));
        };
        if a.filled + len > a.total {
            return Err(corrupt(CorruptKind::FragmentPastMessage { len: h.len, total: a.total as u32 }));
        }
        let filled = a.filled + len;
        match a.sink {
            Sink::Direct => {
                let t = target.expect("direct delivery only within its call");
                read(&mut t.buf[a.filled..filled]);
                let TargetState::Direct { mut status, seq, .. } = t.state else { unreachable!("direct target") };
                status.vtime = status.vtime.max(stamp);
                t.state = if filled == a.total {
                    TargetState::Done(status)
                } else {
                    TargetState::Direct { status, filled, seq }
                };
            }
            Sink::Arrived(seq) | Sink::Assigned(seq) => {
                let msg = match a.sink {
                    Sink::Arrived(_) => self.arrived.get_mut(seq),
                    _ => self.assigned.get_mut(&seq),
                }
                .expect("assembling message exists");
                msg.status.vtime = msg.status.vtime.max(stamp);
                msg.data.resize(filled, 0);
                read(&mut msg.data[a.filled..filled]);
            }
        }
        if filled == a.total {
            *self.slot(src) = None;
        } else {
            self.slot(src).as_mut().expect("present").filled = filled;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p2p::matching::PullError;
    use crate::p2p::progress::Fail;

    struct NoPull;
    impl Pull for NoPull {
        fn pull(&self, _: u32, _: Rendezvous, _: &mut [u8]) -> Result<(), PullError> {
            Err(PullError::Refused)
        }
    }

    fn data(src: u32, (len, total): (u32, u32), first: bool) -> FragHeader {
        FragHeader { src, tag: 5, len, total, first, kind: FragKind::Data }
    }

    fn deliver(inbox: &mut Inbox, h: FragHeader, byte: u8) -> Result<(), Fail> {
        let corrupt = |kind| CorruptError { channel: "srb", owner: 0, position: 0, kind };
        inbox.deliver(&h, None, |d: &mut [u8]| d.fill(byte), corrupt, (0, &NoPull))
    }

    #[test]
    fn a_whole_message_inside_an_open_one_is_a_corruption_and_changes_nothing() {
        let mut inbox = Inbox::default();
        deliver(&mut inbox, data(1, (4, 8), true), 1).map_err(|_| "first half").unwrap();
        let interrupted = deliver(&mut inbox, data(1, (3, 3), true), 2);
        assert!(matches!(
            interrupted,
            Err(Fail::Corrupt(CorruptError { kind: CorruptKind::MessageInterrupted { src: 1 }, .. }))
        ));
        // Another source's whole message and the open one's rest still arrive.
        deliver(&mut inbox, data(2, (3, 3), true), 3).map_err(|_| "other source").unwrap();
        deliver(&mut inbox, data(1, (4, 8), false), 4).map_err(|_| "second half").unwrap();
        let mut buf = [0u8; 8];
        let mut t = Target { id: None, src: 1.into(), tag: 5.into(), buf: &mut buf, state: TargetState::Open };
        inbox.start(&mut t, &NoPull).map_err(|_| "start").unwrap();
        assert_eq!((t.state, buf), (TargetState::Done(Status { source: 1, tag: 5, len: 8, vtime: 0 }), [1, 1, 1, 1, 4, 4, 4, 4]));
        let mut small = [0u8; 3];
        let mut t = Target { id: None, src: 2.into(), tag: 5.into(), buf: &mut small, state: TargetState::Open };
        inbox.start(&mut t, &NoPull).map_err(|_| "start").unwrap();
        assert_eq!(small, [3; 3]);
    }
}
