//! The non-gory interface: send and receive over RCCE_init's channels, and the
//! collectives. The calls that take an `RCCE_COMM` by value do so in the layout of
//! `RCCE_MAXNP` 48; RCCE.h sends programs built with another `RCCE_MAXNP` to the
//! `_p` forms, which take a pointer.

use std::ffi::{c_char, c_int};

use super::mpb::private;
use super::{Comm48, with_rcce};
use crate::codes::{Error, ReduceOp, ReduceType, debug};
use crate::state::Rcce;

/// `RCCE_send`: `size` bytes to `dest`; returns once `dest` has them.
///
/// # Safety
/// `buf` must hold `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_send(buf: *mut c_char, size: usize, dest: c_int) -> c_int {
    with_rcce(debug::COMM, "RCCE_send", |r| {
        let dest = r.check_id(dest.into())?;
        // SAFETY: per this function's contract.
        r.send(unsafe { private(buf, size)? }, r.channel(r.rank, dest)?, dest)
    })
}

/// `RCCE_recv`: `size` bytes from `src`.
///
/// # Safety
/// `buf` must hold `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_recv(buf: *mut c_char, size: usize, src: c_int) -> c_int {
    with_rcce(debug::COMM, "RCCE_recv", |r| {
        let src = r.check_id(src.into())?;
        // SAFETY: per this function's contract.
        r.recv(unsafe { private(buf, size)? }, r.channel(src, r.rank)?, src)
    })
}

/// `RCCE_recv_test`: receives from `src` if its message has started; `test` says
/// whether it did.
///
/// # Safety
/// `buf` must hold `size` bytes; `test` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_recv_test(
    buf: *mut c_char,
    size: usize,
    src: c_int,
    test: *mut c_int,
) -> c_int {
    with_rcce(debug::COMM, "RCCE_recv_test", |r| {
        let src = r.check_id(src.into())?;
        // SAFETY: per this function's contract.
        let done = r.recv_test(unsafe { private(buf, size)? }, r.channel(src, r.rank)?, src)?;
        if test.is_null() {
            return Err(Error::ValUndefined);
        }
        // SAFETY: non-null, writable per the contract.
        unsafe { *test = c_int::from(done) };
        Ok(())
    })
}

/// Reads the communicator for a collective: by-value callers pass the address of their
/// argument and `Some(48)`; pointer callers `None` (the program's own layout).
fn comm_at(r: &Rcce, comm: *const u8, maxnp: Option<usize>) -> Result<crate::collective::Comm, Error> {
    // SAFETY: the exported callers pass a readable RCCE_COMM of that layout.
    unsafe { r.read_comm(comm, maxnp.unwrap_or(r.variant.maxnp)) }
}

fn bcast(buf: *mut c_char, size: usize, root: c_int, comm: *const u8, maxnp: Option<usize>) -> c_int {
    with_rcce(debug::COMM, "RCCE_bcast", |r| {
        let comm = comm_at(r, comm, maxnp)?;
        let root = usize::try_from(root).map_err(|_| Error::Id)?;
        // SAFETY: the program's buffer of `size` bytes (RCCE's contract).
        r.bcast(unsafe { private(buf, size)? }, root, &comm)
    })
}

#[allow(clippy::too_many_arguments)]
fn reduce(
    input: *mut c_char,
    out: *mut c_char,
    num: c_int,
    ty: c_int,
    op: c_int,
    root: Option<c_int>,
    comm: *const u8,
    maxnp: Option<usize>,
) -> c_int {
    let what = if root.is_some() { "RCCE_reduce" } else { "RCCE_allreduce" };
    with_rcce(debug::COMM, what, |r| {
        let (ty, op) = (ReduceType::from_c(ty)?, ReduceOp::from_c(op)?);
        let comm = comm_at(r, comm, maxnp)?;
        let count = usize::try_from(num).map_err(|_| Error::MessageLength)?;
        let bytes = count.checked_mul(ty.size()).ok_or(Error::MessageLength)?;
        // RCCE's root receives the contributions into `input`, so an in-place call could
        // not work (and two overlapping buffers cannot both be borrowed mutably).
        let (i, o) = (input as usize, out as usize);
        if bytes > 0 && !out.is_null() && i < o.saturating_add(bytes) && o < i.saturating_add(bytes) {
            return Err(Error::DataOverlap);
        }
        // SAFETY: the program's buffers of `num` elements (RCCE's contract), disjoint
        // (checked above).
        let input = unsafe { private(input, bytes)? };
        match root {
            Some(root) => {
                let root = usize::try_from(root).map_err(|_| Error::Id)?;
                let mut scratch = Vec::new();
                // Only the root writes `out`: RCCE lets the others pass any pointer.
                let out = if comm.members.get(root) == Some(&r.rank) {
                    // SAFETY: as above, at the root.
                    unsafe { private(out, bytes)? }
                } else {
                    scratch.resize(bytes, 0);
                    &mut scratch[..]
                };
                r.reduce(input, out, ty, op, root, &comm)
            }
            // SAFETY: as above; every UE gets the result.
            None => r.allreduce(input, unsafe { private(out, bytes)? }, ty, op, &comm),
        }
    })
}

/// `RCCE_bcast` from member `root` of `comm`.
///
/// # Safety
/// `buf` must hold `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_bcast(buf: *mut c_char, size: usize, root: c_int, comm: Comm48) -> c_int {
    bcast(buf, size, root, (&raw const comm).cast(), Some(48))
}

/// `RCCE_bcast` for other `RCCE_MAXNP`s.
///
/// # Safety
/// As for [`RCCE_bcast`]; `comm` must point to an `RCCE_COMM`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_bcast_p(buf: *mut c_char, size: usize, root: c_int, comm: *const u8) -> c_int {
    bcast(buf, size, root, comm, None)
}

/// `RCCE_reduce` of `num` elements of `ty` with `op` to member `root`.
///
/// # Safety
/// `input` (and `out` at the root) must hold `num` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_reduce(
    input: *mut c_char,
    out: *mut c_char,
    num: c_int,
    ty: c_int,
    op: c_int,
    root: c_int,
    comm: Comm48,
) -> c_int {
    reduce(input, out, num, ty, op, Some(root), (&raw const comm).cast(), Some(48))
}

/// `RCCE_reduce` for other `RCCE_MAXNP`s.
///
/// # Safety
/// As for [`RCCE_reduce`]; `comm` must point to an `RCCE_COMM`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_reduce_p(
    input: *mut c_char,
    out: *mut c_char,
    num: c_int,
    ty: c_int,
    op: c_int,
    root: c_int,
    comm: *const u8,
) -> c_int {
    reduce(input, out, num, ty, op, Some(root), comm, None)
}

/// `RCCE_allreduce`.
///
/// # Safety
/// `input` and `out` must hold `num` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_allreduce(
    input: *mut c_char,
    out: *mut c_char,
    num: c_int,
    ty: c_int,
    op: c_int,
    comm: Comm48,
) -> c_int {
    reduce(input, out, num, ty, op, None, (&raw const comm).cast(), Some(48))
}

/// `RCCE_allreduce` for other `RCCE_MAXNP`s.
///
/// # Safety
/// As for [`RCCE_allreduce`]; `comm` must point to an `RCCE_COMM`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_allreduce_p(
    input: *mut c_char,
    out: *mut c_char,
    num: c_int,
    ty: c_int,
    op: c_int,
    comm: *const u8,
) -> c_int {
    reduce(input, out, num, ty, op, None, comm, None)
}
