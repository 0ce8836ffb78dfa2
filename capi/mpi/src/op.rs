//! Reduction operations: `MPI_Op` handles, the sccemu op each one is, and the element
//! type a datatype's data is reduced as.
//!
//! Every predefined op is one of `sccemu::Op` (MINLOC and MAXLOC on the value-index
//! pairs of `sccemu::protocol::atomic::pair`). A reduction needs a datatype whose
//! every basic element is of one primitive kind ([`TypeMap::prim`]): its packed bytes
//! are then an array of that primitive, and `with_prim!` calls generic code with
//! the Rust type. Which ops apply to which kinds is sccemu's rule
//! (`Element::check`), plus MPI's: `_Bool` takes only the logical ops.
//!
//! User ops (`MPI_Op_create`) have handles from [`USER_BASE`] up, in a table of their
//! own; [`lookup`] refuses them (one-sided accumulate takes predefined ops only), and
//! the reductions that take them ask [`user`] first.

use std::borrow::Cow;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use sccemu::Op;

use crate::datatype::{Prim, TypeMap};
use crate::error::{MpiError, MpiResult, class, fail};

/// `MPI_OP_NULL`: the op handles' base.
pub const OP_NULL: c_int = 0x5c00_0000;

/// The sccemu op of a predefined `MPI_Op` handle, in `mpi.h`'s order (by
/// [`predefined_index`]).
pub const OPS: [Op; 14] = [
    Op::Max,
    Op::Min,
    Op::Sum,
    Op::Prod,
    Op::LogicalAnd,
    Op::BitAnd,
    Op::LogicalOr,
    Op::BitOr,
    Op::LogicalXor,
    Op::BitXor,
    Op::MinLoc,
    Op::MaxLoc,
    Op::Replace,
    Op::NoOp,
];

/// The op `handle` names, if it is one: the fast paths' lookup.
#[inline(always)]
pub fn predefined(handle: c_int) -> Option<Op> {
    OPS.get(predefined_index(handle)).copied()
}

/// The index in [`OPS`] of `handle`, if it is a predefined op; some index past the end
/// otherwise (wrapping: `MPI_OP_NULL` and anything below it included).
#[inline(always)]
pub const fn predefined_index(handle: c_int) -> usize {
    (handle as u32).wrapping_sub(OP_NULL as u32).wrapping_sub(1) as usize
}

/// The first user op's handle: past the predefined ones, in their handle space.
pub const USER_BASE: c_int = OP_NULL + 0x100;

/// `MPI_User_function`: `inoutvec[i] = invec[i] op inoutvec[i]` for `*len` elements of
/// `*datatype`. Plain `extern "C"`: a foreign unwind through it aborts the process
/// rather than entering Rust frames.
pub type UserFunction = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// A user op: its function, and whether it commutes (ignored beyond
/// `MPI_Op_commutative`: every reduction combines in rank order anyway).
#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    /// The user's function.
    pub function: UserFunction,
    /// `MPI_Op_create`'s `commute`.
    pub commute: bool,
}

/// The user ops, slot `i` at handle `USER_BASE + i`; freed slots are reused.
static USER: Mutex<Vec<Option<UserOp>>> = Mutex::new(Vec::new());

fn user_ops() -> std::sync::MutexGuard<'static, Vec<Option<UserOp>>> {
    USER.lock().unwrap_or_else(|e| e.into_inner())
}

/// A new user op's handle.
pub fn create(op: UserOp) -> MpiResult<c_int> {
    let mut ops = user_ops();
    let slot = match ops.iter().position(Option::is_none) {
        Some(free) => free,
        None => {
            ops.push(None);
            ops.len() - 1
        }
    };
    let handle = c_int::try_from(slot)
        .ok()
        .and_then(|s| USER_BASE.checked_add(s))
        .filter(|&h| h < OP_NULL + 0x0100_0000)
        .ok_or_else(|| MpiError::new(class::INTERN, "too many user ops"))?;
    ops[slot] = Some(op);
    Ok(handle)
}

/// Frees the user op `handle`.
pub fn free(handle: c_int) -> MpiResult<()> {
    if predefined(handle).is_some() || handle == OP_NULL {
        return fail(class::OP, format!("{handle:#x} is a predefined op, which cannot be freed"));
    }
    let mut ops = user_ops();
    match slot_of(handle).and_then(|s| ops.get_mut(s)).and_then(Option::take) {
        Some(_) => Ok(()),
        None => fail(class::OP, format!("{handle:#x} is not an operation handle")),
    }
}

fn slot_of(handle: c_int) -> Option<usize> {
    usize::try_from(handle.checked_sub(USER_BASE)?).ok()
}

/// The user op `handle` names, if it is a live one.
pub fn user(handle: c_int) -> Option<UserOp> {
    let slot = slot_of(handle)?;
    user_ops().get(slot).copied().flatten()
}

/// Whether the op `handle` commutes (predefined ones all do).
pub fn commutative(handle: c_int) -> MpiResult<bool> {
    match user(handle) {
        Some(u) => Ok(u.commute),
        None => lookup(handle).map(|_| true),
    }
}

/// The op `handle` names.
pub fn lookup(handle: c_int) -> MpiResult<Op> {
    match predefined(handle) {
        Some(op) => Ok(op),
        None if handle == OP_NULL => fail(class::OP, "MPI_OP_NULL is not an operation"),
        None if user(handle).is_some() => fail(class::OP, "a user op, which this call does not take"),
        None => fail(class::OP, format!("{handle:#x} is not an operation handle")),
    }
}

/// The primitive that the data of `map` is reduced as, checked against `op`.
pub fn prim_for(map: &TypeMap, op: Op) -> MpiResult<Prim> {
    let Some(prim) = map.prim else {
        return fail(class::TYPE, "a reduction needs a datatype of one basic type");
    };
    if !bool_allows(prim, op) {
        return fail(class::OP, format!("{op:?} is not defined on MPI_C_BOOL"));
    }
    crate::with_prim!(prim, T => <T as sccemu::protocol::atomic::op::Element>::check(op))
        .map_err(|e| MpiError::new(class::OP, format!("{e} ({})", map.name)))?;
    Ok(prim)
}

/// MPI's rule beyond sccemu's: `_Bool` takes only the logical ops.
#[inline(always)]
fn bool_allows(prim: Prim, op: Op) -> bool {
    prim != Prim::Bool
        || matches!(op, Op::LogicalAnd | Op::LogicalOr | Op::LogicalXor | Op::Replace | Op::NoOp)
}

/// Whether `op` applies to `prim` (what [`prim_for`] checks, without its error): the
/// fast paths' test.
#[inline(always)]
pub fn applies(prim: Prim, op: Op) -> bool {
    bool_allows(prim, op)
        && crate::with_prim!(prim, T => <T as sccemu::protocol::atomic::op::Element>::check(op)).is_ok()
}

/// Runs `$body` with `$t` the Rust element type of the [`Prim`] `$prim` (`_Bool` as
/// `u8`; pairs as sccemu's value-index pairs).
#[macro_export]
macro_rules! with_prim {
    ($prim:expr, $t:ident => $body:expr) => {{
        use sccemu::protocol::atomic::pair as p;
        use $crate::datatype::{PairValue as V, Prim as P};
        match $prim {
            P::I8 => {
                type $t = i8;
                $body
            }
            P::U8 | P::Bool => {
                type $t = u8;
                $body
            }
            P::I16 => {
                type $t = i16;
                $body
            }
            P::U16 => {
                type $t = u16;
                $body
            }
            P::I32 => {
                type $t = i32;
                $body
            }
            P::U32 => {
                type $t = u32;
                $body
            }
            P::I64 => {
                type $t = i64;
                $body
            }
            P::U64 => {
                type $t = u64;
                $body
            }
            P::F32 => {
                type $t = f32;
                $body
            }
            P::F64 => {
                type $t = f64;
                $body
            }
            P::Pair(V::Int) => {
                type $t = p::IntIndex;
                $body
            }
            P::Pair(V::Short) => {
                type $t = p::ShortIndex;
                $body
            }
            P::Pair(V::Float) => {
                type $t = p::FloatIndex;
                $body
            }
            P::Pair(V::Long) => {
                type $t = p::LongIndex;
                $body
            }
            P::Pair(V::Double) => {
                type $t = p::DoubleIndex;
                $body
            }
        }
    }};
}

/// Packed values of `prim` (data bytes only, as the pack engine gives them) as
/// elements of `T`, its C layout (pairs have their index where C puts it).
pub fn elems<T: bytemuck::Pod>(bytes: &[u8], prim: Prim) -> Cow<'_, [T]> {
    if prim.size() == size_of::<T>() {
        return match bytemuck::try_cast_slice(bytes) {
            Ok(elems) => Cow::Borrowed(elems),
            Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
        };
    }
    bytes.chunks_exact(prim.size()).map(|b| from_packed(b, prim)).collect()
}

/// Elements of `T` as packed values of `prim` (the inverse of [`elems`]).
pub fn packed<T: bytemuck::Pod>(elems: &[T], prim: Prim) -> Cow<'_, [u8]> {
    if prim.size() == size_of::<T>() {
        return Cow::Borrowed(bytemuck::cast_slice(elems));
    }
    let mut out = vec![0; elems.len() * prim.size()];
    for (e, o) in elems.iter().zip(out.chunks_exact_mut(prim.size())) {
        to_packed(e, prim, o);
    }
    Cow::Owned(out)
}

/// One packed value of `prim` as a `T`.
pub fn from_packed<T: bytemuck::Pod>(packed: &[u8], prim: Prim) -> T {
    let mut e = T::zeroed();
    let mut at = 0;
    for (offset, len) in prim.c_runs() {
        bytemuck::bytes_of_mut(&mut e)[offset..offset + len].copy_from_slice(&packed[at..at + len]);
        at += len;
    }
    e
}

/// `e` as one packed value of `prim`, into `out`.
pub fn to_packed<T: bytemuck::Pod>(e: &T, prim: Prim, out: &mut [u8]) {
    let mut at = 0;
    for (offset, len) in prim.c_runs() {
        out[at..at + len].copy_from_slice(&bytemuck::bytes_of(e)[offset..offset + len]);
        at += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_name_the_ops_in_mpi_h_order() {
        assert_eq!(lookup(OP_NULL | 3).unwrap(), Op::Sum);
        assert_eq!(lookup(OP_NULL | 0xb).unwrap(), Op::MinLoc);
        assert_eq!(lookup(OP_NULL | 0xe).unwrap(), Op::NoOp);
        assert_eq!(lookup(OP_NULL).unwrap_err().class, class::OP);
        assert_eq!(lookup(OP_NULL | 0xf).unwrap_err().class, class::OP);
        assert_eq!(lookup(0x4400_0001).unwrap_err().class, class::OP);
        let b = TypeMap::basic("MPI_C_BOOL", Prim::Bool);
        assert!(prim_for(&b, Op::Sum).is_err() && prim_for(&b, Op::LogicalOr).is_ok());
        let d = TypeMap::basic("MPI_DOUBLE", Prim::F64);
        assert_eq!(prim_for(&d, Op::BitAnd).unwrap_err().class, class::OP);
        let pair = TypeMap::basic("MPI_2INT", Prim::Pair(crate::datatype::PairValue::Int));
        assert_eq!(prim_for(&pair, Op::Sum).unwrap_err().class, class::OP);
        assert!(prim_for(&pair, Op::MaxLoc).is_ok());
    }
}
