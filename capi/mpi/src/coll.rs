//! Collectives on sccemu communicators: pack, move bytes, unpack.
//!
//! Data collectives (bcast, gather, scatter, allgather, alltoall) move bytes: each
//! process's buffer is packed in type-map order ([`Buffer::bytes`]; a contiguous
//! buffer is used in place), `sccemu::Comm` moves the bytes, and the receiver
//! unpacks them with its own datatype. So the send and receive types of one call may
//! differ, as long as their type signatures do; sccemu compares every member's byte
//! count and fails them all alike if they differ. Blocks of a root's or every member's
//! buffer lie one after another (block `i` at `i * count * extent`), so the packed
//! form of the whole buffer is the blocks in rank order, and one pack or unpack serves.
//!
//! Reductions take a datatype of one basic type ([`crate::op::prim_for`]) and reduce
//! its packed elements as that Rust type, in rank order on every member (sccemu's
//! rule), so results are the same everywhere.
//!
//! `MPI_IN_PLACE` is `None` for the buffer it replaces; the data then comes from
//! (and goes back to) the receive buffer, as the standard says per call.

use std::borrow::Cow;

use sccemu::{Allgather, Op};

use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::op::{elems, packed, prim_for};
use crate::with_prim;

/// Checks a root argument.
pub fn root_of(comm: &CommObj, root: std::ffi::c_int) -> MpiResult<u32> {
    match u32::try_from(root) {
        Ok(r) if r < comm.size() => Ok(r),
        _ => fail(class::ROOT, format!("root {root} is not in a communicator of {}", comm.size())),
    }
}

/// `buf`'s bytes, to be received into: the buffer itself if contiguous, else a scratch
/// vector to unpack afterwards.
fn landing<'b>(buf: &Buffer<'_>, scratch: &'b mut Vec<u8>) -> MpiResult<&'b mut [u8]> {
    if let Some(direct) = buf.contiguous_mut()? {
        return Ok(direct);
    }
    scratch.resize(buf.data_len()?, 0);
    Ok(scratch.as_mut_slice())
}

/// Unpacks what [`landing`] received, if it went to scratch.
fn land(buf: &Buffer<'_>, scratch: &[u8]) -> MpiResult<()> {
    if buf.is_contiguous() { Ok(()) } else { buf.unpack(scratch) }
}

/// `MPI_Bcast`.
pub fn bcast(comm: &CommObj, buf: &Buffer<'_>, root: u32) -> MpiResult<()> {
    let mut scratch = Vec::new();
    if comm.rank == root && !buf.is_contiguous() {
        scratch = buf.bytes()?.into_owned();
    }
    let data = landing(buf, &mut scratch)?;
    comm.coll().bcast(root, data).map_err(coll_error)?;
    if comm.rank != root { land(buf, &scratch) } else { Ok(()) }
}

/// `MPI_Gather`: `send` `None` is `MPI_IN_PLACE` at the root (its block is already in
/// `recv`).
pub fn gather(comm: &CommObj, send: Option<&Buffer<'_>>, recv: &Buffer<'_>, root: u32) -> MpiResult<()> {
    let at_root = comm.rank == root;
    let mine: Cow<'_, [u8]> = match send {
        Some(s) => s.bytes()?,
        None if at_root => Cow::Owned(block_of(recv, comm.rank, comm.size())?),
        None => return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Gather"),
    };
    if at_root {
        same_block(mine.len(), recv, comm.size())?;
        let mut scratch = Vec::new();
        let all = landing(recv, &mut scratch)?;
        comm.coll().gather(root, &mine, all).map_err(coll_error)?;
        land(recv, &scratch)
    } else {
        comm.coll().gather(root, &mine, &mut []).map_err(coll_error)
    }
}

/// `MPI_Scatter`: `recv` `None` is `MPI_IN_PLACE` at the root (it keeps its block).
pub fn scatter(comm: &CommObj, send: &Buffer<'_>, recv: Option<&Buffer<'_>>, root: u32) -> MpiResult<()> {
    let n = comm.size();
    let at_root = comm.rank == root;
    let all = if at_root { send.bytes()? } else { Cow::Borrowed(&[][..]) };
    let Some(recv) = recv else {
        if !at_root {
            return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Scatter");
        }
        let mut mine = vec![0u8; all.len() / n as usize];
        return comm.coll().scatter(root, &all, &mut mine).map_err(coll_error);
    };
    if at_root {
        same_block(recv.data_len()?, send, n)?;
    }
    let mut scratch = Vec::new();
    let mine = landing(recv, &mut scratch)?;
    comm.coll().scatter(root, &all, mine).map_err(coll_error)?;
    land(recv, &scratch)
}

/// `MPI_Allgather`: `send` `None` is `MPI_IN_PLACE` (each block already in `recv`).
pub fn allgather(comm: &CommObj, send: Option<&Buffer<'_>>, recv: &Buffer<'_>) -> MpiResult<()> {
    let mine = match send {
        Some(s) => s.bytes()?,
        None => Cow::Owned(block_of(recv, comm.rank, comm.size())?),
    };
    same_block(mine.len(), recv, comm.size())?;
    let mut scratch = Vec::new();
    let all = landing(recv, &mut scratch)?;
    comm.coll().allgather(&mine, all, Allgather::Auto).map_err(coll_error)?;
    land(recv, &scratch)
}

/// `MPI_Alltoall`: `send` `None` is `MPI_IN_PLACE` (the blocks to send are in `recv`).
pub fn alltoall(comm: &CommObj, send: Option<&Buffer<'_>>, recv: &Buffer<'_>) -> MpiResult<()> {
    let out = match send {
        Some(s) => s.bytes()?,
        None => Cow::Owned(recv.bytes()?.into_owned()),
    };
    if out.len() != recv.data_len()? {
        return fail(
            class::TRUNCATE,
            format!("{} bytes to send, {} to receive", out.len(), recv.data_len()?),
        );
    }
    let mut scratch = Vec::new();
    let all = landing(recv, &mut scratch)?;
    comm.coll().alltoall(&out, all).map_err(coll_error)?;
    land(recv, &scratch)
}

/// The bytes of block `rank` of `buf`, which holds `n` blocks.
pub(crate) fn block_of(buf: &Buffer<'_>, rank: u32, n: u32) -> MpiResult<Vec<u8>> {
    let per = buf.count() / n as usize;
    Ok(buf.sub(rank as usize * per, per)?.bytes()?.into_owned())
}

/// Checks that a block of `block` bytes is a receive buffer's n-th part.
pub(crate) fn same_block(block: usize, whole: &Buffer<'_>, n: u32) -> MpiResult<()> {
    if block * n as usize != whole.data_len()? {
        return fail(
            class::TRUNCATE,
            format!("blocks of {block} bytes from {n} processes into {} bytes", whole.data_len()?),
        );
    }
    Ok(())
}

/// What a reduction reads and writes: its input (or `None`: `MPI_IN_PLACE`, the
/// input is in `recv`) and its output.
pub struct Reduction<'a, 'm> {
    /// The input buffer, unless in place.
    pub send: Option<&'a Buffer<'m>>,
    /// The output buffer (ignored by `MPI_Reduce` off the root).
    pub recv: &'a Buffer<'m>,
    /// The op.
    pub op: Op,
}

impl Reduction<'_, '_> {
    fn input(&self) -> MpiResult<Cow<'_, [u8]>> {
        match self.send {
            Some(s) => s.bytes(),
            None => self.recv.bytes(),
        }
    }

    fn check_sizes(&self, recv_bytes: usize) -> MpiResult<usize> {
        let bytes = self.input()?.len();
        if bytes != recv_bytes {
            return fail(class::TRUNCATE, format!("{bytes} bytes reduced into {recv_bytes}"));
        }
        Ok(bytes)
    }
}

/// `MPI_Reduce`.
pub fn reduce(comm: &CommObj, r: &Reduction<'_, '_>, root: u32) -> MpiResult<()> {
    let at_root = comm.rank == root;
    if !at_root && r.send.is_none() {
        return fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Reduce");
    }
    let map = r.send.unwrap_or(r.recv).map();
    let prim = prim_for(map, r.op)?;
    if at_root {
        r.check_sizes(r.recv.data_len()?)?;
    }
    let input = r.input()?;
    with_prim!(prim, T => {
        let input = elems::<T>(&input, prim);
        let mut out = if at_root { vec![T::default(); input.len()] } else { Vec::new() };
        comm.coll().reduce(root, &input, &mut out, r.op).map_err(coll_error)?;
        if at_root { r.recv.unpack(&packed(&out, prim)) } else { Ok(()) }
    })
}

/// `MPI_Allreduce`.
pub fn allreduce(comm: &CommObj, r: &Reduction<'_, '_>) -> MpiResult<()> {
    let prim = prim_for(r.recv.map(), r.op)?;
    r.check_sizes(r.recv.data_len()?)?;
    let input = r.input()?.into_owned();
    with_prim!(prim, T => {
        let input = elems::<T>(&input, prim);
        let mut out = vec![T::default(); input.len()];
        comm.coll().allreduce(&input, &mut out, r.op).map_err(coll_error)?;
        r.recv.unpack(&packed(&out, prim))
    })
}

/// `MPI_Reduce_scatter_block`: every member's input holds `n` blocks of the size of
/// its `recv`; member `i` gets the reduction of every block `i`.
pub fn reduce_scatter_block(comm: &CommObj, r: &Reduction<'_, '_>) -> MpiResult<()> {
    let n = comm.size() as usize;
    let map = r.recv.map();
    let prim = prim_for(map, r.op)?;
    // In place, the input is n times the receive count, from the same address.
    let input = match r.send {
        Some(s) => s.bytes()?.into_owned(),
        None => r.recv.widened(n)?.bytes()?.into_owned(),
    };
    let block = r.recv.data_len()?;
    if input.len() != block * n {
        return Err(MpiError::new(
            class::TRUNCATE,
            format!("{} bytes reduced into {n} blocks of {block}", input.len()),
        ));
    }
    with_prim!(prim, T => {
        let input = elems::<T>(&input, prim);
        let per = input.len() / n;
        let mut out = vec![T::default(); per];
        comm.coll().reduce_scatter(&input, &mut out, &vec![per; n], r.op).map_err(coll_error)?;
        // In place too, the result goes to the start of the buffer.
        r.recv.unpack(&packed(&out, prim))
    })
}
