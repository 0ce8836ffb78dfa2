//! Synchronous sends (`MPI_Ssend`): a send that completes only once a receive has
//! matched its message, acknowledged by the receiver's engine at the match.
//!
//! Protocol:
//! 1. the sender numbers its synchronous messages per destination (0, 1, 2, ...,
//!    wrapping), in the order their first fragments enter the channel. That is the
//!    order of the calls: a message to a destination starts only when the previous
//!    one has left whole (`State::may_start`), queued ones too;
//! 2. the first fragment is a [`FragKind::SyncData`]; the receiver numbers these per
//!    source in arrival order. Channels are FIFO per pair, so both sides give a
//!    message the same number without sending it;
//! 3. a receive *matches* the message when the message is assigned to a posted
//!    receive or taken by the receive running in the call, as it arrives, or later
//!    when a receive takes it out of the arrived queue. Whichever happens first, the
//!    receiver then owes the sender a [`FragKind::SyncAck`] naming the number, sent
//!    with the single-copy answers (`rendezvous`), which need no order. A receive that
//!    finds the message too long for its buffer has not matched it: the message stays
//!    queued, unacknowledged, for the receive that takes it;
//! 4. the sender's engine records the acknowledgement when it drains it; the send
//!    completes when its bytes have left and its acknowledgement is in.
//!
//! In virtual time the acknowledgement carries the receiver's time at the match (not
//! earlier than the message's), and the completing sender reaches it (`timed`).
//!
//! Invariants: every number is acknowledged at most once (the message forgets it
//! when it owes the answer); an acknowledgement for a send nobody waits for any more
//! (its request was dropped) is ignored. The receiver acknowledges from any call that
//! drains its channel, including the background progress of barriers, fences and
//! other blocking calls (`engine`), so a receiver blocked elsewhere after posting the
//! receive still lets the sender go on, as MPI's progress rule asks. A message to
//! oneself takes the same path without a channel: the answer is recorded directly.
//!
//! [`FragKind::SyncData`]: crate::protocol::ring::frag::FragKind::SyncData
//! [`FragKind::SyncAck`]: crate::protocol::ring::frag::FragKind::SyncAck

use rustc_hash::FxHashMap;

/// Both sides' bookkeeping of synchronous messages on one core.
#[derive(Default)]
pub(crate) struct SyncBook {
    /// By destination: the number of the next synchronous message sent to it.
    next_out: Vec<u32>,
    /// By source: the number of the next synchronous message that arrives from it.
    next_in: Vec<u32>,
    /// Sends that wait for their acknowledgement, by (destination, number): its
    /// virtual time once it came (0 outside virtual time).
    awaiting: FxHashMap<(u32, u32), Option<u64>>,
}

fn next(counters: &mut Vec<u32>, rank: u32) -> u32 {
    let i = rank as usize;
    if counters.len() <= i {
        counters.resize(i + 1, 0);
    }
    let n = counters[i];
    counters[i] = n.wrapping_add(1);
    n
}

impl SyncBook {
    /// A synchronous message to `dest` starts (its first fragment is the next to enter
    /// the channel to `dest`): its number, now awaited.
    pub fn start(&mut self, dest: u32) -> u32 {
        let n = next(&mut self.next_out, dest);
        self.awaiting.insert((dest, n), None);
        n
    }

    /// A synchronous message from `src` arrives: its number.
    pub fn arrived(&mut self, src: u32) -> u32 {
        next(&mut self.next_in, src)
    }

    /// `dest` acknowledged message `number` at virtual time `at`; an acknowledgement
    /// nobody awaits is dropped.
    pub fn acknowledged(&mut self, dest: u32, number: u32, at: u64) {
        if let Some(acked) = self.awaiting.get_mut(&(dest, number)) {
            *acked = Some(at);
        }
    }

    /// The virtual time of the acknowledgement of message `number` to `dest`, once it
    /// came; then forgets the message.
    pub fn take(&mut self, dest: u32, number: u32) -> Option<u64> {
        let at = self.awaiting.get(&(dest, number)).copied().flatten();
        if at.is_some() {
            self.awaiting.remove(&(dest, number));
        }
        at
    }

    /// Nobody waits for message `number` to `dest` any more (its send gave up or was
    /// dropped).
    pub fn forget(&mut self, dest: u32, number: u32) {
        self.awaiting.remove(&(dest, number));
    }
}

#[cfg(test)]
mod tests {
    use super::SyncBook;

    #[test]
    fn numbers_are_per_peer_and_acknowledged_once() {
        let mut b = SyncBook::default();
        assert_eq!((b.start(3), b.start(3), b.start(1)), (0, 1, 0));
        assert_eq!((b.arrived(3), b.arrived(3), b.arrived(2)), (0, 1, 0));
        assert_eq!(b.take(3, 1), None);
        b.acknowledged(3, 1, 40);
        b.acknowledged(3, 7, 50);
        assert_eq!(b.take(3, 1), Some(40));
        assert_eq!(b.take(3, 1), None);
        assert_eq!(b.take(3, 0), None);
        b.forget(3, 0);
        b.acknowledged(3, 0, 60);
        assert!(!b.awaiting.contains_key(&(3, 0)));
        assert_eq!(b.take(1, 0), None);
    }
}
