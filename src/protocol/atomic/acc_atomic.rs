//! Lock-free element-wise accumulate (the `Atomic` strategy): every element of the
//! target is updated by one CPU atomic, so accumulates, get_accumulates and
//! fetch_and_ops on the same element are atomic with respect to each other, and the
//! target never takes part.
//!
//! Per element, the cheapest correct atomic:
//! - 4- and 8-byte integer `Sum`, `BitAnd`, `BitOr`, `BitXor`: native
//!   `fetch_add/and/or/xor` (two's-complement bits, so signed and unsigned, wrapping,
//!   are the same instruction);
//! - `Replace` on any 4- or 8-byte type (a value-index pair included): `swap`; `NoOp`:
//!   an atomic load;
//! - everything else (float sums, products, min/max, logical ops, AXPY, MINLOC and
//!   MAXLOC): the compare-and-swap loop of [`Word::fetch_update`], which recomputes
//!   `old op b` with [`Element::combine`] until no other update intervened, backing
//!   off between attempts;
//! - 1- and 2-byte elements (`i8`, `u8`, `i16`, `u16`): the same loop on the aligned
//!   4-byte word that holds them, changing only their lane, so that updates of
//!   neighbouring elements in the same word never overwrite each other.
//!
//! 16-byte elements (the pairs of `long` and `double`) have no such atomic: the window
//! strategies with locks combine them ([`Words`] cannot hold them, and
//! `rma::accumulate` refuses them under `Atomic`).
//!
//! Invariant: the value left in the element is `combine(op, old, b)` for the `old`
//! returned, whatever other cores do concurrently (each update is linearised at its
//! successful RMW/CAS). Orderings are those of `armw` (AcqRel RMWs, Acquire loads),
//! so an accumulate also orders the origin's earlier stores, like an ARMW.
//! Elements are applied in increasing index order, so one origin's updates to one
//! element land in the order issued.

use crate::protocol::atomic::armw::{Kind, RmwOp, Word};
use crate::protocol::atomic::op::{Element, Op};
use crate::sync::{AtomicU32, AtomicU64};

/// An element type the accumulate strategies handle: every [`Element`]. Under the
/// lock-free `Atomic` strategy, only those of at most 8 bytes.
pub trait AccElem: Element {}
impl<T: Element> AccElem for T {}

/// A run of contiguous elements, as the atomic words that hold them.
#[derive(Clone, Copy)]
pub enum Words<'a> {
    /// Elements of 4 bytes.
    W32(&'a [AtomicU32]),
    /// Elements of 8 bytes.
    W64(&'a [AtomicU64]),
    /// Elements of `width` (1 or 2) bytes packed in aligned 4-byte words, the first at
    /// byte `first` of `words[0]`.
    Lanes {
        /// The words holding the run.
        words: &'a [AtomicU32],
        /// Byte offset of the first element in `words[0]`.
        first: usize,
        /// Bytes per element.
        width: usize,
        /// Elements in the run.
        count: usize,
    },
}

/// One element, as [`Words::slot`] finds it.
#[derive(Clone, Copy)]
pub enum Slot<'a> {
    /// A whole 4- or 8-byte word.
    Whole(Word<'a>),
    /// Bits `shift..shift + 8 * width` of a 4-byte word.
    Lane {
        /// The word.
        word: &'a AtomicU32,
        /// Where the element's bits start.
        shift: u32,
        /// The element's bits, unshifted.
        mask: u32,
    },
}

impl<'a> Words<'a> {
    /// Elements in the run.
    pub fn len(&self) -> usize {
        match self {
            Words::W32(w) => w.len(),
            Words::W64(w) => w.len(),
            Words::Lanes { count, .. } => *count,
        }
    }

    /// Whether the run has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`; panics if `i` is out of range.
    #[inline]
    pub fn slot(&self, i: usize) -> Slot<'a> {
        match *self {
            Words::W32(w) => Slot::Whole(Word::W32(&w[i])),
            Words::W64(w) => Slot::Whole(Word::W64(&w[i])),
            Words::Lanes { words, first, width, count } => {
                assert!(i < count, "element {i} of {count}");
                let byte = first + i * width;
                // Little-endian: byte k of a word is bits 8k..8k+8.
                Slot::Lane {
                    word: &words[byte / 4],
                    shift: (byte % 4 * 8) as u32,
                    mask: (1u32 << (8 * width)) - 1,
                }
            }
        }
    }
}

/// The little-endian bits of an element of at most 8 bytes.
#[inline]
pub(crate) fn bits_of<T: Element>(value: T) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&value));
    u64::from_le_bytes(bytes)
}

/// The element whose little-endian bits are the low bits of `bits`.
#[inline]
pub(crate) fn of_bits<T: Element>(bits: u64) -> T {
    bytemuck::pod_read_unaligned(&bits.to_le_bytes()[..size_of::<T>()])
}

/// The native RMW that implements `op` on a whole word of `T`, if the CPU has one.
#[inline]
fn native<T: Element>(op: Op) -> Option<RmwOp> {
    let integer = !T::KIND.is_float() && !T::KIND.is_pair();
    match op {
        Op::Sum if integer => Some(RmwOp::Add),
        Op::BitAnd if integer => Some(RmwOp::And),
        Op::BitOr if integer => Some(RmwOp::Or),
        Op::BitXor if integer => Some(RmwOp::Xor),
        Op::Replace => Some(RmwOp::Swap),
        _ => None,
    }
}

/// Atomically sets a whole-word element to `old op b`; returns `old`. `op` must
/// already be checked for `T` ([`Element::check`]).
#[inline]
pub fn fetch_and_op_word<T: Element>(word: Word<'_>, op: Op, b: T) -> T {
    if op == Op::NoOp {
        return of_bits(word.load());
    }
    if let Some(rmw) = native::<T>(op) {
        return of_bits(word.fetch_op(rmw, Kind::Int, bits_of(b)));
    }
    of_bits(word.fetch_update(|old| bits_of(T::combine(op, of_bits(old), b))))
}

/// [`fetch_and_op_word`] for any slot.
#[inline]
pub fn fetch_and_op_slot<T: Element>(slot: Slot<'_>, op: Op, b: T) -> T {
    match slot {
        Slot::Whole(word) => fetch_and_op_word(word, op, b),
        Slot::Lane { word, shift, mask } => {
            let lane = |bits: u64| of_bits::<T>((bits as u32 >> shift & mask) as u64);
            let word = Word::W32(word);
            if op == Op::NoOp {
                return lane(word.load());
            }
            // The other lanes go back as they were read: a concurrent change to any of
            // them fails the CAS, and the loop recomputes.
            let prev = word.fetch_update(|old| {
                let new = bits_of(T::combine(op, lane(old), b)) as u32 & mask;
                (old as u32 & !(mask << shift) | new << shift) as u64
            });
            lane(prev)
        }
    }
}

/// Atomically replaces the element with `new` if it holds `current` (bit for bit);
/// returns what it held.
#[inline]
pub fn compare_and_swap_slot<T: Element>(slot: Slot<'_>, current: T, new: T) -> T {
    match slot {
        Slot::Whole(word) => of_bits(word.compare_and_swap(bits_of(current), bits_of(new))),
        Slot::Lane { word, shift, mask } => {
            let word = Word::W32(word);
            let (current, new) = (bits_of(current) as u32 & mask, bits_of(new) as u32 & mask);
            let mut old = word.load() as u32;
            loop {
                let lane = old >> shift & mask;
                if lane != current {
                    return of_bits(lane as u64);
                }
                // Only this lane changes; a change to any other lane fails the CAS and
                // the comparison is made again.
                let swapped = old & !(mask << shift) | new << shift;
                match word.compare_and_swap(old as u64, swapped as u64) as u32 {
                    prev if prev == old => return of_bits(lane as u64),
                    prev => old = prev,
                }
            }
        }
    }
}

/// `words[i] = words[i] op src[i]` element by element, each atomically; the previous
/// values go to `old` when given. `words`, `src` (and `old`) have equal lengths.
pub fn accumulate_words<T: Element>(words: Words<'_>, op: Op, src: &[T], mut old: Option<&mut [T]>) {
    assert_eq!(words.len(), src.len(), "lengths checked by the caller");
    for (i, &b) in src.iter().enumerate() {
        let prev = fetch_and_op_slot(words.slot(i), op, b);
        if let Some(out) = old.as_deref_mut() {
            out[i] = prev;
        }
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_op_matches_combine() {
        for op in Op::ALL {
            if i64::check(op).is_err() {
                continue;
            }
            let cells: Vec<AtomicU64> = [5i64, -7, 0].iter().map(|v| AtomicU64::new(*v as u64)).collect();
            let src = [3i64, 2, -4];
            let mut old = [0i64; 3];
            accumulate_words(Words::W64(&cells), op, &src, Some(&mut old));
            assert_eq!(old, [5, -7, 0]);
            for i in 0..3 {
                let want = i64::combine(op, old[i], src[i]);
                assert_eq!(cells[i].load(crate::sync::Ordering::Relaxed) as i64, want, "{op:?}");
            }
            if f32::check(op).is_ok() {
                let cells: Vec<AtomicU32> =
                    [1.5f32, -2.0].iter().map(|v| AtomicU32::new(v.to_bits())).collect();
                accumulate_words(Words::W32(&cells), op, &[0.25f32, 4.0], None);
                let got: Vec<f32> =
                    cells.iter().map(|c| f32::from_bits(c.load(crate::sync::Ordering::Relaxed))).collect();
                assert_eq!(got, [f32::combine(op, 1.5, 0.25), f32::combine(op, -2.0, 4.0)], "{op:?}");
            }
        }
    }

    #[test]
    fn lanes_change_only_their_own_bytes() {
        // Six i8 elements from byte 1 of two words, and one i16 at byte 2 of another.
        let words = [AtomicU32::new(0x4433_2211), AtomicU32::new(0x8877_6655)];
        let run = Words::Lanes { words: &words, first: 1, width: 1, count: 6 };
        let mut old = [0i8; 6];
        accumulate_words(run, Op::Sum, &[1i8, 2, 3, 4, 5, -128], Some(&mut old));
        assert_eq!(old, [0x22, 0x33, 0x44, 0x55, 0x66, 0x77]);
        let load = |w: &AtomicU32| w.load(crate::sync::Ordering::Relaxed);
        assert_eq!((load(&words[0]), load(&words[1])), (0x4735_2311, 0x88F7_6B59), "byte 0 and 7 kept");
        let pair = [AtomicU32::new(0xFFFF_0001)];
        let run = Words::Lanes { words: &pair, first: 2, width: 2, count: 1 };
        assert_eq!(fetch_and_op_slot(run.slot(0), Op::Max, 5i16), -1);
        assert_eq!(load(&pair[0]), 0x0005_0001);
        assert_eq!(compare_and_swap_slot(run.slot(0), 4i16, 9), 5, "no swap: it holds 5");
        assert_eq!(compare_and_swap_slot(run.slot(0), 5i16, -2), 5);
        assert_eq!(load(&pair[0]), 0xFFFE_0001, "swapped, and the other lane kept");
        let pair = crate::protocol::atomic::pair::IntIndex::new(3, 9);
        let cell = [AtomicU64::new(bits_of(pair))];
        let smaller = crate::protocol::atomic::pair::IntIndex::new(2, 4);
        assert_eq!(fetch_and_op_word(Word::W64(&cell[0]), Op::MinLoc, smaller), pair);
        assert_eq!(
            of_bits::<crate::protocol::atomic::pair::IntIndex>(cell[0].load(crate::sync::Ordering::Relaxed)),
            smaller
        );
    }
}
