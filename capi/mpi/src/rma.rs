//! One-sided communication on MPI windows: put, get, the accumulate family.
//!
//! A target buffer is `count` elements of a datatype at `disp * disp_unit` bytes into
//! the target's part (a dynamic window: at that address in the target process). Its
//! data runs are where the bytes go, in type-map order: a contiguous type is one run
//! and one sccemu call; any other is a call per run. The origin's data is packed first
//! (`Buffer::bytes`; a contiguous buffer is used in place), and the two sides must
//! carry the same number of bytes. The whole span a call touches is checked against the
//! target's part before anything moves, so a refused call moves nothing.
//!
//! Accumulates combine the data as the one basic type of the target datatype (which
//! the origin's must share); each element is atomic, whatever the window's strategy
//! (sccemu's guarantee), and that includes `MPI_CHAR`, which the standard leaves out
//! but common benchmarks use.

use std::ffi::c_int;

use sccemu::{Op, Window};

use crate::datatype::{Prim, TypeMap, TypeRef};
use crate::dynamic::AttachTable;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::op::{elems, from_packed, packed, prim_for, to_packed};
use crate::win::{Flavor, WinObj, acc_error, rma_error, with_win};
use crate::with_prim;

/// The target side of a call.
pub struct TargetSpec {
    /// Rank in the window's communicator (or `MPI_PROC_NULL`).
    pub rank: c_int,
    /// Displacement, in the target's units (an address for a dynamic window).
    pub disp: isize,
    /// Elements.
    pub count: usize,
    /// Their datatype.
    pub map: TypeRef,
}

/// Where a call's target buffer starts: the sccemu window's rank (the communicator's)
/// and the byte index of its element 0.
#[derive(Clone, Copy)]
struct Landing {
    rank: u32,
    start: usize,
}

fn range(what: String) -> MpiError {
    MpiError::new(class::RMA_RANGE, what)
}

/// The bytes that `count` elements of `map` touch, relative to their start.
fn span(map: &TypeMap, count: usize) -> Option<(isize, isize)> {
    let last = map.extent.checked_mul(isize::try_from(count).ok()?.checked_sub(1)?)?;
    Some((map.true_lb, last.checked_add(map.true_lb)?.checked_add(map.true_extent)?))
}

/// Resolves `t` on `obj` (`None`: `MPI_PROC_NULL`, nothing to do), checking that its
/// whole span lies in the target's part.
fn land(obj: &WinObj, attached: Option<&mut AttachTable>, t: &TargetSpec) -> MpiResult<Option<Landing>> {
    if t.rank == crate::p2p::PROC_NULL {
        return Ok(None);
    }
    let Some(target) = usize::try_from(t.rank).ok().and_then(|r| obj.targets.get(r)) else {
        return fail(class::RANK, format!("rank {} of a window of {}", t.rank, obj.targets.len()));
    };
    let overflow = || range(format!("displacement {} overflows", t.disp));
    let unit = if obj.flavor == Flavor::Dynamic { 1 } else { target.disp_unit as isize };
    let base = t.disp.checked_mul(unit).ok_or_else(overflow)?;
    let rank = t.rank as u32;
    if t.count == 0 || t.map.size == 0 {
        return Ok(Some(Landing { rank, start: base.max(0) as usize }));
    }
    let (lo, hi) = span(&t.map, t.count).ok_or_else(overflow)?;
    let (lo, hi) = (base.checked_add(lo).ok_or_else(overflow)?, base.checked_add(hi).ok_or_else(overflow)?);
    if lo < 0 {
        return Err(range(format!("the access starts {} bytes before rank {}'s part", -lo, t.rank)));
    }
    let start = match attached {
        Some(table) => {
            let offset = table.translate(t.rank as usize, lo as usize, (hi - lo) as usize)?;
            (offset as isize + (base - lo)) as usize
        }
        None if hi as usize > target.size => {
            return Err(range(format!(
                "bytes {lo}..{hi} past rank {}'s part of {} bytes",
                t.rank, target.size
            )));
        }
        None => base as usize,
    };
    Ok(Some(Landing { rank, start }))
}

/// Calls `f(at, len)` for the data runs of `count` elements of `map` from byte `start`
/// (checked by [`land`]), in order, adjacent runs merged.
fn each_run(
    map: &TypeMap,
    count: usize,
    start: usize,
    mut f: impl FnMut(usize, usize) -> MpiResult<()>,
) -> MpiResult<()> {
    if map.is_contiguous() {
        return f(start, count * map.size);
    }
    let mut pending: Option<(usize, usize)> = None;
    for i in 0..count as isize {
        for r in &map.runs {
            let at = (start as isize + i * map.extent + r.offset) as usize;
            pending = match pending {
                Some((o, l)) if o + l == at => Some((o, l + r.len)),
                Some((o, l)) => {
                    f(o, l)?;
                    Some((at, r.len))
                }
                None => Some((at, r.len)),
            };
        }
    }
    pending.map_or(Ok(()), |(o, l)| f(o, l))
}

fn same_size(origin: usize, t: &TargetSpec) -> MpiResult<()> {
    let target = t.count * t.map.size;
    if origin != target {
        return fail(class::TYPE, format!("{origin} origin bytes against {target} target bytes"));
    }
    Ok(())
}

/// `MPI_Put`.
pub fn put(obj: &WinObj, origin: &Buffer<'_>, t: &TargetSpec) -> MpiResult<()> {
    let data = origin.bytes()?;
    same_size(data.len(), t)?;
    with_win(obj, |win, attached| {
        let Some(l) = land(obj, attached, t)? else { return Ok(()) };
        let mut k = 0;
        each_run(&t.map, t.count, l.start, |at, len| {
            win.put(l.rank, at, &data[k..k + len]).map_err(rma_error)?;
            k += len;
            Ok(())
        })
    })
}

/// `MPI_Get`.
pub fn get(obj: &WinObj, origin: &Buffer<'_>, t: &TargetSpec) -> MpiResult<()> {
    same_size(origin.data_len()?, t)?;
    let mut scratch = Vec::new();
    let direct = origin.contiguous_mut()?;
    let dst: &mut [u8] = match direct {
        Some(d) => d,
        None => {
            scratch.resize(origin.data_len()?, 0);
            &mut scratch
        }
    };
    with_win(obj, |win, attached| {
        let Some(l) = land(obj, attached, t)? else { return Ok(()) };
        let mut k = 0;
        each_run(&t.map, t.count, l.start, |at, len| {
            win.get(l.rank, at, &mut dst[k..k + len]).map_err(rma_error)?;
            k += len;
            Ok(())
        })
    })?;
    if origin.is_contiguous() { Ok(()) } else { origin.unpack(&scratch) }
}

/// The basic type an accumulate combines: the target datatype's, which `others`
/// (origin, result) must share.
fn acc_prim(t: &TargetSpec, op: Op, others: &[&TypeMap]) -> MpiResult<Prim> {
    let prim = prim_for(&t.map, op)?;
    if let Some(m) = others.iter().find(|m| m.size > 0 && m.prim != Some(prim)) {
        return fail(class::TYPE, format!("{:?} elements against target elements of {prim:?}", m.prim));
    }
    Ok(prim)
}

/// Applies `op` with `src` (elements of `T`, packed `prim` bytes each) to the target,
/// run by run; with `old`, the previous values too (get_accumulate).
fn acc_runs<T: sccemu::AccElem>(
    win: &Window<'static, u8>,
    l: Landing,
    t: &TargetSpec,
    prim: Prim,
    src: &[T],
    mut old: Option<&mut [T]>,
    op: Op,
) -> MpiResult<()> {
    let mut k = 0;
    each_run(&t.map, t.count, l.start, |at, len| {
        let n = len / prim.size();
        let result = match old.as_deref_mut() {
            Some(old) => win.get_accumulate_as(l.rank, at, &src[k..k + n], &mut old[k..k + n], op),
            None => win.accumulate_as(l.rank, at, &src[k..k + n], op),
        };
        result.map_err(acc_error)?;
        k += n;
        Ok(())
    })
}

/// `MPI_Accumulate`.
pub fn accumulate(obj: &WinObj, origin: &Buffer<'_>, t: &TargetSpec, op: Op) -> MpiResult<()> {
    let prim = acc_prim(t, op, &[origin.map()])?;
    let data = origin.bytes()?;
    same_size(data.len(), t)?;
    with_prim!(prim, T => {
        let src = elems::<T>(&data, prim);
        with_win(obj, |win, attached| match land(obj, attached, t)? {
            Some(l) => acc_runs(win, l, t, prim, &src, None, op),
            None => Ok(()),
        })
    })
}

/// `MPI_Get_accumulate`: the target's previous data goes to `result`; with
/// `MPI_NO_OP` the origin is not read (it may be empty).
pub fn get_accumulate(
    obj: &WinObj,
    origin: &Buffer<'_>,
    result: &Buffer<'_>,
    t: &TargetSpec,
    op: Op,
) -> MpiResult<()> {
    let no_op = op == Op::NoOp;
    let others: &[&TypeMap] = if no_op { &[result.map()] } else { &[origin.map(), result.map()] };
    let prim = acc_prim(t, op, others)?;
    same_size(result.data_len()?, t)?;
    let data = if no_op { std::borrow::Cow::Owned(vec![0u8; result.data_len()?]) } else { origin.bytes()? };
    same_size(data.len(), t)?;
    with_prim!(prim, T => {
        let src = elems::<T>(&data, prim);
        let mut old = vec![T::default(); src.len()];
        with_win(obj, |win, attached| match land(obj, attached, t)? {
            Some(l) => acc_runs(win, l, t, prim, &src, Some(&mut old), op),
            None => Ok(()),
        })?;
        result.unpack(&packed(&old, prim))
    })
}

/// One element of a predefined type, as its packed bytes (at most 12: a pair).
pub type Element = [u8; 16];

/// The element of type `T` whose packed bytes (`packed` of them) are `e`.
fn read_elem<T: bytemuck::Pod>(e: &Element, prim: Prim) -> T {
    from_packed(&e[..prim.size()], prim)
}

/// The packed bytes of `v`.
fn write_elem<T: bytemuck::Pod>(v: T, prim: Prim) -> Element {
    let mut e = [0u8; 16];
    to_packed(&v, prim, &mut e);
    e
}

/// Checks that a single-element call names a predefined type, as MPI requires.
fn predefined(t: &TargetSpec) -> MpiResult<()> {
    if !t.map.predefined {
        return fail(class::TYPE, "this call takes one element of a predefined datatype");
    }
    Ok(())
}

/// `MPI_Fetch_and_op`: one element of a predefined type; `value` is its packed bytes
/// (ignored by `MPI_NO_OP`). Returns the previous element's packed bytes.
pub fn fetch_and_op(obj: &WinObj, value: &Element, t: &TargetSpec, op: Op) -> MpiResult<Element> {
    predefined(t)?;
    let prim = acc_prim(t, op, &[])?;
    with_prim!(prim, T => {
        let v: T = read_elem(value, prim);
        let old = with_win(obj, |win, attached| match land(obj, attached, t)? {
            Some(l) => win.fetch_and_op_as(l.rank, l.start, v, op).map_err(acc_error),
            None => Ok(T::default()),
        })?;
        Ok(write_elem(old, prim))
    })
}

/// `MPI_Compare_and_swap`: one element of an integer, byte or float type; returns the
/// previous element's bytes.
pub fn compare_and_swap(
    obj: &WinObj,
    value: &Element,
    compare: &Element,
    t: &TargetSpec,
) -> MpiResult<Element> {
    predefined(t)?;
    let prim = match t.map.prim {
        Some(Prim::Pair(_)) => return fail(class::TYPE, "no compare-and-swap on value-index pairs"),
        Some(p) => p,
        None => return fail(class::TYPE, "compare-and-swap needs a basic type"),
    };
    with_prim!(prim, T => {
        let (v, c): (T, T) = (read_elem(value, prim), read_elem(compare, prim));
        let old = with_win(obj, |win, attached| match land(obj, attached, t)? {
            Some(l) => win.compare_and_swap_as(l.rank, l.start, c, v).map_err(acc_error),
            None => Ok(T::default()),
        })?;
        Ok(write_elem(old, prim))
    })
}

/// Checks that a request-based call may start: a passive-target epoch is open on the
/// target (`MPI_PROC_NULL` always may).
pub fn check_passive(obj: &WinObj, rank: c_int) -> MpiResult<()> {
    let Some(target) = usize::try_from(rank).ok().filter(|&r| r < obj.targets.len()) else {
        return Ok(());
    };
    let passive = with_win(obj, |win, _| Ok(win.in_passive_epoch(target as u32)))?;
    if !passive {
        return fail(class::RMA_SYNC, format!("request-based RMA to rank {rank} needs a lock epoch on it"));
    }
    Ok(())
}
