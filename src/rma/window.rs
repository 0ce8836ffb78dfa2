//! Windows: memory that every member of a team exposes for one-sided access
//! (`MPI_Win_allocate`).
//!
//! Every part of a window lives in the shared segment, so a remote access is a copy or
//! an atomic on mapped memory and the target never takes part. A window spans a team
//! (`team`): every core of the job ([`Window::create`]), or the members of a
//! communicator (`coll::Comm::window`); ranks are team ranks. Creation is collective
//! over the team (`rma::create`).
//!
//! The control block's layout is in `rma::control`. Freeing is collective: each member
//! writes into its size-table entry (unused after creation) whether it still has an
//! epoch open, then the members' barrier (nobody still accesses; the votes are visible
//! to all); unless some member voted no, the memory returns to its allocators: a
//! job-wide window's through the job's collective frees, a communicator's window's by
//! the member that releases it last (`team`). A job-wide window dropped without `free`
//! (or whose `free` was refused) becomes an orphan of its core (`segment::reclaim`):
//! its memory returns to the allocators at the first job-wide collective allocation
//! after every core dropped it (the drop of one core cannot be collective, so the cores
//! compare what they dropped there). A communicator's window dropped so is released by
//! its release count like a freed one (`team`).
//!
//! [`Window`] has an example of every epoch kind.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use shm_layout::Region;

use crate::protocol::agree::Fingerprint;
use crate::protocol::payload::Payload;
use crate::protocol::pscw::PairWords;
use crate::protocol::rwlock::TicketRwLock;
use crate::rma::control::{CtlLayout, TargetCtl, WindowCtl, lines};
use crate::rma::epoch::Epochs;
use crate::rma::error::{RmaError, WindowError};
use crate::rma::part::Part;
use crate::rma::team::Team;
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::mapping::SharedBytes;
use crate::segment::mpb::MpbRegion;
use crate::segment::reclaim::Orphan;
use crate::segment::view::{Plain, atomics_at};

/// Where a window's parts live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Placement {
    /// Shared DRAM (the segment's heap): any size.
    Dram,
    /// The cores' message-passing buffers: small windows, the SCC's fast path.
    Mpb,
}

/// A window's own memory, which it frees (none over memory its cores keep).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Data {
    None,
    Heap(HeapRegion),
    /// A symmetric MPB allocation (job-wide windows).
    Mpb(MpbRegion),
    /// A range of the MPB window pool (windows over a communicator).
    Pool(MpbRegion),
}

/// A window of `T` elements over a team of cores: every core of the job
/// ([`Window::create`], [`crate::Core::window`]) or the members of a communicator
/// ([`crate::Comm::window`]). Its ranks are the team's: world ranks for a job-wide
/// window, communicator ranks otherwise ([`Window::rank`], [`Window::members`]).
/// Collective calls (allocation, [`Window::fence`], [`Window::free`]) must be made by
/// every member in the same order.
///
/// Every member must create a window with the same element type, placement and
/// accumulate strategy (lengths may differ), and free the same window at the same
/// point. A program that breaks this is erroneous, as in MPI: without checking mode it
/// may hang or corrupt the window. In checking mode ([`CoreContext::checking`])
/// creation and [`Window::free`] first compare those arguments across the members and
/// return [`WindowError::Mismatch`] on every member, naming the ranks that disagree;
/// nothing is allocated or freed, and the job goes on.
///
/// A window dropped without [`Window::free`] does not leak. A job-wide window's memory
/// returns to the heap (and MPBs) at the first job-wide collective allocation after
/// every core dropped it ([`CoreContext::orphaned`] counts what waits for that); a
/// communicator's window's, when its last member has freed or dropped it.
///
/// # Examples
///
/// Three cores pass values round a ring through each epoch kind: a fence epoch, a
/// post-start-complete-wait epoch, and a passive-target lock held by an RAII guard.
///
/// ```
/// use sccemu::{Core, Group, Job, LockKind, Placement};
///
/// fn epochs(core: &Core, _: ()) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
///     let (me, n) = (core.rank(), core.size());
///     let (right, left) = ((me + 1) % n, (me + n - 1) % n);
///     let win = core.window::<u64>(3, Placement::Dram)?; // collective
///
///     win.fence()?; // active target: every core opens the epoch
///     win.put(right, 0, &[u64::from(me)])?;
///     win.fence()?; // ... and the puts are visible after the closing fence
///
///     win.post(&Group::single(left))?; // expose my part to my left neighbour
///     win.start(&Group::single(right))?; // access my right neighbour's part
///     win.put(right, 1, &[10 + u64::from(me)])?;
///     win.complete()?;
///     win.wait()?;
///
///     {
///         let epoch = win.lock(LockKind::Exclusive, 0)?; // unlocked when dropped
///         epoch.fetch_add(0, 2, 1u64)?; // ARMW
///     }
///     core.barrier()?; // everyone's lock epoch is over
///
///     let mut mine = vec![0u64; 3];
///     win.fence()?;
///     win.get(me, 0, &mut mine)?;
///     win.fence()?;
///     win.free()?; // collective
///     Ok(mine)
/// }
///
/// fn main() {
///     sccemu::job::init();
///     let parts = Job::new(3).run(&(), epochs).unwrap();
///     assert_eq!(parts[1][..2], [0, 10]); // from rank 0, by fence and by PSCW
///     assert_eq!(parts[0][..2], [2, 12]); // from rank 2
///     assert_eq!(parts[0][2], 3); // one fetch-add per core
/// }
/// ```
pub struct Window<'c, T: Plain> {
    pub(crate) ctx: &'c CoreContext,
    /// The cores it spans, and how its collective steps run (`team`).
    pub(crate) team: Team<'c>,
    pub(super) placement: Placement,
    pub(super) meta: HeapRegion,
    pub(super) meta_abs: Region,
    pub(super) ctl: CtlLayout,
    pub(super) data: Data,
    /// Each team rank's part, as an absolute region of the segment.
    pub(super) parts: Vec<Region>,
    pub(crate) epochs: RefCell<Epochs>,
    /// Plain stores (puts, atomic stores) were issued since the last flush.
    pub(crate) pending_stores: Cell<bool>,
    /// This window's window-table entry (team rank 0 lists it).
    pub(super) table_entry: Option<usize>,
    /// Set once `free` returns the memory (else the drop makes a job-wide window an
    /// orphan, and releases a communicator's window: `team`).
    pub(super) released: Cell<bool>,
    /// Accumulate strategy state (see `accumulate`).
    pub(crate) acc: crate::rma::accumulate::AccSlot<'c>,
    /// The lock words and doorbells that lock epochs use, looked up once (`lock`).
    pub(crate) lock_views: crate::rma::lock::LockViews<'c>,
    /// Where the members on other nodes are, for a window across nodes (`remote`).
    pub(crate) remote: Option<crate::rma::remote::Remote<'c>>,
    /// Whether this window is on one node and untimed: the common case of the entries
    /// for bindings (`quick`), one load there where testing `remote` and the clock took
    /// three loads and tests. Fixed at creation: `remote` is, and the clock starts when
    /// the core attaches (`timing::init`), before it can create a window.
    pub(crate) quick: bool,
    pub(super) _elem: PhantomData<T>,
}

/// A job-wide window dropped without `free` (or whose `free` was refused) becomes an
/// orphan of this core, reclaimed once every core dropped it (module docs); its
/// owner-computes agent, if any, stops when the accumulate state drops, right after
/// this. A communicator's window is released (`team`), its agent stopped first. A
/// window across nodes counts this member out on every node (`remote::orphan`).
impl<T: Plain> Drop for Window<'_, T> {
    fn drop(&mut self) {
        if self.released.get() {
            return;
        }
        if self.spans_nodes() {
            return self.drop_across();
        }
        if self.team.is_job() {
            self.ctx.orphan(self.as_orphan());
        } else {
            let block = self.acc_take();
            self.leave(block, true);
        }
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// The context of the core this window was created on.
    pub fn context(&self) -> &'c CoreContext {
        self.ctx
    }

    /// Where the parts live, DRAM or MPB.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// Elements in team rank `rank`'s part.
    #[inline]
    pub fn len_of(&self, rank: u32) -> Result<usize, RmaError> {
        self.check_rank(rank)?;
        Ok(self.parts[rank as usize].len / size_of::<T>())
    }

    /// The window's identity in checking-mode comparisons, the same on every core: its
    /// control block's heap offset.
    pub(crate) fn id(&self) -> u64 {
        self.meta.offset as u64
    }

    /// Elements in this core's part.
    pub fn len(&self) -> usize {
        self.parts[self.rank() as usize].len / size_of::<T>()
    }

    /// Whether this core's part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Collective: frees the window. If any member still has a lock or PSCW epoch open
    /// on it, every member gets [`WindowError::EpochOpen`] naming the lowest such rank,
    /// and nothing is freed: the window is then dropped without free, and its memory
    /// is reclaimed once every member dropped it (module docs).
    pub fn free(self) -> Result<(), WindowError> {
        if self.spans_nodes() {
            return self.free_across();
        }
        self.agree(&Fingerprint::new("window free").field("window", self.meta.offset as u64))??;
        let open = self.epochs.borrow().passive_or_pscw_open();
        let vote = |r: u32| self.ctl.size_entry(r);
        self.meta_bytes().write(vote(self.rank()), &u64::from(open).to_le_bytes());
        self.acc_quiesce()?;
        // Nobody may still be accessing any part when the memory is reused. The barrier
        // (Release/Acquire) also shows every vote to every member; nobody writes a vote
        // again: a job-wide window's members pass `heap_free`'s barrier after reading,
        // before the block can be reused, and a communicator's window's leave after
        // reading, the last of them returning the block.
        self.team_barrier()?;
        let voted_open = |r: &u32| {
            let mut b = [0u8; 8];
            self.meta_bytes().read(vote(*r), &mut b);
            u64::from_le_bytes(b) != 0
        };
        if let Some(rank) = (0..self.size()).find(voted_open) {
            return Err(WindowError::EpochOpen { rank });
        }
        // From here the memory is returned here: the drop must do nothing.
        self.released.set(true);
        if !self.team.is_job() {
            return self.free_team();
        }
        if let Some(entry) = self.table_entry {
            crate::segment::wintable::unregister(self.ctx.segment(), entry);
        }
        self.acc_free()?;
        match self.data {
            Data::None => {}
            Data::Heap(r) => self.ctx.heap_free(r)?,
            Data::Mpb(r) => self.ctx.mpb_free(r)?,
            // The pool serves windows over a communicator only.
            Data::Pool(_) => {}
        }
        self.ctx.heap_free(self.meta)?;
        Ok(())
    }

    /// What this window holds, as an orphan of this core (`segment::reclaim`).
    fn as_orphan(&self) -> Orphan {
        let mut heap = vec![self.meta];
        let mut mpb = Vec::new();
        match self.data {
            Data::None => {}
            Data::Heap(r) => heap.push(r),
            Data::Mpb(r) => mpb.push(r),
            // The pool serves windows over a communicator only, which are never orphans.
            Data::Pool(_) => {}
        }
        heap.extend(self.acc_block());
        Orphan { id: self.meta.offset as u64, heap, mpb, table_entry: self.table_entry }
    }

    /// Checks that `rank` is one of the window's (team) ranks: against the parts'
    /// count, so that the indexing that follows needs no bounds check of its own.
    #[inline]
    pub(crate) fn check_rank(&self, rank: u32) -> Result<(), RmaError> {
        if rank as usize >= self.parts.len() {
            return Err(RmaError::RankOutOfRange { rank, size: self.parts.len() as u32 });
        }
        Ok(())
    }

    /// `rank`'s part, as an absolute region of the segment (rank already checked).
    #[inline]
    pub(crate) fn part_region(&self, rank: u32) -> Region {
        self.parts[rank as usize]
    }

    /// `rank`'s part widened down to a multiple of
    /// [`ACC_ALIGN`](crate::rma::accumulate::ACC_ALIGN), the frame that the locked
    /// accumulate strategies stripe, and where the part starts in it (rank already
    /// checked). Parts the window allocates start aligned; memory a core brought in
    /// (`create_over`) may not.
    #[inline]
    pub(crate) fn acc_frame(&self, rank: u32) -> (Region, usize) {
        let part = self.parts[rank as usize];
        let phase = part.offset % crate::rma::accumulate::ACC_ALIGN;
        (Region { offset: part.offset - phase, len: part.len + phase }, phase)
    }

    /// The bytes of `rank`'s part (rank already checked).
    #[inline]
    pub(crate) fn part_bytes(&self, rank: u32) -> SharedBytes<'c> {
        self.ctx.segment().bytes(self.parts[rank as usize])
    }

    /// Checks `index..index + len` against `rank`'s part; returns the byte range start.
    pub(crate) fn check_range(&self, rank: u32, index: usize, len: usize) -> Result<usize, RmaError> {
        let part_len = self.parts[rank as usize].len / size_of::<T>();
        if index.checked_add(len).is_none_or(|end| end > part_len) {
            return Err(RmaError::OutOfBounds { rank, index, len, part_len });
        }
        Ok(index * size_of::<T>())
    }

    /// Checks `bytes` bytes from element `index` against `rank`'s part (for elements
    /// of another type than `T`); returns the byte range start. A refusal counts whole
    /// elements of `T`.
    pub(crate) fn check_bytes(&self, rank: u32, index: usize, bytes: usize) -> Result<usize, RmaError> {
        let part_bytes = self.parts[rank as usize].len;
        let start = index.checked_mul(size_of::<T>());
        if start.and_then(|s| s.checked_add(bytes)).is_none_or(|end| end > part_bytes) {
            let len = bytes.div_ceil(size_of::<T>());
            return Err(RmaError::OutOfBounds { rank, index, len, part_len: part_bytes / size_of::<T>() });
        }
        Ok(index * size_of::<T>())
    }

    #[inline]
    pub(crate) fn meta_bytes(&self) -> SharedBytes<'c> {
        self.ctx.segment().bytes(self.meta_abs)
    }

    #[inline]
    pub(crate) fn window_ctl(&self) -> &'c WindowCtl {
        atomics_at(self.meta_bytes(), 0)
    }

    /// Where `rank`'s lock words (its [`TicketRwLock`]) live, as an absolute region of
    /// the segment: for the corruption tests only (see `CoreContext::segment_for_tests`).
    #[doc(hidden)]
    pub fn lock_region_for_tests(&self, rank: u32) -> Result<Region, RmaError> {
        self.check_rank(rank)?;
        Ok(Region { offset: self.meta_abs.offset + self.lock_offset(rank), len: size_of::<TicketRwLock>() })
    }

    /// Where `rank`'s [`TargetCtl`] lies in the control block.
    pub(crate) fn lock_offset(&self, rank: u32) -> usize {
        self.ctl.targets + rank as usize * lines(size_of::<TargetCtl>())
    }

    /// Refuses direct access to the part of a rank on another node, which this node
    /// does not map.
    fn check_mapped(&self, rank: u32) -> Result<(), RmaError> {
        self.check_rank(rank)?;
        match self.remote_to(rank) {
            Some(_) => Err(RmaError::OnOtherNode { rank }),
            None => Ok(()),
        }
    }

    /// Where the slots of sticky lock registrations (`protocol::lock_all`) live, as an
    /// absolute region of the segment: for the corruption tests only.
    #[doc(hidden)]
    pub fn lock_all_slots_for_tests(&self) -> Region {
        let (at, len) = crate::protocol::lock_all::SLOTS_FOR_TESTS;
        Region { offset: self.meta_abs.offset + std::mem::offset_of!(WindowCtl, all) + at, len }
    }

    /// The PSCW counters of the pair (`origin`, `target`), in `origin`'s row.
    pub(crate) fn pscw_pair(&self, origin: u32, target: u32) -> &'c PairWords {
        let at = self.ctl.posts + origin as usize * self.ctl.post_stride;
        atomics_at(self.meta_bytes(), at + target as usize * size_of::<PairWords>())
    }

    /// Whether a passive-target epoch (lock or lock_all) gives access to `target` now:
    /// where request-based RMA (`MPI_Rput` and the others) may be issued.
    pub fn in_passive_epoch(&self, target: u32) -> bool {
        target < self.size() && self.epochs.borrow().passive(target)
    }

    /// The address of `rank`'s part in this process's mapping of the segment (the base
    /// pointer of `MPI_Win_shared_query` and `MPI_Win_allocate`): every part is mapped
    /// by every core. Reading or writing through it is the caller's business; the
    /// window's own accesses go through its methods.
    pub fn part_ptr(&self, rank: u32) -> Result<*mut T, RmaError> {
        self.check_mapped(rank)?;
        Ok(self.part_bytes(rank).addr(0).cast())
    }

    /// This core's part, for local loads and stores.
    pub fn local(&self) -> Part<'_, 'c, T> {
        Part { win: self, rank: self.rank() }
    }

    /// Direct load/store access to `rank`'s part (`MPI_Win_shared_query`): every part
    /// is mapped by every core, so no epoch is needed to reach it, only to order the
    /// accesses (`sync`, barriers, flags, locks), as with MPI shared-memory windows.
    pub fn shared_query(&self, rank: u32) -> Result<Part<'_, 'c, T>, RmaError> {
        self.check_mapped(rank)?;
        Ok(Part { win: self, rank })
    }
}
