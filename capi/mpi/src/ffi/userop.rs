//! User ops and the prefix reductions: `MPI_Op_create`, `MPI_Op_free`,
//! `MPI_Op_commutative`, `MPI_Reduce_local`, `MPI_Scan`, `MPI_Exscan`, and the user-op path of
//! `MPI_Reduce`, `MPI_Allreduce` and `MPI_Reduce_scatter_block` (which `ffi::coll`
//! hands over when the op is a user op). The folding is `crate::ordered`'s.
//!
//! A user function sees its data as its datatype lays it out in memory, not packed:
//! `UserCombine` unpacks both operands into aligned scratch laid out like a user
//! buffer of that type, calls the function, and packs the result back. Calling it is
//! the one call from this library into user code; it is a plain `extern "C"` call, so
//! nothing unwinds across it (a foreign exception aborts), and Rust panics cannot
//! reach it (they stay inside `entry`).

use std::ffi::{c_int, c_void};

use crate::comm::{self, CommObj};
use crate::datatype::{self, TypeMap};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::{Scope, c, entry};
use crate::op::{self, UserFunction, UserOp};
use crate::ordered::{self, Combine, Predefined};

/// A user op on `count` elements of the datatype `handle` (whose map is `map`).
struct UserCombine<'m> {
    op: UserOp,
    map: &'m TypeMap,
    handle: c_int,
}

/// Aligned scratch laid out as `count` elements of a type map.
struct Scratch<'m> {
    words: Vec<u128>,
    /// Byte offset of element 0's origin in `words` (past any negative lower bound).
    origin: usize,
    map: &'m TypeMap,
    count: c_int,
}

impl<'m> Scratch<'m> {
    fn new(map: &'m TypeMap, count: c_int) -> MpiResult<Scratch<'m>> {
        let unsupported =
            || MpiError::new(class::TYPE, format!("{}: a layout a user op cannot take", map.name));
        if map.extent <= 0 || map.true_extent < 0 {
            return Err(unsupported());
        }
        let last = isize::try_from(count.saturating_sub(1))
            .ok()
            .and_then(|c| c.checked_mul(map.extent))
            .ok_or_else(unsupported)?;
        let origin = usize::try_from(-map.true_lb.min(0)).map_err(|_| unsupported())?;
        let end = last.checked_add(map.true_lb + map.true_extent).ok_or_else(unsupported)?;
        let bytes = origin + usize::try_from(end.max(0)).map_err(|_| unsupported())?;
        Ok(Scratch { words: vec![0; bytes.div_ceil(16)], origin, map, count })
    }

    fn base(&mut self) -> *mut c_void {
        self.words.as_mut_ptr().cast::<u8>().wrapping_add(self.origin).cast()
    }

    /// The scratch as a buffer of its `count` elements of its `map`.
    fn buffer(&mut self) -> MpiResult<Buffer<'m>> {
        let base = self.base();
        // SAFETY: `new` sized `words` to hold `count` elements of `map` from `base`,
        // and the scratch outlives every use of the buffer (each is used at once).
        unsafe { Buffer::new(base, self.count, self.map) }
    }
}

impl Combine for UserCombine<'_> {
    fn combine(&self, acc: &[u8], next: &mut [u8]) -> MpiResult<()> {
        if self.map.size == 0 || next.is_empty() {
            return Ok(());
        }
        let n = next.len() / self.map.size;
        let mut len = c_int::try_from(n).map_err(|_| MpiError::new(class::COUNT, format!("{n} elements")))?;
        let (mut invec, mut inout) = (Scratch::new(self.map, len)?, Scratch::new(self.map, len)?);
        invec.buffer()?.unpack(acc)?;
        inout.buffer()?.unpack(next)?;
        let mut handle = self.handle;
        let f: UserFunction = self.op.function;
        // SAFETY: the user's MPI_User_function, called as MPI says: two buffers of
        // `len` elements of the datatype `handle`, laid out as that type (the scratch
        // is sized for it and aligned to 16), and pointers to `len` and the handle.
        // It is plain `extern "C"`: no unwinding crosses it.
        unsafe { f(invec.base(), inout.base(), &mut len, &mut handle) };
        // The scratch's own count, not `len`: the function may have written to `len`.
        next.copy_from_slice(&inout.buffer()?.bytes()?);
        Ok(())
    }
}

/// Runs `run` with the combiner of `op_handle` (a user or predefined op) on `map`.
pub(super) fn with_combiner(
    op_handle: c_int,
    map: &TypeMap,
    datatype: c_int,
    run: impl FnOnce(&dyn Combine) -> MpiResult<()>,
) -> MpiResult<()> {
    match op::user(op_handle) {
        Some(u) => run(&UserCombine { op: u, map, handle: datatype }),
        None => run(&Predefined::new(map, op::lookup(op_handle)?)?),
    }
}

/// A user op's combiner that owns its datatype's map, for an operation that outlives
/// its call (`crate::ffi::icoll`).
struct OwnedUserCombine {
    op: UserOp,
    map: datatype::TypeRef,
    handle: c_int,
}

impl Combine for OwnedUserCombine {
    fn combine(&self, acc: &[u8], next: &mut [u8]) -> MpiResult<()> {
        UserCombine { op: self.op, map: &self.map, handle: self.handle }.combine(acc, next)
    }
}

/// The combiner of `op_handle` (a user or predefined op) on `datatype`'s data (whose
/// map is `map`), owning what it needs: checked as the blocking reductions check it.
pub(crate) fn owned_combiner(
    op_handle: c_int,
    map: datatype::TypeRef,
    datatype: c_int,
) -> MpiResult<Box<dyn Combine + Send>> {
    match op::user(op_handle) {
        Some(u) => Ok(Box::new(OwnedUserCombine { op: u, map, handle: datatype })),
        None => Ok(Box::new(Predefined::new(&map, op::lookup(op_handle)?)?)),
    }
}

/// The reductions that take user ops besides the prefix ones.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// `MPI_Reduce` to this root.
    Reduce(u32),
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Reduce_scatter_block` (`count` is the receive count).
    ReduceScatterBlock,
}

/// A reduction with the user op `u`, on the arguments of the calling entry point
/// (`MPI_Reduce`, `MPI_Allreduce` or `MPI_Reduce_scatter_block`).
pub(super) fn user_reduction(
    c: &CommObj,
    kind: Kind,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    datatype: c_int,
    u: UserOp,
) -> MpiResult<()> {
    let map = datatype::committed(datatype)?;
    let n = count(n)?;
    let comb = UserCombine { op: u, map: &map, handle: datatype };
    let per = if matches!(kind, Kind::ReduceScatterBlock) { c.size() as usize } else { 1 };
    let send = if in_place(sendbuf) { None } else { Some(buffer(sendbuf, n * per, &map)?) };
    match kind {
        Kind::Reduce(root) => {
            let recv = if c.rank == root { buffer(recvbuf, n, &map)? } else { Buffer::empty() };
            ordered::reduce(c, send.as_ref(), &recv, &comb, root)
        }
        Kind::Allreduce => ordered::allreduce(c, send.as_ref(), &buffer(recvbuf, n, &map)?, &comb),
        Kind::ReduceScatterBlock => {
            ordered::reduce_scatter_block(c, send.as_ref(), &buffer(recvbuf, n, &map)?, &comb)
        }
    }
}

/// `MPI_Scan` and `MPI_Exscan`.
fn prefix(
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    datatype: c_int,
    op_handle: c_int,
    comm: c_int,
    exclusive: bool,
) -> MpiResult<()> {
    let c = comm::lookup_intra(comm)?;
    let map = datatype::committed(datatype)?;
    let n = count(n)?;
    let send = if in_place(sendbuf) { None } else { Some(buffer(sendbuf, n, &map)?) };
    let recv = buffer(recvbuf, n, &map)?;
    with_combiner(op_handle, &map, datatype, |comb| ordered::scan(c, send.as_ref(), &recv, comb, exclusive))
}

/// `MPI_Scan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `datatype` (or is `MPI_IN_PLACE`); `recvbuf`
/// has room for as many.
#[unsafe(export_name = "PMPI_Scan")]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Scan", Scope::Comm(comm), || prefix((sendbuf, recvbuf), count, datatype, op, comm, false))
}

/// `MPI_Exscan`: rank 0's `recvbuf` is left untouched.
///
/// # Safety
/// As [`MPI_Scan`].
#[unsafe(export_name = "PMPI_Exscan")]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Exscan", Scope::Comm(comm), || prefix((sendbuf, recvbuf), count, datatype, op, comm, true))
}

/// `MPI_Op_create`.
///
/// # Safety
/// `function` is null or an `MPI_User_function`; `op` is null or points to an
/// `MPI_Op`.
#[unsafe(export_name = "PMPI_Op_create")]
pub unsafe extern "C" fn MPI_Op_create(
    function: Option<UserFunction>,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    entry("MPI_Op_create", crate::ffi::WORLD, || {
        let Some(function) = function else {
            return fail(class::ARG, "the user function is a null pointer");
        };
        if op.is_null() {
            return fail(class::ARG, "op is a null pointer");
        }
        let handle = op::create(UserOp { function, commute: commute != 0 })?;
        c!(out(op, handle, "op"))
    })
}

/// `MPI_Op_free`: `*op` becomes `MPI_OP_NULL`.
///
/// # Safety
/// `op` is null or points to an `MPI_Op`.
#[unsafe(export_name = "PMPI_Op_free")]
pub unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    entry("MPI_Op_free", crate::ffi::WORLD, || {
        let handle = c!(read(op, "op"))?;
        op::free(handle)?;
        c!(out(op, op::OP_NULL, "op"))
    })
}

/// `MPI_Reduce_local`: `inoutbuf = inbuf op inoutbuf`, element by element, with no
/// communication (any op, predefined or user).
///
/// # Safety
/// `inbuf` holds `count` elements of `datatype`; so does `inoutbuf`, which is
/// overwritten.
#[unsafe(export_name = "PMPI_Reduce_local")]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count_: c_int,
    datatype: c_int,
    op_handle: c_int,
) -> c_int {
    entry("MPI_Reduce_local", Scope::Comm(comm::WORLD), || {
        let map = datatype::committed(datatype)?;
        let n = count(count_)?;
        let input = buffer(inbuf, n, &map)?.bytes()?.into_owned();
        let inout = buffer(inoutbuf, n, &map)?;
        let mut acc = inout.bytes()?.into_owned();
        with_combiner(op_handle, &map, datatype, |comb| comb.combine(&input, &mut acc))?;
        inout.unpack(&acc)
    })
}

/// `MPI_Op_commutative`.
///
/// # Safety
/// `commute` is null or points to an int.
#[unsafe(export_name = "PMPI_Op_commutative")]
pub unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    entry("MPI_Op_commutative", crate::ffi::WORLD, || {
        let yes = op::commutative(op)?;
        c!(out(commute, c_int::from(yes), "commute"))
    })
}
