//! What a core is blocked on, published in its control slot for the deadlock report.
//!
//! A library that blocks on behalf of a program (the RCCE interface's flag waits,
//! sends, receives and locks) marks the core's slot with a [`WaitMark`] before it
//! waits and clears it after ([`MarkGuard`]). Each mark also bumps the slot's `marks`
//! counter, so the launcher can tell a core that stayed in one wait from one that left
//! it and blocked again.
//!
//! The launcher samples every slot ([`blocked_cores`]): when every live core is marked,
//! with the same counters in two samples taken a detection interval apart, no core can
//! make progress, and the job is a deadlock. A core that was woken but not yet run
//! still shows its mark; the interval (a second by default) is far longer than any
//! scheduling delay, which is the heuristic's only assumption. Orderings are Relaxed:
//! the marks are diagnostics, read by a sampler that tolerates staleness, and no data
//! is published through them.

use std::fmt;

use crate::segment::mapping::{Segment, slot_state};
use crate::sync::{AtomicU32, Ordering};

/// What a blocked core waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitMark {
    /// A flag at `offset` of this core's MPB to reach a value (RCCE_wait_until).
    Flag {
        /// The flag's byte offset in the MPB.
        offset: u32,
    },
    /// `peer` to take a message this core sends (its "ready" flag).
    Send {
        /// The receiver.
        peer: u32,
    },
    /// `peer` to send the message this core receives (its "sent" flag).
    Recv {
        /// The sender.
        peer: u32,
    },
    /// The test-and-set lock of core `owner`.
    Lock {
        /// Whose register.
        owner: u32,
    },
    /// Other cores to reach a barrier or collective rooted at `root`.
    Collective {
        /// The collective's root (or the barrier's gatherer).
        root: u32,
    },
}

impl WaitMark {
    fn encode(self) -> (u32, u32) {
        match self {
            Self::Flag { offset } => (1, offset),
            Self::Send { peer } => (2, peer),
            Self::Recv { peer } => (3, peer),
            Self::Lock { owner } => (4, owner),
            Self::Collective { root } => (5, root),
        }
    }

    fn decode(kind: u32, arg: u32) -> Option<WaitMark> {
        Some(match kind {
            1 => Self::Flag { offset: arg },
            2 => Self::Send { peer: arg },
            3 => Self::Recv { peer: arg },
            4 => Self::Lock { owner: arg },
            5 => Self::Collective { root: arg },
            _ => return None,
        })
    }
}

impl fmt::Display for WaitMark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag { offset } => write!(f, "waits on the flag at offset {offset} of its MPB"),
            Self::Send { peer } => write!(f, "sends to rank {peer}, waiting for it to receive"),
            Self::Recv { peer } => write!(f, "receives from rank {peer}, waiting for it to send"),
            Self::Lock { owner } => write!(f, "waits for the test-and-set lock of rank {owner}"),
            Self::Collective { root } => write!(f, "waits in a collective rooted at rank {root}"),
        }
    }
}

/// The slot's words: the mark's kind (0: running) and argument, and the count of marks.
#[repr(C)]
#[derive(Default)]
pub struct MarkWords {
    kind: AtomicU32,
    arg: AtomicU32,
    marks: AtomicU32,
}

/// Clears the core's mark when dropped.
pub struct MarkGuard<'a> {
    words: &'a MarkWords,
}

impl MarkWords {
    /// Marks the core blocked on `mark` until the guard drops.
    pub fn mark(&self, mark: WaitMark) -> MarkGuard<'_> {
        let (kind, arg) = mark.encode();
        self.arg.store(arg, Ordering::Relaxed);
        self.kind.store(kind, Ordering::Relaxed);
        self.marks.fetch_add(1, Ordering::Relaxed);
        MarkGuard { words: self }
    }

    fn read(&self) -> Option<(WaitMark, u32)> {
        let mark = WaitMark::decode(self.kind.load(Ordering::Relaxed), self.arg.load(Ordering::Relaxed))?;
        Some((mark, self.marks.load(Ordering::Relaxed)))
    }
}

impl Drop for MarkGuard<'_> {
    fn drop(&mut self) {
        self.words.kind.store(0, Ordering::Relaxed);
    }
}

/// Each blocked core's rank, mark and count of marks so far.
pub type Blocked = Vec<(u32, WaitMark, u32)>;

/// One sample of every slot: `Some` with each live core's mark and counter when every
/// live core (attached, not finalized, not known to have exited) is marked.
pub fn blocked_cores(segment: &Segment, exited: impl Fn(u32) -> bool) -> Option<Blocked> {
    let mut blocked = Vec::new();
    for rank in 0..segment.config().cores {
        if exited(rank) {
            continue;
        }
        let slot = segment.slot(rank);
        match slot.state.load(Ordering::Relaxed) {
            slot_state::FINALIZED => continue,
            slot_state::ATTACHED => {}
            _ => return None, // not attached yet: it will run
        }
        let (mark, marks) = slot.wait.read()?;
        blocked.push((rank, mark, marks));
    }
    (!blocked.is_empty()).then_some(blocked)
}
