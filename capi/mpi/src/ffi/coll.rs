//! Collective calls: arguments checked and turned into buffers, then `crate::coll`.
//!
//! Arguments that MPI makes significant at the root only (a gather's receive buffer,
//! a scatter's send buffer) are not looked at elsewhere, so garbage there is no error.
//! Reductions with a user op go to `ffi::userop`.
//!
//! On an intercommunicator `MPI_Barrier`, `MPI_Bcast`, `MPI_Allreduce` (predefined ops)
//! and `MPI_Allgather` go to `crate::intercoll`, the other calls here to
//! `ffi::intercoll`.

use std::ffi::{c_int, c_void};

use crate::coll::{self, Reduction, root_of};
use crate::comm::{self, CommObj, coll_error};
use crate::datatype::{self, TypeMap, TypeRef};
use crate::error::MpiResult;
use crate::ffi::buffer::Buffer;
use crate::ffi::intercoll as inter;
use crate::ffi::userop::{Kind, user_reduction};
use crate::ffi::{Scope, c, entry};
use crate::{intercoll, op};

/// `MPI_IN_PLACE`, `(void *)-1`.
pub(super) fn in_place(p: *const c_void) -> bool {
    p as usize == usize::MAX
}

/// A buffer of `count` elements of `datatype` (whose map `maps` keeps alive).
pub(super) fn buffer<'m>(p: *const c_void, count: usize, map: &'m TypeMap) -> MpiResult<Buffer<'m>> {
    let count = c_int::try_from(count)
        .map_err(|_| crate::error::MpiError::new(crate::error::class::COUNT, format!("{count} elements")))?;
    c!(user_buffer(p, count, map))
}

pub(super) fn count(n: c_int) -> MpiResult<usize> {
    crate::derived::count_arg(n, "count")
}

/// `MPI_Barrier`.
#[unsafe(export_name = "PMPI_Barrier")]
pub extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    entry("MPI_Barrier", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            return intercoll::barrier(c);
        }
        c.coll().barrier().map_err(coll_error)
    })
}

/// `MPI_Bcast`; on an intercommunicator `root` is `MPI_ROOT` at the root,
/// `MPI_PROC_NULL` in the rest of its group, the root's remote rank in the other group.
///
/// # Safety
/// `buffer` holds `count` elements of `datatype` (where it is significant).
#[unsafe(export_name = "PMPI_Bcast")]
pub unsafe extern "C" fn MPI_Bcast(
    buffer_: *mut c_void,
    count_: c_int,
    datatype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Bcast", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            // SAFETY: this call's contract.
            return unsafe { inter::bcast(c, buffer_, count_, datatype, root) };
        }
        let map = datatype::committed(datatype)?;
        let root = root_of(c, root)?;
        coll::bcast(c, &buffer(buffer_, count(count_)?, &map)?, root)
    })
}

/// The reduction arguments of one call: the maps must outlive the buffers.
fn reduction(
    c: &CommObj,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: c_int,
    datatype: c_int,
    op_handle: c_int,
    run: impl FnOnce(&CommObj, &Reduction<'_, '_>) -> MpiResult<()>,
) -> MpiResult<()> {
    let map = datatype::committed(datatype)?;
    let op = op::lookup(op_handle)?;
    let n = count(n)?;
    let send = if in_place(sendbuf) { None } else { Some(buffer(sendbuf, n, &map)?) };
    let recv = buffer(recvbuf, n, &map)?;
    run(c, &Reduction { send: send.as_ref(), recv: &recv, op })
}

/// `MPI_Reduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE` at the root);
/// at the root `recvbuf` has room for as many.
#[unsafe(export_name = "PMPI_Reduce")]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Reduce", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            // SAFETY: this call's contract.
            return unsafe { inter::reduce(c, (sendbuf, recvbuf), count, datatype, op, root) };
        }
        let root = root_of(c, root)?;
        if let Some(u) = op::user(op) {
            return user_reduction(c, Kind::Reduce(root), (sendbuf, recvbuf), count, datatype, u);
        }
        let map = datatype::committed(datatype)?;
        let op = op::lookup(op)?;
        let n = self::count(count)?;
        let send = if in_place(sendbuf) { None } else { Some(buffer(sendbuf, n, &map)?) };
        // Off the root the receive buffer is not significant.
        let recv = if c.rank == root { buffer(recvbuf, n, &map)? } else { Buffer::empty() };
        coll::reduce(c, &Reduction { send: send.as_ref(), recv: &recv, op }, root)
    })
}

/// `MPI_Allreduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE`); `recvbuf` has
/// room for as many.
#[unsafe(export_name = "PMPI_Allreduce")]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Allreduce", Scope::Comm(comm), || {
        // SAFETY: this call's contract, which is the fast path's.
        if let Some(done) = unsafe { fast_allreduce(sendbuf, recvbuf, count, datatype, op, comm) } {
            return done;
        }
        crate::ffi::fast::general(|| {
            let c = comm::lookup(comm)?;
            if c.is_inter() {
                if op::user(op).is_some() {
                    // SAFETY: this call's contract.
                    return unsafe { inter::allreduce_user(c, (sendbuf, recvbuf), count, datatype, op) };
                }
                return reduction(c, sendbuf, recvbuf, count, datatype, op, intercoll::allreduce);
            }
            if let Some(u) = op::user(op) {
                return user_reduction(c, Kind::Allreduce, (sendbuf, recvbuf), count, datatype, u);
            }
            reduction(c, sendbuf, recvbuf, count, datatype, op, coll::allreduce)
        })
    })
}

/// `MPI_Allreduce`'s fast path: contiguous predefined data that is aligned for its
/// element type, an op that applies to it, and distinct buffers (or `MPI_IN_PLACE`),
/// reduced straight from and into the user's buffers, with none of the general
/// path's packing and copying. `None` for anything else (the general path checks and
/// reports it).
///
/// # Safety
/// As [`MPI_Allreduce`].
#[inline(always)]
unsafe fn fast_allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> Option<MpiResult<()>> {
    let c = comm::get(comm)?;
    // An intercommunicator's reduction is another algorithm (`crate::intercoll`).
    if c.is_inter() {
        return None;
    }
    let prim = datatype::contiguous_prim(datatype)?;
    let op = op::predefined(op)?;
    // A C int count times at most 16 bytes cannot overflow a usize.
    let bytes = usize::try_from(count).ok()? * prim.size();
    let from_recv = in_place(sendbuf);
    let (send_at, recv_at) = (sendbuf as usize, recvbuf as usize);
    let overlap = !from_recv
        && match (send_at.checked_add(bytes), recv_at.checked_add(bytes)) {
            (Some(send_end), Some(recv_end)) => send_at < recv_end && recv_at < send_end,
            _ => true,
        };
    if bytes == 0 || recvbuf.is_null() || sendbuf.is_null() || overlap || !op::applies(prim, op) {
        return None;
    }
    crate::with_prim!(prim, T => {
        // SAFETY: `recvbuf` has room for `count` elements (`bytes` bytes), which nothing
        // else accesses during the call (MPI_Allreduce's contract; non-null).
        let out = unsafe { std::slice::from_raw_parts_mut(recvbuf.cast::<u8>(), bytes) };
        let out: &mut [T] = bytemuck::try_cast_slice_mut(out).ok()?;
        let copy;
        let input: &[T] = if from_recv {
            copy = out.to_vec();
            &copy
        } else {
            // SAFETY: `sendbuf` holds `count` elements (MPI_Allreduce's contract;
            // non-null), and does not overlap `recvbuf` (checked above).
            bytemuck::try_cast_slice(unsafe { std::slice::from_raw_parts(sendbuf.cast::<u8>(), bytes) }).ok()?
        };
        Some(c.coll().allreduce(input, out, op).map_err(coll_error))
    })
}

/// `MPI_Reduce_scatter_block`.
///
/// # Safety
/// `sendbuf` holds `size * recvcount` elements of `datatype` (or is `MPI_IN_PLACE`,
/// the input then being in `recvbuf`); `recvbuf` has room for `recvcount`.
#[unsafe(export_name = "PMPI_Reduce_scatter_block")]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: c_int,
    op_handle: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Reduce_scatter_block", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let counts = inter::Counts::Each(recvcount);
            // SAFETY: this call's contract.
            return unsafe { inter::reduce_scatter(c, (sendbuf, recvbuf), counts, datatype, op_handle) };
        }
        if let Some(u) = op::user(op_handle) {
            let kind = Kind::ReduceScatterBlock;
            return user_reduction(c, kind, (sendbuf, recvbuf), recvcount, datatype, u);
        }
        let map = datatype::committed(datatype)?;
        let op = op::lookup(op_handle)?;
        let per = count(recvcount)?;
        let send =
            if in_place(sendbuf) { None } else { Some(buffer(sendbuf, per * c.size() as usize, &map)?) };
        let recv = buffer(recvbuf, per, &map)?;
        coll::reduce_scatter_block(c, &Reduction { send: send.as_ref(), recv: &recv, op })
    })
}

/// One side of a data collective: `count` elements of `datatype` at `p`, per block.
struct Side {
    p: *const c_void,
    count: c_int,
    datatype: c_int,
}

impl Side {
    /// The type map, if this side is significant and not in place.
    fn map(&self) -> MpiResult<Option<TypeRef>> {
        if in_place(self.p) { Ok(None) } else { datatype::committed(self.datatype).map(Some) }
    }
}

/// Runs a data collective with its two sides as buffers of `blocks.0` and `blocks.1`
/// blocks (`None` where a side is not significant or in place).
fn data_call(
    send: Side,
    recv: Side,
    blocks: (usize, usize),
    significant: (bool, bool),
    run: impl FnOnce(Option<&Buffer<'_>>, Option<&Buffer<'_>>) -> MpiResult<()>,
) -> MpiResult<()> {
    let smap = if significant.0 { send.map()? } else { None };
    let rmap = if significant.1 { recv.map()? } else { None };
    let sbuf = match &smap {
        Some(m) => Some(buffer(send.p, count(send.count)? * blocks.0, m)?),
        None => None,
    };
    let rbuf = match &rmap {
        Some(m) => Some(buffer(recv.p, count(recv.count)? * blocks.1, m)?),
        None => None,
    };
    run(sbuf.as_ref(), rbuf.as_ref())
}

/// An intercommunicator call's two sides of `(buffer, count, datatype)`, one count per
/// block.
fn inter_sides(
    (sp, sk, st): (*const c_void, c_int, c_int),
    (rp, rk, rt): (*mut c_void, c_int, c_int),
) -> (inter::Side, inter::Side) {
    let side = |p, k, datatype| inter::Side { p, counts: inter::Counts::Each(k), datatype };
    (side(sp, sk, st), side(rp.cast_const(), rk, rt))
}

pub(super) fn missing() -> crate::error::MpiError {
    crate::error::MpiError::new(crate::error::class::BUFFER, "MPI_IN_PLACE where this call needs a buffer")
}

/// `MPI_Gather`.
///
/// # Safety
/// As the standard: `sendbuf` holds `sendcount` elements of `sendtype` (or is
/// `MPI_IN_PLACE` at the root); at the root `recvbuf` has room for `size * recvcount`
/// elements of `recvtype`.
#[unsafe(export_name = "PMPI_Gather")]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Gather", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let (send, recv) = inter_sides((sendbuf, sendcount, sendtype), (recvbuf, recvcount, recvtype));
            // SAFETY: this call's contract.
            return unsafe { inter::gather(c, send, recv, root) };
        }
        let root = root_of(c, root)?;
        let at_root = c.rank == root;
        let send = Side { p: sendbuf, count: sendcount, datatype: sendtype };
        let recv = Side { p: recvbuf, count: recvcount, datatype: recvtype };
        data_call(send, recv, (1, c.size() as usize), (true, at_root), |s, r| match r {
            Some(r) => coll::gather(c, s, r, root),
            None if at_root => Err(missing()),
            None => coll::gather(c, s, &Buffer::empty(), root),
        })
    })
}

/// `MPI_Scatter`.
///
/// # Safety
/// At the root `sendbuf` holds `size * sendcount` elements of `sendtype`; `recvbuf`
/// has room for `recvcount` elements of `recvtype` (or is `MPI_IN_PLACE` at the root).
#[unsafe(export_name = "PMPI_Scatter")]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Scatter", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let (send, recv) = inter_sides((sendbuf, sendcount, sendtype), (recvbuf, recvcount, recvtype));
            // SAFETY: this call's contract.
            return unsafe { inter::scatter(c, send, recv, root) };
        }
        let root = root_of(c, root)?;
        let at_root = c.rank == root;
        let send = Side { p: sendbuf, count: sendcount, datatype: sendtype };
        let recv = Side { p: recvbuf, count: recvcount, datatype: recvtype };
        data_call(send, recv, (c.size() as usize, 1), (at_root, true), |s, r| match s {
            Some(s) => coll::scatter(c, s, r, root),
            None if at_root => Err(missing()),
            None => coll::scatter(c, &Buffer::empty(), r, root),
        })
    })
}

/// `MPI_Allgather`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype` (or is `MPI_IN_PLACE`);
/// `recvbuf` has room for `size * recvcount` elements of `recvtype`.
#[unsafe(export_name = "PMPI_Allgather")]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Allgather", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        let send = Side { p: sendbuf, count: sendcount, datatype: sendtype };
        let recv = Side { p: recvbuf, count: recvcount, datatype: recvtype };
        // One block per member of the group whose data arrives: the remote one, on an
        // intercommunicator.
        let blocks = c.peers.len();
        data_call(send, recv, (1, blocks), (true, true), |s, r| match c.is_inter() {
            true => {
                intercoll::allgather(c, s.ok_or_else(intercoll::in_place_refused)?, r.ok_or_else(missing)?)
            }
            false => coll::allgather(c, s, r.ok_or_else(missing)?),
        })
    })
}

/// `MPI_Alltoall`.
///
/// # Safety
/// `sendbuf` holds `size * sendcount` elements of `sendtype` (or is `MPI_IN_PLACE`);
/// `recvbuf` has room for `size * recvcount` elements of `recvtype`.
#[unsafe(export_name = "PMPI_Alltoall")]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Alltoall", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let (send, recv) = inter_sides((sendbuf, sendcount, sendtype), (recvbuf, recvcount, recvtype));
            // SAFETY: this call's contract.
            return unsafe { inter::alltoall(c, send, recv) };
        }
        let n = c.size() as usize;
        let send = Side { p: sendbuf, count: sendcount, datatype: sendtype };
        let recv = Side { p: recvbuf, count: recvcount, datatype: recvtype };
        data_call(send, recv, (n, n), (true, true), |s, r| coll::alltoall(c, s, r.ok_or_else(missing)?))
    })
}
