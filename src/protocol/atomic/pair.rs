//! Value-index pairs: the element types of MINLOC and MAXLOC (`MPI_2INT`,
//! `MPI_SHORT_INT`, `MPI_FLOAT_INT`, `MPI_LONG_INT`, `MPI_DOUBLE_INT`).
//!
//! Each pair has the layout of the C struct `{ value; int index; }`, its padding
//! spelled out as a field so that the type is plain bytes (`Pod`): the padding is
//! carried along unchanged and never compared.
//!
//! `MinLoc` keeps the pair with the smaller value and `MaxLoc` the one with the larger;
//! on equal values both keep the smaller index, as MPI defines them, so the result
//! does not depend on the order in which contributions arrive. Pairs take no other op
//! but `Replace` and `NoOp` ([`Element::check`]).

use crate::protocol::atomic::op::{ElemKind, Element, Op, sealed};

/// `a loc b` for a value type that compares with `<` (MINLOC and MAXLOC only).
#[inline]
fn loc<V: PartialOrd>(op: Op, (av, ai): (V, i32), (bv, bi): (V, i32)) -> bool {
    // Whether `b` wins.
    let better = match op {
        Op::MinLoc => bv < av,
        _ => bv > av,
    };
    better || (bv == av && bi < ai)
}

macro_rules! pair {
    ($(#[$doc:meta])* $name:ident, $value:ty) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            /// The value compared.
            pub value: $value,
            /// Where the value came from.
            pub index: i32,
        }

        impl $name {
            /// The pair `(value, index)`.
            pub fn new(value: $value, index: i32) -> $name {
                $name { value, index }
            }
        }

        impl sealed::Sealed for $name {}
        impl Element for $name {
            const NAME: &'static str = stringify!($name);
            const KIND: ElemKind = ElemKind::$name;

            #[inline]
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Replace => b,
                    Op::MinLoc | Op::MaxLoc if loc(op, (a.value, a.index), (b.value, b.index)) => b,
                    _ => a,
                }
            }
        }
    };
}

pair!(
    /// `MPI_2INT`: `{ int; int; }`, 8 bytes.
    IntIndex, i32
);
pair!(
    /// `MPI_FLOAT_INT`: `{ float; int; }`, 8 bytes.
    FloatIndex, f32
);

/// `MPI_SHORT_INT`: `{ short; int; }`, 8 bytes, the index 4-aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ShortIndex {
    /// The value compared.
    pub value: i16,
    /// Padding of the C struct, carried unchanged.
    pub pad: i16,
    /// Where the value came from.
    pub index: i32,
}

impl ShortIndex {
    /// The pair `(value, index)`.
    pub fn new(value: i16, index: i32) -> ShortIndex {
        ShortIndex { value, pad: 0, index }
    }
}

impl sealed::Sealed for ShortIndex {}
impl Element for ShortIndex {
    const NAME: &'static str = "ShortIndex";
    const KIND: ElemKind = ElemKind::ShortIndex;

    #[inline]
    fn combine(op: Op, a: Self, b: Self) -> Self {
        match op {
            Op::Replace => b,
            Op::MinLoc | Op::MaxLoc if loc(op, (a.value, a.index), (b.value, b.index)) => b,
            _ => a,
        }
    }
}

/// `MPI_LONG_INT` and `MPI_DOUBLE_INT` put their padding after the index.
macro_rules! wide_pair {
    ($(#[$doc:meta])* $name:ident, $value:ty) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            /// The value compared.
            pub value: $value,
            /// Where the value came from.
            pub index: i32,
            /// Padding of the C struct, carried unchanged.
            pub pad: i32,
        }

        impl $name {
            /// The pair `(value, index)`.
            pub fn new(value: $value, index: i32) -> $name {
                $name { value, index, pad: 0 }
            }
        }

        impl sealed::Sealed for $name {}
        impl Element for $name {
            const NAME: &'static str = stringify!($name);
            const KIND: ElemKind = ElemKind::$name;

            #[inline]
            fn combine(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Replace => b,
                    Op::MinLoc | Op::MaxLoc if loc(op, (a.value, a.index), (b.value, b.index)) => b,
                    _ => a,
                }
            }
        }
    };
}

wide_pair!(
    /// `MPI_LONG_INT`: `{ long; int; }`, 16 bytes.
    LongIndex, i64
);
wide_pair!(
    /// `MPI_DOUBLE_INT`: `{ double; int; }`, 16 bytes.
    DoubleIndex, f64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loc_ops_keep_the_smaller_index_on_ties() {
        let (a, b) = (DoubleIndex::new(2.0, 5), DoubleIndex::new(2.0, 3));
        assert_eq!(DoubleIndex::combine(Op::MinLoc, a, b), b);
        assert_eq!(DoubleIndex::combine(Op::MaxLoc, b, a), b);
        assert_eq!(IntIndex::combine(Op::MinLoc, IntIndex::new(1, 9), IntIndex::new(0, 0)).index, 0);
        assert_eq!(IntIndex::combine(Op::MaxLoc, IntIndex::new(1, 9), IntIndex::new(0, 0)).index, 9);
        assert_eq!(ShortIndex::combine(Op::MaxLoc, ShortIndex::new(-3, 1), ShortIndex::new(4, 2)).value, 4);
        assert!(LongIndex::check(Op::Sum).is_err() && FloatIndex::check(Op::MinLoc).is_ok());
        assert!(IntIndex::check(Op::Replace).is_ok() && IntIndex::check(Op::BitOr).is_err());
    }

    #[test]
    fn layouts_are_the_c_structs() {
        assert_eq!((size_of::<IntIndex>(), size_of::<FloatIndex>(), size_of::<ShortIndex>()), (8, 8, 8));
        assert_eq!((size_of::<LongIndex>(), size_of::<DoubleIndex>()), (16, 16));
        assert_eq!(std::mem::offset_of!(ShortIndex, index), 4);
        assert_eq!(std::mem::offset_of!(DoubleIndex, index), 8);
    }
}
