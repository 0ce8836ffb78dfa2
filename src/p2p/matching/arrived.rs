//! The arrived queue: messages that no receive holds yet, in arrival order.
//!
//! Invariant: the messages are sorted by their arrival number (`Msg::seq`), strictly
//! increasing from the front. Numbers are handed out as messages arrive, so a new
//! message goes at the back; one that a receive gives back (too small a buffer, a
//! cancelled or spilled receive) goes back in at its place, found by binary search.
//! So the earliest matching message is the first one found from the front, and
//! removing a message keeps the order of the rest.
//!
//! A double-ended queue rather than a map by number: the common operations, a new
//! message at the back and the receive that takes the front one, are then a move
//! each, with no node to allocate or rebalance; a lookup by number is still
//! logarithmic, and a removal from the middle moves the entries behind it, which a
//! match from the middle has already scanned past.

use std::collections::VecDeque;

use super::{Msg, matches};
use crate::p2p::endpoint::{Source, TagMatch};

/// See the module docs.
#[derive(Default)]
pub(super) struct Arrived(VecDeque<Msg>);

impl Arrived {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Msg> {
        self.0.iter()
    }

    /// Where the earliest message that (`src`, `tag`) matches is.
    pub fn first_match(&self, src: Source, tag: TagMatch) -> Option<usize> {
        self.0.iter().position(|m| matches(src, tag, &m.status))
    }

    /// The message at `at` (from [`Arrived::first_match`]).
    pub fn at(&self, at: usize) -> &Msg {
        &self.0[at]
    }

    /// Takes the message at `at` (from [`Arrived::first_match`]) out.
    pub fn take(&mut self, at: usize) -> Msg {
        let taken = if at == 0 { self.0.pop_front() } else { self.0.remove(at) };
        taken.expect("a message at this place")
    }

    /// The message numbered `seq`, if it is here: usually the newest, which its
    /// fragments fill as they arrive.
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut Msg> {
        let at = match self.0.back() {
            Some(last) if last.seq == seq => self.0.len() - 1,
            _ => self.0.binary_search_by_key(&seq, |m| m.seq).ok()?,
        };
        self.0.get_mut(at)
    }

    /// Puts `msg` in at its place by number.
    pub fn insert(&mut self, msg: Msg) {
        match self.0.back() {
            Some(last) if last.seq > msg.seq => {
                let at = self.0.binary_search_by_key(&msg.seq, |m| m.seq).unwrap_err();
                self.0.insert(at, msg);
            }
            _ => self.0.push_back(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Arrived, Msg};
    use crate::p2p::endpoint::{Source, Status, TagMatch};

    fn msg(seq: u64, tag: u32) -> Msg {
        Msg { seq, status: Status { source: 0, tag, len: 0, vtime: 0 }, data: Vec::new(), remote: None, sync: None }
    }

    #[test]
    fn messages_given_back_return_to_their_place() {
        let mut q = Arrived::default();
        for seq in [1, 4, 6] {
            q.insert(msg(seq, 7));
        }
        q.insert(msg(5, 8));
        q.insert(msg(0, 8));
        let order: Vec<u64> = q.iter().map(|m| m.seq).collect();
        assert_eq!(order, [0, 1, 4, 5, 6]);
        let first = q.first_match(Source::Any, TagMatch::Tag(8)).expect("two match");
        assert_eq!(q.take(first).seq, 0, "the earliest match first");
        assert_eq!(q.at(q.first_match(Source::Any, TagMatch::Tag(8)).expect("one left")).seq, 5);
        assert!(q.get_mut(4).is_some() && q.get_mut(3).is_none());
    }
}
