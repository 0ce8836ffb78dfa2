//! Atomic accumulate on windows (`MPI_Accumulate`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op`): the API, the strategy chosen per window, and the dispatch.
//!
//! Strategies ([`AccStrategy`], chosen collectively when the window is created with
//! [`Core::window_with`]; [`Core::window`] gives `Atomic`):
//! - `Atomic`: element-wise lock-free atomics on the target memory (`acc_atomic`);
//! - `CallerComputes { granularity }`: the origin takes the address-striped lock of
//!   each granule and combines in place (`stripes`); a granularity of at least the
//!   part's size is one lock per target part;
//! - `OwnerComputes`: the origin ships the operand to the owner's agent thread, which
//!   combines it (`owner`).
//!
//! The element type `E` of an accumulate is the call's own: any [`Element`] (integers
//! of 1 to 8 bytes, `f32`, `f64`, value-index pairs), aligned to its size at the byte
//! offset the window's index gives; a window of `u8` takes byte offsets, as MPI's
//! windows do. Under `Atomic` an element of 16 bytes (a pair of `long` or `double`) has
//! no lock-free update and is refused ([`AccError::NotLockFree`]); the strategies with
//! locks take every type. Stripes are cut at multiples of [`ACC_ALIGN`] bytes, so no
//! element of any type straddles two.
//!
//! Guarantees, whatever the strategy: every element is updated atomically, and any two
//! accumulate-family calls on one window are atomic with respect to each other on the
//! same element; one origin's calls on the same element apply in issue order; results
//! are bit-identical across strategies for integers (wrapping arithmetic, same
//! combine function) and agree for floats up to the order of concurrent updates.
//! Plain put/get are not atomic with accumulates (as in MPI).
//!
//! ARMW (`fetch_add` and the rest of the fetch-and-op family, `swap`,
//! `compare_and_swap`, atomic `load` and `store`, in `transfer`) shares the
//! accumulates' atomicity domain under every strategy (MPI requires it of
//! `MPI_Fetch_and_op` and `MPI_Compare_and_swap`): each is one CPU atomic, run
//! - under `Atomic`, bare: the accumulates are CPU atomics on the same words;
//! - under `CallerComputes`, holding the stripe locks that guard the element's bytes
//!   (`stripes::lock_span`; why locks rather than atomic combines: `stripes`);
//! - under `OwnerComputes`, after this core's own pending requests are applied (so
//!   that it lands after the accumulates it follows, in issue order), holding the
//!   owner's stripe locks, under which its agent combines (`owner`).
//!
//! Every call checks the epoch, rank, bounds, alignment, lengths and the op for the
//! element type first, and returns an [`AccError`] having done nothing. Under
//! `OwnerComputes`, `accumulate` completes at the target by the next flush, unlock,
//! fence, complete or free (which wait for it); the other two return complete.
//!
//! [`Core::window`]: crate::Core::window
//! [`Core::window_with`]: crate::Core::window_with

use std::cell::{Cell, RefCell};
use std::fmt;

use shm_layout::Region;

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::acc_atomic::{AccElem, Words, accumulate_words, compare_and_swap_slot};
use crate::protocol::atomic::op::Element;
use crate::rma::acc_view::{stripes_at, words_at};
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::CoreContext;
use crate::protocol::atomic::op::{Op, OpError};
use crate::rma::owner::{OwnerBlock, OwnerState, owner_striping};
use crate::protocol::payload::Payload;
use crate::rma::transfer::Vector;
use crate::segment::mapping::Segment;
use crate::protocol::atomic::stripes::{MAX_STRIPES, Striping, SpanGuard, lock_span, striped_combine};
use crate::segment::view::Plain;
use crate::rma::create::Memory;
use crate::rma::window::{Placement, Window};
use crate::rma::error::{RmaError, WindowError};

/// How a window implements accumulates (the same on every core).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AccStrategy {
    /// Element-wise lock-free atomics.
    Atomic,
    /// Address-striped locks of `granularity` bytes; the caller combines in place.
    /// `usize::MAX` (or anything at least the part size) locks the whole part.
    CallerComputes {
        /// Bytes covered by one stripe lock.
        granularity: usize,
    },
    /// The owner's agent thread combines; small payloads inline, large ones staged.
    OwnerComputes,
}

/// Why an accumulate was refused (nothing was done), or failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AccError {
    /// Bad rank, range, alignment, length or no epoch.
    Rma(RmaError),
    /// The op does not apply to the element type.
    Op(OpError),
    /// The job aborted (some core died) while the call waited for a stripe lock or the
    /// owner's agent.
    Aborted(JobAborted),
    /// Under the `Atomic` strategy, an element wider than the CPU's atomics (16 bytes)
    /// has no lock-free update: such windows need a strategy with locks.
    NotLockFree {
        /// The element type's name.
        type_name: &'static str,
    },
}

impl From<RmaError> for AccError {
    fn from(e: RmaError) -> Self {
        AccError::Rma(e)
    }
}

impl From<OpError> for AccError {
    fn from(e: OpError) -> Self {
        AccError::Op(e)
    }
}

impl From<JobAborted> for AccError {
    fn from(e: JobAborted) -> Self {
        AccError::Aborted(e)
    }
}

impl fmt::Display for AccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rma(e) => e.fmt(f),
            Self::Op(e) => e.fmt(f),
            Self::Aborted(e) => e.fmt(f),
            Self::NotLockFree { type_name } => write!(
                f,
                "{type_name} is wider than the CPU's atomics: accumulate it on a window with the caller- or \
                 owner-computes strategy"
            ),
        }
    }
}

impl std::error::Error for AccError {}

/// A window's accumulate state (a field of [`Window`]); empty means `Atomic`. The flag
/// says whether there is a state (so whether ARMW takes locks), readable without a
/// borrow.
#[derive(Default)]
pub struct AccSlot<'c>(RefCell<Option<AccState<'c>>>, Cell<bool>);

enum AccState<'c> {
    /// `stripings[t]`: how target `t`'s part is striped (computed once: an ARMW would
    /// otherwise spend a third of its time on the divisions of `Striping::new`).
    Caller { block: HeapRegion, abs: Region, granularity: usize, stripings: Vec<Striping> },
    Owner { block: HeapRegion, state: OwnerState<'c>, stripings: Vec<Striping> },
}

/// Stripe granules are multiples of this many bytes: the widest element, so that no
/// element (aligned to its size) straddles two stripes, whatever its type.
pub const ACC_ALIGN: usize = 16;

fn stripes_bytes(n: usize) -> usize {
    n * MAX_STRIPES * size_of::<crossbeam_utils::CachePadded<crate::protocol::atomic::stripes::Stripe>>()
}

impl<'c, T: Plain> Window<'c, T> {
    /// Collective: allocates a window (like [`crate::Core::window`]) whose accumulates use
    /// `strategy`. Every core must pass the same strategy.
    pub fn create_with(
        ctx: &'c CoreContext,
        len: usize,
        placement: Placement,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::create_in(ctx, Memory::Allocate(placement, len), strategy)
    }

    /// Collective: a window over `memory` whose accumulates use `strategy`.
    pub(crate) fn create_in(
        ctx: &'c CoreContext,
        memory: Memory,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        let win = Window::<T>::create_agreed(ctx, memory, strategy)?;
        let n = ctx.size() as usize;
        let me = ctx.rank();
        let heap = ctx.segment().layout().heap;
        let state = match strategy {
            AccStrategy::Atomic => return Ok(win),
            AccStrategy::CallerComputes { granularity } => {
                let block = match ctx.heap_alloc(stripes_bytes(n)) {
                    Ok(block) => block,
                    Err(e) => {
                        // Every core got the same result: free the window collectively.
                        let _ = win.free();
                        return Err(e.into());
                    }
                };
                let abs = Region { offset: heap.offset + block.offset, len: block.len };
                let share = stripes_bytes(1);
                ctx.segment().bytes(abs).zero(me as usize * share, share);
                let stripings = (0..n as u32)
                    .map(|t| Striping::new(granularity, win.acc_frame(t).0.len, ACC_ALIGN))
                    .collect();
                AccState::Caller { block, abs, granularity, stripings }
            }
            AccStrategy::OwnerComputes => {
                let block = match ctx.heap_alloc(OwnerBlock::bytes(n)) {
                    Ok(block) => block,
                    Err(e) => {
                        let _ = win.free();
                        return Err(e.into());
                    }
                };
                let owner = OwnerBlock { abs: Region { offset: heap.offset + block.offset, len: block.len } };
                owner.init(ctx.segment(), me);
                let os = |_| WindowError::AgentStart;
                let fd = ctx.segment().fd().try_clone_to_owned().map_err(os)?;
                let agent_seg = Segment::attach(fd).map_err(|_| WindowError::AgentStart)?;
                let part = win.acc_frame(me).0;
                let state =
                    OwnerState::start(ctx.segment(), agent_seg, owner, me, part, ctx.waiter()).map_err(os)?;
                let stripings = (0..n as u32).map(|t| owner_striping(win.acc_frame(t).0.len)).collect();
                AccState::Owner { block, state, stripings }
            }
        };
        *win.acc.0.borrow_mut() = Some(state);
        win.acc.1.set(true);
        // Every core's share is initialised before anyone uses it.
        ctx.barrier()?;
        Ok(win)
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// The accumulate strategy this window was created with.
    pub fn acc_strategy(&self) -> AccStrategy {
        match &*self.acc.0.borrow() {
            None => AccStrategy::Atomic,
            Some(AccState::Caller { granularity, .. }) => {
                AccStrategy::CallerComputes { granularity: *granularity }
            }
            Some(AccState::Owner { .. }) => AccStrategy::OwnerComputes,
        }
    }

    /// With `OwnerComputes`, `owner`'s request queue as absolute regions of the segment:
    /// its control words, its `seq` words and its slots. For the corruption tests only
    /// (see `CoreContext::segment_for_tests`).
    #[doc(hidden)]
    pub fn owner_queue_for_tests(&self, owner: u32) -> Option<[Region; 3]> {
        match &*self.acc.0.borrow() {
            Some(AccState::Owner { state, .. }) if owner < self.ctx.size() => Some(state.queue_regions(owner)),
            _ => None,
        }
    }

    /// Waits until this core's owner-computes requests are applied at their targets
    /// (called by every call that completes RMA). Free for the other strategies.
    #[inline]
    pub(crate) fn acc_quiesce(&self) -> Result<(), JobAborted> {
        // Without a strategy state (`Atomic`) nothing is pending: one load of a private
        // flag, not a borrow, on every unlock and flush.
        if !self.acc_locks() {
            return Ok(());
        }
        match &*self.acc.0.borrow() {
            Some(AccState::Owner { state, .. }) => state.quiesce(),
            _ => Ok(()),
        }
    }

    /// Whether ARMW on this window takes locks (any strategy but `Atomic`): a plain
    /// load of a private flag, so that the lock-free path stays as short as before.
    #[inline(always)]
    pub(crate) fn acc_locks(&self) -> bool {
        self.acc.1.get()
    }

    /// Enters the atomicity domain of an ARMW on bytes `at..at + width` of `target`'s
    /// part (module docs) under a strategy with locks ([`Window::acc_locks`]), until the
    /// guard drops: holds the stripes that guard those bytes. Rank and range are
    /// checked. Nothing to hold (`None`) under `Atomic`.
    #[inline(never)]
    pub(crate) fn locked_domain(
        &self,
        target: u32,
        at: usize,
        width: usize,
    ) -> Result<Option<SpanGuard<'c>>, RmaError> {
        // Stripes cut the part's frame (`Window::acc_frame`).
        let at = at + self.acc_frame(target).1;
        Ok(Some(match &*self.acc.0.borrow() {
            Some(AccState::Caller { abs, stripings, .. }) => {
                let bytes = self.ctx.segment().bytes(*abs);
                let locks = stripes_at(bytes, target as usize * stripes_bytes(1), MAX_STRIPES);
                // The striping of `acc_dispatch`: the same locks guard the same bytes.
                let striping = stripings[target as usize];
                let bell = &self.ctx.segment().slot(target).bell;
                lock_span(locks, striping, at, at + width, &self.ctx.waiter(), bell)?
            }
            Some(AccState::Owner { state, stripings, .. }) => {
                state.armw_domain(target, stripings[target as usize], at, at + width)?
            }
            None => return Ok(None),
        }))
    }

    /// The heap block of the accumulate state, if the strategy has one.
    pub(crate) fn acc_block(&self) -> Option<HeapRegion> {
        match &*self.acc.0.borrow() {
            Some(AccState::Caller { block, .. } | AccState::Owner { block, .. }) => Some(*block),
            None => None,
        }
    }

    /// Collective, after the barrier of `free`: stops the agent and frees the block.
    pub(crate) fn acc_free(&self) -> Result<(), WindowError> {
        self.acc.1.set(false);
        let block = match self.acc.0.borrow_mut().take() {
            None => return Ok(()),
            Some(AccState::Caller { block, .. }) => block,
            Some(AccState::Owner { block, state, .. }) => {
                drop(state);
                block
            }
        };
        self.ctx.heap_free(block)?;
        Ok(())
    }
}

impl<T: AccElem + Plain> Window<'_, T> {
    /// `target[index..] = target[index..] op src`, element by element, each atomically
    /// (`MPI_Accumulate`).
    pub fn accumulate(&self, target: u32, index: usize, src: &[T], op: Op) -> Result<(), AccError> {
        self.acc_dispatch(target, index, src, None, op)
    }

    /// Like [`Window::accumulate`], and returns the previous values in `result`
    /// (`MPI_Get_accumulate`; `Op::NoOp` is an atomic read).
    pub fn get_accumulate(
        &self,
        target: u32,
        index: usize,
        src: &[T],
        result: &mut [T],
        op: Op,
    ) -> Result<(), AccError> {
        self.get_accumulate_as(target, index, src, result, op)
    }

    /// One element: sets it to `old op value`, returns `old` (`MPI_Fetch_and_op`).
    pub fn fetch_and_op(&self, target: u32, index: usize, value: T, op: Op) -> Result<T, AccError> {
        self.fetch_and_op_as(target, index, value, op)
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// [`Window::accumulate`] with elements of another type `E` than the window's:
    /// `index` still counts elements of `T` (bytes, on a window of `u8`), and the
    /// elements must be aligned to their size there.
    pub fn accumulate_as<E: AccElem>(&self, target: u32, index: usize, src: &[E], op: Op) -> Result<(), AccError> {
        self.acc_dispatch(target, index, src, None, op)
    }

    /// [`Window::get_accumulate`] with elements of type `E` (see [`Window::accumulate_as`]).
    pub fn get_accumulate_as<E: AccElem>(
        &self,
        target: u32,
        index: usize,
        src: &[E],
        result: &mut [E],
        op: Op,
    ) -> Result<(), AccError> {
        if result.len() != src.len() {
            return Err(RmaError::LengthMismatch { expected: src.len(), found: result.len() }.into());
        }
        self.acc_dispatch(target, index, src, Some(result), op)
    }

    /// [`Window::fetch_and_op`] on an element of type `E` (see [`Window::accumulate_as`]).
    pub fn fetch_and_op_as<E: AccElem>(&self, target: u32, index: usize, value: E, op: Op) -> Result<E, AccError> {
        let mut old = [value];
        self.acc_dispatch(target, index, &[value], Some(&mut old), op)?;
        Ok(old[0])
    }

    /// Compare-and-swap of one element of any type of at most 8 bytes
    /// (`MPI_Compare_and_swap`, on `MPI_CHAR` too): replaces it with `value` if it
    /// holds `compare`, bit for bit, and returns what it held; in the atomicity domain
    /// of the window's accumulates, whatever the strategy. `index` counts elements of
    /// `T`, as in [`Window::accumulate_as`].
    pub fn compare_and_swap_as<E: AccElem>(
        &self,
        target: u32,
        index: usize,
        compare: E,
        value: E,
    ) -> Result<E, AccError> {
        self.check_access(target)?;
        let width = size_of::<E>();
        let at = self.check_bytes(target, index, width)?;
        if width > 8 {
            return Err(AccError::NotLockFree { type_name: E::NAME });
        }
        self.update_call("compare_and_swap", target, width, #[inline(always)] || {
            let words = self.words_around(target, at, width, 1)?;
            self.issued();
            let _domain = if self.acc_locks() { self.locked_domain(target, at, width)? } else { None };
            Ok(compare_and_swap_slot(words.slot(0), compare, value))
        })
    }

    /// The atomic words holding `count` elements of `width` bytes at byte `at` of
    /// `target`'s part (range checked): the aligned words around elements narrower
    /// than a word, which may reach past the part into its neighbours' bytes (only the
    /// elements' own lanes ever change).
    fn words_around(&self, target: u32, at: usize, width: usize, count: usize) -> Result<Words<'c>, RmaError> {
        let part = self.part_region(target);
        let misaligned = RmaError::Misaligned { rank: target, byte_offset: at, width };
        if (part.offset + at) % width != 0 {
            return Err(misaligned);
        }
        let seg = self.ctx.segment();
        let lo = part.offset & !3;
        let hi = (part.end().next_multiple_of(4)).min(seg.layout().total);
        let around = seg.bytes(Region { offset: lo, len: hi - lo });
        words_at(around, part.offset - lo + at, width, count).ok_or(misaligned)
    }

    fn acc_dispatch<E: Element>(
        &self,
        target: u32,
        index: usize,
        src: &[E],
        result: Option<&mut [E]>,
        op: Op,
    ) -> Result<(), AccError> {
        self.update_call("accumulate", target, size_of_val(src), || self.acc_now(target, index, src, result, op))
    }

    fn acc_now<E: Element>(
        &self,
        target: u32,
        index: usize,
        src: &[E],
        result: Option<&mut [E]>,
        op: Op,
    ) -> Result<(), AccError> {
        E::check(op)?;
        self.check_access(target)?;
        let at = self.check_bytes(target, index, size_of_val(src))?;
        let width = size_of::<E>();
        let misaligned = RmaError::Misaligned { rank: target, byte_offset: at, width };
        if (self.part_region(target).offset + at) % width != 0 {
            return Err(misaligned.into());
        }
        let acc = self.acc.0.borrow();
        if acc.is_none() && width > 8 {
            return Err(AccError::NotLockFree { type_name: E::NAME });
        }
        self.issued();
        if src.is_empty() {
            return Ok(());
        }
        match &*acc {
            None => accumulate_words(self.words_around(target, at, width, src.len())?, op, src, result),
            Some(AccState::Caller { abs, stripings, .. }) => {
                let share = stripes_bytes(1);
                let bytes = self.ctx.segment().bytes(*abs);
                let locks = stripes_at(bytes, target as usize * share, MAX_STRIPES);
                let striping = stripings[target as usize];
                let bell = &self.ctx.segment().slot(target).bell;
                let (frame, phase) = self.acc_frame(target);
                let frame = self.ctx.segment().bytes(frame);
                let waiter = self.ctx.waiter();
                striped_combine(locks, striping, &frame, at + phase, op, src, result, &waiter, bell)?;
            }
            Some(AccState::Owner { state, .. }) => {
                state.request(target, at + self.acc_frame(target).1, op, src, result)?
            }
        }
        Ok(())
    }
}

impl<T: AccElem + Plain> Window<'_, T> {
    /// Accumulates contiguous `src` into a strided layout starting at `index` (an
    /// `MPI_Type_vector` target datatype; the layout counts elements of `T`): block by
    /// block, each element atomically. Every block is checked before any is applied.
    pub fn accumulate_strided(
        &self,
        target: u32,
        index: usize,
        layout: Vector,
        src: &[T],
        op: Op,
    ) -> Result<(), AccError> {
        T::check(op)?;
        self.check_access(target)?;
        if layout.elements() != src.len() {
            return Err(RmaError::LengthMismatch { expected: layout.elements(), found: src.len() }.into());
        }
        let starts =
            (0..layout.nonempty_blocks()).map(|i| index.saturating_add(i.saturating_mul(layout.stride)));
        for start in starts.clone() {
            self.check_range(target, start, layout.block_len)?;
        }
        self.issued();
        for (start, block) in starts.zip(src.chunks(layout.block_len.max(1))) {
            self.acc_dispatch(target, start, block, None, op)?;
        }
        Ok(())
    }
}
