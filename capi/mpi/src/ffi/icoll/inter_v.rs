//! The v-forms on an intercommunicator: `MPI_Igatherv`, `MPI_Iscatterv`,
//! `MPI_Iallgatherv` and `MPI_Ialltoallv`, each a direct exchange of per-rank blocks
//! with the remote group's members ([`super::spread`] with `Exchange::remote`), no
//! leader in between: the side that knows every block's size (the root of a gatherv,
//! every receiver of the others) receives each block straight from its sender.
//!
//! - gatherv: each member of the non-root group sends its block to the root, which
//!   receives remote rank `j`'s into its block `j`;
//! - scatterv: the root sends its block `j` to remote rank `j`;
//! - allgatherv: each member sends its block to every remote member, and receives
//!   remote rank `i`'s into its block `i`;
//! - alltoallv: each member sends its block `j` to remote rank `j`, and receives remote
//!   rank `i`'s into its block `i`; alltoallw likewise, each block with a type of its
//!   own and exactly its receive block's length (MPI asks for equal type signatures).
//!
//! Arguments are checked as the blocking intercommunicator v-calls check them
//! (`ffi::intercoll`): counts and displacement arrays have one entry per *remote*
//! member, `MPI_IN_PLACE` is `MPI_ERR_BUFFER`, a bad root `MPI_ERR_ROOT`, and
//! `MPI_PROC_NULL`'s processes look at nothing. As in the blocking calls, a block may
//! be shorter than its receive block (a longer one is `MPI_ERR_TRUNCATE` where it
//! lands). Every check comes before the operation's sequence number is taken.

use std::ffi::{c_int, c_void};

use crate::comm::CommObj;
use crate::datatype;
use crate::error::MpiResult;
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::neighbor::{w_blocks, w_targets};
use crate::ffi::vcoll::{WSide, layout, vbuf};
use crate::intercoll::{Role, in_place_refused, role};
use crate::request::Pending;

use super::keep;
use super::spread::{self, Delivery, Exchange};
use super::vdata::{delivery, room};

/// One side with one count: buffer, count, datatype.
pub(super) type Plain = (*const c_void, c_int, c_int);
/// One side with a count and a displacement per remote rank: buffer, counts,
/// displacements, datatype.
pub(super) type Varied = (*const c_void, *const c_int, *const c_int, c_int);

/// A buffer that counts here: `MPI_IN_PLACE` refused.
fn counted(p: *const c_void) -> MpiResult<*const c_void> {
    if in_place(p) { Err(in_place_refused()) } else { Ok(p) }
}

/// An exchange with `c`'s remote group, nothing in it yet.
fn across(c: &CommObj) -> Exchange {
    let mut x = Exchange::new(c.peers.len(), false);
    x.remote = true;
    x
}

/// The packed data of a plain side.
fn packed(side: Plain) -> MpiResult<Vec<u8>> {
    let map = datatype::committed(side.2)?;
    Ok(buffer(counted(side.0)?, count(side.1)?, &map)?.bytes()?.into_owned())
}

/// Fills `x`'s receiving half from a varied side: block `i` from remote rank `i`.
///
/// # Safety
/// `side`'s arrays hold one int per remote member.
unsafe fn receive_all(c: &CommObj, x: &mut Exchange, side: Varied) -> MpiResult<()> {
    let map = datatype::committed(side.3)?;
    // SAFETY: this function's contract.
    let lay = unsafe { layout(side.1, side.2, c.peers.len() as u32) }?;
    let recv = vbuf(counted(side.0)?, &lay, &map)?;
    x.from = room(&recv)?;
    x.delivery = delivery(side.0, &recv, &map, None);
    Ok(())
}

/// `MPI_Igatherv` on an intercommunicator.
///
/// # Safety
/// At the root, `recv`'s arrays hold one int per remote member.
pub(super) unsafe fn gatherv(
    c: &CommObj,
    send: Plain,
    recv: Varied,
    root: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let mut x = across(c);
    match role(c, root)? {
        Role::Idle => {}
        // SAFETY: this function's contract.
        Role::Root => unsafe { receive_all(c, &mut x, recv) }?,
        Role::Remote(r) => x.push(r as usize, &packed(send)?),
    }
    spread::exchange(c, x)
}

/// `MPI_Iscatterv` on an intercommunicator.
///
/// # Safety
/// At the root, `send`'s arrays hold one int per remote member.
pub(super) unsafe fn scatterv(
    c: &CommObj,
    send: Varied,
    recv: Plain,
    root: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let mut x = across(c);
    match role(c, root)? {
        Role::Idle => {}
        Role::Root => {
            let map = datatype::committed(send.3)?;
            // SAFETY: this function's contract.
            let lay = unsafe { layout(send.1, send.2, c.peers.len() as u32) }?;
            let blocks = vbuf(counted(send.0)?, &lay, &map)?;
            for j in 0..c.peers.len() {
                x.push(j, &blocks.block(j)?.bytes()?);
            }
        }
        Role::Remote(r) => {
            let map = datatype::committed(recv.2)?;
            let buf = buffer(counted(recv.0)?, count(recv.1)?, &map)?;
            x.from[r as usize] = Some(buf.data_len()?);
            let mut spans = vec![None; c.peers.len()];
            spans[r as usize] = Some((0, buf.count()));
            x.delivery = Delivery::Place { target: keep(recv.0, &buf, &map), spans };
        }
    }
    spread::exchange(c, x)
}

/// `MPI_Iallgatherv` on an intercommunicator.
///
/// # Safety
/// `recv`'s arrays hold one int per remote member.
pub(super) unsafe fn allgatherv(c: &CommObj, send: Plain, recv: Varied) -> MpiResult<Box<dyn Pending>> {
    let mut x = across(c);
    x.data = packed(send)?;
    x.to = vec![Some(0..x.data.len()); c.peers.len()];
    // SAFETY: this function's contract.
    unsafe { receive_all(c, &mut x, recv) }?;
    spread::exchange(c, x)
}

/// `MPI_Ialltoallv` on an intercommunicator.
///
/// # Safety
/// Both sides' arrays hold one int per remote member.
pub(super) unsafe fn alltoallv(c: &CommObj, send: Varied, recv: Varied) -> MpiResult<Box<dyn Pending>> {
    let mut x = across(c);
    let map = datatype::committed(send.3)?;
    // SAFETY: this function's contract.
    let lay = unsafe { layout(send.1, send.2, c.peers.len() as u32) }?;
    let blocks = vbuf(counted(send.0)?, &lay, &map)?;
    for j in 0..c.peers.len() {
        x.push(j, &blocks.block(j)?.bytes()?);
    }
    // SAFETY: this function's contract.
    unsafe { receive_all(c, &mut x, recv) }?;
    spread::exchange(c, x)
}

/// `MPI_Ialltoallw` on an intercommunicator: as [`alltoallv`], a type per block.
///
/// # Safety
/// Both sides' arrays hold one entry per remote member.
pub(super) unsafe fn alltoallw(
    c: &CommObj,
    send: (*const c_void, *const c_int, *const c_int, *const c_int),
    recv: (*const c_void, *const c_int, *const c_int, *const c_int),
) -> MpiResult<Box<dyn Pending>> {
    let rn = c.peers.len() as u32;
    // SAFETY: this function's contract.
    let send = unsafe { WSide::new(counted(send.0)?, send.1, send.2, send.3, rn) }?;
    // SAFETY: this function's contract.
    let recv = unsafe { WSide::new(recv.0, recv.1, recv.2, recv.3, rn) }?;
    let mut x = Exchange::new(rn as usize, true);
    x.remote = true;
    for (j, block) in w_blocks(&send)?.iter().enumerate() {
        x.push(j, block);
    }
    let targets = w_targets(&recv)?;
    x.from = targets
        .iter()
        .map(|t| t.as_ref().map_or(Ok(0), |t| t.buffer()?.data_len()).map(Some))
        .collect::<MpiResult<_>>()?;
    x.delivery = Delivery::Each(targets);
    spread::exchange(c, x)
}
