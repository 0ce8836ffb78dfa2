//! The `coll` role: every collective of a communicator over the whole job, over its
//! split into odd and even ranks (reversed) and over its split by node, each result
//! checked against a sequential computation of it here; user receives with `ANY_TAG`
//! posted across the collectives must get the user's message and nothing of theirs;
//! bad arguments give every member the typed error, and the communicator stays usable.
//! The `coll_die` role: a dead rank fails every survivor's collective, naming it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sccemu::{
    ANY_SOURCE, ANY_TAG, Allgather, CollError, Comm, Core, Op, RESERVED_TAGS, RecvError, SendError, TagMatch,
};

/// Progress lines on stderr when `COLL_TRACE` is set: where a hung run stopped.
macro_rules! trace { ($($a:tt)*) => { if std::env::var("COLL_TRACE").is_ok() { eprintln!($($a)*); } } }

type Res = Result<(), Box<dyn std::error::Error>>;

/// Member `rank`'s `i`th contribution in a call seeded with `seed`: small, so that
/// sums and products of a few stay exact in every type used.
fn value(seed: u32, rank: u32, i: usize) -> u32 {
    (seed.wrapping_mul(31) ^ rank.wrapping_mul(7919) ^ (i as u32).wrapping_mul(104_729)) % 13 + 1
}

fn values(seed: u32, rank: u32, len: usize) -> Vec<u32> {
    (0..len).map(|i| value(seed, rank, i)).collect()
}

/// The reduction of every member's `values(seed, _, len)`, as `op` folds it in rank
/// order, computed here by hand in u64 (products wrap, as the library's do).
fn folded(op: Op, seed: u32, n: u32, len: usize) -> Vec<u64> {
    (0..len)
        .map(|i| {
            let all: Vec<u64> = (0..n).map(|r| u64::from(value(seed, r, i))).collect();
            match op {
                Op::Sum => all.iter().sum(),
                Op::Prod => all.iter().fold(1u64, |a, b| a.wrapping_mul(*b)),
                Op::Max => *all.iter().max().unwrap(),
                Op::BitXor => all.iter().fold(0, |a, b| a ^ b),
                Op::Replace => all[n as usize - 1],
                Op::NoOp => all[0],
                other => unreachable!("{other:?}"),
            }
        })
        .collect()
}

/// [`folded`] in f64: AXPY with alpha 2 as a left fold; exact at these sizes.
fn folded_f64(op: Op, seed: u32, n: u32, len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| {
            let all: Vec<f64> = (0..n).map(|r| f64::from(value(seed, r, i))).collect();
            match op {
                Op::Sum => all.iter().sum(),
                Op::Min => all.iter().cloned().fold(f64::MAX, f64::min),
                Op::Axpy(alpha) => all[1..].iter().fold(all[0], |a, b| a + alpha * b),
                other => unreachable!("{other:?}"),
            }
        })
        .collect()
}

fn micros_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

/// Every collective of `comm`, checked. `seed` varies the data between communicators.
pub fn check_comm(comm: &Comm<'_>, seed: u32) -> Res {
    let (n, me) = (comm.size(), comm.rank());
    let nu = n as usize;
    // Bcast from every root: empty, small, and larger than a 64 KiB ring.
    trace!("{:?} {me}: bcast", comm.members());
    for root in 0..n {
        for len in [0, 3, 20_000] {
            let mut buf = if me == root { values(seed + root, root, len) } else { vec![0; len] };
            comm.bcast(root, &mut buf)?;
            assert_eq!(buf, values(seed + root, root, len), "bcast root {root} len {len}");
        }
    }
    trace!("{:?} {me}: gather", comm.members());
    for root in [0, n / 2, n - 1] {
        for len in [1, 700] {
            let mine = values(seed, me, len);
            let mut all = if me == root { vec![0u32; len * nu] } else { Vec::new() };
            comm.gather(root, &mine, &mut all)?;
            if me == root {
                let expect: Vec<u32> = (0..n).flat_map(|r| values(seed, r, len)).collect();
                assert_eq!(all, expect, "gather root {root} len {len}");
            }
            let send: Vec<u32> =
                if me == root { (0..n).flat_map(|r| values(seed + 9, r, len)).collect() } else { Vec::new() };
            let mut got = vec![0u32; len];
            comm.scatter(root, &send, &mut got)?;
            assert_eq!(got, values(seed + 9, me, len), "scatter root {root} len {len}");
        }
    }
    trace!("{:?} {me}: alltoall", comm.members());
    for block in [1, 300] {
        // Member r's block for j: values(seed + j, r, block).
        let send: Vec<u16> = (0..n).flat_map(|j| values(seed + j, me, block)).map(|v| v as u16).collect();
        let mut got = vec![0u16; send.len()];
        comm.alltoall(&send, &mut got)?;
        let expect: Vec<u16> = (0..n).flat_map(|r| values(seed + me, r, block)).map(|v| v as u16).collect();
        assert_eq!(got, expect, "alltoall block {block}");
    }
    trace!("{:?} {me}: reduce", comm.members());
    for (i, op) in [Op::Sum, Op::Max, Op::Prod, Op::BitXor, Op::Replace, Op::NoOp].into_iter().enumerate() {
        let (seed, len) = (seed + 100 + i as u32, [1, 5, 4000][i % 3]);
        let mine: Vec<u64> = values(seed, me, len).into_iter().map(u64::from).collect();
        let expect = folded(op, seed, n, len);
        let mut all = vec![0u64; len];
        comm.allreduce(&mine, &mut all, op)?;
        assert_eq!(all, expect, "allreduce {op:?}");
        let root = (i as u32 + 1) % n;
        let mut at_root = vec![0u64; if me == root { len } else { 0 }];
        comm.reduce(root, &mine, &mut at_root, op)?;
        if me == root {
            assert_eq!(at_root, expect, "reduce {op:?} root {root}");
        }
    }
    // Floats, and AXPY (not associative: folded in rank order).
    for op in [Op::Sum, Op::Min, Op::Axpy(2.0)] {
        let mine: Vec<f64> = values(seed, me, 9).into_iter().map(f64::from).collect();
        let mut all = vec![0f64; 9];
        comm.allreduce(&mine, &mut all, op)?;
        assert_eq!(all, folded_f64(op, seed, n, 9), "allreduce f64 {op:?}");
        let mut at_root = vec![0f64; if me == n - 1 { 9 } else { 0 }];
        comm.reduce(n - 1, &mine, &mut at_root, op)?;
        if me == n - 1 {
            assert_eq!(at_root, folded_f64(op, seed, n, 9), "reduce f64 {op:?}");
        }
    }
    // reduce_scatter with uneven counts, some of them 0.
    let counts: Vec<usize> = (0..nu).map(|r| (r * 5) % 3).collect();
    let total: usize = counts.iter().sum();
    let mine: Vec<i32> = values(seed, me, total).into_iter().map(|v| v as i32).collect();
    let mut got = vec![0i32; counts[me as usize]];
    comm.reduce_scatter(&mine, &mut got, &counts, Op::Sum)?;
    let at: usize = counts[..me as usize].iter().sum();
    let sums: Vec<i32> = folded(Op::Sum, seed, n, total).into_iter().map(|v| v as i32).collect();
    assert_eq!(got, sums[at..at + got.len()], "reduce_scatter");
    let algorithms = [
        Allgather::Auto,
        Allgather::Shared,
        Allgather::Ring,
        Allgather::RecursiveDoubling,
        Allgather::Concurrent { index: 2, split: true },
    ];
    for (i, algorithm) in algorithms.into_iter().enumerate() {
        for len in [1, 33, 5000] {
            let seed = seed + 200 + i as u32;
            let mut all = vec![0u32; len * nu];
            comm.allgather(&values(seed, me, len), &mut all, algorithm)?;
            let expect: Vec<u32> = (0..n).flat_map(|r| values(seed, r, len)).collect();
            assert_eq!(all, expect, "allgather {algorithm:?} len {len}");
        }
    }
    trace!("{:?} {me}: errors", comm.members());
    check_errors(comm)?;
    trace!("{:?} {me}: barrier", comm.members());
    check_barrier(comm)
}

/// Bad arguments: the same typed errors on every member as on one node, and the
/// communicator still works after them.
fn check_errors(comm: &Comm<'_>) -> Res {
    let (n, me) = (comm.size(), comm.rank());
    let mut buf = [0u32; 2];
    assert_eq!(comm.bcast(n, &mut buf), Err(CollError::RankOutOfRange { rank: n, size: n }));
    // The root's gather buffer is one element short: the root sees the mismatch, the
    // others that the root's arguments were bad.
    let root = n - 1;
    let mut short = vec![0u32; if me == root { 2 * n as usize - 1 } else { 0 }];
    let got = comm.gather(root, &buf, &mut short);
    let expect = match me == root {
        true => CollError::SizeMismatch { expected: 2 * n as usize, found: 2 * n as usize - 1 },
        false => CollError::Disagreement { rank: root },
    };
    assert_eq!(got, Err(expect), "gather with a short buffer on the root");
    let mut sum = [0u32];
    comm.allreduce(&[1u32], &mut sum, Op::Sum)?;
    assert_eq!(sum[0], n, "allreduce after the errors");
    Ok(())
}

/// Nobody leaves the communicator's barrier before its late member entered it.
fn check_barrier(comm: &Comm<'_>) -> Res {
    let (n, me) = (comm.size(), comm.rank());
    for round in 0..2 {
        let late = round % n;
        let entered = if me == late {
            std::thread::sleep(Duration::from_millis(30));
            micros_now()
        } else {
            0
        };
        comm.barrier()?;
        let left = micros_now();
        let mut at = [entered];
        comm.bcast(late, &mut at)?;
        assert!(left >= at[0], "member {me} of {:?} left before member {late} entered", comm.members());
    }
    Ok(())
}

/// The role (module docs).
pub fn coll(core: &Core) -> Res {
    let (rank, size) = (core.rank(), core.size());
    // A user's receive for any source and tag, posted before every collective below:
    // it must get the user's message at the end, never a collective's.
    let mut user = [0u8; 8];
    let posted = core.irecv(ANY_SOURCE, ANY_TAG, &mut user)?;
    assert!(matches!(core.send(0, RESERVED_TAGS, b"x"), Err(SendError::ReservedTag { .. })));
    assert!(matches!(core.iprobe(ANY_SOURCE, TagMatch::Tag(u32::MAX)), Err(RecvError::ReservedTag { .. })));

    let world = core.world()?;
    assert_eq!(world.members(), (0..size).collect::<Vec<_>>());
    check_comm(&world, 1)?;

    // Two copies of the world, each used by a thread of its own: the threads' calls
    // interleave differently on every rank, and each must still get its own data (with
    // one context id for both, they would take each other's messages). Each thread also
    // splits its copy while the other does, and alternates between copy and child.
    let copies = [world.split(Some(0), 0)?.expect("a colour"), world.split(Some(0), 0)?.expect("a colour")];
    std::thread::scope(|s| {
        for (t, copy) in copies.into_iter().enumerate() {
            s.spawn(move || {
                // Both threads also create a communicator at once, each from its copy.
                let child = copy.split(Some(0), 0).unwrap().expect("a colour");
                for call in 0..20u32 {
                    let mut sum = [0u64];
                    let mine = u64::from(rank) * 1000 + u64::from(call) * 10 + t as u64;
                    let comm = if call % 2 == 0 { &copy } else { &child };
                    comm.allreduce(&[mine], &mut sum, Op::Sum).unwrap();
                    let n = u64::from(size);
                    assert_eq!(
                        sum[0],
                        1000 * n * (n - 1) / 2 + n * (u64::from(call) * 10 + t as u64),
                        "thread {t}"
                    );
                }
                child.free().unwrap();
                copy.free().unwrap();
            });
        }
    });

    // Odd and even ranks, each in reverse order.
    let half = world.split(Some(rank % 2), -(rank as i32))?.expect("a colour");
    let expect: Vec<u32> = (0..size).rev().filter(|r| r % 2 == rank % 2).collect();
    assert_eq!(half.members(), expect);
    assert_eq!(world.translate(rank, &half)?, Some(half.rank()));
    check_comm(&half, 2)?;

    // By node: the lowest rank on this node names it.
    let node = (0..size).find(|&r| core.is_local(r)).expect("this rank is local");
    let local = world.split(Some(node), 0)?.expect("a colour");
    assert_eq!(local.members(), (0..size).filter(|&r| core.is_local(r)).collect::<Vec<_>>());
    check_comm(&local, 3)?;

    // A split of a split, with ranks left out; then the half and the world keep working
    // while it lives (different context ids), and after it is freed.
    let some = half.split((half.rank() != 0).then_some(0), 0)?;
    assert_eq!(some.is_none(), half.rank() == 0);
    if let Some(some) = &some {
        check_comm(some, 4)?;
    }
    let mut both = [0u64];
    half.allreduce(&[1], &mut both, Op::Sum)?;
    assert_eq!(both[0], u64::from(half.size()));
    if let Some(some) = some {
        some.free()?;
    }
    local.free()?;
    half.free()?;
    check_comm(&world, 5)?;

    // Only now the user's message arrives, from the previous rank, for the receive
    // posted before everything.
    let prev = (rank + size - 1) % size;
    core.send((rank + 1) % size, 77, &u64::from(rank).to_le_bytes())?;
    let status = posted.wait()?;
    assert_eq!((status.source, status.tag, u64::from_le_bytes(user)), (prev, 77, u64::from(prev)));
    world.free()?;
    Ok(())
}

/// The role `coll_die` (module docs): the last rank dies after a barrier of the world
/// communicator; the survivors' next collective must fail. Returns its error.
///
/// A survivor may fail the barrier itself: the dead rank leaves it once its own last
/// message is in, and dies, while its other last messages may still be on their way
/// to survivors, which then see the job aborted before those (a waiting rank reports
/// the abort as soon as it sees it, rather than first draining what else arrived).
pub fn coll_die(core: &Core) -> CollError {
    let dead = core.size() - 1;
    let world = core.world().expect("the world");
    if let Err(e) = world.barrier() {
        assert_ne!(core.rank(), dead, "the barrier failed before anyone died: {e}");
        return e;
    }
    if core.rank() == dead {
        std::process::exit(3);
    }
    let mut sum = [0u32];
    match world.allreduce(&[1u32], &mut sum, Op::Sum) {
        Err(e) => e,
        Ok(()) => panic!("rank {}: an allreduce without rank {dead} succeeded", core.rank()),
    }
}
