//! Collectives in virtual time (see `crate::timing`).
//!
//! Every collective is rounds of copies through staging around a meeting of all members
//! (the communicator's barrier, or its rendezvous flags; see `collectives`). In virtual
//! time each meeting is a `timing::meet`: a member stamps its arrival in the line of
//! its rendezvous flag (by the parity of the communicator's meeting count: a member
//! cannot reach the meeting after next before every member has left this one), and
//! leaves at the latest arrival. Both kinds of meeting cost what the barrier costs on
//! the chip (an atomic on a word in DRAM, then a read of the release), so the virtual
//! time does not depend on which kind the host's wait policy picked. Copies into and
//! out of staging are charged line by line, through the memory controller nearest the
//! member whose half it is. Combining reductions' values costs nothing more (the
//! chip's arithmetic is not modelled inside a call).

use crate::coll::comm::Comm;
use crate::timing::{self, Category, Op, meet};

/// A meeting's arrival: its operation and the parity of its stamps.
pub(crate) struct Meeting {
    op: Op<'static>,
    parity: usize,
}

impl Comm<'_> {
    /// Arrives at the communicator's next meeting (`None` outside virtual time).
    pub(crate) fn meeting_arrive(&self) -> Option<Meeting> {
        let op = timing::begin(Category::Sync, "meeting")?;
        let parity = (self.next_meeting() % 2) as usize;
        let home = self.members()[0];
        meet::arrive(&op, self.meeting_stamp(self.rank(), parity), op.clock().dram_line_ps(home));
        Some(Meeting { op, parity })
    }

    /// Leaves the meeting: at the latest member's arrival, plus the release's read.
    pub(crate) fn meeting_leave(&self, meeting: Option<Meeting>) {
        if let Some(Meeting { op, parity }) = meeting {
            let home = self.members()[0];
            let arrivals = (0..self.size()).map(|r| self.meeting_stamp(r, parity));
            meet::leave(&op, arrivals, op.clock().dram_line_ps(home));
        }
    }

    /// Copies of `bytes` between this member and member `rank`'s staging half.
    pub(crate) fn charge_staging(&self, rank: u32, bytes: usize) {
        if let Some(op) = timing::begin(Category::Collective, "staging copy") {
            let c = op.clock();
            let owner = self.members()[rank as usize];
            op.charge(c.lines(bytes) * (c.private_line_ps(bytes) + c.dram_line_ps(owner)));
        }
    }

    /// A collective call (`None` outside virtual time).
    pub(crate) fn timed_call(name: &'static str) -> Option<Op<'static>> {
        timing::call(Category::Collective, name)
    }
}
