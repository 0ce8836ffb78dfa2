//! Checking mode for windows over a communicator: one meeting place for all of them.
//!
//! A job-wide window compares its collective calls (fence, free) across the cores on
//! the job's checking slots, which every job-wide call shares, so a core fencing one
//! window while another fences a second is told so (`"window"` differs). Windows over
//! a communicator do the same on a *check area* that the communicator's leader allocates
//! (zeroed) at the communicator's first window in checking mode, and that the
//! communicator and all its windows share: a barrier, a hold count, and one checking
//! slot set per member (`protocol::agree`). Each member numbers its checks on the area
//! with one counter that its communicator and windows share ([`CheckHold`]'s `seq`),
//! so consecutive checks on the slots alternate their parity whichever window makes
//! them, as `agree` requires.
//!
//! Lifetime: the area counts holds, one per member for the communicator and one per
//! member and window. Each member adds its holds (Relaxed: the count's later AcqRel
//! decrements form one release sequence with them) before the barrier that ends the
//! call making them, so no member can drop the last hold while another has yet to take
//! its own; a hold is given up when its communicator or window goes (AcqRel), and the
//! member that drops the count to zero returns the area: every member's last use of it
//! happens before that return.

use std::sync::Arc;

use shm_layout::LINE;

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::{Disagreement, Fingerprint, MEMBER_BYTES, agree};
use crate::protocol::barrier::BarrierState;
use crate::protocol::waiter::Doorbell;
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::atomics_at;
use crate::sync::{AtomicU64, Ordering};

/// Offset of the hold count in an area, after the barrier's line.
const HOLDS_AT: usize = LINE;
/// Offset of the members' slots.
const SLOTS_AT: usize = 2 * LINE;
const _: () = assert!(size_of::<BarrierState>() <= LINE);

/// One hold on a communicator's check area (module docs): its communicator's, or one
/// of its windows'. Dropping it gives the hold up.
pub(crate) struct CheckHold<'c> {
    ctx: &'c CoreContext,
    area: HeapRegion,
    /// Members, and this core's rank among them.
    n: u32,
    me: u32,
    /// The doorbell of member 0, home of the area's barrier.
    home: &'c Doorbell,
    /// This member's checks on the area so far, shared by its holds.
    seq: Arc<AtomicU64>,
}

impl<'c> CheckHold<'c> {
    /// Bytes of the area of a communicator of `n` members.
    pub(crate) fn bytes(n: usize) -> usize {
        SLOTS_AT + n * MEMBER_BYTES
    }

    /// The first hold of member `me` of `n` on the zeroed, published `area`, whose
    /// barrier's home is `home`: every member takes it in the same call, before that
    /// call's last barrier (module docs).
    pub(crate) fn new(ctx: &'c CoreContext, area: HeapRegion, n: u32, me: u32, home: &'c Doorbell) -> Self {
        let hold = CheckHold { ctx, area, n, me, home, seq: Arc::new(AtomicU64::new(0)) };
        hold.holds().fetch_add(1, Ordering::Relaxed);
        hold
    }

    /// Another hold of this member, sharing its check count (for a new window, taken
    /// before the window's creation passes a barrier).
    pub(crate) fn hold(&self) -> CheckHold<'c> {
        // Relaxed: module docs.
        self.holds().fetch_add(1, Ordering::Relaxed);
        CheckHold { seq: Arc::clone(&self.seq), ..*self }
    }

    fn holds(&self) -> &'c AtomicU64 {
        atomics_at(self.ctx.heap_bytes(self.area), HOLDS_AT)
    }

    /// Compares `fingerprint` across the members on the area (`protocol::agree`).
    pub(crate) fn agree(&self, fingerprint: &Fingerprint) -> Result<Result<(), Disagreement>, JobAborted> {
        // Relaxed: this member's own count.
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let bytes = self.ctx.heap_bytes(self.area);
        let slots = bytes.slice(SLOTS_AT, self.n as usize * MEMBER_BYTES);
        let barrier: &BarrierState = atomics_at(bytes, 0);
        agree(&slots, self.n, self.me, seq, fingerprint, || barrier.wait(self.n, &self.ctx.waiter(), self.home))
    }
}

impl Drop for CheckHold<'_> {
    fn drop(&mut self) {
        // AcqRel: module docs.
        if self.holds().fetch_sub(1, Ordering::AcqRel) == 1 {
            // Fails only if the job is aborting, when nothing needs the memory.
            let _ = self.ctx.heap_free_local(self.area);
        }
    }
}
