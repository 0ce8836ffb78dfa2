//! Window calls: creation (the caller's memory shared in place, or allocated), dynamic
//! attachment, free and queries. The communication calls on a window are in
//! [`super::rma`].

use std::ffi::{c_int, c_void};

use sccemu::segment::CoreContext;
use sccemu::segment::collective_alloc::HeapRegion;

use crate::comm;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::{Scope, c, entry};
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
#[unsafe(export_name = "PMPI_Win_create")]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_create", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        win::refuse_across_nodes(c, Flavor::Create)?;
        let prepared = (|| {
            let (size, disp_unit) = (size_arg(size)?, disp_arg(disp_unit)?);
            let (part, own) = share(mpi()?.core.context(), base, size)?;
            Ok(Prepared { part: Some(part), own, size, disp_unit, base: Some(base as usize) })
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
#[unsafe(export_name = "PMPI_Win_allocate")]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_allocate", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        win::refuse_across_nodes(c, Flavor::Allocate)?;
        let prepared = (|| {
            Ok(Prepared {
                part: None,
                own: Own::Nothing,
                size: size_arg(size)?,
                disp_unit: disp_arg(disp_unit)?,
                base: None,
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
#[unsafe(export_name = "PMPI_Win_allocate_shared")]
pub unsafe extern "C" fn MPI_Win_allocate_shared(
    size: isize,
    disp_unit: c_int,
    info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    entry("MPI_Win_allocate_shared", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        win::refuse_across_nodes(c, Flavor::Shared)?;
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
#[unsafe(export_name = "PMPI_Win_shared_query")]
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
#[unsafe(export_name = "PMPI_Win_create_dynamic")]
pub unsafe extern "C" fn MPI_Win_create_dynamic(info: c_int, comm: c_int, win: *mut c_int) -> c_int {
    entry("MPI_Win_create_dynamic", Scope::Comm(comm), || {
        let c = comm::lookup_intra(comm)?;
        win::refuse_across_nodes(c, Flavor::Dynamic)?;
        let ctx = mpi()?.core.context();
        let whole = HeapRegion { offset: 0, len: ctx.heap_len() };
        let prepared =
            Ok(Prepared { part: Some(whole), own: Own::Nothing, size: 0, disp_unit: 1, base: None });
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
#[unsafe(export_name = "PMPI_Win_attach")]
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
#[unsafe(export_name = "PMPI_Win_detach")]
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

/// `MPI_Win_free`: the window's attributes go first (their delete callbacks run), then
/// the window; the handle becomes `MPI_WIN_NULL`. A delete callback's error makes the
/// call erroneous (MPI-3.1 section 6.7.2): the window is still freed, since the free is
/// collective and the other members may not have failed, and the call returns the
/// callback's error.
///
/// # Safety
/// `win` points to an `MPI_Win`.
#[unsafe(export_name = "PMPI_Win_free")]
pub unsafe extern "C" fn MPI_Win_free(win: *mut c_int) -> c_int {
    let handle = c!(read(win, "win")).unwrap_or(win::WIN_NULL);
    entry("MPI_Win_free", Scope::Win(handle), || {
        let deleted = crate::ffi::attr::win_keyval::delete_all(handle);
        win::free(handle)?;
        c!(out(win, win::WIN_NULL, "win"))?;
        deleted
    })
}

/// `MPI_Win_get_group`.
///
/// # Safety
/// `group` points to an `MPI_Group`.
#[unsafe(export_name = "PMPI_Win_get_group")]
pub unsafe extern "C" fn MPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int {
    entry("MPI_Win_get_group", Scope::Win(win), || {
        let members = win::lookup(win)?.comm.members.clone();
        c!(out(group, crate::group::insert(members), "group"))
    })
}
