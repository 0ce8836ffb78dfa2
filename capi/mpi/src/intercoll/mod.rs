//! Collectives on intercommunicators (MPI-3.1 section 5.2.2). Every blocking
//! collective of MPI-3.1 chapter 5 but the scans (which MPI does not define on
//! intercommunicators) works on one; so do the nonblocking ones (`MPI_I*`) but the
//! scans (`ffi::icoll::inter` and `ffi::icoll::inter_v`, protocols of their own over
//! nonblocking messages), which refuse an intercommunicator with `MPI_ERR_COMM`
//! (`comm::lookup_intra`).
//!
//! Each runs on the local group's sccemu communicator (the intercommunicator's own
//! `coll()`), plus messages between the two leaders (local rank 0 of each group), or
//! between a leader and the root, in the intercommunicator's hidden context
//! (`CommObj::inter_tag`, one phase per collective, so a message of one kind never
//! meets a receive of another):
//! - barrier: a local barrier (every local member has entered), the leaders swap an
//!   empty message (every remote member has entered), a local barrier again (no
//!   member leaves before its leader has learnt that);
//! - bcast: the root (`MPI_ROOT`) sends its buffer (or its argument error, `wire`) to
//!   the remote leader, the rest of its group (`MPI_PROC_NULL`) does nothing, and the
//!   other group's leader receives it from the root and broadcasts it over its group;
//! - allreduce: each group reduces its input to its leader (sccemu's rank-order
//!   reduction; a user op's fold, [`exchange::allreduce_folded`]), the leaders swap the
//!   results, and each leader broadcasts the *other*
//!   group's result over its group;
//! - allgather: each group gathers its blocks to its leader, in rank order, the leaders
//!   swap them, and each leader broadcasts the other group's blocks over its group;
//! - the rooted calls ([`rooted`]): the group without the root gathers to its leader,
//!   which talks to the root alone (reduce, gather, gatherv), or its leader takes the
//!   root's blocks and scatters them (scatter, scatterv);
//! - the other all-to-all calls ([`exchange`]): gather to the leader, the leaders swap,
//!   the leader broadcasts or scatters what came.
//!
//! A process takes part in the communication in every case once its arguments passed
//! the local checks (root, count, datatype, op), which fail before any message moves
//! (so a program that passes bad arguments everywhere gets the error everywhere and
//! stays usable); in the rooted calls and bcast a process whose buffer, count,
//! datatype or op failed takes part still, carrying its error (`crate::ffi::intercoll`,
//! [`rooted`]), so that a bad argument at the root alone leaves no message queued
//! and no process waiting. Errors found later travel with the data: the local steps
//! agree on errors (`vcoll::gather_bytes` and friends, which the broadcast of the other
//! group's data to the members uses too, so every member learns its leader's error) and
//! the messages between the groups carry an error class (`wire`), so a member that
//! fails never leaves another waiting. A block that does not match its receive buffer (the groups' type
//! signatures differ) is `MPI_ERR_TRUNCATE` where it lands, after every other block
//! landed. Reductions fold each group's inputs at its leader in rank order
//! (`ordered::fold`), so user ops work and a non-commutative op gets the standard's
//! order. MPI does not allow `MPI_IN_PLACE` on intercommunicators for these calls
//! (`MPI_ERR_BUFFER`).

use std::ffi::c_int;

use crate::coll::Reduction;
use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::intercomm::{phase, swap_exact};
use crate::op::{elems, packed, prim_for};
use crate::ordered::{Combine, fold};
use crate::p2p::PROC_NULL;
use crate::vcoll::{bcast_bytes, gather_bytes};
use crate::with_prim;

pub mod exchange;
pub mod rooted;
mod wire;

/// `MPI_ROOT`: the root's own root argument in an intercommunicator's rooted
/// collective.
pub const ROOT: c_int = -3;

/// The error of an `MPI_IN_PLACE` argument here.
pub fn in_place_refused() -> MpiError {
    MpiError::new(class::BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator")
}

/// Gives every member the leader's `theirs` (the other group's data, packed, or the
/// leader's error) in `buf` (this member's checked buffer, or its error): the leader
/// broadcasts it over the local group with its outcome (`vcoll::bcast_bytes`, which
/// agrees on errors), so every member returns an error if the leader or any member
/// failed, and data of the wrong length is `MPI_ERR_TRUNCATE` on every member.
fn spread(ic: &CommObj, buf: MpiResult<&Buffer<'_>>, theirs: MpiResult<Vec<u8>>) -> MpiResult<()> {
    let outcome = match &buf {
        Err(e) => Err(e.clone()),
        Ok(_) => theirs,
    };
    let theirs = bcast_bytes(ic, 0, outcome)?;
    let buf = buf?;
    let room = buf.data_len()?;
    if theirs.len() != room {
        return fail(
            class::TRUNCATE,
            format!("the remote group sent {} bytes where {room} were expected", theirs.len()),
        );
    }
    buf.unpack(&theirs)
}

/// `MPI_Barrier` on an intercommunicator.
pub fn barrier(ic: &CommObj) -> MpiResult<()> {
    ic.coll().barrier().map_err(coll_error)?;
    let swapped = if ic.rank == 0 { swap_exact(ic, phase::BARRIER, &[], &mut []) } else { Ok(()) };
    let after = ic.coll().barrier().map_err(coll_error);
    swapped.and(after)
}

/// `MPI_Bcast` on an intercommunicator (`role` from the root argument, [`role`]): the
/// root's `buf` reaches every member of the other group. `buf` is the checks' outcome:
/// a root whose buffer failed sends its error instead, and the other group's leader
/// takes the root's message whatever its own buffer, so nothing is left queued.
pub fn bcast(ic: &CommObj, buf: MpiResult<&Buffer<'_>>, role: Role) -> MpiResult<()> {
    match role {
        Role::Root => {
            let data = buf.and_then(bytes);
            let sent = wire::transfer(ic, phase::BCAST, Some(ic.peers[0]), &data, None);
            data?;
            sent.map(drop)
        }
        Role::Idle => Ok(()),
        Role::Remote(r) => {
            let from = Some(ic.peers[r as usize]);
            let theirs = match ic.rank {
                0 => wire::transfer(ic, phase::BCAST, None, &Ok(Vec::new()), from),
                _ => Ok(Vec::new()),
            };
            spread(ic, buf, theirs)
        }
    }
}

/// A process's part in a rooted collective on an intercommunicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The root (`MPI_ROOT`).
    Root,
    /// The rest of the root's group (`MPI_PROC_NULL`): no part at all.
    Idle,
    /// A member of the other group; the root's rank in the remote group.
    Remote(u32),
}

/// The part that root argument `root` gives: `MPI_ERR_ROOT` unless `MPI_ROOT`,
/// `MPI_PROC_NULL` or a rank of the remote group.
pub fn role(ic: &CommObj, root: c_int) -> MpiResult<Role> {
    match root {
        ROOT => Ok(Role::Root),
        PROC_NULL => Ok(Role::Idle),
        r => match u32::try_from(r) {
            Ok(r) if (r as usize) < ic.peers.len() => Ok(Role::Remote(r)),
            _ => fail(
                class::ROOT,
                format!(
                    "root {r} is neither MPI_ROOT, MPI_PROC_NULL nor in a remote group of {}",
                    ic.peers.len()
                ),
            ),
        },
    }
}

/// Numbered blocks of a user buffer, each sent or received whole: block `i` is `at(i)`.
/// A received block must fill its buffer if `exact` (the calls with one count), else
/// fit in it (the v-calls); otherwise it is `MPI_ERR_TRUNCATE`.
pub struct Blocks<'f, 'm> {
    /// Block `i`'s buffer.
    pub at: &'f dyn Fn(usize) -> MpiResult<Buffer<'m>>,
    /// Whether a received block must fill its buffer.
    pub exact: bool,
}

impl Blocks<'_, '_> {
    /// The packed data of blocks `0..n`.
    fn packed(&self, n: usize) -> MpiResult<Vec<Vec<u8>>> {
        (0..n).map(|i| Ok((self.at)(i)?.bytes()?.into_owned())).collect()
    }

    /// Unpacks `data[i]`, from rank `i`, into block `i`, each; the first error after
    /// all the rest landed.
    fn land(&self, data: &[&[u8]]) -> MpiResult<()> {
        let mut first = Ok(());
        for (i, d) in data.iter().enumerate() {
            first = first.and(self.land_one(d, i, i));
        }
        first
    }

    /// Unpacks `data`, from rank `from`, into block `i`.
    fn land_one(&self, data: &[u8], i: usize, from: usize) -> MpiResult<()> {
        let dest = (self.at)(i)?;
        let room = dest.data_len()?;
        if self.exact && data.len() != room {
            return fail(
                class::TRUNCATE,
                format!("{} bytes from rank {from} for a block of {room}", data.len()),
            );
        }
        crate::vcoll::land(data, &dest, from)
    }
}

/// A buffer's packed data, owned.
fn bytes(buf: &Buffer<'_>) -> MpiResult<Vec<u8>> {
    Ok(buf.bytes()?.into_owned())
}

/// Collective over the local group: every member's packed `input` folded in rank order
/// with `c` at the leader (empty elsewhere), or the error of any member everywhere
/// (`input`'s or `c`'s; a fold's error, the members' inputs differing in length, at the
/// leader alone).
fn reduce_to_leader(
    ic: &CommObj,
    input: MpiResult<Vec<u8>>,
    c: MpiResult<&dyn Combine>,
) -> MpiResult<Vec<u8>> {
    let input = match &c {
        Err(e) => Err(e.clone()),
        Ok(_) => input,
    };
    let all = gather_bytes(ic, 0, input)?;
    let c = c?;
    let Some(len) = all.first().map(Vec::len) else { return Ok(Vec::new()) };
    if let Some((rank, b)) = all.iter().enumerate().find(|(_, b)| b.len() != len) {
        return fail(class::TRUNCATE, format!("rank {rank} reduces {} bytes, rank 0 {len}", b.len()));
    }
    fold(&all.concat(), len, 0..len, 0..all.len(), c)
}

/// `MPI_Allreduce` on an intercommunicator: every member gets the reduction of the
/// remote group's inputs.
pub fn allreduce(ic: &CommObj, r: &Reduction<'_, '_>) -> MpiResult<()> {
    let prim = prim_for(r.recv.map(), r.op)?;
    let input = r.send.ok_or_else(in_place_refused)?.bytes()?;
    let bytes = r.recv.data_len()?;
    if input.len() != bytes {
        return fail(class::TRUNCATE, format!("{} bytes reduced into {bytes}", input.len()));
    }
    let leader = ic.rank == 0;
    let mut theirs = vec![0u8; bytes];
    let swapped = with_prim!(prim, T => {
        let input = elems::<T>(&input, prim);
        let mut ours = vec![T::default(); if leader { input.len() } else { 0 }];
        ic.coll().reduce(0, &input, &mut ours, r.op).map_err(coll_error)?;
        if leader { swap_exact(ic, phase::ALLREDUCE, &packed(&ours, prim), &mut theirs) } else { Ok(()) }
    });
    spread(ic, Ok(r.recv), swapped.map(|()| theirs))
}

/// `MPI_Allgather` on an intercommunicator: every member gets the remote group's
/// blocks, in their rank order (`recv` holds one block per remote member).
pub fn allgather(ic: &CommObj, send: &Buffer<'_>, recv: &Buffer<'_>) -> MpiResult<()> {
    let mine = send.bytes()?;
    let leader = ic.rank == 0;
    let mut ours = vec![0u8; if leader { mine.len() * ic.size() as usize } else { 0 }];
    ic.coll().gather(0, &mine, &mut ours).map_err(coll_error)?;
    let mut theirs = vec![0u8; recv.data_len()?];
    let swapped = if leader { swap_exact(ic, phase::ALLGATHER, &ours, &mut theirs) } else { Ok(()) };
    spread(ic, Ok(recv), swapped.map(|()| theirs))
}
