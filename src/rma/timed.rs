//! One-sided communication in virtual time (see `crate::timing`).
//!
//! Ranks here are the window's team ranks; a cost is the distance to the core that
//! plays the rank (its world rank, `team`), and stamps are indexed by team rank.
//!
//! Costs: a put or get moves its bytes a line at a time between the origin's private
//! buffer and the target's part (in the target's MPB, or in DRAM through the memory
//! controller nearest the target); an ARMW is a read and a write of one line at the
//! target; an accumulate reads and writes every line it touches. Each is one library
//! call. RMA itself carries no stamp: a target learns of it only through a
//! synchronisation, and those carry the time:
//! - **fence**: a meeting of every member (`timing::meet`), its stamps keyed by the fence
//!   count's parity, as the core barrier's are;
//! - **PSCW**: a post stamps the pair word the origin's start waits for, a complete the
//!   pair word the target's wait reads (per pair, so exact: a pair's next post waits
//!   for its completion);
//! - **locks**: an unlock stamps the target's release words, and a lock observes them
//!   once it holds the lock: a shared lock the last exclusive release, an exclusive
//!   lock every release of that target and every `unlock_all`; `lock_all` observes
//!   every exclusive release on the window. Which of two contending lockers wins is
//!   the host's doing, so contended lock epochs are not host-independent.
//!
//! Across nodes the same model holds, with the chip's link where something crosses and
//! each stamp on the node that observes it (`remote::timed`).
//!
//! Stamps live after the window's control block (`control`), only in virtual time:
//! a line of window-wide stamps (`EXCLUSIVE_RELEASED`, `ALL_RELEASED`), a line per rank
//! (its fence arrivals by parity, its part's releases), then per origin a row of
//! (post, complete) stamps, one per target.

use crate::protocol::abort::JobAborted;
use crate::protocol::payload::Payload;
use crate::protocol::rwlock::LockKind;
use crate::rma::control::lines;
use crate::rma::remote::timed::crossing;
use crate::rma::window::{Placement, Window};
use crate::segment::mapping::SharedBytes;
use crate::segment::view::{Plain, atomic_u64_at};
use crate::sync::{AtomicU64, Ordering};
use crate::timing::{self, Category, Op, Ps, meet};

/// Window-wide: the latest exclusive unlock of any target.
const EXCLUSIVE_RELEASED: usize = 0;
/// Window-wide: the latest `unlock_all`.
const ALL_RELEASED: usize = 8;
/// In a rank's line: its fence arrival for parity 0 (parity 1 follows).
const FENCE: usize = 0;
/// In a rank's line: the latest exclusive unlock of its part.
const PART_EXCLUSIVE_RELEASED: usize = 16;
/// In a rank's line: the latest unlock of any kind of its part.
const PART_RELEASED: usize = 24;

/// Where the stamps lie, from the start of the stamps area.
pub(crate) struct StampLayout;

impl StampLayout {
    fn rank_line(rank: u32) -> usize {
        lines(16) * (1 + rank as usize)
    }

    fn pair(n: usize, origin: u32, target: u32) -> usize {
        lines(16) * (1 + n) + origin as usize * lines(n * 16) + target as usize * 16
    }

    /// Bytes of the stamps of a window of `n` cores.
    pub(crate) fn bytes(n: usize) -> usize {
        Self::pair(n, n as u32, 0)
    }

    /// Zeroes the stamps that rank `me` owns (rank 0 the window-wide ones too), in the
    /// stamps area at `at` of the control block `ctl`.
    pub(crate) fn zero_own(ctl: SharedBytes<'_>, at: usize, n: usize, me: usize) {
        if me == 0 {
            ctl.zero(at, lines(16));
        }
        ctl.zero(at + Self::rank_line(me as u32), lines(16));
        ctl.zero(at + Self::pair(n, me as u32, 0), lines(n * 16));
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// The stamp `offset` bytes into the stamps area (`None` outside virtual time).
    fn stamp_word(&self, offset: usize) -> Option<&'c AtomicU64> {
        let at = self.ctl.stamps?;
        atomic_u64_at(self.ctx.segment().bytes(self.meta_abs), at + offset)
    }

    fn rank_stamp(&self, rank: u32, field: usize) -> Option<&'c AtomicU64> {
        self.stamp_word(StampLayout::rank_line(rank) + field)
    }

    fn pair_stamp(&self, origin: u32, target: u32, complete: bool) -> Option<&'c AtomicU64> {
        self.stamp_word(StampLayout::pair(self.size() as usize, origin, target) + 8 * usize::from(complete))
    }

    /// One line between this core and team rank `target`'s part (in its core's MPB,
    /// or in DRAM near its core).
    fn part_line_ps(&self, op: &Op<'_>, target: u32) -> Ps {
        let core = self.team.world(target);
        match self.placement {
            Placement::Mpb => op.clock().mpb_line_ps(core),
            Placement::Dram => op.clock().dram_line_ps(core),
        }
    }

    /// One DRAM line between this core and memory near team rank `rank`'s core.
    fn dram_near(&self, op: &Op<'_>, rank: u32) -> Ps {
        op.clock().dram_line_ps(self.team.world(rank))
    }

    /// Runs `body`, a put or get of `bytes` with `target`'s part: in virtual time a
    /// call charged its copy. Off virtual time `body` runs alone, with no timing state
    /// live across it (an `Option<Op>` held there, with its destructor, cost a 9 ns put
    /// 2 ns). `body` is never handed to a function out of line: that took the address
    /// of everything it captures, so that its locals lived in memory and its constants
    /// (an ARMW's op) stayed unfolded on the fast path too.
    #[inline(always)]
    pub(crate) fn copy_call<R>(
        &self,
        (category, name): (Category, &'static str),
        target: u32,
        bytes: usize,
        body: impl FnOnce() -> R,
    ) -> R {
        if timing::clock().is_none() {
            return body();
        }
        let op = self.timed_begin((category, name), target, bytes, 1);
        let result = body();
        drop(op);
        result
    }

    /// [`Window::copy_call`] for an accumulate (or ARMW, `bytes` of one element) on
    /// `target`'s part: charged a read and a write of each line.
    #[inline(always)]
    pub(crate) fn update_call<R>(&self, name: &'static str, target: u32, bytes: usize, body: impl FnOnce() -> R) -> R {
        if timing::clock().is_none() {
            return body();
        }
        let op = self.timed_begin((Category::Atomic, name), target, bytes, 2);
        let result = body();
        drop(op);
        result
    }

    /// Starts a call charged `passes` accesses to `target`'s part per line of `bytes`.
    #[cold]
    #[inline(never)]
    fn timed_begin(
        &self,
        (category, name): (Category, &'static str),
        target: u32,
        bytes: usize,
        passes: u64,
    ) -> Option<Op<'static>> {
        let op = timing::call(category, name);
        if let Some(op) = &op {
            let c = op.clock();
            op.charge(c.lines(bytes) * (c.private_line_ps(bytes) + passes * self.part_line_ps(op, target)));
        }
        op
    }

    /// A fence's arrival (parity of this window's fence count).
    pub(crate) fn fence_arrive(&self, op: &Option<Op<'static>>, parity: u32) {
        if let Some(op) = op {
            meet::arrive(op, self.rank_stamp(self.rank(), FENCE + 8 * parity as usize), self.dram_near(op, 0));
        }
    }

    /// A fence's end: everyone's arrival, then the release's read.
    pub(crate) fn fence_leave(&self, op: &Option<Op<'static>>, parity: u32) {
        if let Some(op) = op {
            let arrivals = (0..self.size()).map(|r| self.rank_stamp(r, FENCE + 8 * parity as usize));
            meet::leave(op, arrivals, self.dram_near(op, 0));
        }
    }

    /// A post to `origin` (before its publishing store).
    pub(crate) fn posted(&self, op: &Option<Op<'static>>, origin: u32) -> Result<(), JobAborted> {
        if let Some(op) = op {
            op.charge(self.dram_near(op, origin));
            self.stamp_on(op, origin, StampLayout::pair(self.size() as usize, origin, self.rank()), 1)?;
        }
        Ok(())
    }

    /// `target`'s post, seen by this core's start.
    pub(crate) fn post_seen(&self, op: &Option<Op<'static>>, target: u32) {
        if let Some(op) = op {
            op.observe_word(self.pair_stamp(self.rank(), target, false), self.dram_near(op, self.rank()));
        }
    }

    /// A completion at `target` (before its publishing store).
    pub(crate) fn completed_at(&self, op: &Option<Op<'static>>, target: u32) -> Result<(), JobAborted> {
        if let Some(op) = op {
            op.charge(self.dram_near(op, self.rank()));
            self.stamp_on(op, target, StampLayout::pair(self.size() as usize, self.rank(), target) + 8, 1)?;
        }
        Ok(())
    }

    /// The completions of `origins`, seen by this core's wait (or successful test).
    pub(crate) fn completions_seen(&self, op: &Option<Op<'static>>, origins: impl Iterator<Item = u32>) {
        if let Some(op) = op {
            let me = self.rank();
            for origin in origins {
                op.observe_word(self.pair_stamp(origin, me, true), self.dram_near(op, origin));
            }
        }
    }

    /// A lock of `target`, now held: the releases it had to wait for, and its atomic.
    #[inline]
    pub(crate) fn lock_held(&self, op: &Option<Op<'static>>, kind: LockKind, target: u32) -> Result<(), JobAborted> {
        match op {
            Some(op) => self.lock_held_timed(op, kind, target),
            None => Ok(()),
        }
    }

    /// [`Window::lock_held`] in virtual time (out of line: the lock epoch's fast path
    /// stays short when time is not virtual). On another node, the lock's request and
    /// answer cross the link.
    #[cold]
    #[inline(never)]
    fn lock_held_timed(&self, op: &Op<'static>, kind: LockKind, target: u32) -> Result<(), JobAborted> {
        let atomic = 2 * self.dram_near(op, target);
        let crosses = self.remote_to(target).is_some();
        if crosses {
            crossing(0);
        }
        let line = StampLayout::rank_line(target);
        match kind {
            LockKind::Shared => op.observe(self.stamp_value(target, line + PART_EXCLUSIVE_RELEASED)?, atomic),
            LockKind::Exclusive => {
                op.observe(self.stamp_value(target, line + PART_RELEASED)?, atomic);
                op.observe(self.stamp_value(target, ALL_RELEASED)?, 0);
            }
        }
        if crosses {
            crossing(0);
        }
        Ok(())
    }

    /// An unlock of `target` (before the lock's releasing store).
    #[inline]
    pub(crate) fn unlocking(&self, op: &Option<Op<'static>>, kind: LockKind, target: u32) -> Result<(), JobAborted> {
        match op {
            Some(op) => self.unlocking_timed(op, kind, target),
            None => Ok(()),
        }
    }

    /// [`Window::unlocking`] in virtual time (out of line, as `lock_held_timed`).
    #[cold]
    #[inline(never)]
    fn unlocking_timed(&self, op: &Op<'static>, kind: LockKind, target: u32) -> Result<(), JobAborted> {
        op.charge(2 * self.dram_near(op, target));
        let line = StampLayout::rank_line(target);
        match kind {
            LockKind::Shared => self.stamp_on(op, target, line + PART_RELEASED, 1),
            LockKind::Exclusive => {
                const _: () = assert!(PART_RELEASED == PART_EXCLUSIVE_RELEASED + 8);
                self.stamp_on(op, target, line + PART_EXCLUSIVE_RELEASED, 2)?;
                self.stamp_on(op, target, EXCLUSIVE_RELEASED, 1)
            }
        }
    }

    /// `lock_all`, now held: every exclusive release before it (across nodes, each
    /// node's, read there after entering it).
    pub(crate) fn lock_all_held(&self, op: &Option<Op<'static>>) -> Result<(), JobAborted> {
        let Some(op) = op else { return Ok(()) };
        let latest = match &self.remote {
            None => self.stamp_value(0, EXCLUSIVE_RELEASED)?,
            Some(remote) => {
                let mut latest = 0;
                // Entering each other node's word was a round trip (`remote_all`).
                for &leader in &remote.leaders {
                    latest = latest.max(self.stamp_value(leader, EXCLUSIVE_RELEASED)?);
                }
                latest
            }
        };
        op.observe(latest, 2 * self.dram_near(op, 0));
        Ok(())
    }

    /// `unlock_all` (before its releasing store): across nodes, every node's copy.
    pub(crate) fn unlocking_all(&self, op: &Option<Op<'static>>) -> Result<(), JobAborted> {
        let Some(op) = op else { return Ok(()) };
        op.charge(2 * self.dram_near(op, 0));
        match &self.remote {
            None => self.stamp_on(op, 0, ALL_RELEASED, 1),
            Some(remote) => remote.leaders.iter().try_for_each(|&leader| self.stamp_on(op, leader, ALL_RELEASED, 1)),
        }
    }

    /// A fence's end across nodes (`remote_meet`): the latest arrival, then the
    /// release's read.
    pub(crate) fn fence_meet_across(&self, op: &Option<Op<'static>>) -> Result<(), JobAborted> {
        let latest = self.remote_meet(op)?;
        if let Some(op) = op {
            op.observe(latest, self.dram_near(op, 0));
        }
        Ok(())
    }

    /// Raises the `count` stamps at byte `offset` of the stamps area in the copy on the
    /// node of team rank `rank` to now (module docs of `remote::timed` for another node).
    fn stamp_on(&self, op: &Op<'static>, rank: u32, offset: usize, count: usize) -> Result<(), JobAborted> {
        if self.remote_to(rank).is_some() {
            return self.stamp_remote(op, rank, offset, count);
        }
        (0..count).for_each(|i| op.stamp(self.stamp_word(offset + 8 * i)));
        Ok(())
    }

    /// The stamp at byte `offset` of the stamps area in the copy on the node of team
    /// rank `rank`.
    fn stamp_value(&self, rank: u32, offset: usize) -> Result<Ps, JobAborted> {
        if self.remote_to(rank).is_some() {
            return self.read_remote_stamp(rank, offset);
        }
        // Relaxed: ordered by the protocol's Acquire (module docs of `clock`).
        Ok(self.stamp_word(offset).map_or(0, |w| w.load(Ordering::Relaxed)))
    }
}
