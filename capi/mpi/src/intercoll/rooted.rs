//! The rooted collectives on an intercommunicator (MPI-3.1 section 5.2.2): `MPI_Reduce`,
//! `MPI_Gather(v)` and `MPI_Scatter(v)`. The root passes `MPI_ROOT`, the rest of its
//! group `MPI_PROC_NULL` (and takes no part), the other group the root's rank in it
//! ([`Role`]). Data flows between the root and the other group only:
//! - reduce: the other group folds its inputs at its leader in rank order, which sends
//!   the result to the root;
//! - gather, gatherv: the other group gathers its blocks to its leader, which sends them
//!   to the root as one list, in rank order;
//! - scatter, scatterv: the root sends its blocks to the other group's leader as one
//!   list, which it scatters over its group.
//!
//! The message between the root and the leader is an outcome (`wire`): a leader
//! whose group failed (say, its members' blocks differ in length, or one member's
//! arguments failed their checks, which the local steps agree on) sends the error, so
//! the root returns it too and never waits; a root whose arguments failed or whose
//! blocks could not be packed sends its error likewise. Every process that has a
//! message coming takes it, whatever its own arguments: a root whose receive side
//! failed still receives the leader's outcome and drops it, and a leader whose buffer
//! failed still takes the root's, so no message is left in the phase's queue to be
//! taken by a later call of the same kind. The list has one block per
//! member of the non-root group, which both ends know, so its shape is never the user's
//! to get wrong; a block's length is, and is checked where it lands ([`Blocks`]).

use crate::comm::CommObj;
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::intercomm::phase;
use crate::ordered::Combine;
use crate::vcoll::{gather_bytes, scatter_bytes};

use super::wire::{join, split, transfer};
use super::{Blocks, Role, bytes, reduce_to_leader};

/// The leader of the group without the root sends `outcome` to the root (remote rank
/// `root`); every member returns its own outcome's error, if any.
fn to_root(ic: &CommObj, phase: u32, root: u32, outcome: MpiResult<Vec<u8>>) -> MpiResult<()> {
    let to = Some(ic.peers[root as usize]);
    let sent = if ic.rank == 0 { transfer(ic, phase, to, &outcome, None).map(drop) } else { Ok(()) };
    outcome?;
    sent
}

/// The root's receipt of the other group's leader's outcome.
fn from_leader(ic: &CommObj, phase: u32) -> MpiResult<Vec<u8>> {
    transfer(ic, phase, None, &Ok(Vec::new()), Some(ic.peers[0]))
}

/// `MPI_Reduce` on an intercommunicator: the root gets the reduction of the remote
/// group's inputs in `buf` (its receive buffer at the root, the send buffer elsewhere).
/// `buf` and `c` are the checks' outcomes (module docs).
pub fn reduce(
    ic: &CommObj,
    buf: MpiResult<&Buffer<'_>>,
    c: MpiResult<&dyn Combine>,
    role: Role,
) -> MpiResult<()> {
    match role {
        Role::Root => {
            let got = from_leader(ic, phase::REDUCE);
            let recv = c.and(buf)?;
            let got = got?;
            let room = recv.data_len()?;
            if got.len() != room {
                return fail(
                    class::TRUNCATE,
                    format!("the remote group reduced {} bytes where {room} were expected", got.len()),
                );
            }
            recv.unpack(&got)
        }
        Role::Idle => Ok(()),
        Role::Remote(root) => {
            let folded = reduce_to_leader(ic, buf.and_then(bytes), c);
            to_root(ic, phase::REDUCE, root, folded)
        }
    }
}

/// `MPI_Gather` and `MPI_Gatherv` on an intercommunicator: the root gets block `i` of
/// `recv` (significant at the root only) from remote rank `i`; the other group sends
/// `send`.
pub fn gather(
    ic: &CommObj,
    send: MpiResult<&Buffer<'_>>,
    recv: MpiResult<&Blocks<'_, '_>>,
    role: Role,
) -> MpiResult<()> {
    match role {
        Role::Root => {
            let got = from_leader(ic, phase::GATHER);
            let recv = recv?;
            recv.land(&split(&got?, ic.peers.len())?)
        }
        Role::Idle => Ok(()),
        Role::Remote(root) => {
            let all = gather_bytes(ic, 0, send.and_then(bytes));
            to_root(ic, phase::GATHER, root, all.map(|a| join(&a)))
        }
    }
}

/// `MPI_Scatter` and `MPI_Scatterv` on an intercommunicator: remote rank `j` gets the
/// root's block `j` of `send` (significant at the root only) in `recv`'s one block.
pub fn scatter(
    ic: &CommObj,
    send: MpiResult<&Blocks<'_, '_>>,
    recv: MpiResult<&Blocks<'_, '_>>,
    role: Role,
) -> MpiResult<()> {
    match role {
        Role::Root => {
            let blocks = send.and_then(|s| s.packed(ic.peers.len())).map(|b| join(&b));
            let sent = transfer(ic, phase::SCATTER, Some(ic.peers[0]), &blocks, None);
            blocks?;
            sent.map(drop)
        }
        Role::Idle => Ok(()),
        Role::Remote(root) => {
            let n = ic.size() as usize;
            let from = Some(ic.peers[root as usize]);
            let blocks = match ic.rank {
                // The leader takes the root's message even if its own buffer failed.
                0 => transfer(ic, phase::SCATTER, None, &Ok(Vec::new()), from)
                    .and_then(|got| Ok(split(&got, n)?.into_iter().map(<[u8]>::to_vec).collect())),
                _ => Ok(Vec::new()),
            };
            let blocks = match &recv {
                Err(e) => Err(e.clone()),
                Ok(_) => blocks,
            };
            let mine = scatter_bytes(ic, 0, blocks);
            recv?.land_one(&mine?, 0, root as usize)
        }
    }
}
