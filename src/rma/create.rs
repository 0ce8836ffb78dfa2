//! Window creation: the collective protocol that gives every member every part.
//!
//! A window's memory is either allocated for it (`Memory::Allocate`: shared DRAM, the
//! parts page-aligned and packed one after another, or the MPB, each member's part at
//! the same offset of its own MPB, for small windows, as RCKMPI proposes for the SCC)
//! or memory each member already has in the heap (`Memory::Over`: `MPI_Win_create`
//! over `MPI_Alloc_mem` memory or adopted pages, `MPI_Win_allocate_shared`'s
//! contiguous parts, a dynamic window's whole heap). Sizes may differ per member, and 0
//! is allowed.
//!
//! A window spans a team (`team`): every core ([`Window::create`]) or a communicator's
//! members ([`crate::Comm::window`]). The protocol is the same for both; only the
//! collective steps differ (the job's, or the team's own on the control block, see
//! `team`). Every member, in the same order:
//! 1. agree (checking mode) and get the control block (its size depends only on the
//!    team size): a job-wide window allocates it with the symmetric heap allocator and
//!    each core zeroes the words it owns (rank 0 also the window-wide ones); a
//!    communicator's leader allocates it, zeroed, and the communicator publishes it
//!    (`coll`), before this module runs;
//! 2. write this member's part size (and, over existing memory, its heap offset) into
//!    the size table, and pass the members' barrier (Release/Acquire: the zeroes and
//!    sizes are visible to all after it);
//! 3. read every entry, allocate the data collectively (unless it exists), zero the own
//!    part if it was allocated, and pass the barrier again, so nobody touches a part
//!    before its owner zeroed it.
//!
//! A member whose arguments are bad still takes part: it writes a sentinel as its size
//! (`TOO_LARGE` for a length that overflows a byte count, `OUTSIDE_HEAP` for memory
//! that is not in the heap), and every member, reading the same table after the same
//! barrier, refuses the window with the same error and returns the control block.
//! Errors found after step 2 are alike on every member for the same reason.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use shm_layout::Region;

use crate::protocol::agree::Fingerprint;
use crate::protocol::alloc::heap::HEAP_GRANULE;
use crate::protocol::payload::Payload;
use crate::rma::accumulate::AccStrategy;
use crate::rma::control::{CtlLayout, TargetCtl, WindowCtl, lines};
use crate::rma::epoch::Epochs;
use crate::rma::error::WindowError;
use crate::rma::lock::LockViews;
use crate::rma::team::Team;
use crate::rma::team_checks::CheckHold;
use crate::rma::window::{Data, Placement, Window};
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::Plain;

/// Size-table value of a member whose part does not fit a byte count.
const TOO_LARGE: u64 = u64::MAX;
/// Size-table value of a member whose memory is not in the heap.
const OUTSIDE_HEAP: u64 = u64::MAX - 1;

/// Where a new window's parts come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Memory {
    /// Allocated for the window: this core's part holds this many elements.
    Allocate(Placement, usize),
    /// This core's part is this heap range, which it keeps owning.
    Over(HeapRegion),
}

impl Memory {
    fn code(self) -> u64 {
        match self {
            Memory::Allocate(placement, _) => placement as u64,
            Memory::Over(_) => 2,
        }
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// Collective over the job: allocates a window whose part on this core holds `len`
    /// elements (zeroed). Other cores may pass other lengths, including 0.
    pub fn create(ctx: &'c CoreContext, len: usize, placement: Placement) -> Result<Window<'c, T>, WindowError> {
        Window::create_in(ctx, Memory::Allocate(placement, len), AccStrategy::Atomic)
    }

    /// Collective over the job: a window whose part on this core is the heap range
    /// `part`, which this core allocated itself (`CoreContext::heap_alloc_local`, or
    /// adopted pages, see `CoreContext::adopt`) and keeps: the window neither clears nor
    /// frees it. Its data is exposed as it is. Every core must call this (not
    /// [`Window::create`]); a range outside the heap gives every core
    /// [`WindowError::OutsideHeap`].
    pub fn create_over(
        ctx: &'c CoreContext,
        part: HeapRegion,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::create_in(ctx, Memory::Over(part), strategy)
    }

    /// What every member of a new window must pass alike, for checking mode: element
    /// type, kind of memory, accumulate strategy (the lengths may differ).
    pub(crate) fn fingerprint(memory: Memory, strategy: AccStrategy) -> Fingerprint {
        let (kind, granularity) = match strategy {
            AccStrategy::Atomic => (0, 0),
            AccStrategy::CallerComputes { granularity } => (1, granularity as u64),
            AccStrategy::OwnerComputes => (2, 0),
        };
        let fingerprint = Fingerprint::new("window").element::<T>().field("placement", memory.code());
        fingerprint.field("accumulate strategy", kind).field("accumulate granularity", granularity)
    }

    /// The control block's layout for a team of `n` in `ctx`'s job (its bytes are what
    /// a communicator's leader allocates): with stamps in virtual time.
    pub(crate) fn layout(ctx: &CoreContext, n: usize) -> CtlLayout {
        CtlLayout::new(n, ctx.segment().config().timing != 0)
    }

    /// Job-wide [`Window::create`]/[`Window::create_over`] without the strategy: first
    /// compares in checking mode what every core must pass alike, then allocates the
    /// control block symmetrically and builds the window.
    pub(crate) fn create_agreed(
        ctx: &'c CoreContext,
        memory: Memory,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        ctx.agree_world(&Self::fingerprint(memory, strategy))??;
        if size_of::<T>() == 0 {
            return Err(WindowError::ZeroSizedElement);
        }
        let ctl = Self::layout(ctx, ctx.size() as usize);
        let meta = ctx.heap_alloc(ctl.total)?;
        Window::build(ctx, Team::job(ctx.rank(), ctx.size()), meta, memory)
    }

    /// A window over the team `members` (world ranks, by team rank; this core is team
    /// rank `me`), once its members agreed and its leader's zeroed control block `meta`
    /// (of [`Window::layout`]'s bytes) was published to them (`coll::Comm::window`); in
    /// checking mode, `checks` is this window's hold on its communicator's check area
    /// (`team_checks`).
    pub(crate) fn create_team(
        ctx: &'c CoreContext,
        members: Vec<u32>,
        me: u32,
        meta: HeapRegion,
        (memory, strategy): (Memory, AccStrategy),
        checks: Option<CheckHold<'c>>,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::build(ctx, Team::new(members, me, checks), meta, memory)?.with_strategy(strategy)
    }

    /// Steps 2 and 3 of the protocol (module docs) on the control block `meta`.
    fn build(
        ctx: &'c CoreContext,
        team: Team<'c>,
        meta: HeapRegion,
        memory: Memory,
    ) -> Result<Window<'c, T>, WindowError> {
        let heap = ctx.segment().layout().heap;
        let (n, me) = (team.size() as usize, team.me() as usize);
        let ctl = Self::layout(ctx, n);
        let meta_abs = Region { offset: heap.offset + meta.offset, len: meta.len };
        let lock_views = LockViews::new(ctx, &team, meta_abs, &ctl);
        let mut win = Window {
            ctx,
            team,
            placement: Placement::Dram,
            meta,
            meta_abs,
            ctl,
            data: Data::None,
            parts: Vec::new(),
            epochs: RefCell::new(Epochs::new(n)),
            pending_stores: Cell::new(false),
            table_entry: None,
            acc: Default::default(),
            lock_views,
            // Nothing to release on a drop until the window is built: a failure below
            // returns the control block itself (`abandon`).
            released: Cell::new(true),
            remote: None,
            quick: crate::timing::clock().is_none(),
            _elem: PhantomData,
        };
        // Not an early return: the others would wait for this member in the barriers.
        let (bytes, offset) = match memory {
            Memory::Allocate(_, len) => (len.checked_mul(size_of::<T>()).map_or(TOO_LARGE, |b| b as u64), 0),
            Memory::Over(r) if r.offset.checked_add(r.len).is_some_and(|end| end <= heap.len) => {
                (r.len as u64, r.offset as u64)
            }
            Memory::Over(_) => (OUTSIDE_HEAP, 0),
        };
        let mb = win.meta_bytes();
        if win.team.is_job() {
            // A communicator's leader zeroed the whole block; here the fence barrier
            // in it may already count other members' arrivals.
            if me == 0 {
                mb.zero(0, lines(size_of::<WindowCtl>()));
            }
            mb.zero(ctl.targets + me * lines(size_of::<TargetCtl>()), lines(size_of::<TargetCtl>()));
            mb.zero(ctl.posts + me * ctl.post_stride, ctl.post_stride);
            if let Some(at) = ctl.stamps {
                crate::rma::timed::StampLayout::zero_own(mb, at, n, me);
            }
        }
        mb.write(ctl.size_entry(me as u32), &bytes.to_le_bytes());
        mb.write(ctl.size_entry(me as u32) + 8, &offset.to_le_bytes());
        win.team_barrier().map_err(|e| win.abandon(e.into()))?;
        let word = |at: usize| {
            let mut b = [0u8; 8];
            mb.read(at, &mut b);
            u64::from_le_bytes(b)
        };
        let entries: Vec<(u64, usize)> =
            (0..n as u32).map(|r| (word(ctl.size_entry(r)), word(ctl.size_entry(r) + 8) as usize)).collect();
        if let Some(r) = entries.iter().position(|&(s, _)| s == TOO_LARGE) {
            return Err(win.abandon(WindowError::TooLarge { rank: r as u32 }));
        }
        if let Some(r) = entries.iter().position(|&(s, _)| s == OUTSIDE_HEAP) {
            return Err(win.abandon(WindowError::OutsideHeap { rank: r as u32 }));
        }
        let sizes: Vec<usize> = entries.iter().map(|&(s, _)| s as usize).collect();
        let empty = || sizes.iter().map(|_| Region { offset: 0, len: 0 }).collect();
        let (placement, data, parts) = match memory {
            Memory::Allocate(Placement::Dram, _) => {
                let mut offsets = Vec::with_capacity(n);
                let mut total = 0usize;
                for (r, &s) in sizes.iter().enumerate() {
                    offsets.push(total);
                    let end = s.checked_next_multiple_of(HEAP_GRANULE).and_then(|s| total.checked_add(s));
                    match end {
                        Some(end) => total = end,
                        None => return Err(win.abandon(WindowError::TooLarge { rank: r as u32 })),
                    }
                }
                if total == 0 {
                    (Placement::Dram, Data::None, empty())
                } else {
                    let region = win.alloc_heap(total).map_err(|e| win.abandon(e))?;
                    let base = heap.offset + region.offset;
                    let parts = offsets.iter().zip(&sizes).map(|(&o, &s)| Region { offset: base + o, len: s });
                    (Placement::Dram, Data::Heap(region), parts.collect())
                }
            }
            Memory::Allocate(Placement::Mpb, _) => {
                let mpb_bytes = ctx.mpb_bytes();
                if let Some((r, &s)) = sizes.iter().enumerate().find(|(_, s)| **s > mpb_bytes) {
                    let e = WindowError::TooBigForMpb { rank: r as u32, bytes: s, mpb_bytes };
                    return Err(win.abandon(e));
                }
                let max = sizes.iter().copied().max().unwrap_or(0);
                if max == 0 {
                    (Placement::Mpb, Data::None, empty())
                } else {
                    let (data, at) = win.alloc_mpb(max).map_err(|e| win.abandon(e))?;
                    let mpbs = &ctx.segment().layout().mpbs;
                    // Each part in its owner's MPB: the world rank's.
                    let parts = sizes.iter().enumerate().map(|(r, &s)| Region {
                        offset: mpbs.get(win.team.world(r as u32) as usize).expect("a core of the job").offset + at,
                        len: s,
                    });
                    (Placement::Mpb, data, parts.collect())
                }
            }
            Memory::Over(_) => {
                let parts = entries.iter().map(|&(s, o)| Region { offset: heap.offset + o, len: s as usize });
                (Placement::Dram, Data::None, parts.collect())
            }
        };
        (win.placement, win.data, win.parts) = (placement, data, parts);
        if me == 0 {
            win.table_entry = list_window(ctx, placement, size_of::<T>(), n as u32, meta, data);
            win.record_entry(win.table_entry);
        }
        if let Memory::Allocate(..) = memory {
            win.part_bytes(me as u32).zero(0, sizes[me]);
        }
        if let Err(e) = win.team_barrier() {
            // The job is aborting: the control block goes back, and nothing will
            // reclaim the rest.
            return Err(win.abandon(e.into()));
        }
        win.released.set(false);
        Ok(win)
    }
}

fn list_window(
    ctx: &CoreContext,
    placement: Placement,
    elem: usize,
    cores: u32,
    meta: HeapRegion,
    data: Data,
) -> Option<usize> {
    let (data_offset, data_bytes) = match data {
        Data::None => (0, 0),
        Data::Heap(r) | Data::Mpb(r) => (r.offset, r.len),
        Data::Pool(r) => (ctx.mpb_pool().map_or(0, |p| p.base()) + r.offset, r.len),
    };
    let info = crate::segment::wintable::WindowInfo {
        placement: placement as u32,
        elem_bytes: elem as u32,
        cores,
        control_offset: meta.offset as u64,
        data_offset: data_offset as u64,
        data_bytes: data_bytes as u64,
    };
    crate::segment::wintable::register(ctx.segment(), info)
}
