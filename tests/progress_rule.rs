//! MPI's progress rule over real processes: once a send and its matching receive are
//! both posted, one of them completes, whatever else the two processes do.
//!
//! Each test is the same pattern with a different blocking call: rank 0 starts a
//! 1 MiB `isend` to rank 1 (far more than either channel holds, so most of it is still
//! queued when `isend` returns), then blocks in the call; rank 1 receives the message,
//! then makes the matching call. Rank 1's receive can only finish if rank 0's blocked
//! call pushes the queued send on. Both channel kinds, and both the default wait policy
//! and `Block` (where every wait ends in a futex sleep quickly).
//!
//! A broken rule is a hang: every rank runs under a watchdog ([`bounded`]) that aborts
//! the job after [`common::LIMIT`], so the test fails with the watchdog's diagnosis
//! instead.

mod common;

use common::{OrString, bounded, check};
use sccemu::{Allgather, ChannelKind, Core, Group, Job, LockKind, Op, Placement, WaitPolicy};

const MIB: usize = 1 << 20;
const TAG: u32 = 17;

/// Every job configuration each test runs under.
fn jobs() -> Vec<(ChannelKind, Option<WaitPolicy>)> {
    let mut all = Vec::new();
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        all.push((kind, None));
        all.push((kind, Some(WaitPolicy::Block)));
    }
    all
}

fn job(kind: ChannelKind, wait: Option<WaitPolicy>) -> Job {
    let job = Job::new(2).channel(kind);
    match wait {
        Some(policy) => job.wait(policy),
        None => job,
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[2]).collect()
}

/// Rank 0: the 1 MiB isend, then `block`, then waits for the send. Rank 1: receives the
/// message, checks it, then `block`.
fn isend_then_block(core: &Core, block: impl Fn() -> Result<(), String>) -> Result<(), String> {
    bounded(core, || {
        let data = pattern(MIB);
        if core.rank() == 0 {
            let req = core.isend(1, TAG, &data).s()?;
            check(!req.is_complete(), || "a 1 MiB isend completed at once: the test tests nothing".into())?;
            block()?;
            req.wait().s()?;
        } else {
            let mut buf = vec![0u8; MIB];
            let status = core.recv(0, TAG, &mut buf).s()?;
            check(status.len == MIB && buf == data, || format!("message damaged: {status:?}"))?;
            block()?;
        }
        Ok(())
    })
}

fn run(entry: fn(&Core, ()) -> Result<(), String>) {
    for (kind, wait) in jobs() {
        let result = job(kind, wait).run(&(), entry);
        assert!(result.is_ok(), "{kind:?}, wait {wait:?}: {}", result.unwrap_err());
    }
}

#[test]
fn core_barrier_progresses() {
    run(|core, ()| isend_then_block(core, || core.barrier().s()));
}

#[test]
fn window_fence_progresses() {
    run(|core, ()| {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        isend_then_block(core, || win.fence().s())
    });
}

/// Rank 0 is the target: it posts, then waits (`MPI_Win_wait`) for rank 1's access
/// epoch, which rank 1 opens only after its receive.
#[test]
fn pscw_wait_progresses() {
    run(|core, ()| {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        let peer = Group::single(1 - core.rank());
        isend_then_block(core, || {
            if core.rank() == 0 {
                win.post(&peer).s()?;
                win.wait().s()
            } else {
                win.start(&peer).s()?;
                win.complete().s()
            }
        })
    });
}

/// Rank 0 is the origin: `start` waits for rank 1's post, made after its receive.
#[test]
fn pscw_start_progresses() {
    run(|core, ()| {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        let peer = Group::single(1 - core.rank());
        isend_then_block(core, || {
            if core.rank() == 0 {
                win.start(&peer).s()?;
                win.complete().s()
            } else {
                win.post(&peer).s()?;
                win.wait().s()
            }
        })
    });
}

/// Rank 1 holds rank 1's lock until it has received; rank 0 waits for that lock.
#[test]
fn lock_wait_progresses() {
    run(|core, ()| {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        bounded(core, || {
            let data = pattern(MIB);
            if core.rank() == 0 {
                core.recv(1, TAG + 1, &mut [0u8; 1]).s()?; // rank 1 holds its lock
                let req = core.isend(1, TAG, &data).s()?;
                let epoch = win.lock(LockKind::Exclusive, 1).s()?;
                epoch.unlock().s()?;
                req.wait().s()?;
            } else {
                let epoch = win.lock(LockKind::Exclusive, 1).s()?;
                core.send(0, TAG + 1, &[1]).s()?;
                let mut buf = vec![0u8; MIB];
                core.recv(0, TAG, &mut buf).s()?;
                check(buf == data, || "message damaged".into())?;
                epoch.unlock().s()?;
            }
            Ok(())
        })
    });
}

/// Rank 0 waits on a flag that rank 1 writes after its receive.
#[test]
fn flag_wait_progresses() {
    run(|core, ()| {
        let flag = core.flag_alloc().s()?;
        isend_then_block(core, || {
            if core.rank() == 0 { core.flag_wait(flag, 1).s() } else { core.flag_write(flag, 0, 1).s() }
        })?;
        core.barrier().s()?;
        core.flag_free(flag).s()
    });
}

#[test]
fn comm_barrier_progresses() {
    run(|core, ()| {
        let world = core.world().s()?;
        isend_then_block(core, || world.barrier().s())
    });
}

#[test]
fn allreduce_progresses() {
    run(|core, ()| {
        let world = core.world().s()?;
        isend_then_block(core, || {
            let mut sum = [0u64];
            world.allreduce(&[u64::from(core.rank()) + 1], &mut sum, Op::Sum).s()?;
            check(sum == [3], || format!("allreduce gave {sum:?}"))
        })
    });
}

#[test]
fn bcast_and_allgather_progress() {
    run(|core, ()| {
        let world = core.world().s()?;
        isend_then_block(core, || {
            let mut value = [core.rank() * 10 + 7];
            world.bcast(1, &mut value).s()?;
            check(value == [17], || format!("bcast gave {value:?}"))?;
            let mut all = [0u32; 2];
            world.allgather(&[core.rank()], &mut all, Allgather::Ring).s()?;
            check(all == [0, 1], || format!("allgather gave {all:?}"))
        })
    });
}

/// Two-sided calls progress too: rank 0 blocks receiving what rank 1 sends only after
/// it has the 1 MiB message.
#[test]
fn recv_progresses() {
    run(|core, ()| {
        isend_then_block(core, || {
            if core.rank() == 0 {
                core.recv(1, TAG + 1, &mut [0u8; 1]).s().map(drop)
            } else {
                core.send(0, TAG + 1, &[1]).s()
            }
        })
    });
}

/// Waiting on another request (here a receive) pushes the queued send.
#[test]
fn request_wait_progresses() {
    run(|core, ()| {
        isend_then_block(core, || {
            if core.rank() == 0 {
                let mut one = [0u8; 1];
                core.irecv(1, TAG + 1, &mut one).s()?.wait().s().map(drop)
            } else {
                core.send(0, TAG + 1, &[1]).s()
            }
        })
    });
}
