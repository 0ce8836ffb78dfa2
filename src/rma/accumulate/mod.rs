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
//! The error type is `error`; each window's strategy state, its creation and what the
//! completion and ARMW paths ask of it, is `state`.
//!
//! [`Core::window`]: crate::Core::window
//! [`Core::window_with`]: crate::Core::window_with


use crate::protocol::atomic::acc_atomic::{AccElem, Words, accumulate_words, compare_and_swap_slot};
use crate::protocol::atomic::op::{Element, Op};
use crate::protocol::atomic::stripes::striped_combine;
use crate::rma::acc_view::words_around;
use crate::rma::error::RmaError;
use crate::rma::transfer::Vector;
use crate::rma::window::Window;
use crate::segment::view::Plain;

mod error;
mod state;

pub use error::AccError;
pub use state::AccSlot;
use state::AccState;
pub(crate) use state::{STRIPES_ALIGN, stripes_bytes};

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

/// Stripe granules are multiples of this many bytes: the widest element, so that no
/// element (aligned to its size) straddles two stripes, whatever its type.
pub const ACC_ALIGN: usize = 16;

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
        if self.remote_to(target).is_some() {
            if (self.part_region(target).offset + at) % width != 0 {
                return Err(RmaError::Misaligned { rank: target, byte_offset: at, width }.into());
            }
            self.issued();
            let swapped = self.update_call("compare_and_swap", target, width, || self.remote_compare_and_swap(target, at, compare, value));
            return Ok(swapped?);
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
        words_around(self.ctx.segment(), part, part.offset + at, width, count).ok_or(misaligned)
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
        if self.remote_to(target).is_some() {
            return Ok(self.remote_accumulate(target, at, src, result, op)?);
        }
        match &*acc {
            None => accumulate_words(self.words_around(target, at, width, src.len())?, op, src, result),
            Some(AccState::Caller { shares, stripings, .. }) => {
                let locks = self.caller_locks(shares, target);
                let striping = stripings[target as usize];
                let bell = self.bell(target);
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
