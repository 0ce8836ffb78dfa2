//! The arguments of the collectives on an intercommunicator, checked and turned into
//! buffers for `crate::intercoll`; `ffi::coll` and `ffi::vcoll` route an
//! intercommunicator here.
//!
//! MPI's rules for which arguments count (section 5.2.2): in a rooted call the root
//! (`MPI_ROOT`) looks at its receive side (gather, reduce) or send side (scatter,
//! bcast) only, with one block per *remote* member; the rest of its group
//! (`MPI_PROC_NULL`) looks at no buffer; the other group looks at the side it sends or
//! receives. Counts and displacement arrays have one entry per remote member, except the
//! reduce-scatters' `recvcounts`, which describe the local group's blocks. Every check
//! here is local and comes before any message moves, and `MPI_IN_PLACE` is
//! `MPI_ERR_BUFFER` wherever a buffer counts.
//!
//! In the rooted calls a process whose own buffer, count, datatype or op fails its check
//! still takes its part in the messages, carrying the error instead of data
//! ([`with_blocks`] and [`with_op`] hand the protocol the check's outcome, not just its
//! success): a root receives and drops what the other group sends, so that no message
//! is left queued for a later call of the same kind, or sends its error where it would
//! have sent data, so that the other group returns that class instead of waiting. Only a
//! bad root argument returns at once, since it leaves the process without a part.
//! Elsewhere a process with a bad argument returns at once (a program that passes it
//! everywhere gets the error everywhere and stays usable).

use std::ffi::{c_int, c_void};

use crate::comm::CommObj;
use crate::datatype::{self, TypeRef};
use crate::error::MpiResult;
use crate::ffi::buffer::Buffer;
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::userop::with_combiner;
use crate::ffi::vcoll::{WSide, layout, vbuf};
use crate::intercoll::{self, Blocks, Role, exchange, in_place_refused, role, rooted};
use crate::ordered::Combine;

/// How one side's blocks are laid out.
#[derive(Clone, Copy)]
pub(super) enum Counts {
    /// `count` elements each, one after another (the calls without a `v`).
    Each(c_int),
    /// Per rank a count and a displacement, in elements (`int` arrays).
    Per(*const c_int, *const c_int),
}

/// One side of a data collective: blocks of `datatype` at `p`.
#[derive(Clone, Copy)]
pub(super) struct Side {
    pub(super) p: *const c_void,
    pub(super) counts: Counts,
    pub(super) datatype: c_int,
}

/// Runs `run` once with the `n` blocks of `side`, checked (a block with one count must
/// be filled exactly, one of a v-call fit), or with the check's error (module docs).
///
/// # Safety
/// `side` describes memory as the call's contract says; `Per` arrays hold `n` ints.
unsafe fn with_blocks(
    side: Side,
    n: usize,
    run: impl FnOnce(MpiResult<&Blocks<'_, '_>>) -> MpiResult<()>,
) -> MpiResult<()> {
    let mut run = Some(run);
    // SAFETY: this function's contract.
    let lent = unsafe { lend_blocks(side, n, |b| run.take().expect("lent once")(Ok(b))) };
    match (run, lent) {
        (Some(run), Err(e)) => run(Err(e)),
        (_, lent) => lent,
    }
}

/// [`with_blocks`]' checks: runs `run` only if they pass.
///
/// # Safety
/// As [`with_blocks`].
unsafe fn lend_blocks(
    side: Side,
    n: usize,
    run: impl FnOnce(&Blocks<'_, '_>) -> MpiResult<()>,
) -> MpiResult<()> {
    if in_place(side.p) {
        return Err(in_place_refused());
    }
    let map = datatype::committed(side.datatype)?;
    match side.counts {
        Counts::Each(k) => {
            let per = count(k)?;
            let whole = buffer(side.p, per * n, &map)?;
            run(&Blocks { at: &|i| whole.sub(i * per, per), exact: true })
        }
        Counts::Per(counts, displs) => {
            // SAFETY: this function's contract.
            let lay = unsafe { layout(counts, displs, n as u32) }?;
            let whole = vbuf(side.p, &lay, &map)?;
            run(&Blocks { at: &|i| whole.block(i), exact: false })
        }
    }
}

/// Runs `run` once with `side`'s one buffer (`Each` counts), or the check's error.
///
/// # Safety
/// As [`with_blocks`].
unsafe fn with_buffer(
    side: Side,
    run: impl FnOnce(MpiResult<&Buffer<'_>>) -> MpiResult<()>,
) -> MpiResult<()> {
    // SAFETY: this function's contract.
    unsafe {
        with_blocks(side, 1, |b| {
            let buf = b.and_then(|b| (b.at)(0));
            run(buf.as_ref().map_err(Clone::clone))
        })
    }
}

/// Runs `run` once with `op`'s combiner on `dt` (whose map is `map`), or the error of
/// either (module docs).
fn with_op(
    op: c_int,
    map: &MpiResult<TypeRef>,
    dt: c_int,
    run: impl FnOnce(MpiResult<&dyn Combine>) -> MpiResult<()>,
) -> MpiResult<()> {
    let map = match map {
        Ok(map) => map,
        Err(e) => return run(Err(e.clone())),
    };
    let mut run = Some(run);
    let lent = with_combiner(op, map, dt, |c| run.take().expect("lent once")(Ok(c)));
    match (run, lent) {
        (Some(run), Err(e)) => run(Err(e)),
        (_, lent) => lent,
    }
}

/// `MPI_Bcast` on an intercommunicator.
///
/// # Safety
/// As `MPI_Bcast`'s, with the buffer significant at the root and in the other group.
pub(super) unsafe fn bcast(c: &CommObj, p: *mut c_void, n: c_int, dt: c_int, root: c_int) -> MpiResult<()> {
    let role = role(c, root)?;
    let map = datatype::committed(dt);
    if role == Role::Idle {
        return map.map(drop);
    }
    let buf = map.as_ref().map_err(Clone::clone).and_then(|m| buffer(p, count(n)?, m));
    intercoll::bcast(c, buf.as_ref().map_err(Clone::clone), role)
}

/// `MPI_Reduce` on an intercommunicator.
///
/// # Safety
/// As `MPI_Reduce`'s, with the root's buffer at the root and the others' in the other
/// group.
pub(super) unsafe fn reduce(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    dt: c_int,
    op: c_int,
    root: c_int,
) -> MpiResult<()> {
    let role = role(c, root)?;
    let map = datatype::committed(dt);
    let significant = match role {
        Role::Root => recvbuf.cast_const(),
        // No message, but the datatype and op are checked here too.
        Role::Idle => return with_combiner(op, &*map?, dt, |_| Ok(())),
        Role::Remote(_) => sendbuf,
    };
    let buf = map.as_ref().map_err(Clone::clone).and_then(|m| {
        if in_place(significant) {
            return Err(in_place_refused());
        }
        buffer(significant, count(n)?, m)
    });
    with_op(op, &map, dt, |comb| rooted::reduce(c, buf.as_ref().map_err(Clone::clone), comb, role))
}

/// `MPI_Gather` and `MPI_Gatherv` on an intercommunicator (`recv` describes one block per
/// remote member).
///
/// # Safety
/// As the calls' contracts.
pub(super) unsafe fn gather(c: &CommObj, send: Side, recv: Side, root: c_int) -> MpiResult<()> {
    let role = role(c, root)?;
    let rn = c.peers.len();
    match role {
        // SAFETY: this function's contract: the root's receive side counts.
        Role::Root => unsafe { with_blocks(recv, rn, |r| rooted::gather(c, Ok(&Buffer::empty()), r, role)) },
        Role::Idle => Ok(()),
        // SAFETY: this function's contract: the senders' send side counts.
        Role::Remote(_) => unsafe { with_buffer(send, |s| rooted::gather(c, s, Ok(&nothing()), role)) },
    }
}

/// `MPI_Scatter` and `MPI_Scatterv` on an intercommunicator (`send` describes one block
/// per remote member).
///
/// # Safety
/// As the calls' contracts.
pub(super) unsafe fn scatter(c: &CommObj, send: Side, recv: Side, root: c_int) -> MpiResult<()> {
    let role = role(c, root)?;
    let rn = c.peers.len();
    match role {
        // SAFETY: this function's contract: the root's send side counts.
        Role::Root => unsafe { with_blocks(send, rn, |s| rooted::scatter(c, s, Ok(&nothing()), role)) },
        Role::Idle => Ok(()),
        // SAFETY: this function's contract: the receivers' receive side counts.
        Role::Remote(_) => unsafe { with_blocks(recv, 1, |r| rooted::scatter(c, Ok(&nothing()), r, role)) },
    }
}

/// The blocks of a side that does not count here.
fn nothing() -> Blocks<'static, 'static> {
    Blocks { at: &|_| Ok(Buffer::empty()), exact: true }
}

/// `MPI_Allgatherv` on an intercommunicator.
///
/// # Safety
/// As the call's contract.
pub(super) unsafe fn allgatherv(c: &CommObj, send: Side, recv: Side) -> MpiResult<()> {
    // SAFETY: this function's contract.
    unsafe { with_buffer(send, |s| with_blocks(recv, c.peers.len(), |r| exchange::allgatherv(c, s?, r?))) }
}

/// `MPI_Alltoall` and `MPI_Alltoallv` on an intercommunicator.
///
/// # Safety
/// As the calls' contracts.
pub(super) unsafe fn alltoall(c: &CommObj, send: Side, recv: Side) -> MpiResult<()> {
    let rn = c.peers.len();
    // SAFETY: this function's contract.
    unsafe { with_blocks(send, rn, |s| with_blocks(recv, rn, |r| exchange::alltoall(c, s?, r?))) }
}

/// One side of `MPI_Alltoallw`: the buffer, and its counts, displacements (in bytes)
/// and datatypes.
pub(super) type WArrays = (*const c_void, *const c_int, *const c_int, *const c_int);

/// `MPI_Alltoallw` on an intercommunicator: `MPI_Alltoallv`'s exchange with a datatype
/// per block, one block per remote rank on each side.
///
/// # Safety
/// As the call's contract, with the arrays of the remote group's size.
pub(super) unsafe fn alltoallw(c: &CommObj, send: WArrays, recv: WArrays) -> MpiResult<()> {
    if in_place(send.0) {
        return Err(in_place_refused());
    }
    let rn = c.peers.len() as u32;
    // SAFETY: this function's contract.
    let send = unsafe { WSide::new(send.0, send.1, send.2, send.3, rn) }?;
    // SAFETY: this function's contract.
    let recv = unsafe { WSide::new(recv.0, recv.1, recv.2, recv.3, rn) }?;
    let (send, recv) = (|j| send.block(j), |i| recv.block(i));
    exchange::alltoall(c, &Blocks { at: &send, exact: false }, &Blocks { at: &recv, exact: false })
}

/// `MPI_Reduce_scatter_block` (`counts` `Each`) and `MPI_Reduce_scatter` on an
/// intercommunicator: `counts` describe the local group's blocks.
///
/// # Safety
/// As the calls' contracts; `Per`'s first array holds the local group's size of ints.
pub(super) unsafe fn reduce_scatter(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    counts: Counts,
    dt: c_int,
    op: c_int,
) -> MpiResult<()> {
    if in_place(sendbuf) {
        return Err(in_place_refused());
    }
    let map = datatype::committed(dt)?;
    let n = c.size() as usize;
    let counts = match counts {
        Counts::Each(k) => vec![count(k)?; n],
        Counts::Per(ks, _) => crate::ffi::c!(array(ks, n as c_int, "recvcounts"))?
            .iter()
            .map(|&k| count(k))
            .collect::<MpiResult<_>>()?,
    };
    let recv = buffer(recvbuf, counts[c.rank as usize], &map)?;
    let input = buffer(sendbuf, counts.iter().sum(), &map)?.bytes()?.into_owned();
    let blocks: Vec<usize> = counts.iter().map(|&k| k * map.size).collect();
    with_combiner(op, &map, dt, |comb| exchange::reduce_scatter(c, input, &blocks, &recv, comb))
}

/// `MPI_Allreduce` with a user op on an intercommunicator.
///
/// # Safety
/// As `MPI_Allreduce`'s.
pub(super) unsafe fn allreduce_user(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    dt: c_int,
    op: c_int,
) -> MpiResult<()> {
    if in_place(sendbuf) {
        return Err(in_place_refused());
    }
    let map = datatype::committed(dt)?;
    let n = count(n)?;
    let input = buffer(sendbuf, n, &map)?.bytes()?.into_owned();
    let recv = buffer(recvbuf, n, &map)?;
    with_combiner(op, &map, dt, |comb| exchange::allreduce_folded(c, input, &recv, comb))
}
