//! Announced messages (see `rendezvous`): copying them out of their senders' memory,
//! straight into the receive that takes them or, before the core waits, into memory
//! the inbox owns; and what a refused copy turns them into (an ordinary message whose
//! bytes the sender then sends as continuations, set aside until they come).

use crate::p2p::endpoint::Status;
use crate::p2p::progress::Fail;
use crate::p2p::timed::Model;
use crate::protocol::ring::frag::{FragKind, Rendezvous};

use super::{Assembly, Inbox, Msg, Sink, Target, TargetState};

/// Copies a message announced for the single-copy path out of its sender's memory
/// (the progress engine's context, with `cma`).
pub(crate) trait Pull {
    /// Copies message `at` of core `src` into `dst`, its whole length.
    fn pull(&self, src: u32, at: Rendezvous, dst: &mut [u8]) -> Result<(), PullError>;
}

/// Why a pull did not copy.
pub(crate) enum PullError {
    /// The kernel refused: the sender must send the bytes through the channel.
    Refused,
    /// The job aborted, or the announcement was corrupted.
    Fail(Fail),
}

impl Inbox {
    /// Copies announced message `at` straight into the target (Direct, nothing filled
    /// yet) and owes its sender the answer. Refused: the sender sends the bytes, which
    /// fill the target as continuations. On a failure the target is Open again and,
    /// if `requeue` (the message came from a queue), the message is back in its place.
    pub(super) fn pull_into_target(&mut self, t: &mut Target<'_>, at: Rendezvous, pull: &dyn Pull, requeue: bool) -> Result<(), Fail> {
        let TargetState::Direct { status, seq, .. } = t.state else { unreachable!("a direct target") };
        let src = status.source;
        match pull.pull(src, at, &mut t.buf[..status.len]) {
            Ok(()) => {
                t.state = TargetState::Done(status);
                self.rdv.owe(src, (FragKind::Done, at.token), Model::Untimed);
                Ok(())
            }
            Err(PullError::Refused) => {
                self.refuse(src, seq, Sink::Direct, &status);
                self.rdv.owe(src, (FragKind::Refused, at.token), Model::Untimed);
                Ok(())
            }
            Err(PullError::Fail(f)) => {
                t.state = TargetState::Open;
                if requeue {
                    self.deferred += 1;
                    let msg = Msg { seq, status, data: Vec::new(), remote: Some(at), sync: None };
                    match t.id {
                        Some(id) => {
                            self.assigned.insert(id, msg);
                        }
                        None => self.arrived.insert(msg),
                    }
                }
                Err(f)
            }
        }
    }

    /// Copies every announced message still in its sender's memory into memory the
    /// inbox owns, owing each sender its answer (see `rendezvous`).
    pub fn pull_deferred(&mut self, pull: &dyn Pull) -> Result<(), Fail> {
        let remote = |(&k, m): (&u64, &Msg)| m.remote.is_some().then_some(k);
        let arrived: Vec<u64> = self.arrived.iter().filter(|m| m.remote.is_some()).map(|m| m.seq).collect();
        let assigned: Vec<u64> = self.assigned.iter().filter_map(remote).collect();
        let keys = arrived.into_iter().map(Sink::Arrived).chain(assigned.into_iter().map(Sink::Assigned));
        for sink in keys {
            let status = self.msg(sink).status;
            // The length is the announcement's, which the sender's memory backs: a lie
            // fails the pull (`cma`).
            let mut data = self.spare.take(status.len);
            data.resize(status.len, 0);
            let msg = self.msg(sink);
            let at = msg.remote.expect("listed above");
            let answer = match pull.pull(status.source, at, &mut data) {
                Ok(()) => {
                    msg.data = data;
                    FragKind::Done
                }
                Err(PullError::Refused) => {
                    data.clear();
                    msg.data = data;
                    FragKind::Refused
                }
                Err(PullError::Fail(f)) => return Err(f),
            };
            msg.remote = None;
            self.deferred -= 1;
            if answer == FragKind::Refused {
                let seq = self.msg(sink).seq;
                self.refuse(status.source, seq, sink, &status);
            }
            self.rdv.owe(status.source, (answer, at.token), Model::Untimed);
        }
        Ok(())
    }

    /// The copy of announced message `seq` of `src`, now at `sink`, was refused: its
    /// bytes follow as continuation fragments, in the order of its sender's
    /// announcements (see `rendezvous`).
    pub(super) fn refuse(&mut self, src: u32, seq: u64, sink: Sink, status: &Status) {
        let a = Assembly { sink, tag: status.tag, total: status.len, filled: 0 };
        self.refused.push((src, seq, a));
    }

    /// A continuation fragment of `src` with no message assembling: the earliest
    /// refused message of `src` becomes the assembly. Its sender sends the refused
    /// messages' bytes in the order it announced them, each once it heard its refusal,
    /// and after the bytes of any earlier one: so every refused message of `src` that
    /// arrived earlier has its bytes already (see `rendezvous`).
    pub(super) fn resume_refused(&mut self, src: u32) {
        let earliest = self.refused.iter().enumerate().filter(|(_, r)| r.0 == src).min_by_key(|(_, r)| r.1);
        if let Some((i, _)) = earliest {
            let (_, _, a) = self.refused.swap_remove(i);
            *self.slot(src) = Some(a);
        }
    }
}
