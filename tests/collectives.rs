//! Collectives over real processes: every collective against values computed locally,
//! for every N from 1 to 12, 48 and 100, message sizes 0 B, 1 B, odd and multi-round,
//! every allgather algorithm, on the world and on split communicators.

use sccemu::{Allgather, AllocError, CollError, Comm, Core, Job, Op};
use serde::{Deserialize, Serialize};

const ALGORITHMS: [Allgather; 7] = [
    Allgather::Auto,
    Allgather::Shared,
    Allgather::Ring,
    Allgather::RecursiveDoubling,
    Allgather::Concurrent { index: 2, split: false },
    Allgather::Concurrent { index: 4, split: true },
    Allgather::Concurrent { index: 3, split: false },
];

#[derive(Serialize, Deserialize)]
struct Battery {
    sizes: Vec<usize>,
    algorithms: Vec<Allgather>,
}

fn bytes_of(rank: u32, len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| (rank as usize * 131 + i * 7 + salt) as u8).collect()
}

mod common;
use common::check;

/// Runs every collective on `comm` for every size; returns how many checks passed.
fn check_comm(comm: &Comm<'_>, battery: &Battery) -> Result<usize, String> {
    let e = |e: CollError| e.to_string();
    let (n, me) = (comm.size() as usize, comm.rank());
    let mut checks = 0;
    for &len in &battery.sizes {
        for root in [0, n as u32 - 1] {
            let mut buf = if me == root { bytes_of(root, len, 1) } else { vec![0; len] };
            comm.bcast(root, &mut buf).map_err(e)?;
            check(buf == bytes_of(root, len, 1), || format!("bcast from {root} of {len} B"))?;
        }
        let root = (n / 2) as u32;
        let mut gathered = if me == root { vec![0u8; n * len] } else { Vec::new() };
        comm.gather(root, &bytes_of(me, len, 2), &mut gathered).map_err(e)?;
        if me == root {
            let expected: Vec<u8> = (0..n as u32).flat_map(|r| bytes_of(r, len, 2)).collect();
            check(gathered == expected, || format!("gather of {len} B"))?;
        }
        let all: Vec<u8> = (0..n as u32).flat_map(|r| bytes_of(r, len, 3)).collect();
        let mut mine = vec![0u8; len];
        comm.scatter(0, if me == 0 { &all } else { &[] }, &mut mine).map_err(e)?;
        check(mine == bytes_of(me, len, 3).as_slice(), || format!("scatter of {len} B"))?;
        for &algorithm in &battery.algorithms {
            let mut out = vec![0u8; n * len];
            comm.allgather(&bytes_of(me, len, 4), &mut out, algorithm).map_err(e)?;
            let expected: Vec<u8> = (0..n as u32).flat_map(|r| bytes_of(r, len, 4)).collect();
            check(out == expected, || format!("allgather {algorithm:?} of {len} B on {n}"))?;
        }
        let send: Vec<u8> = (0..n as u32).flat_map(|to| bytes_of(me * 1000 + to, len, 5)).collect();
        let mut recv = vec![0u8; n * len];
        comm.alltoall(&send, &mut recv).map_err(e)?;
        let expected: Vec<u8> = (0..n as u32).flat_map(|from| bytes_of(from * 1000 + me, len, 5)).collect();
        check(recv == expected, || format!("alltoall of {len} B"))?;

        let values: Vec<i64> = (0..len).map(|i| i64::from(me) * 1000 - i as i64).collect();
        let sum: Vec<i64> = (0..len).map(|i| (0..n as i64).map(|r| r * 1000 - i as i64).sum()).collect();
        let mut reduced = vec![0i64; len];
        comm.reduce(root, &values, &mut reduced, Op::Sum).map_err(e)?;
        check(me != root || reduced == sum, || format!("reduce of {len} i64"))?;
        let mut everywhere = vec![0i64; len];
        comm.allreduce(&values, &mut everywhere, Op::Sum).map_err(e)?;
        check(everywhere == sum, || format!("allreduce sum of {len} i64"))?;
        let floats: Vec<f64> = (0..len).map(|i| f64::from(me) * 0.5 - i as f64).collect();
        let mut max = vec![0f64; len];
        comm.allreduce(&floats, &mut max, Op::Max).map_err(e)?;
        check(max.iter().enumerate().all(|(i, &v)| v == (n - 1) as f64 * 0.5 - i as f64), || {
            "allreduce max".into()
        })?;
        let counts: Vec<usize> = (0..n).map(|r| len / n + usize::from(r < len % n)).collect();
        let mut part = vec![0i64; counts[me as usize]];
        comm.reduce_scatter(&values, &mut part, &counts, Op::Sum).map_err(e)?;
        let start: usize = counts[..me as usize].iter().sum();
        check(part == sum[start..start + part.len()], || format!("reduce_scatter of {len} i64"))?;
        checks += 12;
    }
    comm.barrier().map_err(e)?;
    Ok(checks)
}

fn world_battery(core: &Core, battery: Battery) -> Result<usize, String> {
    let world = Comm::world(core).map_err(|e| e.to_string())?;
    check_comm(&world, &battery)
}

fn battery(sizes: &[usize]) -> Battery {
    Battery { sizes: sizes.to_vec(), algorithms: ALGORITHMS.to_vec() }
}

#[test]
fn every_collective_on_every_size_from_1_to_12() {
    for n in 1..=12 {
        let checks = Job::new(n).run(&battery(&[0, 1, 13, 1000]), world_battery).unwrap();
        assert!(checks.iter().all(|&c| c == 48), "n={n}: {checks:?}");
    }
}

#[test]
fn allgather_without_barrier_on_dedicated_cpus() {
    // Two cores on this machine's 2 CPUs: Shared runs on flags, not the barrier.
    let checks = Job::new(2).run(&battery(&[20_000]), world_battery).unwrap();
    assert_eq!(checks, vec![12; 2]);
}

#[test]
fn large_messages_move_in_several_rounds() {
    // A small heap makes staging halves small, so 300 kB takes several rounds.
    let checks = Job::new(5).heap_bytes(8 << 20).run(&battery(&[300_001]), world_battery).unwrap();
    assert_eq!(checks, vec![12; 5]);
}

#[test]
fn every_collective_on_48_cores() {
    let checks = Job::new(48).run(&battery(&[0, 7, 4096]), world_battery).unwrap();
    assert_eq!(checks, vec![36; 48]);
}

#[test]
fn every_collective_on_100_cores() {
    let checks = Job::new(100).run(&battery(&[3, 1024]), world_battery).unwrap();
    assert_eq!(checks, vec![24; 100]);
}

/// Split by rank mod 3, ordered by descending world rank; then the battery on each part.
fn split_battery(core: &Core, _: ()) -> Result<(u32, u32, usize), String> {
    let e = |e: CollError| e.to_string();
    let world = Comm::world(core).map_err(e)?;
    let part = world.split(Some(core.rank() % 3), -(core.rank() as i32)).map_err(e)?.expect("colour given");
    let expected: Vec<u32> = (0..core.size()).rev().filter(|r| r % 3 == core.rank() % 3).collect();
    check(part.members() == expected, || format!("members {:?}, expected {expected:?}", part.members()))?;
    let back = part.translate(part.rank(), &world).map_err(e)?;
    check(back == Some(core.rank()), || format!("translates to {back:?}"))?;
    let none = world.split(if core.rank() == 0 { None } else { Some(7) }, 0).map_err(e)?;
    check(none.is_none() == (core.rank() == 0), || "MPI_UNDEFINED colour".into())?;
    let checks = check_comm(&part, &battery(&[0, 5, 333]))?;
    // The world still works after its parts did.
    let mut total = [0u64];
    world.allreduce(&[1u64], &mut total, Op::Sum).map_err(e)?;
    check(total[0] == u64::from(core.size()), || "world allreduce after split".into())?;
    Ok((part.rank(), part.size(), checks))
}

#[test]
fn collectives_on_split_communicators() {
    let results = Job::new(10).run(&(), split_battery).unwrap();
    assert_eq!(results[9], (0, 4, 36), "world rank 9 leads colour 0 ordered by descending rank");
    assert_eq!(results[0], (3, 4, 36));
    assert_eq!(results[1].1, 3);
}

/// Forty communicators of every process alive at once, each making small collective
/// calls, and every eighth a large one too (its first round in the small staging, the
/// rest after it grew): small calls keep small staging, so they all fit at 48 processes
/// (with full staging for each, the fifth ran out of heap).
fn many_communicators(core: &Core, _: ()) -> Result<(), String> {
    let e = |e: CollError| e.to_string();
    let world = Comm::world(core).map_err(e)?;
    let n = u64::from(core.size());
    let mut held = Vec::new();
    for i in 0..40u32 {
        let comm = world.split(Some(0), (core.rank() as i32) * if i % 2 == 0 { 1 } else { -1 }).map_err(e)?;
        let comm = comm.expect("colour given");
        let mut total = [0u64];
        comm.allreduce(&[u64::from(core.rank() + i)], &mut total, Op::Sum).map_err(e)?;
        check(total[0] == n * (n - 1) / 2 + n * u64::from(i), || format!("allreduce on communicator {i}"))?;
        if i % 8 == 0 {
            let mine: Vec<u64> = (0..20_000).map(|k| k + u64::from(core.rank())).collect();
            let mut sum = vec![0u64; mine.len()];
            comm.allreduce(&mine, &mut sum, Op::Sum).map_err(e)?;
            let bad = (0..20_000u64).position(|k| sum[k as usize] != n * k + n * (n - 1) / 2);
            check(bad.is_none(), || format!("large allreduce on communicator {i}: element {bad:?}"))?;
        }
        held.push(comm);
    }
    Ok(())
}

#[test]
fn forty_communicators_with_collectives_fit_at_48_cores() {
    Job::new(48).run(&(), many_communicators).unwrap();
}

/// A split whose leader cannot allocate the new area: every member of that part gets
/// the leader's error, with what was really free, and the world goes on.
fn split_out_of_heap(core: &Core, _: ()) -> Result<String, String> {
    let e = |e: CollError| e.to_string();
    let world = Comm::world(core).map_err(e)?;
    let mut all = vec![0u32; core.size() as usize];
    world.allgather(&[core.rank()], &mut all, Allgather::Shared).map_err(e)?;
    // Take everything but one granule: a 40-member area needs two.
    let free = match core.heap_alloc(usize::MAX / 2) {
        Err(AllocError::Exhausted { free, .. }) => free,
        other => return Err(format!("huge allocation: {other:?}")),
    };
    let hog = core.heap_alloc(free - 4096).map_err(|e| e.to_string())?;
    let failed = world.split(Some(0), 0).err().map(e).ok_or("split succeeded")?;
    core.heap_free(hog).map_err(|e| e.to_string())?;
    world.allgather(&[core.rank()], &mut all, Allgather::Shared).map_err(e)?;
    check(all == (0..core.size()).collect::<Vec<_>>(), || "allgather after the failed split".into())?;
    Ok(failed)
}

#[test]
fn a_split_out_of_heap_reports_what_was_free() {
    let results = Job::new(40).run(&(), split_out_of_heap).unwrap();
    assert!(results.iter().all(|r| r.contains("4096")), "{:?}", results[0]);
}

/// Rank 1 passes a wrong size, then every rank a float BXOR: everyone gets an error,
/// and the communicator still works afterwards.
fn bad_arguments(core: &Core, _: ()) -> Result<Vec<String>, String> {
    let world = Comm::world(core).map_err(|e| e.to_string())?;
    let n = core.size() as usize;
    let mut errors = Vec::new();
    let mine = [1u32, 2];
    let mut out = vec![0u32; if core.rank() == 1 { 2 * n - 1 } else { 2 * n }];
    errors.push(world.allgather(&mine, &mut out, Allgather::Shared).unwrap_err().to_string());
    let mut f = [0f64];
    errors.push(world.allreduce(&[1.0f64], &mut f, Op::BitXor).unwrap_err().to_string());
    errors.push(world.bcast(n as u32, &mut f).unwrap_err().to_string());
    let mut total = [0u32];
    world.allreduce(&[2u32], &mut total, Op::Sum).map_err(|e| e.to_string())?;
    check(total[0] == 2 * n as u32, || "allreduce after errors".into())?;
    let mut all = vec![0u32; 2 * n];
    world.allgather(&[core.rank(), 7], &mut all, Allgather::Shared).map_err(|e| e.to_string())?;
    let expected: Vec<u32> = (0..n as u32).flat_map(|r| [r, 7]).collect();
    check(all == expected, || format!("allgather after errors: {all:?}"))?;
    Ok(errors)
}

#[test]
fn bad_arguments_fail_on_every_member_and_the_comm_goes_on() {
    // 2 cores run the barrier-free allgather on this machine, 3 the barrier one.
    for n in [2, 3] {
        let results = Job::new(n).run(&(), bad_arguments).unwrap();
        let short = format!("holds {} elements, expected {}", 2 * n - 1, 2 * n);
        assert!(results[1][0].contains(&short), "{:?}", results[1]);
        assert!(results[0][0].contains("member 1 passed a different size"), "{:?}", results[0]);
        assert!(results.iter().all(|r| r[1] == "BitXor is not defined on f64"), "{results:?}");
        let outside = format!("rank {n} is not in this {n}-member communicator");
        assert!(results.iter().all(|r| r[2].contains(&outside)), "{results:?}");
    }
}
