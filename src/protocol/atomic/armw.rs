//! Atomic read-modify-write on window elements (ARMW).
//!
//! Every ARMW is one CPU atomic on the target's memory: the target never takes part,
//! and one cache line moves. Integers (u32, u64, i32, i64) use native atomics;
//! signed values go through their two's-complement bits, which add, and, or, xor and
//! swap treat identically. f32/f64 `fetch_add` is a compare-and-swap loop on the
//! bits (with backoff between retries); the float's other operations (swap, CAS,
//! load, store) are plain bit operations. CAS compares bits, as MPI does.
//!
//! Orderings: read-modify-writes are `AcqRel`, loads `Acquire`, stores `Release`, so
//! an ARMW can hand data off to another core without a further sync (an element used
//! as a flag or counter orders the puts before it). On x86 these cost nothing over
//! `Relaxed`: every RMW is a full barrier anyway.

use crate::sync::{AtomicU32, AtomicU64, Backoff, Ordering};

mod sealed {
    pub trait Sealed {}
}

/// How an element's bits add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Integers: wrapping add of the bits.
    Int,
    /// f32 in the low 32 bits: float add by compare-and-swap.
    F32,
    /// f64 bits: float add by compare-and-swap.
    F64,
}

/// An element type the hardware updates atomically: u32, u64, i32, i64, f32, f64.
pub trait AtomicElem: Copy + PartialEq + Send + Sync + 'static + sealed::Sealed {
    /// 4 or 8.
    const WIDTH: usize;
    #[doc(hidden)]
    const KIND: Kind;
    #[doc(hidden)]
    fn to_bits(self) -> u64;
    #[doc(hidden)]
    fn from_bits(bits: u64) -> Self;
}

/// The integer element types: they also support the bitwise operations.
pub trait AtomicInt: AtomicElem {}

macro_rules! int_elem {
    ($($t:ty, $w:expr, $u:ty);*) => {$(
        impl sealed::Sealed for $t {}
        impl AtomicElem for $t {
            const WIDTH: usize = $w;
            const KIND: Kind = Kind::Int;
            fn to_bits(self) -> u64 { self as $u as u64 }
            fn from_bits(bits: u64) -> Self { bits as $u as $t }
        }
        impl AtomicInt for $t {}
    )*};
}
int_elem!(u32, 4, u32; i32, 4, u32; u64, 8, u64; i64, 8, u64);

impl sealed::Sealed for f32 {}
impl AtomicElem for f32 {
    const WIDTH: usize = 4;
    const KIND: Kind = Kind::F32;
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl sealed::Sealed for f64 {}
impl AtomicElem for f64 {
    const WIDTH: usize = 8;
    const KIND: Kind = Kind::F64;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

/// A read-modify-write operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RmwOp {
    /// Adds (wrapping for integers, float add for floats).
    Add,
    /// Bitwise or; integers only.
    Or,
    /// Bitwise and; integers only.
    And,
    /// Bitwise exclusive or; integers only.
    Xor,
    /// Replaces the value.
    Swap,
}

/// The atomic word an element lives in.
#[derive(Clone, Copy)]
pub enum Word<'a> {
    /// A 4-byte element.
    W32(&'a AtomicU32),
    /// An 8-byte element.
    W64(&'a AtomicU64),
}

#[inline]
fn float_add(kind: Kind, a: u64, b: u64) -> u64 {
    match kind {
        Kind::F32 => (f32::from_bits(a as u32) + f32::from_bits(b as u32)).to_bits() as u64,
        Kind::F64 => (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
        Kind::Int => a.wrapping_add(b),
    }
}

impl Word<'_> {
    /// Applies `op` with operand `bits`, returning the previous bits.
    #[inline]
    pub fn fetch_op(self, op: RmwOp, kind: Kind, bits: u64) -> u64 {
        // AcqRel throughout (module docs).
        const O: Ordering = Ordering::AcqRel;
        if op == RmwOp::Add && kind != Kind::Int {
            return self.fetch_update(|old| float_add(kind, old, bits));
        }
        match self {
            Word::W32(a) => {
                let v = bits as u32;
                (match op {
                    RmwOp::Add => a.fetch_add(v, O),
                    RmwOp::Or => a.fetch_or(v, O),
                    RmwOp::And => a.fetch_and(v, O),
                    RmwOp::Xor => a.fetch_xor(v, O),
                    RmwOp::Swap => a.swap(v, O),
                }) as u64
            }
            Word::W64(a) => match op {
                RmwOp::Add => a.fetch_add(bits, O),
                RmwOp::Or => a.fetch_or(bits, O),
                RmwOp::And => a.fetch_and(bits, O),
                RmwOp::Xor => a.fetch_xor(bits, O),
                RmwOp::Swap => a.swap(bits, O),
            },
        }
    }

    /// A compare-and-swap loop applying `f`; backs off between failed attempts (and
    /// yields under loom). Returns the previous bits.
    #[inline]
    pub fn fetch_update(self, f: impl Fn(u64) -> u64) -> u64 {
        let backoff = Backoff::new();
        let mut old = self.load_relaxed();
        loop {
            match self.cas_weak(old, f(old)) {
                Ok(prev) => return prev,
                Err(now) => old = now,
            }
            backoff.snooze();
        }
    }

    #[inline]
    fn load_relaxed(self) -> u64 {
        // Relaxed: only a first guess; the CAS that succeeds is AcqRel.
        match self {
            Word::W32(a) => a.load(Ordering::Relaxed) as u64,
            Word::W64(a) => a.load(Ordering::Relaxed),
        }
    }

    #[inline]
    fn cas_weak(self, current: u64, new: u64) -> Result<u64, u64> {
        match self {
            Word::W32(a) => a
                .compare_exchange_weak(current as u32, new as u32, Ordering::AcqRel, Ordering::Relaxed)
                .map(u64::from)
                .map_err(u64::from),
            Word::W64(a) => a.compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Relaxed),
        }
    }

    /// Stores `new` if the word holds `current`; returns the previous bits either way.
    #[inline]
    pub fn compare_and_swap(self, current: u64, new: u64) -> u64 {
        // AcqRel on success (module docs); Acquire on failure so the value read is
        // as usable as an atomic load's.
        match self {
            Word::W32(a) => {
                match a.compare_exchange(current as u32, new as u32, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(v) | Err(v) => v as u64,
                }
            }
            Word::W64(a) => match a.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(v) | Err(v) => v,
            },
        }
    }

    /// The bits, with Acquire.
    #[inline]
    pub fn load(self) -> u64 {
        match self {
            Word::W32(a) => a.load(Ordering::Acquire) as u64,
            Word::W64(a) => a.load(Ordering::Acquire),
        }
    }

    /// Stores `bits` with Release.
    #[inline]
    pub fn store(self, bits: u64) {
        match self {
            Word::W32(a) => a.store(bits as u32, Ordering::Release),
            Word::W64(a) => a.store(bits, Ordering::Release),
        }
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;

    #[test]
    fn signed_and_float_bits_round_trip() {
        let w = AtomicU64::new((-5i64).to_bits());
        let word = Word::W64(&w);
        assert_eq!(i64::from_bits(word.fetch_op(RmwOp::Add, Kind::Int, 3i64.to_bits())), -5);
        assert_eq!(i64::from_bits(word.load()), -2);
        let f = AtomicU32::new(1.5f32.to_bits());
        let word = Word::W32(&f);
        let add = <f32 as AtomicElem>::to_bits(2.25);
        assert_eq!(<f32 as AtomicElem>::from_bits(word.fetch_op(RmwOp::Add, Kind::F32, add)), 1.5);
        assert_eq!(<f32 as AtomicElem>::from_bits(word.load()), 3.75);
        let i = AtomicU32::new((-1i32).to_bits() as u32);
        assert_eq!(i32::from_bits(Word::W32(&i).fetch_op(RmwOp::And, Kind::Int, 0xffi32.to_bits())), -1);
        assert_eq!(i32::from_bits(Word::W32(&i).load()), 0xff);
    }
}
