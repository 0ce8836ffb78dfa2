//! Nothing leaks, over real processes: windows (every placement and accumulate
//! strategy) and communicators (world and split, with staging) dropped without `free`,
//! a thousand times in a job whose heap (and MPB) could not hold them all, and the heap
//! is back to where it started; windows that the cores drop at different points are
//! reclaimed once all dropped them, and not before.

use sccemu::{AccStrategy, Allgather, Core, Job, Op, Placement};

mod common;
use common::{OrString, check};

/// Heap of the jobs below: 4 MiB. One owner-computes window takes about 800 KiB of it
/// on 2 cores, a communicator's staging 512 KiB: a thousand of either would not fit.
const HEAP: u64 = 4 << 20;

/// The heap's free bytes once every core got here.
fn free_bytes(core: &Core) -> Result<usize, String> {
    core.barrier().s()?;
    let free = core.heap_free_bytes().s()?;
    core.barrier().s()?;
    Ok(free)
}

/// 1000 windows, each used then dropped without free, cycling through placements and
/// strategies; returns how many were pending reclaim at the end of the loop.
fn drop_windows(core: &Core, rounds: usize) -> Result<(usize, usize), String> {
    let before = free_bytes(core)?;
    let me = core.rank();
    let peer = 1 - me;
    for i in 0..rounds {
        let win = match i % 4 {
            0 => core.window::<u64>(8 * 1024, Placement::Dram).s()?,
            1 => core.window::<u64>(512, Placement::Mpb).s()?,
            2 => core
                .window_with::<u64>(
                    8 * 1024,
                    Placement::Dram,
                    AccStrategy::CallerComputes { granularity: 64 },
                )
                .s()?,
            _ => core.window_with::<u64>(8 * 1024, Placement::Dram, AccStrategy::OwnerComputes).s()?,
        };
        win.fence().s()?;
        win.put(peer, 0, &[i as u64]).s()?;
        win.accumulate(peer, 1, &[1], Op::Sum).s()?;
        win.fence().s()?;
        check(win.local().get(0).s()? == i as u64 && win.local().get(1).s()? == 1, || format!("window {i}"))?;
        drop(win);
        // At most the window just dropped waits for the next allocation.
        check(core.orphaned().0 <= 1, || format!("window {i}: {:?} orphaned", core.orphaned()))?;
    }
    let pending = core.orphaned();
    // One more collective allocation reclaims the last; then the heap is as it was.
    core.window::<u8>(1, Placement::Dram).s()?.free().s()?;
    check(core.orphaned() == (0, 0), || format!("after the loop: {:?} orphaned", core.orphaned()))?;
    let after = free_bytes(core)?;
    check(after == before, || format!("heap free bytes {before} -> {after}"))?;
    Ok(pending)
}

#[test]
fn a_thousand_dropped_windows_fit_a_small_heap() {
    let out = Job::new(2).heap_bytes(HEAP).run(&1000, drop_windows).unwrap();
    // The last window dropped was an owner-computes one: heap blocks, no MPB.
    for (count, bytes) in out {
        assert_eq!(count, 1);
        assert!(bytes > 64 * 1024, "{bytes} bytes");
    }
}

/// 1000 world communicators and splits, each running collectives (so with staging),
/// dropped without free.
fn drop_comms(core: &Core, rounds: usize) -> Result<(), String> {
    let before = free_bytes(core)?;
    let me = core.rank();
    for i in 0..rounds {
        let world = core.world().s()?;
        let mut sum = [0u64];
        world.allreduce(&[u64::from(me) + i as u64], &mut sum, Op::Sum).s()?;
        check(sum[0] == 1 + 2 * i as u64, || format!("comm {i}: allreduce {}", sum[0]))?;
        let half = world.split(Some(me), 0).s()?.ok_or("no colour")?;
        let mut all = [0u32];
        half.allgather(&[me], &mut all, Allgather::Shared).s()?;
        if i % 2 == 0 {
            drop(world);
            drop(half);
        } else {
            drop(half);
            drop(world);
        }
    }
    let after = free_bytes(core)?;
    check(after == before, || format!("heap free bytes {before} -> {after}"))
}

#[test]
fn a_thousand_dropped_communicators_fit_a_small_heap() {
    Job::new(2).heap_bytes(HEAP).run(&1000, drop_comms).unwrap();
}

/// Cores drop two windows in different orders, at different points: nothing is
/// reclaimed while some core still holds a window, all of it once every core dropped
/// both. Returns what each core saw pending: after the first drops, after both, after
/// the next allocation.
fn skewed_drops(core: &Core, _: ()) -> Result<Vec<(usize, usize)>, String> {
    let before = free_bytes(core)?;
    let me = core.rank();
    let a = core.window::<u64>(1024, Placement::Dram).s()?;
    let b = core.window::<u64>(256, Placement::Mpb).s()?;
    let mut seen = Vec::new();
    // Rank 0 drops a, rank 1 drops b; each marks its own part of the window it keeps.
    let (first, keep) = if me == 0 { (a, b) } else { (b, a) };
    let mark: Vec<u64> = (0..keep.len() as u64).map(|i| i + 1000 * u64::from(me) + 1).collect();
    keep.local().write(0, &mark).s()?;
    drop(first);
    // An allocation as large as a: it compares the lists and must not reclaim. Had it
    // reused a's memory (first fit would), creating it would zero rank 1's part of a.
    let c = core.window::<u64>(1024, Placement::Dram).s()?;
    let d = core.window::<u64>(256, Placement::Mpb).s()?;
    seen.push(core.orphaned());
    check(keep.local().to_vec() == mark, || format!("rank {me}: the window it keeps was reused"))?;
    drop(keep);
    seen.push(core.orphaned());
    // Both cores now hold {a, b}, dropped in different orders: the next allocation
    // reclaims both.
    core.window::<u8>(1, Placement::Mpb).s()?.free().s()?;
    seen.push(core.orphaned());
    d.free().s()?;
    c.free().s()?;
    let after = free_bytes(core)?;
    check(after == before, || format!("heap free bytes {before} -> {after}"))?;
    Ok(seen)
}

#[test]
fn windows_are_reclaimed_only_once_every_core_dropped_them() {
    let out = Job::new(2).run(&(), skewed_drops).unwrap();
    for (rank, seen) in out.iter().enumerate() {
        assert_eq!(seen[0].0, 1, "rank {rank}: one window pending after the first drop");
        assert_eq!(seen[1].0, 2, "rank {rank}: both pending before the next allocation");
        assert_eq!(seen[2], (0, 0), "rank {rank}: reclaimed");
    }
}
