//! `MPI_Comm_split` and `MPI_Comm_create` of an intercommunicator (MPI-3.1 section
//! 6.4.2): each new intercommunicator pairs the local members of one colour with the
//! remote members of the same colour, each side ordered by key, then by rank in the old
//! intercommunicator. A process whose colour is `MPI_UNDEFINED`, or whose colour no
//! remote member shares (one side would be empty), gets `MPI_COMM_NULL`.
//! `MPI_Comm_create` is the split whose colour is membership of the group the local
//! group passed, and whose key is the position in it.
//!
//! Protocol, collective over both groups, the steps of `crate::intercomm` with the
//! colours as the leaders' extra:
//! 1. the local group ORs its members' context bitmaps (`intercomm::local_bits`) and
//!    allgathers every member's `(colour, key)`, by local rank;
//! 2. the leaders swap their group's list and bitmap (`intercomm::swap_exact`, in the
//!    intercommunicator's `SPLIT` phase), and each takes the lowest id free in both
//!    bitmaps: the same id on both sides;
//! 3. each leader broadcasts the outcome (`intercomm::share`: error class and id) and
//!    then the remote group's list over its group;
//! 4. every member knows both lists, so it knows which colours have members on both
//!    sides; the local group's sccemu communicator splits by colour where the remote
//!    group has that colour too (`None` elsewhere), and each member computes its remote
//!    group from the remote list in the order the remote split gives its members (key,
//!    then rank, as `sccemu::Comm::split` orders), so both sides agree on both groups.
//!
//! Every new intercommunicator of one call takes the one id: its members are members of
//! the old intercommunicator, whose bitmaps were all read in step 1, so the id is free
//! on each (`crate::intercomm`'s argument), and intercommunicators of different colours
//! share no process, as the siblings of an intracommunicator's split do.

use std::ffi::c_int;

use sccemu::Allgather;

use crate::comm::{self, CONTEXT_WORDS, CommObj, coll_error};
use crate::create_group::{from_bytes, to_bytes};
use crate::error::{MpiResult, class, fail};
use crate::intercomm::{local_bits, lowest_free_in, phase, share, swap_exact};

/// The colour word of `MPI_UNDEFINED` in the lists (colours are `u32`s).
const UNDEFINED: u64 = u64::MAX;

/// `MPI_Comm_split` of the intercommunicator `ic`, collective over both groups: the new
/// intercommunicator's handle, or `None` (`MPI_COMM_NULL`; module docs).
pub fn split(ic: &CommObj, colour: Option<u32>, key: c_int) -> MpiResult<Option<c_int>> {
    let (bits, _) = local_bits(ic, 0)?;
    let mine = [colour.map_or(UNDEFINED, u64::from), u64::from(key as u32)];
    let mut ours = vec![0u64; 2 * ic.size() as usize];
    ic.coll().allgather(&mine, &mut ours, Allgather::Auto).map_err(coll_error)?;
    let rn = ic.peers.len();
    let mut theirs = vec![0u64; 2 * rn];
    let outcome = if ic.rank == 0 {
        let mut ask = ours;
        ask.extend(bits);
        let mut got = vec![0u8; (2 * rn + CONTEXT_WORDS) * 8];
        swap_exact(ic, phase::SPLIT, &to_bytes(&ask), &mut got).and_then(|()| {
            let got: Vec<u64> = from_bytes(&got).collect();
            theirs.copy_from_slice(&got[..2 * rn]);
            Ok([u64::from(lowest_free_in(bits, &got[2 * rn..])?)])
        })
    } else {
        Ok([0])
    };
    let [context] = share(ic, 0, outcome)?;
    ic.coll().bcast(0, &mut theirs).map_err(coll_error)?;
    let remote = colour.map(|c| ordered(&theirs, u64::from(c))).unwrap_or_default();
    let paired = colour.filter(|_| !remote.is_empty());
    let Some(child) = ic.coll().split(paired, key).map_err(coll_error)? else { return Ok(None) };
    let remote = remote.iter().map(|&r| ic.peers[r]).collect();
    comm::adopt_inter(context as u32, child, remote).map(Some)
}

/// The ranks in `list` (`(colour, key)` per rank) of colour `colour`, ordered by key,
/// then rank: the order of `sccemu::Comm::split`, which their own split gives them.
fn ordered(list: &[u64], colour: u64) -> Vec<usize> {
    let mut ranks: Vec<usize> = (0..list.len() / 2).filter(|&r| list[2 * r] == colour).collect();
    ranks.sort_by_key(|&r| (list[2 * r + 1] as u32 as i32, r));
    ranks
}

/// `MPI_Comm_create` of the intercommunicator `ic`, collective over both groups: the
/// intercommunicator between `group` (world ranks, a subgroup of the local group, the
/// same on every local member) and the group the remote members passed, or `None`
/// where the caller is not in `group` or either group is empty.
pub fn create(ic: &CommObj, group: &[u32]) -> MpiResult<Option<c_int>> {
    if let Some(w) = group.iter().find(|w| !ic.members.contains(w)) {
        return fail(
            class::GROUP,
            format!("world rank {w} of the group is not in the intercommunicator's local group"),
        );
    }
    let me = ic.members[ic.rank as usize];
    let position = group.iter().position(|&w| w == me);
    split(ic, position.map(|_| 0), position.map_or(0, |p| p as c_int))
}
