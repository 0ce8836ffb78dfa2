//! The arguments of the nonblocking collectives on an intercommunicator, checked as the
//! blocking ones check them (`ffi::intercoll`) and turned into a `Plan` for
//! [`super::inter`]: the entry points (`super`, [`super::data`]) route an
//! intercommunicator here.
//!
//! MPI's rules (section 5.2.2): in a rooted call the root (`MPI_ROOT`) looks at its
//! receive side (gather, reduce) or send side (bcast, scatter) only, with one block per
//! *remote* member; the rest of its group (`MPI_PROC_NULL`) looks at no buffer (but the
//! datatype and op, as the blocking calls check them); the other group passes the
//! root's rank in it and looks at the side it sends or receives. `MPI_IN_PLACE` is
//! `MPI_ERR_BUFFER` wherever a buffer counts, a bad root `MPI_ERR_ROOT`. Every check
//! here comes before the operation takes its sequence number and returns at once, so a
//! call refused on every process leaves the numbers in step.

use std::ffi::{c_int, c_void};

use crate::comm::CommObj;
use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::userop::owned_combiner;
use crate::intercoll::{Role, in_place_refused, role};
use crate::request::Pending;

use super::inter::{DownPlan, Plan, run};
use super::keep;

/// The leader's part in a group that sends its result to remote rank `to` and, if
/// `back` bytes come back, receives them from the remote leader.
fn leader(c: &CommObj, plan: &mut Plan, to: u32, back: Option<usize>) {
    if c.rank == 0 {
        plan.to_remote = Some(to);
        plan.from_remote = back.map(|len| (0, len));
    }
}

/// A buffer that counts here: `MPI_IN_PLACE` refused.
fn counted(p: *const c_void) -> MpiResult<*const c_void> {
    if in_place(p) { Err(in_place_refused()) } else { Ok(p) }
}

/// `MPI_Ibarrier` on an intercommunicator.
pub(super) fn barrier(c: &CommObj) -> MpiResult<Box<dyn Pending>> {
    let mut plan = Plan::nothing();
    plan.up = Some((Vec::new(), None));
    plan.down = DownPlan::Tree(0);
    leader(c, &mut plan, 0, Some(0));
    run(c, plan)
}

/// `MPI_Ibcast` on an intercommunicator.
pub(super) fn bcast(
    c: &CommObj,
    p: *mut c_void,
    n: c_int,
    dt: c_int,
    root: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let role = role(c, root)?;
    let map = datatype::committed(dt)?;
    let mut plan = Plan::nothing();
    match role {
        Role::Idle => {}
        Role::Root => {
            let buf = buffer(counted(p)?, count(n)?, &map)?;
            plan.direct = Some((0, buf.bytes()?.into_owned()));
        }
        Role::Remote(r) => {
            let buf = buffer(counted(p)?, count(n)?, &map)?;
            let len = buf.data_len()?;
            plan.target = Some(keep(p, &buf, &map));
            plan.down = DownPlan::Tree(len);
            if c.rank == 0 {
                plan.from_remote = Some((r, len));
            }
        }
    }
    run(c, plan)
}

/// `MPI_Ireduce` on an intercommunicator.
pub(super) fn reduce(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    (dt, op): (c_int, c_int),
    root: c_int,
) -> MpiResult<Box<dyn Pending>> {
    let role = role(c, root)?;
    let map = datatype::committed(dt)?;
    let combine = owned_combiner(op, map.clone(), dt)?;
    let mut plan = Plan::nothing();
    match role {
        Role::Idle => {}
        Role::Root => {
            let buf = buffer(counted(recvbuf)?, count(n)?, &map)?;
            plan.from_remote = Some((0, buf.data_len()?));
            plan.target = Some(keep(recvbuf, &buf, &map));
        }
        Role::Remote(r) => {
            let mine = buffer(counted(sendbuf)?, count(n)?, &map)?.bytes()?.into_owned();
            plan.up = Some((mine, Some(combine)));
            leader(c, &mut plan, r, None);
        }
    }
    run(c, plan)
}

/// `MPI_Iallreduce` on an intercommunicator: every member gets the remote group's
/// inputs reduced.
pub(super) fn allreduce(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    n: c_int,
    (dt, op): (c_int, c_int),
) -> MpiResult<Box<dyn Pending>> {
    let map = datatype::committed(dt)?;
    let combine = owned_combiner(op, map.clone(), dt)?;
    let elems = count(n)?;
    let mine = buffer(counted(sendbuf)?, elems, &map)?.bytes()?.into_owned();
    let recv = buffer(recvbuf, elems, &map)?;
    let len = recv.data_len()?;
    if mine.len() != len {
        return fail(class::TRUNCATE, format!("{} bytes reduced into {len}", mine.len()));
    }
    let mut plan = Plan::nothing();
    plan.up = Some((mine, Some(combine)));
    plan.down = DownPlan::Tree(len);
    plan.target = Some(keep(recvbuf, &recv, &map));
    leader(c, &mut plan, 0, Some(len));
    run(c, plan)
}

/// One side of a data call: buffer, count and datatype.
pub(super) type Side = (*const c_void, c_int, c_int);

/// `MPI_Igather` on an intercommunicator: the root gets one block per remote member.
pub(super) fn gather(c: &CommObj, send: Side, recv: Side, root: c_int) -> MpiResult<Box<dyn Pending>> {
    let role = role(c, root)?;
    let mut plan = Plan::nothing();
    match role {
        Role::Idle => {}
        Role::Root => {
            let map = datatype::committed(recv.2)?;
            let buf = buffer(counted(recv.0)?, count(recv.1)? * c.peers.len(), &map)?;
            plan.from_remote = Some((0, buf.data_len()?));
            plan.target = Some(keep(recv.0, &buf, &map));
        }
        Role::Remote(r) => {
            let map = datatype::committed(send.2)?;
            let mine = buffer(counted(send.0)?, count(send.1)?, &map)?.bytes()?.into_owned();
            plan.up = Some((mine, None));
            leader(c, &mut plan, r, None);
        }
    }
    run(c, plan)
}

/// `MPI_Iscatter` on an intercommunicator: remote rank `j` gets the root's block `j`.
pub(super) fn scatter(c: &CommObj, send: Side, recv: Side, root: c_int) -> MpiResult<Box<dyn Pending>> {
    let role = role(c, root)?;
    let mut plan = Plan::nothing();
    match role {
        Role::Idle => {}
        Role::Root => {
            let map = datatype::committed(send.2)?;
            let buf = buffer(counted(send.0)?, count(send.1)? * c.peers.len(), &map)?;
            plan.direct = Some((0, buf.bytes()?.into_owned()));
        }
        Role::Remote(r) => {
            let map = datatype::committed(recv.2)?;
            let buf = buffer(counted(recv.0)?, count(recv.1)?, &map)?;
            let per = buf.data_len()?;
            plan.target = Some(keep(recv.0, &buf, &map));
            plan.down = DownPlan::Deal(vec![per; c.size() as usize]);
            if c.rank == 0 {
                plan.from_remote = Some((r, per * c.size() as usize));
            }
        }
    }
    run(c, plan)
}

/// The checked receive side of an all-to-all call: its whole buffer's length, kept.
fn all_recv(c: &CommObj, recv: Side) -> MpiResult<(usize, crate::ffi::pending::UserBuffer)> {
    let map = datatype::committed(recv.2)?;
    let buf = buffer(counted(recv.0)?, count(recv.1)? * c.peers.len(), &map)?;
    Ok((buf.data_len()?, keep(recv.0, &buf, &map)))
}

/// The packed send side of an all-to-all call: `blocks` blocks of its count.
fn all_send(send: Side, blocks: usize) -> MpiResult<Vec<u8>> {
    let map = datatype::committed(send.2)?;
    Ok(buffer(counted(send.0)?, count(send.1)? * blocks, &map)?.bytes()?.into_owned())
}

/// `MPI_Iallgather` on an intercommunicator: every member gets the remote group's
/// blocks in their rank order.
pub(super) fn allgather(c: &CommObj, send: Side, recv: Side) -> MpiResult<Box<dyn Pending>> {
    let mine = all_send(send, 1)?;
    let (len, target) = all_recv(c, recv)?;
    let mut plan = Plan::nothing();
    plan.up = Some((mine, None));
    plan.down = DownPlan::Tree(len);
    plan.target = Some(target);
    leader(c, &mut plan, 0, Some(len));
    run(c, plan)
}

/// `MPI_Ialltoall` on an intercommunicator: block `j` of the send buffer goes to remote
/// rank `j`, block `i` of the receive buffer comes from remote rank `i`.
pub(super) fn alltoall(c: &CommObj, send: Side, recv: Side) -> MpiResult<Box<dyn Pending>> {
    let rn = c.peers.len();
    let mine = all_send(send, rn)?;
    let (len, target) = all_recv(c, recv)?;
    let mut plan = Plan::nothing();
    plan.up = Some((mine, None));
    plan.regroup = Some(rn);
    plan.down = DownPlan::Deal(vec![len; c.size() as usize]);
    plan.target = Some(target);
    leader(c, &mut plan, 0, Some(len * c.size() as usize));
    run(c, plan)
}

/// `MPI_Ireduce_scatter_block` and `MPI_Ireduce_scatter` on an intercommunicator:
/// `counts` (elements, by local rank) describe the local group's blocks, and each
/// member's input holds their sum; the remote group's inputs, folded in rank order, are
/// cut into those blocks (the blocking calls' rule, `intercoll::exchange`).
pub(super) fn reduce_scatter(
    c: &CommObj,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    counts: &[usize],
    (dt, op): (c_int, c_int),
) -> MpiResult<Box<dyn Pending>> {
    let map = datatype::committed(dt)?;
    let combine = owned_combiner(op, map.clone(), dt)?;
    let input = buffer(counted(sendbuf)?, counts.iter().sum(), &map)?.bytes()?.into_owned();
    let recv = buffer(recvbuf, counts[c.rank as usize], &map)?;
    // Each block's packed length, as the blocking calls count it.
    let parts: Vec<usize> = counts.iter().map(|&k| k * map.size).collect();
    let total: usize = parts.iter().sum();
    if input.len() != total {
        return fail(class::TRUNCATE, format!("an input of {} bytes for blocks of {total}", input.len()));
    }
    let mut plan = Plan::nothing();
    plan.up = Some((input, Some(combine)));
    plan.down = DownPlan::Deal(parts);
    plan.target = Some(keep(recvbuf, &recv, &map));
    leader(c, &mut plan, 0, Some(total));
    run(c, plan)
}
