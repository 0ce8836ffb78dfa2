//! Reductions this library folds itself: the prefix reductions (`MPI_Scan`,
//! `MPI_Exscan`) with any op, and `MPI_Reduce`, `MPI_Allreduce` and
//! `MPI_Reduce_scatter_block` with a user op.
//!
//! sccemu reduces with its own ops only and has no prefix reduction, so here the
//! members' packed inputs move with sccemu's equal-block collectives (gather,
//! allgather, alltoall) and each member folds what it needs itself. The fold is the
//! standard's ordered combination, `x0 op x1 op ... op xk`, left to right, for every op
//! whether it commutes or not; so a non-commutative user op gets the rank-ordered
//! result, and every member that computes a given result computes it by the same
//! sequence of calls, hence the same value everywhere. The price is memory (up to `n`
//! inputs per member) and `n` combines per member, fine at emulator scale.
//!
//! A [`Combine`] works on packed data (type-map order), the form the collectives move;
//! a user op's combiner (in `ffi::userop`, the C boundary) lays the data out as its
//! datatype says before calling the user's function.

use std::borrow::Cow;
use std::ops::Range;

use sccemu::protocol::atomic::op::combine_into;
use sccemu::{Allgather, Op};

use crate::comm::{CommObj, coll_error};
use crate::datatype::{Prim, TypeMap};
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::op::{elems, packed, prim_for};
use crate::with_prim;

/// One combining step of a reduction.
pub trait Combine {
    /// `next` becomes `acc op next`, both packed elements of the call's datatype, of
    /// equal length.
    fn combine(&self, acc: &[u8], next: &mut [u8]) -> MpiResult<()>;
}

/// A predefined op on a datatype of one basic type.
pub struct Predefined {
    prim: Prim,
    op: Op,
}

impl Predefined {
    /// `op` on `map`'s data, checked as the other reductions check it.
    pub fn new(map: &TypeMap, op: Op) -> MpiResult<Predefined> {
        Ok(Predefined { prim: prim_for(map, op)?, op })
    }
}

impl Combine for Predefined {
    fn combine(&self, acc: &[u8], next: &mut [u8]) -> MpiResult<()> {
        with_prim!(self.prim, T => {
            let mut out = elems::<T>(acc, self.prim).into_owned();
            combine_into(self.op, &mut out, &elems::<T>(next, self.prim));
            next.copy_from_slice(&packed(&out, self.prim));
        });
        Ok(())
    }
}

/// The ordered combination of bytes `part` of the inputs of `ranks` (input `r` at
/// `r * len` of `inputs`).
pub(crate) fn fold(
    inputs: &[u8],
    len: usize,
    part: Range<usize>,
    ranks: Range<usize>,
    c: &dyn Combine,
) -> MpiResult<Vec<u8>> {
    let of = |r: usize| &inputs[r * len + part.start..r * len + part.end];
    let mut acc = of(ranks.start).to_vec();
    for r in ranks.start + 1..ranks.end {
        let mut next = of(r).to_vec();
        c.combine(&acc, &mut next)?;
        acc = next;
    }
    Ok(acc)
}

/// The input (`send`, or `recv`'s data in place), checked to be `expect` bytes.
fn input<'a>(send: Option<&'a Buffer<'_>>, recv: &'a Buffer<'_>, expect: usize) -> MpiResult<Cow<'a, [u8]>> {
    let data = match send {
        Some(s) => s.bytes()?,
        None => Cow::Owned(recv.bytes()?.into_owned()),
    };
    if data.len() != expect {
        return fail(class::TRUNCATE, format!("{} bytes reduced into {expect}", data.len()));
    }
    Ok(data)
}

/// `MPI_Scan` (`exclusive`: `MPI_Exscan`, which leaves rank 0's `recv` untouched).
pub fn scan(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: &Buffer<'_>,
    c: &dyn Combine,
    exclusive: bool,
) -> MpiResult<()> {
    let me = comm.rank as usize;
    gather_fold(comm, send, recv, c, if exclusive { me } else { me + 1 })
}

/// Every member's input to every member, which folds those of ranks `0..upto` into
/// `recv` (nothing for `upto` 0).
fn gather_fold(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: &Buffer<'_>,
    c: &dyn Combine,
    upto: usize,
) -> MpiResult<()> {
    let len = recv.data_len()?;
    let mine = input(send, recv, len)?;
    let mut all = vec![0u8; len * comm.size() as usize];
    comm.coll().allgather(&mine, &mut all, Allgather::Auto).map_err(coll_error)?;
    if upto == 0 {
        return Ok(());
    }
    recv.unpack(&fold(&all, len, 0..len, 0..upto, c)?)
}

/// `MPI_Reduce` with a user op (`recv` is ignored off the root).
pub fn reduce(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: &Buffer<'_>,
    c: &dyn Combine,
    root: u32,
) -> MpiResult<()> {
    let at_root = comm.rank == root;
    let mine = match send {
        Some(s) => s.bytes()?,
        None if at_root => Cow::Owned(recv.bytes()?.into_owned()),
        None => return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Reduce"),
    };
    let len = mine.len();
    if at_root && recv.data_len()? != len {
        return fail(class::TRUNCATE, format!("{len} bytes reduced into {}", recv.data_len()?));
    }
    let n = comm.size() as usize;
    let mut all = if at_root { vec![0u8; len * n] } else { Vec::new() };
    comm.coll().gather(root, &mine, &mut all).map_err(coll_error)?;
    if at_root { recv.unpack(&fold(&all, len, 0..len, 0..n, c)?) } else { Ok(()) }
}

/// `MPI_Allreduce` with a user op.
pub fn allreduce(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: &Buffer<'_>,
    c: &dyn Combine,
) -> MpiResult<()> {
    gather_fold(comm, send, recv, c, comm.size() as usize)
}

/// `MPI_Reduce_scatter_block` with a user op: an alltoall brings member `i` block `i`
/// of every input, which it folds.
pub fn reduce_scatter_block(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: &Buffer<'_>,
    c: &dyn Combine,
) -> MpiResult<()> {
    let n = comm.size() as usize;
    let block = recv.data_len()?;
    // In place, the input is n times the receive count, from the same address.
    let mine = match send {
        Some(s) => input(Some(s), recv, block * n)?,
        None => Cow::Owned(input(None, &recv.widened(n)?, block * n)?.into_owned()),
    };
    let mut mine_of_all = vec![0u8; block * n];
    comm.coll().alltoall(&mine, &mut mine_of_all).map_err(coll_error)?;
    recv.unpack(&fold(&mine_of_all, block, 0..block, 0..n, c)?)
}
