//! Whether the inbox leaves a whole single-fragment message of `src` nowhere to go but
//! into the receive running in this call, which is what the small-message path
//! (`progress::small`) needs to know before it copies one straight out of the channel.
//!
//! Invariant: `quiet_for(src)` holds only if the general path (`Inbox::start`, then
//! `Inbox::deliver`) would, for a first fragment from `src` that the blocking receive
//! matches and that fits its buffer, do exactly that: nothing arrived that the receive
//! would have to take first, no posted receive that the message would go to first
//! (matching order), no message of `src` half assembled (a first fragment then is a
//! corruption, which the general path reports), no announced message waiting to be
//! pulled before the core waits.

use super::Inbox;

impl Inbox {
    /// The part of [`Inbox::quiet_for`] that holds for every source: the small-message
    /// path asks it before it looks at the channel at all.
    #[inline]
    pub fn quiet(&self) -> bool {
        self.arrived.is_empty() && self.posted.is_empty() && self.deferred == 0
    }

    /// See the module docs.
    #[inline]
    pub fn quiet_for(&self, src: u32) -> bool {
        self.quiet()
            && self.assembling.get(src as usize).is_none_or(Option::is_none)
            && !self.refused.iter().any(|r| r.0 == src)
    }
}
