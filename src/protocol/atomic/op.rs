//! Reduction operations and the element types they apply to (MPI's predefined ops).
//!
//! `Op::combine(a, b)` is the value of `a op b` where `a` is the accumulated (target)
//! value and `b` the incoming one; `Replace` keeps `b`, `NoOp` keeps `a`. An op that
//! makes no sense for a type (a bitwise op on a float, MINLOC on a plain number, a sum
//! of value-index pairs) is an [`OpError`], checked before any data moves.
//!
//! The element types form a closed set, [`ElemKind`]: the integers of 1 to 8 bytes,
//! `f32`, `f64` and the value-index pairs of MINLOC and MAXLOC (`pair`). A kind travels
//! with an owner-computes request, and [`with_elem!`](crate::with_elem) turns it back
//! into the type.

use std::fmt;

/// A predefined reduction operation.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    /// `a + b` (`MPI_SUM`); integers wrap.
    Sum,
    /// `a * b` (`MPI_PROD`); integers wrap.
    Prod,
    /// The smaller (`MPI_MIN`).
    Min,
    /// The larger (`MPI_MAX`).
    Max,
    /// `a & b` (`MPI_BAND`); integers only.
    BitAnd,
    /// `a | b` (`MPI_BOR`); integers only.
    BitOr,
    /// `a ^ b` (`MPI_BXOR`); integers only.
    BitXor,
    /// 1 if both are nonzero, else 0 (`MPI_LAND`).
    LogicalAnd,
    /// 1 if either is nonzero, else 0 (`MPI_LOR`).
    LogicalOr,
    /// 1 if exactly one is nonzero, else 0 (`MPI_LXOR`).
    LogicalXor,
    /// The incoming value (`MPI_REPLACE`): an atomic put.
    Replace,
    /// The target value, unchanged (`MPI_NO_OP`): an atomic get.
    NoOp,
    /// The pair with the smaller value, the smaller index on a tie (`MPI_MINLOC`);
    /// value-index pairs only.
    MinLoc,
    /// The pair with the larger value, the smaller index on a tie (`MPI_MAXLOC`);
    /// value-index pairs only.
    MaxLoc,
    /// Scaled sum, `a + alpha * b` (AXPY).
    Axpy(f64),
}

impl Op {
    /// Every op, for exhaustive tests (AXPY, with alpha 2, last).
    pub const ALL: [Op; 15] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
        Op::LogicalAnd,
        Op::LogicalOr,
        Op::LogicalXor,
        Op::Replace,
        Op::NoOp,
        Op::MinLoc,
        Op::MaxLoc,
        Op::Axpy(2.0),
    ];

    fn is_bitwise(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }

    /// The op as two words (its place in [`Op::ALL`], and AXPY's factor), to travel
    /// through shared memory.
    pub fn code(self) -> (u32, f64) {
        match self {
            Op::Axpy(alpha) => (Op::ALL.len() as u32 - 1, alpha),
            other => (Op::ALL.iter().position(|o| *o == other).expect("every op is in ALL") as u32, 0.0),
        }
    }

    /// The op of [`Op::code`]'s words; `None` for a code no op has.
    pub fn from_code(code: u32, alpha: f64) -> Option<Op> {
        match Op::ALL.get(code as usize)? {
            Op::Axpy(_) => Some(Op::Axpy(alpha)),
            op => Some(*op),
        }
    }
}

/// Every element type of reductions and accumulates: what an owner-computes request
/// carries to say how to combine its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ElemKind {
    /// `i8` (`MPI_SIGNED_CHAR`, `MPI_CHAR`).
    I8,
    /// `u8` (`MPI_UNSIGNED_CHAR`, `MPI_BYTE`).
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// [`IntIndex`](crate::protocol::atomic::pair::IntIndex) (`MPI_2INT`).
    IntIndex,
    /// [`ShortIndex`](crate::protocol::atomic::pair::ShortIndex) (`MPI_SHORT_INT`).
    ShortIndex,
    /// [`FloatIndex`](crate::protocol::atomic::pair::FloatIndex) (`MPI_FLOAT_INT`).
    FloatIndex,
    /// [`LongIndex`](crate::protocol::atomic::pair::LongIndex) (`MPI_LONG_INT`).
    LongIndex,
    /// [`DoubleIndex`](crate::protocol::atomic::pair::DoubleIndex) (`MPI_DOUBLE_INT`).
    DoubleIndex,
}

impl ElemKind {
    /// Every kind, in code order.
    pub const ALL: [ElemKind; 15] = [
        ElemKind::I8,
        ElemKind::U8,
        ElemKind::I16,
        ElemKind::U16,
        ElemKind::I32,
        ElemKind::U32,
        ElemKind::I64,
        ElemKind::U64,
        ElemKind::F32,
        ElemKind::F64,
        ElemKind::IntIndex,
        ElemKind::ShortIndex,
        ElemKind::FloatIndex,
        ElemKind::LongIndex,
        ElemKind::DoubleIndex,
    ];

    /// The kind of code `code` (`kind as u8`), if any.
    pub fn from_code(code: u32) -> Option<ElemKind> {
        ElemKind::ALL.get(code as usize).copied()
    }

    /// Whether the kind is a value-index pair.
    pub fn is_pair(self) -> bool {
        self as u8 >= ElemKind::IntIndex as u8
    }

    /// Whether the kind is a float.
    pub fn is_float(self) -> bool {
        matches!(self, ElemKind::F32 | ElemKind::F64)
    }
}

/// Runs `$body` with the type alias `$t` bound to the element type of the
/// [`ElemKind`] `$kind`: how code that received a kind (an owner-computes agent, a C
/// interface) calls the generic combining code.
#[macro_export]
macro_rules! with_elem {
    ($kind:expr, $t:ident => $body:expr) => {{
        use $crate::protocol::atomic::op::ElemKind as K;
        use $crate::protocol::atomic::pair as p;
        match $kind {
            K::I8 => {
                type $t = i8;
                $body
            }
            K::U8 => {
                type $t = u8;
                $body
            }
            K::I16 => {
                type $t = i16;
                $body
            }
            K::U16 => {
                type $t = u16;
                $body
            }
            K::I32 => {
                type $t = i32;
                $body
            }
            K::U32 => {
                type $t = u32;
                $body
            }
            K::I64 => {
                type $t = i64;
                $body
            }
            K::U64 => {
                type $t = u64;
                $body
            }
            K::F32 => {
                type $t = f32;
                $body
            }
            K::F64 => {
                type $t = f64;
                $body
            }
            K::IntIndex => {
                type $t = p::IntIndex;
                $body
            }
            K::ShortIndex => {
                type $t = p::ShortIndex;
                $body
            }
            K::FloatIndex => {
                type $t = p::FloatIndex;
                $body
            }
            K::LongIndex => {
                type $t = p::LongIndex;
                $body
            }
            K::DoubleIndex => {
                type $t = p::DoubleIndex;
                $body
            }
        }
    }};
}

/// An op applied to a type it does not apply to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpError {
    /// The op refused.
    pub op: Op,
    /// The element type's [`Element::NAME`].
    pub type_name: &'static str,
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not defined on {}", self.op, self.type_name)
    }
}

impl std::error::Error for OpError {}

pub(crate) mod sealed {
    /// The element types are a closed set (see [`super::ElemKind`]).
    pub trait Sealed {}
}

/// An element type that reductions and accumulates apply to: one of [`ElemKind`].
pub trait Element: bytemuck::Pod + PartialOrd + fmt::Debug + Send + Sync + 'static + sealed::Sealed {
    /// The type's name in messages (`"f64"`).
    const NAME: &'static str;
    /// Which of the element types it is.
    const KIND: ElemKind;

    /// `a op b`, for an op already checked with [`Element::check`].
    fn combine(op: Op, a: Self, b: Self) -> Self;

    /// Whether `op` applies to this type: no bitwise op on floats, MINLOC and MAXLOC
    /// on pairs only, and on pairs nothing else but `Replace` and `NoOp`.
    fn check(op: Op) -> Result<(), OpError> {
        let kind = Self::KIND;
        let applies = match op {
            Op::Replace | Op::NoOp => true,
            Op::MinLoc | Op::MaxLoc => kind.is_pair(),
            _ if kind.is_pair() => false,
            op => !(kind.is_float() && op.is_bitwise()),
        };
        if applies { Ok(()) } else { Err(OpError { op, type_name: Self::NAME }) }
    }
}

macro_rules! integer_element {
    ($($t:ty => $kind:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const KIND: ElemKind = ElemKind::$kind;

            // Inline across crates: generic callers (accumulate) must see the op folded.
            #[inline]
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Prod => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::BitAnd => a & b,
                    Op::BitOr => a | b,
                    Op::BitXor => a ^ b,
                    Op::LogicalAnd => Self::from(a != 0 && b != 0),
                    Op::LogicalOr => Self::from(a != 0 || b != 0),
                    Op::LogicalXor => Self::from((a != 0) != (b != 0)),
                    Op::Replace => b,
                    Op::NoOp => a,
                    // Integer AXPY scales by alpha truncated toward zero, in wrapping
                    // integer arithmetic, so that every strategy gives identical bits.
                    Op::Axpy(alpha) => a.wrapping_add((alpha as $t).wrapping_mul(b)),
                    Op::MinLoc | Op::MaxLoc => unreachable!("checked by Element::check"),
                }
            }
        }
    )*};
}

macro_rules! float_element {
    ($($t:ty => $kind:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const KIND: ElemKind = ElemKind::$kind;

            // Inline across crates: generic callers (accumulate) must see the op folded.
            #[inline]
            fn combine(op: Op, a: Self, b: Self) -> Self {
                let truth = |v: bool| if v { 1.0 } else { 0.0 };
                match op {
                    Op::Sum => a + b,
                    Op::Prod => a * b,
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::LogicalAnd => truth(a != 0.0 && b != 0.0),
                    Op::LogicalOr => truth(a != 0.0 || b != 0.0),
                    Op::LogicalXor => truth((a != 0.0) != (b != 0.0)),
                    Op::Replace => b,
                    Op::NoOp => a,
                    Op::Axpy(alpha) => a + (alpha as $t) * b,
                    Op::BitAnd | Op::BitOr | Op::BitXor | Op::MinLoc | Op::MaxLoc => {
                        unreachable!("checked by Element::check")
                    }
                }
            }
        }
    )*};
}

integer_element!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64);
float_element!(f32 => F32, f64 => F64);

/// `acc[i] = acc[i] op incoming[i]` for every element. One loop per op, so that the
/// op is a constant inside it and the compiler vectorizes the combine.
pub fn combine_into<T: Element>(op: Op, acc: &mut [T], incoming: &[T]) {
    #[inline(always)]
    fn each<T: Copy>(acc: &mut [T], incoming: &[T], f: impl Fn(T, T) -> T) {
        for (a, b) in acc.iter_mut().zip(incoming) {
            *a = f(*a, *b);
        }
    }
    match op {
        Op::Sum => each(acc, incoming, |a, b| T::combine(Op::Sum, a, b)),
        Op::Prod => each(acc, incoming, |a, b| T::combine(Op::Prod, a, b)),
        Op::Min => each(acc, incoming, |a, b| T::combine(Op::Min, a, b)),
        Op::Max => each(acc, incoming, |a, b| T::combine(Op::Max, a, b)),
        Op::BitAnd => each(acc, incoming, |a, b| T::combine(Op::BitAnd, a, b)),
        Op::BitOr => each(acc, incoming, |a, b| T::combine(Op::BitOr, a, b)),
        Op::BitXor => each(acc, incoming, |a, b| T::combine(Op::BitXor, a, b)),
        Op::LogicalAnd => each(acc, incoming, |a, b| T::combine(Op::LogicalAnd, a, b)),
        Op::LogicalOr => each(acc, incoming, |a, b| T::combine(Op::LogicalOr, a, b)),
        Op::LogicalXor => each(acc, incoming, |a, b| T::combine(Op::LogicalXor, a, b)),
        Op::Replace => {
            let n = acc.len().min(incoming.len());
            acc[..n].copy_from_slice(&incoming[..n]);
        }
        Op::NoOp => {}
        Op::MinLoc => each(acc, incoming, |a, b| T::combine(Op::MinLoc, a, b)),
        Op::MaxLoc => each(acc, incoming, |a, b| T::combine(Op::MaxLoc, a, b)),
        Op::Axpy(alpha) => each(acc, incoming, |a, b| T::combine(Op::Axpy(alpha), a, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ops() {
        assert_eq!(i32::combine(Op::Sum, i32::MAX, 1), i32::MIN, "wraps like MPI's C ints");
        assert_eq!(u64::combine(Op::Min, 3, 9), 3);
        assert_eq!(i64::combine(Op::Max, -3, -9), -3);
        assert_eq!(u32::combine(Op::BitXor, 0b1100, 0b1010), 0b0110);
        assert_eq!(i32::combine(Op::LogicalAnd, 5, 0), 0);
        assert_eq!(i32::combine(Op::LogicalOr, 5, 0), 1);
        assert_eq!(u32::combine(Op::Replace, 5, 7), 7);
        assert_eq!(u32::combine(Op::NoOp, 5, 7), 5);
        assert_eq!(i64::combine(Op::Axpy(3.0), 1, 2), 7);
    }

    #[test]
    fn float_ops_and_refusals() {
        assert_eq!(f64::combine(Op::Prod, 1.5, 4.0), 6.0);
        assert_eq!(f32::combine(Op::Axpy(0.5), 1.0, 4.0), 3.0);
        assert_eq!(f64::check(Op::BitXor), Err(OpError { op: Op::BitXor, type_name: "f64" }));
        assert!(f32::check(Op::Sum).is_ok() && u64::check(Op::BitAnd).is_ok());
        assert!(i8::check(Op::MinLoc).is_err() && f64::check(Op::MaxLoc).is_err());
        assert_eq!(i8::combine(Op::Sum, 127, 1), -128);
        assert_eq!(u16::combine(Op::Max, 7, 65535), 65535);
    }

    #[test]
    fn codes_round_trip() {
        for op in Op::ALL.into_iter().chain([Op::Axpy(-0.5)]) {
            let (code, alpha) = op.code();
            assert_eq!(Op::from_code(code, alpha), Some(op));
        }
        assert_eq!(Op::from_code(99, 0.0), None);
        for kind in ElemKind::ALL {
            assert_eq!(ElemKind::from_code(kind as u32), Some(kind));
            assert_eq!(with_elem!(kind, E => E::KIND), kind);
        }
        assert_eq!(ElemKind::from_code(15), None);
    }
}
