//! Window calls: creation, free and queries, and the communication calls.

use std::ffi::{c_int, c_void};

use sccemu::segment::CoreContext;
use sccemu::segment::collective_alloc::HeapRegion;

use crate::comm;
use crate::datatype;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::{Scope, c, entry, fast};
use crate::request::{self, Done, Status};
use crate::rma::{self, TargetSpec};
use crate::state::mpi;
use crate::win::{self, Flavor, Own, Prepared, WinObj};

/// Gives back pages adopted for memory at `addr` (a window freed, memory detached).
pub fn release(ctx: &CoreContext, addr: usize) -> MpiResult<()> {
    // SAFETY: called once the window that used the adoption is freed on every rank
    // (collectively) or the memory detached, so no window uses the heap bytes; MPI
    // calls on a window are not concurrent with its free or detach.
    unsafe { ctx.release_adopted(addr as *const u8) }.map_err(|e| MpiError::new(class::OTHER, e.to_string()))
}

fn size_arg(size: isize) -> MpiResult<usize> {
    usize::try_from(size).map_err(|_| MpiError::new(class::SIZE, format!("size {size} is negative")))
}

fn disp_arg(disp_unit: c_int) -> MpiResult<usize> {
    match usize::try_from(disp_unit) {
        Ok(u) if u > 0 => Ok(u),
        _ => fail(class::DISP, format!("displacement unit {disp_unit} is not positive")),
    }
}

/// The heap range of the caller's `size` bytes at `base`: in the heap already, or
/// adopted (and then given back with the window or attachment).
fn share(ctx: &CoreContext, base: *mut c_void, size: usize) -> MpiResult<(HeapRegion, Own)> {
    if size == 0 {
        return Ok((HeapRegion { offset: 0, len: 0 }, Own::Nothing));
    }
    if base.is_null() {
        return fail(class::BASE, "a null base for a non-empty window");
    }
    if let Some(part) = ctx.heap_range_at(base.cast(), size) {
        return Ok((part, Own::Nothing));
    }
    // SAFETY: MPI_Win_create's and MPI_Win_attach's contract (see their `# Safety`):
    // `size` bytes at `base` are the caller's readable and writable memory, and no
    // other thread uses their pages during the call.
    let part = unsafe { ctx.adopt(base.cast(), size) }
        .map_err(|e| MpiError::new(class::BASE, format!("cannot share {size} bytes at {base:p}: {e}")))?;
    Ok((part, Own::Adopted(base as usize)))
}

/// `MPI_Win_create`: the buffer is exposed in place (its pages become shared memory
/// until the window is freed, unless it came from `MPI_Alloc_mem`).
///
/// # Safety
/// `base` holds `size` bytes of this process's memory, which no other thread uses
/// (nor anything else on its first and last page) during the call; `win` points to an
/// `MPI_Win`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_create", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let prepared = (|| {
            let (size, disp_unit) = (size_arg(size)?, disp_arg(disp_unit)?);
            let (part, own) = share(mpi()?.core.context(), base, size)?;
            Ok(Prepared { part: Some(part), own, size, disp_unit })
        })();
        let handle = win::create(c, Flavor::Create, info, prepared)?;
        c!(out(win, handle, "win"))
    })
}

/// Writes the address of this rank's part of `handle` through `baseptr` (a `void **`).
fn out_base(handle: c_int, baseptr: *mut c_void) -> MpiResult<()> {
    let obj = win::lookup(handle)?;
    let me = obj.comm.rank as c_int;
    let (_, _, base) = win::shared_query(obj, me)?;
    c!(out(baseptr.cast::<*mut c_void>(), base, "baseptr"))
}

/// `MPI_Win_allocate`.
///
/// # Safety
/// `baseptr` points to a `void *`; `win` to an `MPI_Win`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_allocate", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let prepared = (|| {
            Ok(Prepared {
                part: None,
                own: Own::Nothing,
                size: size_arg(size)?,
                disp_unit: disp_arg(disp_unit)?,
            })
        })();
        let handle = win::create(c, Flavor::Allocate, info, prepared)?;
        out_base(handle, baseptr)?;
        c!(out(win, handle, "win"))
    })
}

/// `MPI_Win_allocate_shared`: the parts are contiguous, in rank order.
///
/// # Safety
/// As [`MPI_Win_allocate`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_allocate_shared(
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_allocate_shared", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let prepared = win::prepare_shared(c, size_arg(size), disp_arg(disp_unit))?;
        let handle = win::create(c, Flavor::Shared, info, Ok(prepared))?;
        out_base(handle, baseptr)?;
        c!(out(win, handle, "win"))
    })
}

/// `MPI_Win_shared_query`.
///
/// # Safety
/// `size` points to an `MPI_Aint`, `disp_unit` to an int, `baseptr` to a `void *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_shared_query(
    win: c_int,
    rank: c_int,
    size: *mut isize,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    entry("MPI_Win_shared_query", Scope::Win(win), || {
        let (bytes, unit, base) = win::shared_query(win::lookup(win)?, rank)?;
        c!(out(size, bytes as isize, "size"))?;
        c!(out(disp_unit, unit as c_int, "disp_unit"))?;
        c!(out(baseptr.cast::<*mut c_void>(), base, "baseptr"))
    })
}

/// `MPI_Win_create_dynamic`.
///
/// # Safety
/// `win` points to an `MPI_Win`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_create_dynamic(info: c_int, comm: c_int, win: *mut c_int) -> c_int {
    entry("MPI_Win_create_dynamic", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let ctx = mpi()?.core.context();
        let whole = HeapRegion { offset: 0, len: ctx.heap_len() };
        let prepared = Ok(Prepared { part: Some(whole), own: Own::Nothing, size: 0, disp_unit: 1 });
        let handle = win::create(c, Flavor::Dynamic, info, prepared)?;
        c!(out(win, handle, "win"))
    })
}

fn dynamic(obj: &WinObj) -> MpiResult<()> {
    if obj.flavor != Flavor::Dynamic {
        return fail(class::RMA_FLAVOR, "attach and detach are for dynamic windows");
    }
    Ok(())
}

/// `MPI_Win_attach`: the memory is shared in place, as by `MPI_Win_create`.
///
/// # Safety
/// As [`MPI_Win_create`] for `base` and `size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_attach(win: c_int, base: *mut c_void, size: isize) -> c_int {
    entry("MPI_Win_attach", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        dynamic(obj)?;
        let size = size_arg(size)?;
        let ctx = mpi()?.core.context();
        let (part, own) = share(ctx, base, size)?;
        let adopted = matches!(own, Own::Adopted(_));
        let attached = win::with_win(obj, |_, table| {
            table.expect("a dynamic window has a table").attach(base as usize, size, part.offset, adopted)
        });
        if attached.is_err() {
            win::give_back(&own)?;
        }
        attached
    })
}

/// `MPI_Win_detach`.
///
/// # Safety
/// `base` is what an `MPI_Win_attach` of this window was given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_detach(win: c_int, base: *const c_void) -> c_int {
    entry("MPI_Win_detach", Scope::Win(win), || {
        let obj = win::lookup(win)?;
        dynamic(obj)?;
        let adopted = win::with_win(obj, |_, table| {
            table.expect("a dynamic window has a table").detach(base as usize)
        })?;
        if adopted { release(mpi()?.core.context(), base as usize) } else { Ok(()) }
    })
}

/// `MPI_Win_free`: the handle becomes `MPI_WIN_NULL`.
///
/// # Safety
/// `win` points to an `MPI_Win`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_free(win: *mut c_int) -> c_int {
    let handle = c!(read(win, "win")).unwrap_or(win::WIN_NULL);
    entry("MPI_Win_free", Scope::Win(handle), || {
        win::free(handle)?;
        c!(out(win, win::WIN_NULL, "win"))
    })
}

/// `MPI_Win_get_group`.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int {
    entry("MPI_Win_get_group", Scope::Win(win), || {
        let members = win::lookup(win)?.comm.members.clone();
        c!(out(group, crate::group::insert(members), "group"))
    })
}

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
#[unsafe(no_mangle)]
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
    entry("MPI_Put", Scope::Win(win), || {
        let args = (origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype);
        // SAFETY: this call's contract, which is the fast path's.
        let quick = unsafe { fast::put(origin_addr, args.0, args.1, args.2, args.3, args.4, args.5, win) };
        if let Some(done) = quick {
            return done;
        }
        fast::general(|| {
            let obj = win::lookup(win)?;
            let omap = datatype::committed(origin_datatype)?;
            let t = target(target_rank, target_disp, target_count, target_datatype)?;
            rma::put(obj, &origin(origin_addr, origin_count, &omap)?, &t)
        })
    })
}

/// `MPI_Get`.
///
/// # Safety
/// `origin_addr` has room for `origin_count` elements of `origin_datatype`.
#[unsafe(no_mangle)]
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
    entry("MPI_Get", Scope::Win(win), || {
        let args = (origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype);
        // SAFETY: this call's contract, which is the fast path's.
        let quick = unsafe { fast::get(origin_addr, args.0, args.1, args.2, args.3, args.4, args.5, win) };
        if let Some(done) = quick {
            return done;
        }
        fast::general(|| {
            let obj = win::lookup(win)?;
            let omap = datatype::committed(origin_datatype)?;
            let t = target(target_rank, target_disp, target_count, target_datatype)?;
            rma::get(obj, &origin(origin_addr, origin_count, &omap)?, &t)
        })
    })
}

/// `MPI_Accumulate`.
///
/// # Safety
/// As [`MPI_Put`].
#[unsafe(no_mangle)]
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
#[unsafe(no_mangle)]
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
        let op = crate::op::lookup(op)?;
        let rmap = datatype::committed(result_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        let result = origin(result_addr, result_count, &rmap)?;
        if op == sccemu::Op::NoOp {
            return rma::get_accumulate(obj, &Buffer::empty(), &result, &t, op);
        }
        let omap = datatype::committed(origin_datatype)?;
        rma::get_accumulate(obj, &origin(origin_addr, origin_count, &omap)?, &result, &t, op)
    })
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
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    op: c_int,
    win: c_int,
) -> c_int {
    entry("MPI_Fetch_and_op", Scope::Win(win), || {
        let args = (datatype, target_rank, target_disp, op);
        // SAFETY: this call's contract, which is the fast path's.
        let quick =
            unsafe { fast::fetch_and_op(origin_addr, result_addr, args.0, args.1, args.2, args.3, win) };
        if let Some(done) = quick {
            return done;
        }
        fast::general(|| {
            let obj = win::lookup(win)?;
            let op = crate::op::lookup(op)?;
            let t = target(target_rank, target_disp, 1, datatype)?;
            let value =
                if op == sccemu::Op::NoOp { [0; 16] } else { one(origin_addr, &t.map, "origin_addr")? };
            let old = rma::fetch_and_op(obj, &value, &t, op)?;
            one_out(result_addr, &t.map, &old)
        })
    })
}

/// `MPI_Compare_and_swap`.
///
/// # Safety
/// `origin_addr` and `compare_addr` hold one element of `datatype`; `result_addr` has
/// room for one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: isize,
    win: c_int,
) -> c_int {
    entry("MPI_Compare_and_swap", Scope::Win(win), || {
        let args = (datatype, target_rank, target_disp);
        // SAFETY: this call's contract, which is the fast path's.
        if let Some(done) = unsafe {
            fast::compare_and_swap(origin_addr, compare_addr, result_addr, args.0, args.1, args.2, win)
        } {
            return done;
        }
        fast::general(|| {
            let obj = win::lookup(win)?;
            let t = target(target_rank, target_disp, 1, datatype)?;
            let (value, compare) =
                (one(origin_addr, &t.map, "origin_addr")?, one(compare_addr, &t.map, "compare_addr")?);
            let old = rma::compare_and_swap(obj, &value, &compare, &t)?;
            one_out(result_addr, &t.map, &old)
        })
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
    c!(out(request, request::insert(Box::new(Done(Status::EMPTY))), "request"))
}

/// `MPI_Rput`.
///
/// # Safety
/// As [`MPI_Put`]; `request` points to an `MPI_Request`.
#[unsafe(no_mangle)]
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
#[unsafe(no_mangle)]
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
#[unsafe(no_mangle)]
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
