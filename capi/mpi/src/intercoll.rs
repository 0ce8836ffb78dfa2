//! Collectives on intercommunicators (MPI-3.1 section 5.2.2): `MPI_Barrier`,
//! `MPI_Bcast`, `MPI_Allreduce` and `MPI_Allgather`. Every other collective refuses an
//! intercommunicator with `MPI_ERR_COMM` (`comm::lookup_intra`).
//!
//! Each runs on the local group's sccemu communicator (the intercommunicator's own
//! `coll()`), plus one exchange between the two leaders (local rank 0 of each group)
//! in the intercommunicator's hidden context (`CommObj::inter_tag`, one phase per
//! collective, so a message of one kind never meets a receive of another):
//! - barrier: a local barrier (every local member has entered), the leaders swap an
//!   empty message (every remote member has entered), a local barrier again (no
//!   member leaves before its leader has learnt that);
//! - bcast: the root (`MPI_ROOT`) sends its buffer to the remote leader, the rest of
//!   its group (`MPI_PROC_NULL`) does nothing, and the other group's leader receives it
//!   from the root and broadcasts it over its group;
//! - allreduce: each group reduces its input to its leader (sccemu's rank-order
//!   reduction), the leaders swap the results, and each leader broadcasts the *other*
//!   group's result over its group;
//! - allgather: each group gathers its blocks to its leader, in rank order, the leaders
//!   swap them, and each leader broadcasts the other group's blocks over its group.
//!
//! The leaders receive exactly the bytes their own arguments imply (the groups' type
//! signatures must match); anything else is `MPI_ERR_TRUNCATE` at that leader, which
//! still broadcasts (its group is not left waiting) and then returns the error.
//! MPI does not allow `MPI_IN_PLACE` on intercommunicators for these calls.

use std::ffi::c_int;

use sccemu::{Source, TagMatch};

use crate::coll::Reduction;
use crate::comm::{CommObj, coll_error};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::intercomm::{phase, swap_exact};
use crate::op::{elems, packed, prim_for};
use crate::p2p::{self, PROC_NULL, send_error};
use crate::state::mpi;
use crate::with_prim;

/// `MPI_ROOT`: the root's own root argument in an intercommunicator's rooted
/// collective.
pub const ROOT: c_int = -3;

/// The error of an `MPI_IN_PLACE` argument here.
pub fn in_place_refused() -> MpiError {
    MpiError::new(class::BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator")
}

/// Gives every member the leader's `theirs` (the other group's data, packed) in `buf`:
/// the leader broadcasts it over the local group, and every member unpacks it.
/// `swapped` is the leader's exchange's outcome, returned after the broadcast.
fn spread(ic: &CommObj, buf: &Buffer<'_>, mut theirs: Vec<u8>, swapped: MpiResult<()>) -> MpiResult<()> {
    let spread = ic.coll().bcast(0, &mut theirs).map_err(coll_error);
    swapped?;
    spread?;
    buf.unpack(&theirs)
}

/// `MPI_Barrier` on an intercommunicator.
pub fn barrier(ic: &CommObj) -> MpiResult<()> {
    ic.coll().barrier().map_err(coll_error)?;
    let swapped = if ic.rank == 0 { swap_exact(ic, phase::BARRIER, &[], &mut []) } else { Ok(()) };
    let after = ic.coll().barrier().map_err(coll_error);
    swapped.and(after)
}

/// `MPI_Bcast` on an intercommunicator: `root` is `MPI_ROOT` at the root,
/// `MPI_PROC_NULL` in the rest of its group, and the root's rank in the remote group
/// on the other group.
pub fn bcast(ic: &CommObj, buf: &Buffer<'_>, root: c_int) -> MpiResult<()> {
    let core = mpi()?.core;
    let wire = ic.inter_tag(phase::BCAST);
    match root {
        ROOT => core.send(ic.peers[0], wire, &buf.bytes()?).map_err(send_error),
        PROC_NULL => Ok(()),
        r => {
            let Some(&from) = usize::try_from(r).ok().and_then(|r| ic.peers.get(r)) else {
                return fail(
                    class::ROOT,
                    format!(
                        "root {r} is neither MPI_ROOT, MPI_PROC_NULL nor in a remote group of {}",
                        ic.peers.len()
                    ),
                );
            };
            let mut data = vec![0u8; buf.data_len()?];
            let got = match ic.rank {
                0 => p2p::recv(ic, Source::Rank(from), TagMatch::Tag(wire), &mut data).and_then(|s| {
                    if s.bytes == data.len() {
                        Ok(())
                    } else {
                        fail(
                            class::TRUNCATE,
                            format!("the root sent {} bytes where {} were expected", s.bytes, data.len()),
                        )
                    }
                }),
                _ => Ok(()),
            };
            spread(ic, buf, data, got)
        }
    }
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
    spread(ic, r.recv, theirs, swapped)
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
    spread(ic, recv, theirs, swapped)
}
