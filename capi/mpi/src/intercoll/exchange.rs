//! The all-to-all collectives of variable size on an intercommunicator (MPI-3.1
//! section 5.2.2): `MPI_Allgatherv`, `MPI_Alltoall(v,w)` and `MPI_Reduce_scatter(_block)`.
//! Every member receives from the remote group only; each call is three steps:
//! 1. each group brings its data to its leader: the members' blocks
//!    (`vcoll::gather_bytes`), or their inputs folded in rank order;
//! 2. the leaders swap what their groups send (`wire::transfer`, which carries
//!    an error class too, so a group that failed fails the other and never leaves it
//!    waiting);
//! 3. each leader hands the remote group's data to its members: all of it
//!    (allgatherv, `vcoll::bcast_bytes`), or to each member its part
//!    (`vcoll::scatter_bytes`).
//!
//! The local steps agree on errors, so every member of a group returns an error if
//! any does. Alltoall's leader regroups its members' lists by destination: the list
//! for remote rank `j` holds block `j` of each local member's, in local rank order, so
//! the remote leader's member `j` gets exactly the blocks addressed to it.

use crate::comm::CommObj;
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::intercomm::phase;
use crate::ordered::Combine;
use crate::vcoll::{bcast_bytes, gather_bytes, scatter_bytes};

use super::wire::{join, split, transfer};
use super::{Blocks, bytes, reduce_to_leader};

/// Step 2 (module docs) at the leader, the outcome `theirs` of the remote leader;
/// nothing elsewhere.
fn swap(ic: &CommObj, phase: u32, ours: &MpiResult<Vec<u8>>) -> MpiResult<Vec<u8>> {
    let other = Some(ic.peers[0]);
    if ic.rank == 0 { transfer(ic, phase, other, ours, other) } else { Ok(Vec::new()) }
}

/// `MPI_Allgatherv` on an intercommunicator: every member gets remote rank `i`'s
/// `send` in block `i` of `recv`.
pub fn allgatherv(ic: &CommObj, send: &Buffer<'_>, recv: &Blocks<'_, '_>) -> MpiResult<()> {
    let ours = gather_bytes(ic, 0, bytes(send)).map(|all| join(&all));
    let theirs = swap(ic, phase::ALLGATHERV, &ours);
    // `ours` failed alike everywhere (the gather agreed), after the swap told the others.
    ours?;
    let theirs = bcast_bytes(ic, 0, theirs)?;
    recv.land(&split(&theirs, ic.peers.len())?)
}

/// `MPI_Alltoall` and `MPI_Alltoallv` on an intercommunicator: block `j` of `send`
/// goes to remote rank `j`, block `i` of `recv` comes from remote rank `i`.
pub fn alltoall(ic: &CommObj, send: &Blocks<'_, '_>, recv: &Blocks<'_, '_>) -> MpiResult<()> {
    let rn = ic.peers.len();
    let mine = send.packed(rn).map(|b| join(&b));
    let lists = gather_bytes(ic, 0, mine);
    let ours = match &lists {
        Ok(lists) if ic.rank == 0 => by_destination(lists, rn),
        Ok(_) => Ok(Vec::new()),
        Err(e) => Err(e.clone()),
    };
    let theirs = swap(ic, phase::ALLTOALL, &ours);
    lists?;
    let n = ic.size() as usize;
    let parts = theirs.and_then(|t| Ok(split(&t, n)?.into_iter().map(<[u8]>::to_vec).collect()));
    let mine = match ic.rank {
        0 => scatter_bytes(ic, 0, ours.and(parts)),
        _ => scatter_bytes(ic, 0, Ok(Vec::new())),
    }?;
    recv.land(&split(&mine, rn)?)
}

/// The leader's regrouping (module docs): from each local member's list of `rn`
/// blocks, the list of `rn` lists, one per remote rank.
fn by_destination(lists: &[Vec<u8>], rn: usize) -> MpiResult<Vec<u8>> {
    let rows = lists.iter().map(|l| split(l, rn)).collect::<MpiResult<Vec<_>>>()?;
    let columns: Vec<Vec<u8>> =
        (0..rn).map(|j| join(&rows.iter().map(|r| r[j]).collect::<Vec<_>>())).collect();
    Ok(join(&columns))
}

/// `MPI_Reduce_scatter` and `MPI_Reduce_scatter_block` on an intercommunicator: each
/// member's packed `input` has as many bytes as `blocks` adds up to;
/// the remote group's inputs folded in rank order are cut into `blocks[i]` bytes for
/// local rank `i`, which lands its part in `recv`.
pub fn reduce_scatter(
    ic: &CommObj,
    input: Vec<u8>,
    blocks: &[usize],
    recv: &Buffer<'_>,
    c: &dyn Combine,
) -> MpiResult<()> {
    let total: usize = blocks.iter().sum();
    let input = match input.len() == total {
        true => Ok(input),
        false => fail(class::TRUNCATE, format!("an input of {} bytes for blocks of {total}", input.len())),
    };
    let ours = reduce_to_leader(ic, input, Ok(c));
    let theirs = swap(ic, phase::REDUCE_SCATTER, &ours);
    let parts = match ic.rank {
        0 => ours.and(theirs).and_then(|t| cut(&t, blocks)),
        _ => ours.map(|_| Vec::new()),
    };
    let mine = scatter_bytes(ic, 0, parts)?;
    let room = recv.data_len()?;
    if mine.len() != room {
        return fail(class::TRUNCATE, format!("a block of {} bytes for a buffer of {room}", mine.len()));
    }
    recv.unpack(&mine)
}

/// `MPI_Allreduce` with a user op on an intercommunicator: every member gets the remote
/// group's packed inputs folded in rank order in `recv`. (A predefined op takes
/// sccemu's reduction instead, `super::allreduce`.)
pub fn allreduce_folded(ic: &CommObj, input: Vec<u8>, recv: &Buffer<'_>, c: &dyn Combine) -> MpiResult<()> {
    let ours = reduce_to_leader(ic, Ok(input), Ok(c));
    let theirs = swap(ic, phase::ALLREDUCE, &ours);
    let theirs = match ic.rank {
        0 => ours.and(theirs),
        _ => ours.and(Ok(Vec::new())),
    };
    let theirs = bcast_bytes(ic, 0, theirs)?;
    let room = recv.data_len()?;
    if theirs.len() != room {
        return fail(
            class::TRUNCATE,
            format!("the remote group reduced {} bytes where {room} were expected", theirs.len()),
        );
    }
    recv.unpack(&theirs)
}

/// `data` cut into consecutive parts of `blocks[i]` bytes, which must add up to it.
fn cut(data: &[u8], blocks: &[usize]) -> MpiResult<Vec<Vec<u8>>> {
    let total: usize = blocks.iter().sum();
    if data.len() != total {
        return fail(
            class::TRUNCATE,
            format!("the remote group reduced {} bytes where the counts add up to {total}", data.len()),
        );
    }
    let mut rest = data;
    Ok(blocks
        .iter()
        .map(|&len| {
            let (head, tail) = rest.split_at(len);
            rest = tail;
            head.to_vec()
        })
        .collect())
}
