//! The v-collectives (`MPI_Gatherv`, `MPI_Scatterv`, `MPI_Allgatherv`,
//! `MPI_Alltoallv`): per-rank counts and displacements, moved as padded equal blocks
//! over sccemu's equal-block collectives.
//!
//! Why padded blocks rather than point-to-point: sccemu's collectives already agree on
//! errors (every member sees every member's header, so nobody is left waiting) and run
//! in the communicator's collective context, apart from the user's messages; messages
//! over the communicator would need a tag space of their own and an agreement protocol
//! of their own. The price is `n * max` bytes of staging where the counts are uneven,
//! which is what a many-core emulator's users accept for simpler, obviously-correct code.
//!
//! Protocol, the same for all four calls:
//! 1. `agree`: an allgather of one header per member, its largest outgoing block in
//!    bytes and the class of its argument error (0: none). Every member then knows the
//!    block stride, and if any member's arguments were erroneous, all return an error
//!    (a member its own, the others the class of the first bad member) before any data
//!    moves.
//! 2. Every block goes as `[length: u64][packed data][padding]`, `stride` bytes, so a
//!    receiver knows what arrived and reports `MPI_ERR_TRUNCATE` when it exceeds the
//!    receive count (after the data moved: truncation is the receiver's alone).
//!
//! Buffers are packed in type-map order, so send and receive types may differ as long as
//! their signatures match, as in `crate::coll`. Displacements are in units of the
//! receive (or send) type's extent; [`VBuf`] turns them into sub-buffers.

use std::borrow::Cow;

use sccemu::Allgather;

use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;

/// A buffer with per-rank blocks: block `i` is `counts[i]` elements from element
/// `displs[i]` of `buf` (which spans every block).
pub struct VBuf<'a, 'm> {
    /// The whole buffer, spanning every block.
    pub buf: Buffer<'m>,
    /// Elements per rank.
    pub counts: &'a [usize],
    /// First element per rank.
    pub displs: &'a [usize],
}

impl<'m> VBuf<'_, 'm> {
    /// Block `i`.
    pub fn block(&self, i: usize) -> MpiResult<Buffer<'m>> {
        // An empty block's displacement is not looked at (the span ignores it).
        if self.counts[i] == 0 {
            return Ok(Buffer::empty());
        }
        self.buf.sub(self.displs[i], self.counts[i])
    }
}

/// Length-prefix bytes of a block.
const PREFIX: usize = size_of::<u64>();

/// Step 1 (module docs): the stride of every block, or the call's error everywhere.
/// A member with an error of its own gets an error here too, which it drops for its own.
fn agree(comm: &CommObj, mine: Result<usize, &MpiError>) -> MpiResult<usize> {
    let header = match mine {
        Ok(len) => [len as u64, 0],
        Err(e) => [0, e.class as u64],
    };
    let mut all = vec![0u64; 2 * comm.size() as usize];
    comm.coll().allgather(&header, &mut all, Allgather::Auto).map_err(coll_error)?;
    if let Some((rank, h)) = all.chunks_exact(2).enumerate().find(|(_, h)| h[1] != 0) {
        return fail(h[1] as std::ffi::c_int, format!("rank {rank}'s arguments to this call are erroneous"));
    }
    Ok(PREFIX + all.chunks_exact(2).map(|h| h[0] as usize).max().unwrap_or(0))
}

/// Joins a v-collective whose own arguments failed, so that the others return too.
pub fn abstain(comm: &CommObj, error: MpiError) -> MpiError {
    let _ = agree(comm, Err(&error));
    error
}

/// Writes `data` as one block of `stride` bytes into `out` (zeroed).
fn put_block(out: &mut [u8], data: &[u8]) {
    out[..PREFIX].copy_from_slice(&(data.len() as u64).to_le_bytes());
    out[PREFIX..PREFIX + data.len()].copy_from_slice(data);
}

/// The data of one received block, without its prefix and padding.
fn payload(block: &[u8]) -> &[u8] {
    let len = u64::from_le_bytes(block[..PREFIX].try_into().expect("a length prefix")) as usize;
    &block[PREFIX..PREFIX + len]
}

/// Unpacks one received block into `dest`: `MPI_ERR_TRUNCATE` if it does not fit.
fn take_block(block: &[u8], dest: &Buffer<'_>, from: usize) -> MpiResult<()> {
    land(payload(block), dest, from)
}

/// Unpacks `data`, rank `from`'s, into `dest`: `MPI_ERR_TRUNCATE` if it does not fit.
pub fn land(data: &[u8], dest: &Buffer<'_>, from: usize) -> MpiResult<()> {
    let room = dest.data_len()?;
    if data.len() > room {
        return fail(
            class::TRUNCATE,
            format!("{} bytes from rank {from} into a block of {room}", data.len()),
        );
    }
    dest.unpack(data)
}

/// Unpacks every block of `all` (`stride` bytes each) into `dest` (`skip`: the
/// caller's own, in place); the first truncation is reported after all the rest landed.
fn take_all(all: &[u8], stride: usize, dest: &VBuf<'_, '_>, skip: Option<usize>) -> MpiResult<()> {
    take_each(all, stride, |i| dest.block(i), skip)
}

/// [`take_all`] into the blocks `dest` gives, by rank.
fn take_each<'m>(
    all: &[u8],
    stride: usize,
    dest: impl Fn(usize) -> MpiResult<Buffer<'m>>,
    skip: Option<usize>,
) -> MpiResult<()> {
    let mut first = Ok(());
    for (i, block) in all.chunks_exact(stride).enumerate() {
        if Some(i) != skip {
            let landed = dest(i).and_then(|b| take_block(block, &b, i));
            first = first.and(landed);
        }
    }
    first
}

/// `MPI_Gatherv`: `send` `None` is `MPI_IN_PLACE` at the root; `recv` is significant
/// at the root only.
pub fn gatherv(
    comm: &CommObj,
    send: Option<&Buffer<'_>>,
    recv: Option<&VBuf<'_, '_>>,
    root: u32,
) -> MpiResult<()> {
    let at_root = comm.rank == root;
    let mine: MpiResult<Cow<'_, [u8]>> = match send {
        Some(s) => s.bytes(),
        None if at_root => Ok(Cow::Borrowed(&[])),
        None => fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Gatherv"),
    };
    let recv = match (at_root, recv) {
        (true, None) => {
            return Err(abstain(comm, MpiError::new(class::BUFFER, "no receive buffer at the root")));
        }
        (_, r) => r,
    };
    let stride = agree(comm, mine.as_ref().map(|m| m.len()));
    let mine = mine?;
    let stride = stride?;
    let mut block = vec![0u8; stride];
    put_block(&mut block, &mine);
    let n = comm.size() as usize;
    let mut all = if at_root { vec![0u8; n * stride] } else { Vec::new() };
    comm.coll().gather(root, &block, &mut all).map_err(coll_error)?;
    match recv {
        Some(r) if at_root => take_all(&all, stride, r, send.is_none().then_some(root as usize)),
        _ => Ok(()),
    }
}

/// `MPI_Scatterv`: `send` is significant at the root only; `recv` `None` is
/// `MPI_IN_PLACE` at the root (it keeps its block).
pub fn scatterv(
    comm: &CommObj,
    send: Option<&VBuf<'_, '_>>,
    recv: Option<&Buffer<'_>>,
    root: u32,
) -> MpiResult<()> {
    let at_root = comm.rank == root;
    let n = comm.size() as usize;
    let blocks: MpiResult<Vec<Vec<u8>>> = match (at_root, send, recv) {
        (false, _, None) => fail(class::BUFFER, "MPI_IN_PLACE is the root's alone in MPI_Scatterv"),
        (true, None, _) => fail(class::BUFFER, "no send buffer at the root"),
        (true, Some(s), _) => (0..n).map(|i| s.block(i)?.bytes().map(Cow::into_owned)).collect(),
        (false, _, Some(_)) => Ok(Vec::new()),
    };
    let mine = scatter_bytes(comm, root, blocks)?;
    match recv {
        Some(r) => land(&mine, r, root as usize),
        None => Ok(()),
    }
}

/// Member `root`'s `blocks[i]` (significant there only) to each member `i`, or the
/// error of any member to every member: the agreement, then a scatter of framed blocks.
pub fn scatter_bytes(comm: &CommObj, root: u32, blocks: MpiResult<Vec<Vec<u8>>>) -> MpiResult<Vec<u8>> {
    let longest = blocks.as_ref().map(|b| b.iter().map(Vec::len).max().unwrap_or(0));
    let stride = agree(comm, longest);
    let blocks = blocks?;
    let stride = stride?;
    let at_root = comm.rank == root;
    let mut all = vec![0u8; if at_root { comm.size() as usize * stride } else { 0 }];
    for (out, data) in all.chunks_exact_mut(stride).zip(&blocks) {
        put_block(out, data);
    }
    let mut mine = vec![0u8; stride];
    comm.coll().scatter(root, &all, &mut mine).map_err(coll_error)?;
    Ok(payload(&mine).to_vec())
}

/// Every member's `mine` to member `root` (by rank; nothing elsewhere), or the error of
/// any member to every member: the agreement, then a gather of framed blocks.
pub fn gather_bytes(comm: &CommObj, root: u32, mine: MpiResult<Vec<u8>>) -> MpiResult<Vec<Vec<u8>>> {
    let stride = agree(comm, mine.as_ref().map(Vec::len));
    let mine = mine?;
    let stride = stride?;
    let mut block = vec![0u8; stride];
    put_block(&mut block, &mine);
    let mut all = vec![0u8; if comm.rank == root { comm.size() as usize * stride } else { 0 }];
    comm.coll().gather(root, &block, &mut all).map_err(coll_error)?;
    Ok(all.chunks_exact(stride).map(|b| payload(b).to_vec()).collect())
}

/// Member `root`'s `data` (significant there only) to every member, or the error of any
/// member to every member: the agreement, then a broadcast.
pub fn bcast_bytes(comm: &CommObj, root: u32, data: MpiResult<Vec<u8>>) -> MpiResult<Vec<u8>> {
    let stride = agree(comm, data.as_ref().map(Vec::len));
    let data = data?;
    let stride = stride?;
    let mut block = vec![0u8; stride];
    if comm.rank == root {
        put_block(&mut block, &data);
    }
    comm.coll().bcast(root, &mut block).map_err(coll_error)?;
    Ok(payload(&block).to_vec())
}

/// `MPI_Allgatherv`: `send` `None` is `MPI_IN_PLACE` (each member's block is already
/// in its `recv`).
pub fn allgatherv(comm: &CommObj, send: Option<&Buffer<'_>>, recv: &VBuf<'_, '_>) -> MpiResult<()> {
    let me = comm.rank as usize;
    let mine: MpiResult<Vec<u8>> = match send {
        Some(s) => s.bytes().map(Cow::into_owned),
        None => recv.block(me).and_then(|b| b.bytes().map(Cow::into_owned)),
    };
    let stride = agree(comm, mine.as_ref().map(Vec::len));
    let mine = mine?;
    let stride = stride?;
    let mut block = vec![0u8; stride];
    put_block(&mut block, &mine);
    let mut all = vec![0u8; comm.size() as usize * stride];
    comm.coll().allgather(&block, &mut all, Allgather::Auto).map_err(coll_error)?;
    take_all(&all, stride, recv, send.is_none().then_some(me))
}

/// `MPI_Alltoallv`: `send` `None` is `MPI_IN_PLACE` (the blocks to send are `recv`'s,
/// with its counts and displacements, and are replaced by what arrives).
pub fn alltoallv(comm: &CommObj, send: Option<&VBuf<'_, '_>>, recv: &VBuf<'_, '_>) -> MpiResult<()> {
    let from = send.unwrap_or(recv);
    exchange(comm, |j| from.block(j), |i| recv.block(i))
}

/// The exchange of `MPI_Alltoallv` and `MPI_Alltoallw`: `send(j)` is this member's block
/// for member `j`, `recv(i)` where member `i`'s lands. Every send block is packed
/// before any receive block is written, so the two may overlap (in place).
pub fn exchange<'s, 'r>(
    comm: &CommObj,
    send: impl Fn(usize) -> MpiResult<Buffer<'s>>,
    recv: impl Fn(usize) -> MpiResult<Buffer<'r>>,
) -> MpiResult<()> {
    let n = comm.size() as usize;
    let blocks = (0..n).map(|j| send(j).and_then(|b| b.bytes().map(Cow::into_owned))).collect();
    let (all, stride) = swap(comm, blocks)?;
    take_each(&all, stride, recv, None)
}

/// An alltoall of byte blocks of any lengths: `blocks[j]` (this member's, or its
/// error, which every member learns of first) goes to member `j`; gives what each
/// member sent this one, by rank.
pub fn alltoall_bytes(comm: &CommObj, blocks: MpiResult<Vec<Vec<u8>>>) -> MpiResult<Vec<Vec<u8>>> {
    let (all, stride) = swap(comm, blocks)?;
    Ok(all.chunks_exact(stride).map(|b| payload(b).to_vec()).collect())
}

/// Steps 1 and 2 (module docs) of an alltoall of `blocks`: every member's blocks for
/// this one, framed, `stride` bytes each, by rank.
fn swap(comm: &CommObj, blocks: MpiResult<Vec<Vec<u8>>>) -> MpiResult<(Vec<u8>, usize)> {
    let n = comm.size() as usize;
    let longest = blocks.as_ref().map(|b| b.iter().map(Vec::len).max().unwrap_or(0));
    let stride = agree(comm, longest);
    let blocks = blocks?;
    let stride = stride?;
    let mut out = vec![0u8; n * stride];
    for (o, data) in out.chunks_exact_mut(stride).zip(&blocks) {
        put_block(o, data);
    }
    let mut all = vec![0u8; n * stride];
    comm.coll().alltoall(&out, &mut all).map_err(coll_error)?;
    Ok((all, stride))
}

/// `MPI_Reduce_scatter`: `input` is this member's packed input, `blocks[j]` bytes for
/// member `j` in turn; member `i` receives into `recv` the rank-ordered fold (`c`) of
/// block `i` of every input, so that a non-commutative op gets the same result as
/// everywhere else. After the members agree on errors, an alltoall of the blocks
/// (framed and padded to the longest, as above) brings each member its block of every
/// input. Members must pass the same counts; a member whose block from another has
/// another length gets `MPI_ERR_TRUNCATE`.
pub fn reduce_scatter(
    comm: &CommObj,
    input: MpiResult<Vec<u8>>,
    blocks: &[usize],
    recv: &Buffer<'_>,
    c: &dyn crate::ordered::Combine,
) -> MpiResult<()> {
    let n = comm.size() as usize;
    let total: usize = blocks.iter().sum();
    let input = input.and_then(|data| match data.len() == total {
        true => Ok(data),
        false => fail(class::TRUNCATE, format!("an input of {} bytes for blocks of {total}", data.len())),
    });
    let split = input.map(|data| {
        let mut rest = &data[..];
        let mut block = |len| {
            let (head, tail) = rest.split_at(len);
            rest = tail;
            head.to_vec()
        };
        blocks.iter().map(|&len| block(len)).collect()
    });
    let (all, stride) = swap(comm, split)?;
    let mine = blocks[comm.rank as usize];
    for (from, block) in all.chunks_exact(stride).enumerate() {
        let len = payload(block).len();
        if len != mine {
            return fail(
                class::TRUNCATE,
                format!("rank {from} sent a block of {len} bytes for one of {mine}"),
            );
        }
    }
    recv.unpack(&crate::ordered::fold(&all, stride, PREFIX..PREFIX + mine, 0..n, c)?)
}
