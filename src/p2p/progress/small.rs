//! The small-message path of a blocking receive: a message that is whole in one
//! fragment and at the front of this core's channel goes straight into the running
//! receive, without the general delivery (`Inbox::deliver`: assembly slots, placement
//! among posted receives, the arrived queue) and without the rest of a progress round.
//!
//! Taken only where the general path would do the very same thing (see
//! `matching::quiet`): the state has no queued sends, no answers owed, and the inbox is
//! quiet for the fragment's source; the fragment is a plain data fragment that is a
//! whole message (first, `len == total`), the receive matches it and it fits. With
//! `perpeer` only a receive from one source looks, at that source's slot, and only at
//! an inline fragment. Anything else, a corrupted fragment included, leaves the channel
//! untouched and the general path runs (and reports what it finds).
//!
//! A blocking standard send of a message that fits one fragment, to a destination that
//! nothing is queued for, pushes it once without the general loop (`push_small`): with
//! room, it is sent as `Ctx::push` would send it; without, the SRB reservation it may
//! have taken goes back to the caller, whose general loop fills it (a reservation must
//! be published: the receiver stops at it).
//!
//! What the receive path keeps of the general one: the channel's consumption protocol (an SRB
//! entry is released and its space freed lazily, as a drain that stops at a satisfied
//! receive frees it; a perpeer slot is taken and its sender rung), the message's
//! virtual time stamp, and the state's change mark (other threads' waits hear of it).

use crate::p2p::endpoint::Status;
use crate::p2p::matching::{Target, TargetState};
use crate::p2p::progress::{Ctx, State};
use crate::protocol::ring::frag::{FragHeader, FragKind};
use crate::p2p::timed::{self, Model};
use crate::protocol::ring::srb::{self, Reservation};

impl Ctx<'_> {
    /// Completes the Open receive `t` with the whole message at the front of the
    /// channel (module docs); false if the general path must run.
    #[inline]
    pub fn take_small(&self, st: &mut State, t: &mut Target<'_>) -> bool {
        // Before the channel is looked at: a message queued already, say, is the
        // general path's, whatever the channel holds.
        if !st.unfinished.is_empty() || !st.inbox.rdv.owed.is_empty() || !st.inbox.quiet() {
            return false;
        }
        let fits = |h: &FragHeader, st: &State, t: &Target<'_>| {
            h.kind == FragKind::Data
                && h.first
                && h.len == h.total
                && h.len as usize <= t.buf.len()
                && t.src.matches(h.src)
                && t.tag.matches(h.tag)
                && st.inbox.quiet_for(h.src)
        };
        if let Some(ring) = self.own_srb() {
            let Ok(Some(e)) = ring.peek(st.inbox.srb_pos) else { return false };
            if !fits(&e.header, st, t) {
                return false;
            }
            let len = e.header.len as usize;
            ring.read(&e, 0, &mut t.buf[..len]);
            let stamp = timed::stamp(|c| c.ring_stamp(self.rank, e.pos()));
            t.state = TargetState::Done(Status { source: e.header.src, tag: e.header.tag, len, vtime: stamp });
            let inbox = &mut st.inbox;
            inbox.srb_pos = e.next();
            ring.release(e);
            // As a drain stopped by a satisfied receive: not caught up.
            if ring.free_consumed(inbox.srb_pos, &mut inbox.srb_published, false) {
                self.seg.ring_all();
            }
            return true;
        }
        let crate::p2p::endpoint::Source::Rank(src) = t.src else { return false };
        if src == self.rank {
            return false;
        }
        let ch = self.place.perpeer(self.seg, src, self.rank);
        let Ok(Some(inc)) = ch.peek() else { return false };
        if inc.in_dram || !fits(&inc.header, st, t) {
            return false;
        }
        let h = inc.header;
        let len = h.len as usize;
        ch.read_inline(0, &mut t.buf[..len]);
        let stamp = timed::stamp(|c| c.pair_stamp(self.rank, src));
        ch.take();
        self.seg.slot(src).bell.ring();
        t.state = TargetState::Done(Status { source: src, tag: h.tag, len, vtime: stamp });
        true
    }

    /// Sends `data`, a whole message, to `dest` in one fragment if there is room now
    /// (module docs): true if it left. An SRB reservation that does not fit yet is
    /// left in `held`.
    #[inline]
    pub fn push_small(
        &self,
        dest: u32,
        (tag, total): (u32, u32),
        data: &[u8],
        held: &mut Option<Reservation>,
        model: Model,
    ) -> bool {
        let header = FragHeader { src: self.rank, tag, len: total, total, first: true, kind: FragKind::Data };
        if self.srb_mode() {
            let ring = self.place.srb(self.seg, dest);
            if total > ring.max_payload() {
                return false;
            }
            let Some((r, fits)) = ring.try_reserve(srb::entry_len(total)) else { return false };
            if !fits {
                *held = Some(r);
                return false;
            }
            timed::fragment_sent(model, |c| c.ring_stamp(dest, r.pos()));
            ring.publish(r, &header, data);
        } else {
            let ch = self.place.perpeer(self.seg, self.rank, dest);
            if data.len() > ch.inline_capacity() || !ch.is_free() {
                return false;
            }
            timed::fragment_sent(model, |c| c.pair_stamp(dest, self.rank));
            ch.send_inline(&header, data);
        }
        self.seg.slot(dest).bell.ring();
        true
    }
}
