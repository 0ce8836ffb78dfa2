//! Lock-free element-wise accumulate (the `Atomic` strategy): every element of the
//! target is updated by one CPU atomic, so accumulates, get_accumulates and
//! fetch_and_ops on the same element are atomic with respect to each other, and the
//! target never takes part.
//!
//! Per element, the cheapest correct atomic:
//! - integer `Sum`, `BitAnd`, `BitOr`, `BitXor`: native `fetch_add/and/or/xor`
//!   (two's-complement bits, so signed and unsigned, wrapping, are the same
//!   instruction);
//! - `Replace` on any type: `swap`; `NoOp`: an atomic load;
//! - everything else (float sums, products, min/max, logical ops, AXPY): the
//!   compare-and-swap loop of [`crate::protocol::atomic::armw::Word::fetch_update`], which recomputes
//!   `old op b` with [`Element::combine`] until no other update intervened, backing
//!   off between attempts.
//!
//! Invariant: the value left in the element is `combine(op, old, b)` for the `old`
//! returned, whatever other cores do concurrently (each update is linearised at its
//! successful RMW/CAS). Orderings are those of `armw` (AcqRel RMWs, Acquire loads),
//! so an accumulate also orders the origin's earlier stores, like an ARMW.
//! Elements are applied in increasing index order, so one origin's updates to one
//! element land in the order issued.

use crate::protocol::atomic::armw::{AtomicElem, RmwOp, Word};
use crate::protocol::atomic::op::{Element, Op};
use crate::sync::{AtomicU32, AtomicU64};

/// An element type the accumulate strategies handle: an [`Element`] (the reduction)
/// that is also an [`AtomicElem`] (the atomic width): i32, i64, u32, u64, f32, f64.
pub trait AccElem: Element + AtomicElem {}
impl<T: Element + AtomicElem> AccElem for T {}

/// A run of contiguous atomic elements (4- or 8-byte words).
#[derive(Clone, Copy)]
pub enum Words<'a> {
    /// Elements of 4 bytes.
    W32(&'a [AtomicU32]),
    /// Elements of 8 bytes.
    W64(&'a [AtomicU64]),
}

impl<'a> Words<'a> {
    /// Elements in the run.
    pub fn len(&self) -> usize {
        match self {
            Words::W32(w) => w.len(),
            Words::W64(w) => w.len(),
        }
    }

    /// Whether the run has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`'s word; panics if `i` is out of range.
    #[inline]
    pub fn word(&self, i: usize) -> Word<'a> {
        match self {
            Words::W32(w) => Word::W32(&w[i]),
            Words::W64(w) => Word::W64(&w[i]),
        }
    }
}

/// The native RMW that implements `op` on `T`, if the CPU has one.
#[inline]
fn native<T: AccElem>(op: Op) -> Option<RmwOp> {
    match op {
        Op::Sum if !T::IS_FLOAT => Some(RmwOp::Add),
        Op::BitAnd => Some(RmwOp::And),
        Op::BitOr => Some(RmwOp::Or),
        Op::BitXor => Some(RmwOp::Xor),
        Op::Replace => Some(RmwOp::Swap),
        _ => None,
    }
}

/// Atomically sets the element to `old op b`; returns `old`. `op` must already be
/// checked for `T` ([`Element::check`]).
#[inline]
pub fn fetch_and_op_word<T: AccElem>(word: Word<'_>, op: Op, b: T) -> T {
    if op == Op::NoOp {
        return T::from_bits(word.load());
    }
    if let Some(rmw) = native::<T>(op) {
        return T::from_bits(word.fetch_op(rmw, T::KIND, b.to_bits()));
    }
    T::from_bits(word.fetch_update(|old| T::combine(op, T::from_bits(old), b).to_bits()))
}

/// `words[i] = words[i] op src[i]` element by element, each atomically; the previous
/// values go to `old` when given. `words`, `src` (and `old`) have equal lengths.
pub fn accumulate_words<T: AccElem>(words: Words<'_>, op: Op, src: &[T], mut old: Option<&mut [T]>) {
    assert_eq!(words.len(), src.len(), "lengths checked by the caller");
    for (i, &b) in src.iter().enumerate() {
        let prev = fetch_and_op_word(words.word(i), op, b);
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
            let cells: Vec<AtomicU64> = [5i64, -7, 0].iter().map(|v| AtomicU64::new(v.to_bits())).collect();
            let src = [3i64, 2, -4];
            let mut old = [0i64; 3];
            accumulate_words(Words::W64(&cells), op, &src, Some(&mut old));
            assert_eq!(old, [5, -7, 0]);
            for i in 0..3 {
                let want = i64::combine(op, old[i], src[i]);
                assert_eq!(i64::from_bits(cells[i].load(crate::sync::Ordering::Relaxed)), want, "{op:?}");
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
}
