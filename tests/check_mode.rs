//! Checking mode over real processes (`Job::check`, as `sccrun --check`): each kind of
//! argument mismatch in a collective, a collective window call, a collective allocation
//! (heap, MPB, flag), a window fence or the world barrier gives the typed `Mismatch`
//! error on every rank, naming the ranks that disagree; the job stays usable (a correct
//! call afterwards succeeds); and with checking off, correct programs give the same
//! results as with it on.

use sccemu::{
    AccStrategy, Allgather, AllocError, Assert, CollError, Comm, Core, Job, Op, Placement, SyncError,
    WindowError,
};

mod common;
use common::{OrString, check};

/// What a mismatch error said: (what, ranks).
type Seen = (String, Vec<u32>);

fn coll_mismatch(r: Result<(), CollError>) -> Result<Seen, String> {
    match r {
        Err(CollError::Mismatch { what, ranks }) => Ok((what.to_string(), ranks)),
        other => Err(format!("expected a mismatch, got {other:?}")),
    }
}

fn window_mismatch<T>(r: Result<T, WindowError>) -> Result<Seen, String> {
    match r {
        Err(WindowError::Mismatch { what, ranks }) => Ok((what.to_string(), ranks)),
        Err(other) => Err(format!("expected a mismatch, got {other:?}")),
        Ok(_) => Err("expected a mismatch, the call succeeded".into()),
    }
}

fn alloc_mismatch<T>(r: Result<T, AllocError>) -> Result<Seen, String> {
    match r {
        Err(AllocError::Mismatch { what, ranks }) => Ok((what.to_string(), ranks)),
        Err(other) => Err(format!("expected a mismatch, got {other:?}")),
        Ok(_) => Err("expected a mismatch, the allocation succeeded".into()),
    }
}

fn sync_mismatch(r: Result<(), SyncError>) -> Result<Seen, String> {
    match r {
        Err(SyncError::Mismatch { what, ranks }) => Ok((what.to_string(), ranks)),
        other => Err(format!("expected a mismatch, got {other:?}")),
    }
}

/// A correct allreduce and bcast on `world`: the communicator is still usable.
fn still_usable(core: &Core, world: &Comm<'_>) -> Result<(), String> {
    let mut sum = [0u64];
    world.allreduce(&[u64::from(core.rank()) + 1], &mut sum, Op::Sum).s()?;
    let n = u64::from(core.size());
    check(sum[0] == n * (n + 1) / 2, || format!("allreduce after a mismatch: {}", sum[0]))?;
    let mut b = [if core.rank() == 0 { 42u32 } else { 0 }];
    world.bcast(0, &mut b).s()?;
    check(b[0] == 42, || "bcast after a mismatch".into())
}

/// Every collective mismatch, one after the other on one communicator, on 4 ranks.
fn collective_mismatches(core: &Core, _: ()) -> Result<Vec<Seen>, String> {
    check(core.checking(), || "checking mode is off".into())?;
    let me = core.rank();
    let world = core.world().s()?;
    let mut seen = Vec::new();

    // bcast: rank 2 names another root.
    let mut buf = [me; 3];
    seen.push(coll_mismatch(world.bcast(if me == 2 { 1 } else { 0 }, &mut buf))?);
    check(buf == [me; 3], || "a refused bcast changed the buffer".into())?;
    still_usable(core, &world)?;

    // allreduce: ranks 1 and 3 reduce with Max, 0 and 2 with Sum (a tie: rank 0's op
    // is the reference).
    let mut out = [0u64];
    let op = if me % 2 == 1 { Op::Max } else { Op::Sum };
    seen.push(coll_mismatch(world.allreduce(&[1u64], &mut out, op))?);
    // AXPY factors are part of the op.
    let op = Op::Axpy(if me == 3 { 3.0 } else { 2.0 });
    seen.push(coll_mismatch(world.allreduce(&[1.0f64], &mut [0.0], op))?);
    still_usable(core, &world)?;

    // Counts: rank 3 reduces 5 elements, the others 4.
    let len = if me == 3 { 5 } else { 4 };
    seen.push(coll_mismatch(world.allreduce(&vec![1u64; len], &mut vec![0; len], Op::Sum))?);
    // Element types: rank 0 reduces u64, the others i64 (same size); then u32.
    let r = if me == 0 {
        world.allreduce(&[1u64], &mut [0], Op::Sum)
    } else {
        world.allreduce(&[1i64], &mut [0], Op::Sum)
    };
    seen.push(coll_mismatch(r)?);
    let r = if me == 0 {
        world.allreduce(&[1u32, 1], &mut [0, 0], Op::Sum)
    } else {
        world.allreduce(&[1u64, 1], &mut [0, 0], Op::Sum)
    };
    seen.push(coll_mismatch(r)?);
    still_usable(core, &world)?;

    // reduce: rank 1 names another root.
    let r = world.reduce(if me == 1 { 3 } else { 0 }, &[1u64], &mut [0], Op::Sum);
    seen.push(coll_mismatch(r)?);
    // reduce_scatter: rank 2 splits differently.
    let counts: Vec<usize> = if me == 2 { vec![2, 0, 1, 1] } else { vec![1, 1, 1, 1] };
    let mut part = vec![0u64; counts[me as usize]];
    seen.push(coll_mismatch(world.reduce_scatter(&[1u64; 4], &mut part, &counts, Op::Sum))?);

    // allgather: rank 1 runs the ring, the others the shared algorithm (this hung).
    let algorithm = if me == 1 { Allgather::Ring } else { Allgather::Shared };
    let mut all = vec![0u32; 4];
    seen.push(coll_mismatch(world.allgather(&[me], &mut all, algorithm))?);
    // Auto is Shared, and C = 3 lowers to 2 on 4 members: these agree.
    let algorithm = if me == 1 { Allgather::Auto } else { Allgather::Shared };
    world.allgather(&[me], &mut all, algorithm).s()?;
    check(all == [0, 1, 2, 3], || format!("allgather: {all:?}"))?;
    let algorithm = Allgather::Concurrent { index: if me == 0 { 3 } else { 2 }, split: false };
    world.allgather(&[me], &mut all, algorithm).s()?;

    // Different calls: rank 0 gathers while the others scatter.
    let r = if me == 0 { world.gather(0, &[1u8], &mut [0u8; 4]) } else { world.scatter(0, &[], &mut [0u8]) };
    seen.push(coll_mismatch(r)?);
    // A barrier against an alltoall.
    let r = if me == 3 { world.barrier() } else { world.alltoall(&[0u8; 4], &mut [0u8; 4]) };
    seen.push(coll_mismatch(r)?);
    still_usable(core, &world)?;

    // On a split communicator, ranks are the communicator's: odd world ranks form
    // {1, 3}, and world rank 3 (rank 1 there) names another root.
    let half = world.split(Some(me % 2), 0).s()?.ok_or("no colour")?;
    let r = half.bcast(if me == 3 { 1 } else { 0 }, &mut [0u8]);
    if me % 2 == 1 {
        seen.push(coll_mismatch(r)?);
    } else {
        r.s()?;
    }
    half.free().s()?;
    still_usable(core, &world)?;
    world.free().s()?;
    Ok(seen)
}

#[test]
fn collective_mismatches_are_typed_errors_on_every_rank() {
    let out = Job::new(4).check(true).run(&(), collective_mismatches).unwrap();
    let s = |what: &str, ranks: &[u32]| (what.to_string(), ranks.to_vec());
    let expected = [
        s("root", &[2]),
        s("op", &[1, 3]),
        s("op", &[3]),
        s("count", &[3]),
        s("element type", &[0]),
        s("element size", &[0]),
        s("root", &[1]),
        s("counts", &[2]),
        s("allgather algorithm", &[1]),
        s("call", &[0]),
        s("call", &[3]),
    ];
    for (rank, seen) in out.iter().enumerate() {
        let mut want = expected.to_vec();
        if rank % 2 == 1 {
            want.push(s("root", &[1]));
        }
        assert_eq!(seen, &want, "rank {rank}");
    }
}

/// Window mismatches: strategy (which hung), element type, placement, granularity, and
/// freeing different windows.
fn window_mismatches(core: &Core, _: ()) -> Result<Vec<Seen>, String> {
    let me = core.rank();
    let mut seen = Vec::new();
    let strategy =
        if me == 1 { AccStrategy::CallerComputes { granularity: 64 } } else { AccStrategy::Atomic };
    seen.push(window_mismatch(core.window_with::<u64>(8, Placement::Dram, strategy))?);
    let strategy = AccStrategy::CallerComputes { granularity: if me == 2 { 128 } else { 64 } };
    seen.push(window_mismatch(core.window_with::<u64>(8, Placement::Dram, strategy))?);
    let r = if me == 0 {
        core.window::<u32>(8, Placement::Dram).map(drop)
    } else {
        core.window::<u64>(8, Placement::Dram).map(drop)
    };
    seen.push(window_mismatch(r)?);
    let placement = if me == 3 { Placement::Mpb } else { Placement::Dram };
    seen.push(window_mismatch(core.window::<u64>(8, placement))?);
    // Lengths may differ: this one agrees.
    let a = core.window::<u64>(me as usize, Placement::Dram).s()?;
    let b = core.window::<u64>(4, Placement::Dram).s()?;
    // Rank 0 frees b first, the others a.
    let (first, second) = if me == 0 { (b, a) } else { (a, b) };
    seen.push(window_mismatch(first.free())?);
    seen.push(window_mismatch(second.free())?);
    // The job goes on: a window and an accumulate on it.
    let w = core.window_with::<u64>(1, Placement::Dram, AccStrategy::OwnerComputes).s()?;
    w.fence().s()?;
    w.accumulate(0, 0, &[1], Op::Sum).s()?;
    w.fence().s()?;
    if me == 0 {
        let got = w.local().get(0).s()?;
        check(got == u64::from(core.size()), || format!("accumulate after mismatches: {got}"))?;
    }
    w.free().s()?;
    Ok(seen)
}

#[test]
fn window_mismatches_are_typed_errors_on_every_rank() {
    let out = Job::new(4).check(true).run(&(), window_mismatches).unwrap();
    let s = |what: &str, ranks: &[u32]| (what.to_string(), ranks.to_vec());
    let expected = [
        s("accumulate strategy", &[1]),
        s("accumulate granularity", &[2]),
        s("element size", &[0]),
        s("placement", &[3]),
        s("window", &[0]),
        s("window", &[0]),
    ];
    for (rank, seen) in out.iter().enumerate() {
        assert_eq!(seen, &expected, "rank {rank}");
    }
}

/// A correct program: collectives and windows; what every rank computed.
fn correct_program(core: &Core, _: ()) -> Result<(bool, Vec<u64>), String> {
    let me = core.rank();
    let world = core.world().s()?;
    let mut out = Vec::new();
    let mut sum = [0u64; 3];
    world.allreduce(&[u64::from(me); 3], &mut sum, Op::Sum).s()?;
    out.extend(sum);
    let mut all = vec![0u32; core.size() as usize];
    for algorithm in [Allgather::Auto, Allgather::Ring, Allgather::Concurrent { index: 2, split: true }] {
        world.allgather(&[me * 10], &mut all, algorithm).s()?;
        out.extend(all.iter().map(|&v| u64::from(v)));
    }
    let mut b = [u64::from(me) + 7];
    world.bcast(1, &mut b).s()?;
    out.push(b[0]);
    world.barrier().s()?;
    let half = world.split(Some(me % 2), -(me as i32)).s()?.ok_or("no colour")?;
    let mut m = [0u64];
    half.allreduce(&[u64::from(me)], &mut m, Op::Max).s()?;
    out.push(m[0]);
    half.free().s()?;
    for strategy in
        [AccStrategy::Atomic, AccStrategy::CallerComputes { granularity: 16 }, AccStrategy::OwnerComputes]
    {
        let w = core.window_with::<u64>(4, Placement::Dram, strategy).s()?;
        w.fence().s()?;
        w.accumulate((me + 1) % core.size(), 0, &[u64::from(me); 4], Op::Sum).s()?;
        w.fetch_add(0, 3, 1u64).s()?;
        w.fence().s()?;
        out.extend(w.local().to_vec());
        w.free().s()?;
    }
    world.free().s()?;
    Ok((core.checking(), out))
}

#[test]
fn correct_programs_give_the_same_results_with_checking_on_and_off() {
    let off = Job::new(4).check(false).run(&(), correct_program).unwrap();
    let on = Job::new(4).check(true).run(&(), correct_program).unwrap();
    assert!(off.iter().all(|(checking, _)| !checking), "checking off");
    assert!(on.iter().all(|(checking, _)| *checking), "checking on");
    let values = |v: &[(bool, Vec<u64>)]| v.iter().map(|(_, out)| out.clone()).collect::<Vec<_>>();
    assert_eq!(values(&off), values(&on));
    // Rank 1's allreduce sums 0 + 1 + 2 + 3; its bcast got rank 1's 8.
    assert_eq!(&on[1].1[..3], &[6, 6, 6]);
}

/// Collective allocations and the world barrier: sizes that differ, and cores in
/// another call. Nothing is allocated by a refused call: the heap's free bytes do not
/// move, and later allocations get the same offsets on every core (the MPB replicas
/// stayed alike).
fn allocation_mismatches(core: &Core, _: ()) -> Result<Vec<Seen>, String> {
    let (me, n) = (core.rank(), core.size());
    let mut seen = Vec::new();
    let free = core.heap_free_bytes().s()?;
    seen.push(alloc_mismatch(core.heap_alloc(if me == 2 { 8192 } else { 4096 }))?);
    // A core asking for 0 bytes is named too, not left to fail alone.
    seen.push(alloc_mismatch(core.heap_alloc(if me == 1 { 0 } else { 4096 }))?);
    let after = core.heap_free_bytes().s()?;
    check(after == free, || format!("refused heap allocations took {} bytes", free - after))?;
    core.barrier().s()?; // everyone measured before anyone allocates
    seen.push(alloc_mismatch(core.mpb_alloc(if me == 3 { 64 } else { 128 }))?);
    // A flag allocation against MPB allocations.
    let r = if me == 0 { core.flag_alloc().map(drop) } else { core.mpb_alloc(64).map(drop) };
    seen.push(alloc_mismatch(r)?);
    // The world barrier against a heap allocation.
    if me == 1 {
        seen.push(coll_mismatch(core.barrier())?);
    } else {
        seen.push(alloc_mismatch(core.heap_alloc(4096))?);
    }
    // The job goes on: allocations agree across the cores, and a flag travels the ring.
    let heap = core.heap_alloc(4096).s()?;
    let mpb = core.mpb_alloc(128).s()?;
    let flag = core.flag_alloc().s()?;
    core.flag_write(flag, (me + 1) % n, 1).s()?;
    core.flag_wait(flag, 1).s()?;
    let world = core.world().s()?;
    let offsets = [heap.offset as u64, mpb.offset as u64];
    let (mut low, mut high) = ([0u64; 2], [0u64; 2]);
    world.allreduce(&offsets, &mut low, Op::Min).s()?;
    world.allreduce(&offsets, &mut high, Op::Max).s()?;
    check(low == high, || format!("cores got different regions: {low:?} to {high:?}"))?;
    world.free().s()?;
    core.heap_free(heap).s()?;
    core.mpb_free(mpb).s()?;
    core.flag_free(flag).s()?;
    Ok(seen)
}

#[test]
fn allocation_and_barrier_mismatches_are_typed_errors_on_every_rank() {
    let out = Job::new(4).check(true).run(&(), allocation_mismatches).unwrap();
    let s = |what: &str, ranks: &[u32]| (what.to_string(), ranks.to_vec());
    let expected = [s("bytes", &[2]), s("bytes", &[1]), s("bytes", &[3]), s("call", &[0]), s("call", &[1])];
    for (rank, seen) in out.iter().enumerate() {
        assert_eq!(seen, &expected, "rank {rank}");
    }
}

/// Window fences: another window, a collective assert on one core only, and a fence
/// against the world barrier; local asserts may differ.
fn fence_mismatches(core: &Core, _: ()) -> Result<Vec<Seen>, String> {
    let (me, n) = (core.rank(), core.size());
    let a = core.window::<u64>(1, Placement::Dram).s()?;
    let b = core.window::<u64>(1, Placement::Dram).s()?;
    let mut seen = Vec::new();
    seen.push(sync_mismatch(if me == 1 { b.fence() } else { a.fence() })?);
    seen.push(sync_mismatch(a.fence_with(if me == 3 { Assert::NOSUCCEED } else { Assert::NONE }))?);
    a.fence_with(if me == 0 { Assert::NOSTORE | Assert::NOPUT } else { Assert::NONE }).s()?;
    if me == 2 {
        seen.push(coll_mismatch(core.barrier())?);
    } else {
        seen.push(sync_mismatch(a.fence())?);
    }
    // The epoch the third fence opened still works.
    a.put((me + 1) % n, 0, &[u64::from(me) + 1]).s()?;
    a.fence().s()?;
    let got = a.local().get(0).s()?;
    check(got == u64::from((me + n - 1) % n) + 1, || format!("put after mismatches: {got}"))?;
    a.free().s()?;
    b.free().s()?;
    Ok(seen)
}

#[test]
fn fence_mismatches_are_typed_errors_on_every_rank() {
    let out = Job::new(4).check(true).run(&(), fence_mismatches).unwrap();
    let s = |what: &str, ranks: &[u32]| (what.to_string(), ranks.to_vec());
    let expected = [s("window", &[1]), s("asserts", &[3]), s("call", &[2])];
    for (rank, seen) in out.iter().enumerate() {
        assert_eq!(seen, &expected, "rank {rank}");
    }
}
