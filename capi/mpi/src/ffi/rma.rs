//! One-sided communication calls: put, get, the accumulates and atomics, and their
//! request-based forms. Window creation, free and queries are in [`super::window`].

use std::ffi::{c_int, c_void};

use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::{Scope, c, entry, fast};
use crate::request::{self, Op, Status};
use crate::rma::{self, TargetSpec};
use crate::win::{self, WinObj};

/// The target side of a call.
fn target(rank: c_int, disp: isize, count: c_int, datatype: c_int) -> MpiResult<TargetSpec> {
    let map = datatype::committed(datatype)?;
    Ok(TargetSpec { rank, disp, count: crate::derived::count_arg(count, "target count")?, map })
}

/// The origin buffer of a call.
fn origin<'m>(addr: *const c_void, count: c_int, map: &'m datatype::TypeMap) -> MpiResult<Buffer<'m>> {
    c!(user_buffer(addr, count, map))
}

/// `MPI_Put`.
///
/// # Safety
/// `origin_addr` holds `origin_count` elements of `origin_datatype`.
#[unsafe(export_name = "PMPI_Put")]
pub unsafe extern "C" fn MPI_Put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    let (o, t) = ((origin_count, origin_datatype), (target_rank, target_disp, target_count, target_datatype));
    fast::run_code(
        "MPI_Put",
        // SAFETY: this call's contract, which is the fast path's.
        || unsafe { fast::put(origin_addr, o.0, o.1, t.0, t.1, t.2, t.3, win) },
        // SAFETY: this call's contract, which is the general path's.
        || unsafe { put_general(origin_addr, o.0, o.1, t.0, t.1, t.2, t.3, win) },
    )
}

/// `MPI_Put`'s general path, out of line with its arguments by value (see
/// `super::winsync`'s general paths), under the entry point's guard.
///
/// # Safety
/// As [`MPI_Put`].
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI_Put's
unsafe fn put_general(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Put", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        rma::put(obj, &origin(origin_addr, origin_count, &omap)?, &t)
    })
}

/// `MPI_Get`.
///
/// # Safety
/// `origin_addr` has room for `origin_count` elements of `origin_datatype`.
#[unsafe(export_name = "PMPI_Get")]
pub unsafe extern "C" fn MPI_Get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    let (o, t) = ((origin_count, origin_datatype), (target_rank, target_disp, target_count, target_datatype));
    fast::run_code(
        "MPI_Get",
        // SAFETY: this call's contract, which is the fast path's.
        || unsafe { fast::get(origin_addr, o.0, o.1, t.0, t.1, t.2, t.3, win) },
        // SAFETY: this call's contract, which is the general path's.
        || unsafe { get_general(origin_addr, o.0, o.1, t.0, t.1, t.2, t.3, win) },
    )
}

/// `MPI_Get`'s general path (as [`put_general`]).
///
/// # Safety
/// As [`MPI_Get`].
#[inline(never)]
#[allow(clippy::too_many_arguments)] // MPI_Get's
unsafe fn get_general(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Get", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        rma::get(obj, &origin(origin_addr, origin_count, &omap)?, &t)
    })
}

/// `MPI_Accumulate`.
///
/// # Safety
/// As [`MPI_Put`].
#[unsafe(export_name = "PMPI_Accumulate")]
pub unsafe extern "C" fn MPI_Accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Accumulate", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        rma::accumulate(obj, &origin(origin_addr, origin_count, &omap)?, &t, crate::op::lookup(op)?)
    })
}

/// `MPI_Get_accumulate`.
///
/// # Safety
/// `origin_addr` holds `origin_count` elements of `origin_datatype` (unless `op` is
/// `MPI_NO_OP`); `result_addr` has room for `result_count` of `result_datatype`.
#[unsafe(export_name = "PMPI_Get_accumulate")]
pub unsafe extern "C" fn MPI_Get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Get_accumulate", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let (o, r) = (
            Side(origin_addr, origin_count, origin_datatype),
            Side(result_addr, result_count, result_datatype),
        );
        get_accumulate(obj, o, r, &t, crate::op::lookup(op)?)
    })
}

/// An origin or result buffer as C gives it: address, count, datatype.
struct Side<P>(P, c_int, c_int);

/// `MPI_Get_accumulate` on `obj` once the target and op are known; `MPI_NO_OP` reads
/// no origin, so its origin arguments may be anything.
fn get_accumulate(
    obj: &WinObj,
    o: Side<*const c_void>,
    r: Side<*mut c_void>,
    t: &TargetSpec,
    op: sccemu::Op,
) -> MpiResult<()> {
    let rmap = datatype::committed(r.2)?;
    let result = origin(r.0, r.1, &rmap)?;
    if op == sccemu::Op::NoOp {
        return rma::get_accumulate(obj, &Buffer::empty(), &result, t, op);
    }
    let omap = datatype::committed(o.2)?;
    rma::get_accumulate(obj, &origin(o.0, o.1, &omap)?, &result, t, op)
}

/// Reads one element of the predefined type `map` at `p` as packed bytes.
fn one(p: *const c_void, map: &datatype::TypeMap, what: &str) -> MpiResult<rma::Element> {
    if p.is_null() {
        return fail(class::BUFFER, format!("{what} is a null pointer"));
    }
    let mut e = [0u8; 16];
    let len = map.size.min(e.len());
    // SAFETY: `p` holds one element of `map` (the calling entry point's contract);
    // at most its `size` bytes are read, into a private array.
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), e.as_mut_ptr(), len) };
    Ok(e)
}

/// Writes one element's packed bytes to `p`.
fn one_out(p: *mut c_void, map: &datatype::TypeMap, e: &rma::Element) -> MpiResult<()> {
    if p.is_null() {
        return fail(class::BUFFER, "result_addr is a null pointer");
    }
    // SAFETY: `p` has room for one element of `map` (the entry point's contract).
    unsafe { std::ptr::copy_nonoverlapping(e.as_ptr(), p.cast::<u8>(), map.size.min(e.len())) };
    Ok(())
}

/// `MPI_Fetch_and_op`.
///
/// # Safety
/// `origin_addr` holds one element of `datatype` (unless `op` is `MPI_NO_OP`);
/// `result_addr` has room for one.
#[unsafe(export_name = "PMPI_Fetch_and_op")]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    op: c_int,
    win: c_int,
) -> c_int {
    let (o, r, t) = (origin_addr, result_addr, (datatype, target_rank, target_disp));
    fast::run_refusable(
        "MPI_Fetch_and_op",
        // SAFETY: this call's contract, which is the fast path's.
        || unsafe { fast::fetch_and_op(o, r, t.0, t.1, t.2, op, win) },
        // SAFETY: this call's contract, which is the general path's.
        || fast::refused(|| unsafe { fetch_and_op_general(o, r, t.0, t.1, t.2, op, win) }),
        // SAFETY: as above.
        || unsafe { fetch_and_op_general(o, r, t.0, t.1, t.2, op, win) },
    )
}

/// `MPI_Fetch_and_op`'s general path (as [`put_general`]).
///
/// # Safety
/// As [`MPI_Fetch_and_op`].
#[inline(never)]
unsafe fn fetch_and_op_general(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    op: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Fetch_and_op", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let op = crate::op::lookup(op)?;
        let t = target(target_rank, target_disp, 1, datatype)?;
        let value = if op == sccemu::Op::NoOp { [0; 16] } else { one(origin_addr, &t.map, "origin_addr")? };
        let old = rma::fetch_and_op(obj, &value, &t, op)?;
        one_out(result_addr, &t.map, &old)
    })
}

/// `MPI_Compare_and_swap`.
///
/// # Safety
/// `origin_addr` and `compare_addr` hold one element of `datatype`; `result_addr` has
/// room for one.
#[unsafe(export_name = "PMPI_Compare_and_swap")]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    win: c_int,
) -> c_int {
    let (o, c, r, t) = (origin_addr, compare_addr, result_addr, (datatype, target_rank, target_disp));
    fast::run_refusable(
        "MPI_Compare_and_swap",
        // SAFETY: this call's contract, which is the fast path's.
        || unsafe { fast::compare_and_swap(o, c, r, t.0, t.1, t.2, win) },
        // SAFETY: this call's contract, which is the general path's.
        || fast::refused(|| unsafe { compare_and_swap_general(o, c, r, t.0, t.1, t.2, win) }),
        // SAFETY: as above.
        || unsafe { compare_and_swap_general(o, c, r, t.0, t.1, t.2, win) },
    )
}

/// `MPI_Compare_and_swap`'s general path (as [`put_general`]).
///
/// # Safety
/// As [`MPI_Compare_and_swap`].
#[inline(never)]
unsafe fn compare_and_swap_general(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    win: c_int,
) -> c_int {
    entry("MPI_Compare_and_swap", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        let t = target(target_rank, target_disp, 1, datatype)?;
        let (value, compare) =
            (one(origin_addr, &t.map, "origin_addr")?, one(compare_addr, &t.map, "compare_addr")?);
        let old = rma::compare_and_swap(obj, &value, &compare, &t)?;
        one_out(result_addr, &t.map, &old)
    })
}

/// Runs a request-based call: in a passive-target epoch only; the operation is
/// complete when it returns, so the request is born complete.
fn request_based(
    win: c_int,
    rank: c_int,
    request: *mut c_int,
    run: impl FnOnce(&WinObj) -> MpiResult<()>,
) -> MpiResult<()> {
    let obj = win::lookup(win)?;
    rma::check_passive(obj, rank)?;
    run(obj)?;
    c!(out(request, request::insert_op(Op::Done(Status::EMPTY)), "request"))
}

/// `MPI_Rput`.
///
/// # Safety
/// As [`MPI_Put`]; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Rput")]
pub unsafe extern "C" fn MPI_Rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Rput", Scope::Win(win), || {
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let o = origin(origin_addr, origin_count, &omap)?;
        request_based(win, target_rank, request, |obj| rma::put(obj, &o, &t))
    })
}

/// `MPI_Rget`.
///
/// # Safety
/// As [`MPI_Get`]; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Rget")]
pub unsafe extern "C" fn MPI_Rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Rget", Scope::Win(win), || {
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let o = origin(origin_addr, origin_count, &omap)?;
        request_based(win, target_rank, request, |obj| rma::get(obj, &o, &t))
    })
}

/// `MPI_Raccumulate`.
///
/// # Safety
/// As [`MPI_Accumulate`]; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Raccumulate")]
pub unsafe extern "C" fn MPI_Raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Raccumulate", Scope::Win(win), || {
        let omap = datatype::committed(origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let o = origin(origin_addr, origin_count, &omap)?;
        let op = crate::op::lookup(op)?;
        request_based(win, target_rank, request, |obj| rma::accumulate(obj, &o, &t, op))
    })
}

/// `MPI_Rget_accumulate`.
///
/// # Safety
/// As [`MPI_Get_accumulate`]; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Rget_accumulate")]
pub unsafe extern "C" fn MPI_Rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Rget_accumulate", Scope::Win(win), || {
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let (o, r) = (
            Side(origin_addr, origin_count, origin_datatype),
            Side(result_addr, result_count, result_datatype),
        );
        let op = crate::op::lookup(op)?;
        request_based(win, target_rank, request, |obj| get_accumulate(obj, o, r, &t, op))
    })
}
