//! The program a plan describes, as every rank runs it: the steps in order, each
//! result checked against the value the program must produce, the victim's death at
//! its fault point, and a final barrier that no survivor can pass once a rank is dead.
//!
//! A survivor returns the first error it gets (which must name the dead rank); a value
//! that differs from the model is returned as an error starting with [`WRONG`].

use sccemu::{Allgather, Comm, Core, Group, LockKind, Op};

use super::plan::{Coll, FaultKind, Plan, RmaOp, Step, Sync};

/// How a rank's error starts when a result differed from the model.
pub const WRONG: &str = "wrong data";

fn s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn check(cond: bool, step: usize, what: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(format!("{WRONG}: step {step}: {}", what())) }
}

/// Element `k` of what `rank` contributes at `step` (small: sums never overflow).
fn value(step: usize, rank: u32, k: usize) -> u64 {
    (step as u64 + 1) * 1_000_003 + u64::from(rank) * 1009 + k as u64
}

fn bytes(step: usize, rank: u32, len: usize) -> Vec<u8> {
    (0..len).map(|k| (k * 31 + rank as usize * 7 + step * 13) as u8).collect()
}

/// Dies the way `kind` says; never returns.
fn die(kind: FaultKind) -> ! {
    match kind {
        FaultKind::Kill => {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            std::process::abort()
        }
        FaultKind::Panic => {
            std::panic::set_hook(Box::new(|_| {}));
            panic!("chaos: injected panic")
        }
        FaultKind::Exit0 => std::process::exit(0),
        FaultKind::Abort => std::process::abort(),
    }
}

/// A job entry: runs `plan`'s program on this rank; `Ok` only if nobody died.
pub fn rank_main(core: &Core, plan: Plan) -> Result<usize, String> {
    let me = core.rank();
    let fault = plan.fault;
    let at = |step: usize, phase: u32| {
        if me == fault.victim && step == fault.step && phase == fault.phase {
            std::thread::sleep(std::time::Duration::from_millis(fault.delay_ms));
            die(fault.kind);
        }
    };
    let comm = core.world().map_err(s)?;
    for (i, step) in plan.steps.iter().enumerate() {
        at(i, 0);
        let mid = || at(i, 1);
        match *step {
            Step::SendRecv { len } => send_recv(core, i, len, &mid)?,
            Step::Ring { len } => ring(core, i, len, &mid)?,
            Step::Collective { coll, len } => collective(&comm, i, coll, len, &mid)?,
            Step::Window { placement, strategy, sync, op, root, elems } => {
                let len = elems.max(core.size() as usize);
                let win = core.window_with::<u64>(len, placement, strategy).map_err(s)?;
                window(core, &win, i, (sync, op, root, elems), &mid)?;
                win.free().map_err(s)?;
            }
        }
    }
    at(plan.steps.len(), 0);
    at(plan.steps.len(), 1);
    core.barrier().map_err(s)?;
    Ok(plan.steps.len())
}

/// Partners `r` and `r ^ 1`: the even one sends first, the odd one receives first.
fn send_recv(core: &Core, i: usize, len: usize, mid: &dyn Fn()) -> Result<(), String> {
    let (me, partner) = (core.rank(), core.rank() ^ 1);
    if partner >= core.size() {
        mid();
        return Ok(());
    }
    let mut buf = vec![0u8; len];
    let status = if me % 2 == 0 {
        core.send(partner, i as u32, &bytes(i, me, len)).map_err(s)?;
        mid();
        core.recv(partner, i as u32, &mut buf).map_err(s)?
    } else {
        let status = core.recv(partner, i as u32, &mut buf).map_err(s)?;
        mid();
        core.send(partner, i as u32, &bytes(i, me, len)).map_err(s)?;
        status
    };
    check(status.len == len && status.source == partner, i, || format!("recv status {status:?}"))?;
    check(buf == bytes(i, partner, len), i, || format!("{len} bytes from rank {partner} differ"))
}

/// `irecv` from the left, `isend` to the right, both open at the midpoint.
fn ring(core: &Core, i: usize, len: usize, mid: &dyn Fn()) -> Result<(), String> {
    let (me, n) = (core.rank(), core.size());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let mut buf = vec![0u8; len];
    let data = bytes(i, me, len);
    let recv = core.irecv(left, i as u32, &mut buf).map_err(s)?;
    let send = core.isend(right, i as u32, &data).map_err(s)?;
    mid();
    send.wait().map_err(s)?;
    let status = recv.wait().map_err(s)?;
    check(status.len == len, i, || format!("ring status {status:?}"))?;
    check(buf == bytes(i, left, len), i, || format!("{len} bytes from rank {left} differ"))
}

fn collective(comm: &Comm<'_>, i: usize, coll: Coll, len: usize, mid: &dyn Fn()) -> Result<(), String> {
    let (me, n) = (comm.rank(), comm.size());
    let mine: Vec<u64> = (0..len).map(|k| value(i, me, k)).collect();
    mid();
    match coll {
        Coll::Barrier => comm.barrier().map_err(s),
        Coll::Bcast { root } => {
            let mut buf = if me == root { mine } else { vec![0; len] };
            comm.bcast(root, &mut buf).map_err(s)?;
            check((0..len).all(|k| buf[k] == value(i, root, k)), i, || "bcast".into())
        }
        Coll::Allreduce => {
            let mut sum = vec![0u64; len];
            comm.allreduce(&mine, &mut sum, Op::Sum).map_err(s)?;
            let want = |k| (0..n).map(|r| value(i, r, k)).sum::<u64>();
            check((0..len).all(|k| sum[k] == want(k)), i, || format!("allreduce sum {:?}", &sum[..1]))
        }
        Coll::Allgather => {
            let mut all = vec![0u64; len * n as usize];
            comm.allgather(&mine, &mut all, Allgather::Auto).map_err(s)?;
            let ok = (0..n).all(|r| (0..len).all(|k| all[r as usize * len + k] == value(i, r, k)));
            check(ok, i, || "allgather".into())
        }
    }
}

/// Every rank accesses one target (`root`, or its right neighbour under PSCW) inside
/// an epoch of `sync`; the target then checks its part, the origins what they fetched.
fn window(
    core: &Core,
    win: &sccemu::Window<'_, u64>,
    i: usize,
    (sync, op, root, elems): (Sync, RmaOp, u32, usize),
    mid: &dyn Fn(),
) -> Result<(), String> {
    let (me, n) = (core.rank(), core.size());
    let len = win.len();
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let target = if sync == Sync::Pscw { right } else { root };
    let origins: Vec<u32> = match sync {
        Sync::Pscw => vec![left],
        _ if me == root => (0..n).collect(),
        _ => Vec::new(),
    };
    let init: Vec<u64> = (0..len).map(|k| value(i, me, k)).collect();
    if op == RmaOp::Get {
        win.local().write(0, &init).map_err(s)?;
    }
    if matches!(sync, Sync::Lock | Sync::LockAll) {
        core.barrier().map_err(s)?; // the parts are initialised before anyone reads them
    }
    let mut got = vec![0u64; elems];
    let mut fetched = None;
    let access = |got: &mut [u64], fetched: &mut Option<u64>| -> Result<(), String> {
        match op {
            RmaOp::Put => win.put(target, me as usize, &[value(i, me, 0)]).map_err(s),
            RmaOp::Get => win.get(target, 0, got).map_err(s),
            RmaOp::Accumulate => {
                win.accumulate(target, 0, &vec![u64::from(me) + 1; elems], Op::Sum).map_err(s)
            }
            RmaOp::FetchAdd => {
                *fetched = Some(win.fetch_and_op(target, 0, 1, Op::Sum).map_err(s)?);
                Ok(())
            }
        }
    };
    match sync {
        Sync::Fence => {
            win.fence().map_err(s)?;
            access(&mut got, &mut fetched)?;
            mid();
            win.fence().map_err(s)?;
        }
        Sync::Pscw => {
            win.post(&Group::single(left)).map_err(s)?;
            win.start(&Group::single(right)).map_err(s)?;
            access(&mut got, &mut fetched)?;
            mid();
            win.complete().map_err(s)?;
            win.wait().map_err(s)?;
        }
        Sync::Lock => {
            let kind = if op == RmaOp::Get { LockKind::Shared } else { LockKind::Exclusive };
            let epoch = win.lock(kind, target).map_err(s)?;
            access(&mut got, &mut fetched)?;
            mid();
            epoch.unlock().map_err(s)?;
            core.barrier().map_err(s)?;
        }
        Sync::LockAll => {
            let epoch = win.lock_all().map_err(s)?;
            access(&mut got, &mut fetched)?;
            mid();
            epoch.unlock_all().map_err(s)?;
            core.barrier().map_err(s)?;
        }
    }
    let local = win.local().to_vec();
    let count = origins.len() as u64;
    match op {
        RmaOp::Put => {
            let want = |k: usize| if origins.contains(&(k as u32)) { value(i, k as u32, 0) } else { 0 };
            check((0..len).all(|k| local[k] == want(k)), i, || format!("put: part {local:?}"))
        }
        RmaOp::Get => {
            let ok = (0..elems).all(|k| got[k] == value(i, target, k));
            check(ok, i, || format!("get from {target}: {:?}", &got[..1]))?;
            check(local == init, i, || "get changed the target's part".into())
        }
        RmaOp::Accumulate => {
            let sum: u64 = origins.iter().map(|&o| u64::from(o) + 1).sum();
            let want = |k: usize| if k < elems { sum } else { 0 };
            check((0..len).all(|k| local[k] == want(k)), i, || format!("acc: {:?}", &local[..1]))
        }
        RmaOp::FetchAdd => {
            let origins_of_target = if sync == Sync::Pscw { 1 } else { u64::from(n) };
            let f = fetched.unwrap_or(u64::MAX);
            check(f < origins_of_target, i, || format!("fetch-add fetched {f}"))?;
            check(local[0] == count, i, || format!("fetch-add total {} want {count}", local[0]))
        }
    }
}
