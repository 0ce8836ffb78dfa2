//! Fast paths of the calls that benchmarks (and tight application loops) make most:
//! put and get of contiguous predefined data, fetch-and-op and compare-and-swap on
//! 4- and 8-byte elements, flush, lock and unlock of one target, lock_all and
//! unlock_all.
//!
//! Each takes the C arguments and returns `None` unless every argument is one the
//! call accepts and the common case applies; the entry point then runs the general
//! path, which checks everything again and reports any error with its class. So
//! every check the general path makes still happens before anything moves; the fast
//! path only makes the cheap ones inline (constant datatype table, lock-free window
//! lookup, one range test) and then calls sccemu's entry points for bindings
//! (`sccemu::rma::quick`), which do the operation or refuse having done nothing, so
//! that a refusal too goes to the general path ([`run_done`]), which reports it:
//! nothing on the fast path builds or carries an error. Lock and lock_all can fail
//! once past every check, in the wait for the lock (job aborted): sccemu returns that
//! error (`Some(Err)`), which the fast path sends to the window's handler out of line
//! (`fast_run::settled`) and returns as the call's code, since the call must not run
//! twice; their misuse (lock twice, a rank out of range, ...) is a refusal like the
//! others'.
//!
//! How an entry point runs its fast path and its general path is in
//! [`fast_run`](super::fast_run), re-exported here.
//!
//! Under `MPI_THREAD_MULTIPLE` the fast paths step aside and the general path, which
//! takes the window's lock, runs every call (see `on_win`).

use std::ffi::{c_int, c_void};

use sccemu::protocol::atomic::armw::RmwOp;
use sccemu::{AtomicElem, LockKind, Op, RmaError, Window};

use crate::datatype::{self, Prim};
use crate::win::{self, Flavor, WinObj};

use super::fast_run::{boxed, settle_rma, settled};
pub use super::fast_run::{general, refused, run_code, run_done, run_refusable};

/// `MPI_LOCK_EXCLUSIVE` and `MPI_LOCK_SHARED`.
pub const LOCK_EXCLUSIVE: c_int = 234;
/// `MPI_LOCK_SHARED`.
pub const LOCK_SHARED: c_int = 235;

/// What the atomics' fast paths see in an element: a 4- or 8-byte integer (signed or
/// not: wrapping adds and the bitwise ops are the same on both) or float.
///
/// The discriminants hold the size in their upper bits, so that reading it is one
/// instruction, not a jump table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Atom {
    /// `int`, `unsigned`, `int32_t`, ...
    Int4 = 4,
    /// `float`.
    Float4 = 5,
    /// `long`, `int64_t`, `MPI_Aint`, ...
    Int8 = 8,
    /// `double`.
    Float8 = 9,
}

impl Atom {
    /// Bytes of one element.
    #[inline(always)]
    const fn size(self) -> usize {
        (self as usize) & !1
    }
}

/// The [`Atom`] of each predefined type (by `datatype::predefined_index`), `None` for
/// the types the atomics' fast paths leave to the general path: one load and one test
/// per call.
const ATOMS: [Option<Atom>; 33] = {
    let mut out = [None; 33];
    let mut i = 0;
    while i < out.len() {
        out[i] = match datatype::CONTIGUOUS_PRIMS[i] {
            Some(Prim::I32 | Prim::U32) => Some(Atom::Int4),
            Some(Prim::I64 | Prim::U64) => Some(Atom::Int8),
            Some(Prim::F32) => Some(Atom::Float4),
            Some(Prim::F64) => Some(Atom::Float8),
            _ => None,
        };
        i += 1;
    }
    out
};

/// The [`Atom`] of predefined type `handle`, if it is one; `None` for any other handle.
#[inline(always)]
fn atom(handle: c_int) -> Option<Atom> {
    *ATOMS.get(datatype::predefined_index(handle))?
}

/// Runs `f` on the live sccemu window of `obj`; `None` once it is freed, and under
/// `MPI_THREAD_MULTIPLE`, where the general path takes the window's lock.
///
/// No lock on this path: through [`Serial::with`](super::registry::Serial::with),
/// whose locked branch takes the closure by reference, everything `f` captures stayed
/// in memory on the unlocked branch too (callgrind, 8 B put + flush: 326 instructions
/// that way, 303 this way).
#[inline(always)]
fn on_win<R>(obj: &WinObj, f: impl FnOnce(&Window<'static, u8>) -> R) -> Option<R> {
    // SAFETY: the state is read for this call only, and nothing in `f` (sccemu's window
    // calls) calls `with` on `obj`.
    let state = unsafe { obj.state.unlocked() }?;
    state.win.as_ref().map(f)
}

/// Window rank `rank` (the sccemu window's, checked) and the byte offset of `bytes`
/// bytes at displacement `disp` of its part, if they lie in it (not for a dynamic
/// window, whose displacements are addresses).
#[inline(always)]
fn landing(obj: &WinObj, rank: c_int, disp: isize, bytes: usize) -> Option<(u32, usize)> {
    if obj.flavor == Flavor::Dynamic {
        return None;
    }
    // A negative rank wraps past every window size.
    let rank = rank as u32;
    let t = obj.targets.get(rank as usize)?;
    // So does a negative displacement past every `max_disp` (at most the part's size).
    let disp = disp as usize;
    if disp > t.max_disp {
        return None;
    }
    // At most the part's size (a heap's bytes), plus at most 2^35 bytes (a C int count
    // of 16-byte elements): neither overflows.
    let at = disp * t.disp_unit;
    (at + bytes <= t.size).then_some((rank, at))
}

/// The byte count of a transfer of contiguous predefined data on both sides, if both
/// sides carry the same number of bytes.
#[inline(always)]
fn contiguous_bytes(ocount: c_int, odt: c_int, tcount: c_int, tdt: c_int) -> Option<usize> {
    if (ocount, odt) == (tcount, tdt) {
        // The common call: one type, one count, one lookup.
        return Some(usize::try_from(ocount).ok()? * datatype::contiguous_size(odt)?);
    }
    let (osize, tsize) = (datatype::contiguous_size(odt)?, datatype::contiguous_size(tdt)?);
    let (o, t) = (usize::try_from(ocount).ok()?, usize::try_from(tcount).ok()?);
    // A C int count times at most 16 bytes cannot overflow a usize.
    let bytes = o * osize;
    (t * tsize == bytes).then_some(bytes)
}

/// `MPI_Put`'s fast path.
///
/// # Safety
/// `origin` holds `ocount` elements of `odt` (the entry point's contract).
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI_Put's
pub unsafe fn put(
    origin: *const c_void,
    ocount: c_int,
    odt: c_int,
    rank: c_int,
    disp: isize,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
) -> Option<c_int> {
    let obj = win::get(win)?;
    let bytes = contiguous_bytes(ocount, odt, tcount, tdt)?;
    let (target, at) = landing(obj, rank, disp, bytes)?;
    let src: &[u8] = match bytes {
        0 => &[],
        _ if origin.is_null() => return None,
        // SAFETY: `origin` holds `bytes` bytes (this function's contract; non-null).
        _ => unsafe { std::slice::from_raw_parts(origin.cast::<u8>(), bytes) },
    };
    let done = on_win(obj, |w| match w.quick_put(target, at, src) {
        Some(()) => Ok(()),
        None => put_refused(w, (target, at), src),
    })?;
    Some(settle_rma("MPI_Put", win, done))
}

/// A put that sccemu's entry point for bindings refused, once the library's checks
/// passed: the window's general put, which the general path would make with these
/// very arguments (the same rank, offset and bytes), does it or says why. Taking
/// only these, not the C arguments, lets those die before sccemu's part of the fast
/// path, which then has the registers to itself. Its error, boxed (two words out of
/// `on_win`'s closure, in registers), goes to the handler once the closure returned
/// (`fast_run::settle_rma`).
#[cold]
#[inline(never)]
fn put_refused(w: &Window<'static, u8>, (target, at): (u32, usize), src: &[u8]) -> Result<(), Box<RmaError>> {
    w.put(target, at, src).map_err(Box::new)
}

/// `MPI_Get`'s fast path.
///
/// # Safety
/// `origin` has room for `ocount` elements of `odt`, which nothing else accesses
/// during the call (the entry point's contract).
#[inline(always)]
#[allow(clippy::too_many_arguments)] // MPI_Get's
pub unsafe fn get(
    origin: *mut c_void,
    ocount: c_int,
    odt: c_int,
    rank: c_int,
    disp: isize,
    tcount: c_int,
    tdt: c_int,
    win: c_int,
) -> Option<c_int> {
    let obj = win::get(win)?;
    let bytes = contiguous_bytes(ocount, odt, tcount, tdt)?;
    let (target, at) = landing(obj, rank, disp, bytes)?;
    let dst: &mut [u8] = match bytes {
        0 => &mut [],
        _ if origin.is_null() => return None,
        // SAFETY: `origin` has room for `bytes` bytes that nothing else accesses during
        // the call (this function's contract; non-null).
        _ => unsafe { std::slice::from_raw_parts_mut(origin.cast::<u8>(), bytes) },
    };
    let done = on_win(obj, |w| match w.quick_get(target, at, dst) {
        Some(()) => Ok(()),
        None => get_refused(w, (target, at), dst),
    })?;
    Some(settle_rma("MPI_Get", win, done))
}

/// [`put_refused`] for a get.
#[cold]
#[inline(never)]
fn get_refused(
    w: &Window<'static, u8>,
    (target, at): (u32, usize),
    dst: &mut [u8],
) -> Result<(), Box<RmaError>> {
    w.get(target, at, dst).map_err(Box::new)
}

/// One element of `A` read from C memory (possibly unaligned).
///
/// # Safety
/// `p` is non-null and holds an `A`.
#[inline(always)]
unsafe fn read<A: Copy>(p: *const c_void) -> A {
    // SAFETY: this function's contract.
    unsafe { p.cast::<A>().read_unaligned() }
}

/// Writes one `A` to C memory (possibly unaligned).
///
/// # Safety
/// `p` is non-null and has room for an `A`.
#[inline(always)]
unsafe fn write<A: Copy>(p: *mut c_void, value: A) {
    // SAFETY: this function's contract.
    unsafe { p.cast::<A>().write_unaligned(value) }
}

/// The ARMW of each predefined op (by `op::predefined_index`), the ones the hardware
/// has: `Some(None)` for `MPI_NO_OP` (an atomic load), `None` for the ops the fast path
/// leaves to the general path. A table, so that the op costs one load and one test
/// (a `match` on the op compiled to a jump table: 16 instructions).
const RMWS: [Option<Option<RmwOp>>; crate::op::OPS.len()] = {
    let mut out = [None; crate::op::OPS.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = match crate::op::OPS[i] {
            Op::Sum => Some(Some(RmwOp::Add)),
            Op::NoOp => Some(None),
            Op::Replace => Some(Some(RmwOp::Swap)),
            Op::BitAnd => Some(Some(RmwOp::And)),
            Op::BitOr => Some(Some(RmwOp::Or)),
            Op::BitXor => Some(Some(RmwOp::Xor)),
            _ => None,
        };
        i += 1;
    }
    out
};

/// The ARMW that fetch-and-op's fast path runs for op handle `handle` ([`RMWS`]).
#[inline(always)]
fn rmw(handle: c_int) -> Option<Option<RmwOp>> {
    *RMWS.get(crate::op::predefined_index(handle))?
}

/// Fetch-and-op on one `A` through sccemu's ARMW entry for bindings, which runs in the
/// element's atomicity domain under every accumulate strategy, as the general path's
/// accumulate does; its old value to `result`. `None` if sccemu refused it: the
/// general path then reports why (a refused ARMW had no effect).
///
/// # Safety
/// `origin` holds an `A` unless `op` is `None` (`MPI_NO_OP`); `result` has room for
/// one; both non-null where read or written.
#[inline(always)]
unsafe fn fop<A: AtomicElem>(
    w: &Window<'static, u8>,
    (target, at): (u32, usize),
    origin: *const c_void,
    result: *mut c_void,
    op: Option<RmwOp>,
) -> Option<()> {
    let old = match op {
        None => w.quick_load::<A>(target, at),
        // SAFETY: `origin` holds an `A` for every op but MPI_NO_OP (this function's
        // contract).
        Some(op) => w.quick_fetch_op::<A>(target, at, op, unsafe { read::<A>(origin) }),
    };
    // SAFETY: `result` has room for an `A` (this function's contract).
    old.map(|old| unsafe { write(result, old) })
}

/// `MPI_Fetch_and_op`'s fast path: `None` if the library's checks refuse the call,
/// `Some(None)` if sccemu's entry does (having done nothing), which the entry point
/// sends to the general path from a call site of its own ([`refused`]).
///
/// # Safety
/// `origin` holds one element of `dt` (unless `op` is `MPI_NO_OP`); `result` has room
/// for one (the entry point's contract).
#[inline(always)]
pub unsafe fn fetch_and_op(
    origin: *const c_void,
    result: *mut c_void,
    dt: c_int,
    rank: c_int,
    disp: isize,
    op: c_int,
    win: c_int,
) -> Option<Option<()>> {
    let obj = win::get(win)?;
    let atom = atom(dt)?;
    let op = rmw(op)?;
    let to = landing(obj, rank, disp, atom.size())?;
    // The origin is read for every op but MPI_NO_OP.
    if result.is_null() || (origin.is_null() && op.is_some()) {
        return None;
    }
    // Inlined by force: LLVM left this closure out of line, one call and frame more
    // (callgrind, 8 B fetch-and-op + flush: 320 instructions that way).
    on_win(
        obj,
        #[inline(always)]
        // SAFETY: non-null pointers to one element of `dt`, whose Rust type each arm names
        // (this function's contract).
        |w| unsafe {
            match atom {
                // Wrapping add and the bitwise ops are the same on signed and unsigned bits.
                Atom::Int4 => fop::<u32>(w, to, origin, result, op),
                Atom::Int8 => fop::<u64>(w, to, origin, result, op),
                // MPI has no bitwise op on floats: the general path's error. Tested in
                // these arms only: computed before the `match`, it cost the integer
                // arms five instructions.
                _ if matches!(op, Some(RmwOp::And | RmwOp::Or | RmwOp::Xor)) => None,
                Atom::Float4 => fop::<f32>(w, to, origin, result, op),
                Atom::Float8 => fop::<f64>(w, to, origin, result, op),
            }
        },
    )
}

/// `MPI_Compare_and_swap`'s fast path, with [`fetch_and_op`]'s two refusals.
///
/// # Safety
/// `origin` and `compare` hold one element of `dt`; `result` has room for one (the
/// entry point's contract).
#[inline(always)]
pub unsafe fn compare_and_swap(
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    dt: c_int,
    rank: c_int,
    disp: isize,
    win: c_int,
) -> Option<Option<()>> {
    let obj = win::get(win)?;
    let atom = atom(dt)?;
    let (target, at) = landing(obj, rank, disp, atom.size())?;
    if origin.is_null() || compare.is_null() || result.is_null() {
        return None;
    }
    // Compare-and-swap compares bits: the 4- and 8-byte integer words serve every type of
    // their width, in the element's atomicity domain as the general path.
    on_win(
        obj,
        #[inline(always)]
        |w| {
            // SAFETY: non-null pointers to one element of `dt` (this function's contract).
            unsafe {
                match atom.size() {
                    4 => {
                        let old =
                            w.quick_compare_and_swap(target, at, read::<u32>(compare), read::<u32>(origin));
                        old.map(|old| write(result, old))
                    }
                    _ => {
                        let old =
                            w.quick_compare_and_swap(target, at, read::<u64>(compare), read::<u64>(origin));
                        old.map(|old| write(result, old))
                    }
                }
            }
        },
    )
}

/// The window and window rank `rank`, unchecked: sccemu's entries for bindings check
/// it (their lookup by rank), and refuse a rank out of range, `MPI_PROC_NULL` and any
/// negative rank included (it wraps past every window size), for the general path to
/// report or, for `MPI_PROC_NULL`, to do nothing.
#[inline(always)]
fn sync_target(win: c_int, rank: c_int) -> Option<(&'static WinObj, u32)> {
    Some((win::get(win)?, rank as u32))
}

/// `MPI_Win_flush`'s fast path.
#[inline(always)]
pub fn flush(rank: c_int, win: c_int) -> Option<()> {
    let (obj, target) = sync_target(win, rank)?;
    on_win(
        obj,
        #[inline(always)]
        |w| w.quick_flush(target),
    )?
}

/// `MPI_Win_lock`'s fast path, for a lock of type `kind` without asserts (which the
/// entry point tells apart): sccemu's entry for bindings, which refuses (`None`) having
/// done nothing, or locks (`Some(SUCCESS)`), or reports a failed wait, which must not
/// run twice (the lock was waited for): its error goes to the window's handler here,
/// out of line (`fast_run::settled`), and its code is the call's.
#[inline(always)]
pub fn lock(kind: LockKind, rank: c_int, win: c_int) -> Option<c_int> {
    let (obj, target) = sync_target(win, rank)?;
    // The epoch stays open until MPI_Win_unlock. Inlined by force, as the others: LLVM
    // left this closure out of line, its result returned through memory.
    let answer = on_win(
        obj,
        #[inline(always)]
        |w| boxed(w.quick_lock(kind, target)),
    )??;
    settled("MPI_Win_lock", win, answer)
}

/// `MPI_Win_unlock`'s fast path.
#[inline(always)]
pub fn unlock(rank: c_int, win: c_int) -> Option<()> {
    let (obj, target) = sync_target(win, rank)?;
    on_win(
        obj,
        #[inline(always)]
        |w| w.quick_unlock(target),
    )?
}

/// `MPI_Win_lock_all`'s fast path (no asserts), as [`lock`].
#[inline(always)]
pub fn lock_all(assert: c_int, win: c_int) -> Option<c_int> {
    if assert != 0 {
        return None;
    }
    let answer = on_win(
        win::get(win)?,
        #[inline(always)]
        |w| boxed(w.quick_lock_all()),
    )??;
    settled("MPI_Win_lock_all", win, answer)
}

/// `MPI_Win_unlock_all`'s fast path.
#[inline(always)]
pub fn unlock_all(win: c_int) -> Option<()> {
    on_win(
        win::get(win)?,
        #[inline(always)]
        |w| w.quick_unlock_all(),
    )?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_are_the_4_and_8_byte_numbers() {
        for handle in datatype::DATATYPE_NULL..datatype::DATATYPE_NULL + 40 {
            let expected = match datatype::contiguous_prim(handle) {
                Some(Prim::I32 | Prim::U32) => Some(Atom::Int4),
                Some(Prim::I64 | Prim::U64) => Some(Atom::Int8),
                Some(Prim::F32) => Some(Atom::Float4),
                Some(Prim::F64) => Some(Atom::Float8),
                _ => None,
            };
            assert_eq!(atom(handle), expected, "{handle:#x}");
            assert_eq!(
                atom(handle).map(Atom::size),
                expected.map(|_| datatype::contiguous_size(handle).unwrap())
            );
        }
    }
}
