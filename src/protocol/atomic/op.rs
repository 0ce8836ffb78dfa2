//! Reduction operations and the element types they apply to (MPI's predefined ops).
//!
//! `Op::combine(a, b)` is the value of `a op b` where `a` is the accumulated (target)
//! value and `b` the incoming one; `Replace` keeps `b`, `NoOp` keeps `a`. An op that
//! makes no sense for a type (a bitwise op on a float) is an [`OpError`], checked
//! before any data moves.

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
    /// The incoming value (`MPI_REPLACE`): an atomic put.
    Replace,
    /// The target value, unchanged (`MPI_NO_OP`): an atomic get.
    NoOp,
    /// Scaled sum, `a + alpha * b` (AXPY).
    Axpy(f64),
}

impl Op {
    /// Every op, for exhaustive tests (AXPY with alpha 2).
    pub const ALL: [Op; 12] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
        Op::LogicalAnd,
        Op::LogicalOr,
        Op::Replace,
        Op::NoOp,
        Op::Axpy(2.0),
    ];

    fn is_bitwise(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }
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

/// An element type that reductions and accumulates apply to.
pub trait Element: bytemuck::Pod + PartialOrd + fmt::Debug + Send + Sync + 'static {
    /// The type's name in messages (`"f64"`).
    const NAME: &'static str;
    /// Whether the type is a float: bitwise ops do not apply to it.
    const IS_FLOAT: bool;

    /// `a op b`, for an op already checked with [`Element::check`].
    fn combine(op: Op, a: Self, b: Self) -> Self;

    /// Whether `op` applies to this type.
    fn check(op: Op) -> Result<(), OpError> {
        if Self::IS_FLOAT && op.is_bitwise() {
            return Err(OpError { op, type_name: Self::NAME });
        }
        Ok(())
    }
}

macro_rules! integer_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = false;

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
                    Op::Replace => b,
                    Op::NoOp => a,
                    // Integer AXPY scales by alpha truncated toward zero, in wrapping
                    // integer arithmetic, so that every strategy gives identical bits.
                    Op::Axpy(alpha) => a.wrapping_add((alpha as $t).wrapping_mul(b)),
                }
            }
        }
    )*};
}

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = true;

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
                    Op::Replace => b,
                    Op::NoOp => a,
                    Op::Axpy(alpha) => a + (alpha as $t) * b,
                    Op::BitAnd | Op::BitOr | Op::BitXor => unreachable!("checked by Element::check"),
                }
            }
        }
    )*};
}

integer_element!(i32, i64, u32, u64);
float_element!(f32, f64);

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
        Op::Replace => {
            let n = acc.len().min(incoming.len());
            acc[..n].copy_from_slice(&incoming[..n]);
        }
        Op::NoOp => {}
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
    }
}
