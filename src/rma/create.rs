//! Window creation: the collective protocol that gives every core every part.
//!
//! A window's memory is either allocated for it (`Memory::Allocate`: shared DRAM, the
//! parts page-aligned and packed one after another, or the MPB, each core's part at
//! the same offset of its own MPB, for small windows, as RCKMPI proposes for the SCC)
//! or memory each core already has in the heap (`Memory::Over`: `MPI_Win_create`
//! over `MPI_Alloc_mem` memory or adopted pages, `MPI_Win_allocate_shared`'s
//! contiguous parts, a dynamic window's whole heap). Sizes may differ per core, and 0
//! is allowed.
//!
//! Protocol, every core in the same order:
//! 1. allocate the control block from the heap (its size depends only on the job
//!    size, so the symmetric allocator gives every core the same one);
//! 2. zero the words this core owns (rank 0 also the window-wide ones), write this
//!    core's part size (and, over existing memory, its heap offset) into the size
//!    table, and pass a barrier (Release/Acquire: the zeroes and sizes are visible to
//!    all after it);
//! 3. read every entry, allocate the data symmetrically (unless it exists), zero the
//!    own part if it was allocated, and pass a second barrier, so nobody touches a part
//!    before its owner zeroed it.
//!
//! A core whose arguments are bad still takes part: it writes a sentinel as its size
//! (`TOO_LARGE` for a length that overflows a byte count, `OUTSIDE_HEAP` for memory
//! that is not in the heap), and every core, reading the same table after the same
//! barrier, refuses the window with the same error and frees the control block. Errors
//! found after step 2 are alike on every core for the same reason.

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
use crate::rma::window::{Data, Placement, Window};
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::view::Plain;

/// Size-table value of a core whose part does not fit a byte count.
const TOO_LARGE: u64 = u64::MAX;
/// Size-table value of a core whose memory is not in the heap.
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
    /// Collective: allocates a window whose part on this core holds `len` elements
    /// (zeroed). Other cores may pass other lengths, including 0.
    pub fn create(ctx: &'c CoreContext, len: usize, placement: Placement) -> Result<Window<'c, T>, WindowError> {
        Window::create_agreed(ctx, Memory::Allocate(placement, len), AccStrategy::Atomic)
    }

    /// Collective: a window whose part on this core is the heap range `part`, which
    /// this core allocated itself (`CoreContext::heap_alloc_local`, or adopted pages,
    /// see `CoreContext::adopt`) and keeps: the window neither clears nor frees it.
    /// Its data is exposed as it is. Every core must call this (not
    /// [`Window::create`]); a range outside the heap gives every core
    /// [`WindowError::OutsideHeap`].
    pub fn create_over(
        ctx: &'c CoreContext,
        part: HeapRegion,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::create_in(ctx, Memory::Over(part), strategy)
    }

    /// [`Window::create`]/[`Window::create_over`], first comparing in checking mode
    /// what every core must pass alike (element type, kind of memory, accumulate
    /// strategy; the lengths may differ).
    pub(crate) fn create_agreed(
        ctx: &'c CoreContext,
        memory: Memory,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        let (kind, granularity) = match strategy {
            AccStrategy::Atomic => (0, 0),
            AccStrategy::CallerComputes { granularity } => (1, granularity as u64),
            AccStrategy::OwnerComputes => (2, 0),
        };
        let fingerprint = Fingerprint::new("window").element::<T>().field("placement", memory.code());
        let fingerprint = fingerprint.field("accumulate strategy", kind).field("accumulate granularity", granularity);
        ctx.agree_world(&fingerprint)??;
        if size_of::<T>() == 0 {
            return Err(WindowError::ZeroSizedElement);
        }
        let heap = ctx.segment().layout().heap;
        // Not an early return: the others would wait for this core in the barriers.
        let (bytes, offset) = match memory {
            Memory::Allocate(_, len) => (len.checked_mul(size_of::<T>()).map_or(TOO_LARGE, |b| b as u64), 0),
            Memory::Over(r) if r.offset.checked_add(r.len).is_some_and(|end| end <= heap.len) => {
                (r.len as u64, r.offset as u64)
            }
            Memory::Over(_) => (OUTSIDE_HEAP, 0),
        };
        let n = ctx.size() as usize;
        let ctl = CtlLayout::new(n, ctx.segment().config().timing != 0);
        let meta = ctx.heap_alloc(ctl.total)?;
        let meta_abs = Region { offset: heap.offset + meta.offset, len: meta.len };
        let me = ctx.rank() as usize;
        let mb = ctx.segment().bytes(meta_abs);
        if me == 0 {
            mb.zero(0, lines(size_of::<WindowCtl>()));
        }
        mb.zero(ctl.targets + me * lines(size_of::<TargetCtl>()), lines(size_of::<TargetCtl>()));
        mb.zero(ctl.posts + me * ctl.post_stride, ctl.post_stride);
        if let Some(at) = ctl.stamps {
            crate::rma::timed::StampLayout::zero_own(mb, at, n, me);
        }
        mb.write(ctl.size_entry(me as u32), &bytes.to_le_bytes());
        mb.write(ctl.size_entry(me as u32) + 8, &offset.to_le_bytes());
        let fail = |e: WindowError| {
            let _ = ctx.heap_free(meta);
            e
        };
        ctx.barrier().map_err(|e| fail(e.into()))?;
        let word = |at: usize| {
            let mut b = [0u8; 8];
            mb.read(at, &mut b);
            u64::from_le_bytes(b)
        };
        let entries: Vec<(u64, usize)> =
            (0..n as u32).map(|r| (word(ctl.size_entry(r)), word(ctl.size_entry(r) + 8) as usize)).collect();
        if let Some(r) = entries.iter().position(|&(s, _)| s == TOO_LARGE) {
            return Err(fail(WindowError::TooLarge { rank: r as u32 }));
        }
        if let Some(r) = entries.iter().position(|&(s, _)| s == OUTSIDE_HEAP) {
            return Err(fail(WindowError::OutsideHeap { rank: r as u32 }));
        }
        let sizes: Vec<usize> = entries.iter().map(|&(s, _)| s as usize).collect();
        let (placement, data, parts) = match memory {
            Memory::Allocate(Placement::Dram, _) => {
                let mut offsets = Vec::with_capacity(n);
                let mut total = 0usize;
                for (r, &s) in sizes.iter().enumerate() {
                    offsets.push(total);
                    let end = s.checked_next_multiple_of(HEAP_GRANULE).and_then(|s| total.checked_add(s));
                    total = end.ok_or_else(|| fail(WindowError::TooLarge { rank: r as u32 }))?;
                }
                if total == 0 {
                    (Placement::Dram, Data::None, sizes.iter().map(|_| Region { offset: 0, len: 0 }).collect())
                } else {
                    let region = ctx.heap_alloc(total).map_err(|e| fail(e.into()))?;
                    let base = heap.offset + region.offset;
                    let parts =
                        offsets.iter().zip(&sizes).map(|(&o, &s)| Region { offset: base + o, len: s });
                    (Placement::Dram, Data::Heap(region), parts.collect())
                }
            }
            Memory::Allocate(Placement::Mpb, _) => {
                let mpb_bytes = ctx.mpb_bytes();
                if let Some((r, &s)) = sizes.iter().enumerate().find(|(_, s)| **s > mpb_bytes) {
                    return Err(fail(WindowError::TooBigForMpb { rank: r as u32, bytes: s, mpb_bytes }));
                }
                let max = sizes.iter().copied().max().unwrap_or(0);
                if max == 0 {
                    (Placement::Mpb, Data::None, sizes.iter().map(|_| Region { offset: 0, len: 0 }).collect())
                } else {
                    let region = ctx.mpb_alloc(max).map_err(|e| fail(e.into()))?;
                    let mpbs = &ctx.segment().layout().mpbs;
                    let parts = sizes.iter().enumerate().map(|(r, &s)| Region {
                        offset: mpbs.get(r).expect("rank < size").offset + region.offset,
                        len: s,
                    });
                    (Placement::Mpb, Data::Mpb(region), parts.collect())
                }
            }
            Memory::Over(_) => {
                let parts = entries.iter().map(|&(s, o)| Region { offset: heap.offset + o, len: s as usize });
                (Placement::Dram, Data::None, parts.collect())
            }
        };
        let table_entry =
            (ctx.rank() == 0).then(|| list_window(ctx, placement, size_of::<T>(), meta, data)).flatten();
        let win = Window {
            ctx,
            placement,
            meta,
            meta_abs,
            ctl,
            data,
            parts,
            epochs: RefCell::new(Epochs::new(n)),
            pending_stores: Cell::new(false),
            table_entry,
            acc: Default::default(),
            lock_views: LockViews::new(ctx, meta_abs, &ctl),
            released: Cell::new(false),
            _elem: PhantomData,
        };
        if let Memory::Allocate(..) = memory {
            win.part_bytes(ctx.rank()).zero(0, sizes[me]);
        }
        if let Err(e) = ctx.barrier() {
            // The job is aborting: `fail` returns the control block, and nothing will
            // reclaim the rest.
            win.released.set(true);
            return Err(fail(e.into()));
        }
        Ok(win)
    }
}

fn list_window(ctx: &CoreContext, placement: Placement, elem: usize, meta: HeapRegion, data: Data) -> Option<usize> {
    let (data_offset, data_bytes) = match data {
        Data::None => (0, 0),
        Data::Heap(r) => (r.offset, r.len),
        Data::Mpb(r) => (r.offset, r.len),
    };
    let info = crate::segment::wintable::WindowInfo {
        placement: placement as u32,
        elem_bytes: elem as u32,
        cores: ctx.size(),
        control_offset: meta.offset as u64,
        data_offset: data_offset as u64,
        data_bytes: data_bytes as u64,
    };
    crate::segment::wintable::register(ctx.segment(), info)
}

