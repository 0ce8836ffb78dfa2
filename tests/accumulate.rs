//! Atomic accumulate over real processes, for every strategy: N-1 origins into one
//! target (exact integer results, no lost update), fetch_and_op mixed with bulk
//! accumulates (atomic: every fetched value distinct), per-origin ordering (inline and
//! staged requests), every op × type × strategy against a sequential model, and the
//! typed errors.

use std::collections::BTreeSet;

use sccemu::protocol::atomic::pair;
use sccemu::{AccElem, AccError, AccStrategy, Assert, Core, Job, Op, OpError, Placement, RmaError, Vector};

mod common;
use common::{OrString, check};

const STRATEGIES: [AccStrategy; 4] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 64 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::OwnerComputes,
];

/// Origins 1..n accumulate into rank 0 concurrently, inline- and staged-sized calls
/// over overlapping ranges; rank 0 checks every element exactly.
fn n_minus_1_into_one(core: &Core, rounds: u64) -> Result<(), String> {
    const LEN: usize = 9000; // 72 KB of i64: larger than a staging buffer
    let n = core.size() as u64;
    let me = core.rank() as u64;
    for strategy in STRATEGIES {
        let win = core.window_with::<i64>(if me == 0 { LEN } else { 0 }, Placement::Dram, strategy).s()?;
        let wu = core.window_with::<u32>(if me == 0 { 64 } else { 0 }, Placement::Dram, strategy).s()?;
        if me != 0 {
            let all = win.lock_all().s()?;
            let allu = wu.lock_all().s()?;
            for r in 0..rounds {
                let len = [3usize, 50, 700, LEN][(r % 4) as usize];
                win.accumulate(0, 0, &vec![me as i64; len], Op::Sum).s()?;
                wu.accumulate(0, 0, &[u32::MAX / 2 + me as u32; 64], Op::Sum).s()?;
            }
            allu.unlock_all().s()?;
            all.unlock_all().s()?;
        }
        core.barrier().s()?;
        if me == 0 {
            let got = win.local().to_vec();
            for (i, v) in got.iter().enumerate() {
                let want: i64 = (1..n)
                    .map(|o| {
                        (0..rounds).filter(|r| i < [3usize, 50, 700, LEN][(r % 4) as usize]).count() as i64
                            * o as i64
                    })
                    .sum();
                check(*v == want, || format!("{strategy:?}: element {i} = {v}, want {want}"))?;
            }
            let want = (1..n)
                .fold(0u32, |acc, o| (0..rounds).fold(acc, |a, _| a.wrapping_add(u32::MAX / 2 + o as u32)));
            check(wu.local().to_vec().iter().all(|v| *v == want), || format!("{strategy:?}: u32 wrap"))?;
        }
        wu.free().s()?;
        win.free().s()?;
    }
    Ok(())
}

#[test]
fn n_minus_1_origins_into_one_target() {
    Job::new(4).run(&12u64, n_minus_1_into_one).unwrap();
}

/// fetch_and_op(+1) on element 0 mixed with bulk accumulates (+1) over elements
/// 0..64 from every origin: each fetched value must be distinct (atomicity) and
/// increasing per origin (order), and the final count exact.
fn fop_with_bulk(core: &Core, rounds: u64) -> Result<Vec<Vec<u64>>, String> {
    let me = core.rank();
    let mut out = Vec::new();
    for strategy in STRATEGIES {
        let win = core.window_with::<u64>(if me == 0 { 64 } else { 0 }, Placement::Dram, strategy).s()?;
        let mut seen = Vec::new();
        win.fence_with(Assert::NOPRECEDE).s()?;
        if me != 0 {
            for _ in 0..rounds {
                seen.push(win.fetch_and_op(0, 0, 1, Op::Sum).s()?);
                win.accumulate(0, 0, &[1u64; 64], Op::Sum).s()?;
            }
        }
        win.fence_with(Assert::NOSUCCEED).s()?;
        if me == 0 {
            let total = 2 * rounds * (core.size() as u64 - 1);
            let got = win.local().to_vec();
            check(got[0] == total, || format!("{strategy:?}: element 0 = {}, want {total}", got[0]))?;
            check(got[1..].iter().all(|v| *v == total / 2), || format!("{strategy:?}: bulk lost updates"))?;
        }
        check(seen.windows(2).all(|w| w[0] < w[1]), || format!("{strategy:?}: per-origin order {seen:?}"))?;
        out.push(seen);
        win.free().s()?;
    }
    Ok(out)
}

#[test]
fn fetch_and_op_mixed_with_bulk_stays_atomic() {
    let out = Job::new(4).run(&40u64, fop_with_bulk).unwrap();
    for s in 0..STRATEGIES.len() {
        let all: Vec<u64> = out.iter().flat_map(|per_rank| per_rank[s].iter().copied()).collect();
        let distinct: BTreeSet<u64> = all.iter().copied().collect();
        assert_eq!(distinct.len(), all.len(), "{:?}: a fetched value repeated", STRATEGIES[s]);
    }
}

/// One origin's replaces, sums and products on the same elements apply in issue order,
/// inline and staged, seen by its own later get_accumulate and fetch_and_op, while
/// another origin hammers other elements of the same target.
fn ordering(core: &Core, rounds: u64) -> Result<(), String> {
    const LEN: usize = 20_000;
    let me = core.rank();
    for strategy in STRATEGIES {
        let win =
            core.window_with::<i64>(if me == 0 { 2 * LEN } else { 0 }, Placement::Dram, strategy).s()?;
        let all = win.lock_all().s()?;
        let mut model = vec![0i64; LEN];
        let base = if me == 1 { 0 } else { LEN };
        if me != 0 {
            for r in 0..rounds as i64 {
                let len = if r % 2 == 0 { 10 } else { LEN };
                win.accumulate(0, base, &vec![r; len], Op::Replace).s()?;
                win.accumulate(0, base, &vec![3; len], Op::Prod).s()?;
                win.accumulate(0, base, &vec![1; len], Op::Sum).s()?;
                for v in &mut model[..len] {
                    *v = r * 3 + 1;
                }
                let got = win.fetch_and_op(0, base + 5, 0, Op::NoOp).s()?;
                check(got == model[5], || format!("{strategy:?}: fetched {got}, want {}", model[5]))?;
                let mut now = vec![0i64; LEN];
                win.get_accumulate(0, base, &vec![0; LEN], &mut now, Op::NoOp).s()?;
                check(now == model, || {
                    format!("{strategy:?}: round {r}: get_accumulate saw an older state")
                })?;
            }
        }
        all.unlock_all().s()?;
        win.free().s()?;
    }
    Ok(())
}

#[test]
fn per_origin_order_holds() {
    Job::new(3).run(&6u64, ordering).unwrap();
}

trait Gen: AccElem + sccemu::Plain + PartialEq {
    fn sample(i: usize) -> Self;
}

macro_rules! gen_int {
    ($($t:ty),*) => {$(impl Gen for $t {
        fn sample(i: usize) -> Self { (((i * 7 + 3) % 11) as $t).wrapping_sub(3 as $t).wrapping_mul(5 as $t) }
    })*};
}
gen_int!(i8, u8, i16, u16, i32, i64, u32, u64);

macro_rules! gen_pair {
    ($($t:ident: $v:ty),*) => {$(impl Gen for pair::$t {
        // Few distinct values, so that MINLOC and MAXLOC meet ties.
        fn sample(i: usize) -> Self { pair::$t::new(((i * 7 + 3) % 5) as $v, (i % 13) as i32) }
    })*};
}
gen_pair!(IntIndex: i32, ShortIndex: i16, FloatIndex: f32, LongIndex: i64, DoubleIndex: f64);
impl Gen for f32 {
    fn sample(i: usize) -> Self {
        ((i * 7 + 3) % 11) as f32 * 0.5 - 2.5
    }
}
impl Gen for f64 {
    fn sample(i: usize) -> Self {
        ((i * 7 + 3) % 11) as f64 * 0.5 - 2.5
    }
}

/// Every op on `T` under `strategy`: rank r updates rank r+1's part with an
/// accumulate, a get_accumulate (whose result is checked) and a fetch_and_op, each
/// target then checks its part against the sequential model.
fn every_op<T: Gen>(core: &Core, strategy: AccStrategy) -> Result<(), String> {
    const LEN: usize = 520; // 2 KB to 4 KB: inline and staged owner-computes requests
    let n = core.size();
    let me = core.rank() as usize;
    let target = (core.rank() + 1) % n;
    let from = (me + n as usize - 1) % n as usize;
    let win = core.window_with::<T>(LEN, Placement::Dram, strategy).s()?;
    for op in Op::ALL {
        let init: Vec<T> = (0..LEN).map(|i| T::sample(i + me)).collect();
        win.local().write(0, &init).s()?;
        win.fence_with(Assert::NONE).s()?;
        let a = |who: usize| (0..LEN).map(move |i| T::sample(i * 3 + who + 1)).collect::<Vec<T>>();
        let b = |who: usize| (0..LEN).map(move |i| T::sample(i * 5 + who + 2)).collect::<Vec<T>>();
        let c = |who: usize| T::sample(who + 4);
        // The sequential model of what `from` does to this core's part.
        let mut model: Vec<T> = init.clone();
        if size_of::<T>() > 8 && strategy == AccStrategy::Atomic && T::check(op).is_ok() {
            let refused = win.accumulate(target, 0, &a(me), op);
            check(matches!(refused, Err(AccError::NotLockFree { .. })), || format!("{op:?} 16 B accepted"))?;
            win.fence_with(Assert::NONE).s()?;
            continue;
        }
        if T::check(op).is_err() {
            let refused = win.accumulate(target, 0, &a(me), op);
            check(matches!(refused, Err(AccError::Op(OpError { .. }))), || format!("{op:?} accepted"))?;
            win.fence_with(Assert::NONE).s()?;
            check(win.local().to_vec() == model, || format!("{op:?}: refused op changed data"))?;
            continue;
        }
        win.accumulate(target, 0, &a(me), op).s()?;
        let mut old = vec![T::sample(0); LEN];
        win.get_accumulate(target, 0, &b(me), &mut old, op).s()?;
        let f = win.fetch_and_op(target, 3, c(me), op).s()?;
        // What this core should have seen at its target.
        let tinit: Vec<T> = (0..LEN).map(|i| T::sample(i + target as usize)).collect();
        let after_a: Vec<T> = tinit.iter().zip(a(me)).map(|(x, y)| T::combine(op, *x, y)).collect();
        check(bytes(&old) == bytes(&after_a), || format!("{} {op:?}: get_accumulate result", T::NAME))?;
        let after_b: Vec<T> = after_a.iter().zip(b(me)).map(|(x, y)| T::combine(op, *x, y)).collect();
        check(bytes(&[f]) == bytes(&[after_b[3]]), || format!("{} {op:?}: fetch_and_op result", T::NAME))?;
        win.fence_with(Assert::NONE).s()?;
        let (af, bf) = (a(from), b(from));
        for (i, m) in model.iter_mut().enumerate() {
            *m = T::combine(op, T::combine(op, *m, af[i]), bf[i]);
        }
        model[3] = T::combine(op, model[3], c(from));
        let got = win.local().to_vec();
        check(bytes(&got) == bytes(&model), || {
            format!("{strategy:?} {} {op:?}: {got:?} != {model:?}", T::NAME)
        })?;
    }
    win.fence_with(Assert::NOSUCCEED).s()?;
    win.free().s()?;
    Ok(())
}

/// Bit patterns, for exact comparison of floats too.
fn bytes<T: AccElem>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn every_op_all(core: &Core, _: ()) -> Result<(), String> {
    for strategy in STRATEGIES {
        every_op::<i32>(core, strategy)?;
        every_op::<i64>(core, strategy)?;
        every_op::<u32>(core, strategy)?;
        every_op::<u64>(core, strategy)?;
        every_op::<f32>(core, strategy)?;
        every_op::<f64>(core, strategy)?;
        every_op::<i8>(core, strategy)?;
        every_op::<u8>(core, strategy)?;
        every_op::<i16>(core, strategy)?;
        every_op::<u16>(core, strategy)?;
        every_op::<pair::IntIndex>(core, strategy)?;
        every_op::<pair::ShortIndex>(core, strategy)?;
        every_op::<pair::FloatIndex>(core, strategy)?;
        every_op::<pair::LongIndex>(core, strategy)?;
        every_op::<pair::DoubleIndex>(core, strategy)?;
    }
    Ok(())
}

#[test]
fn every_op_type_and_strategy_matches_the_sequential_model() {
    Job::new(3).run(&(), every_op_all).unwrap();
}

/// Bad input is a typed error and the window stays usable.
fn errors(core: &Core, _: ()) -> Result<(), String> {
    let win = core.window_with::<u64>(8, Placement::Dram, AccStrategy::OwnerComputes).s()?;
    let no_epoch = win.accumulate(0, 0, &[1], Op::Sum);
    check(no_epoch == Err(AccError::Rma(RmaError::NoEpoch { rank: 0 })), || format!("{no_epoch:?}"))?;
    win.fence_with(Assert::NONE).s()?;
    let n = core.size();
    let e = win.accumulate(n, 0, &[1], Op::Sum);
    check(matches!(e, Err(AccError::Rma(RmaError::RankOutOfRange { .. }))), || format!("{e:?}"))?;
    let e = win.accumulate(0, 5, &[1; 4], Op::Sum);
    check(matches!(e, Err(AccError::Rma(RmaError::OutOfBounds { .. }))), || format!("{e:?}"))?;
    let mut short = [0u64; 1];
    let e = win.get_accumulate(0, 0, &[1; 2], &mut short, Op::Sum);
    check(matches!(e, Err(AccError::Rma(RmaError::LengthMismatch { .. }))), || format!("{e:?}"))?;
    win.accumulate(0, 0, &[1], Op::Sum).s()?;
    // Strided: elements 1, 2, 5, 6 of rank 0 (two blocks of 2, stride 4), checked first.
    let layout = Vector { count: 2, block_len: 2, stride: 4 };
    let e = win.accumulate_strided(0, 1, layout, &[1; 3], Op::Sum);
    check(matches!(e, Err(AccError::Rma(RmaError::LengthMismatch { .. }))), || format!("{e:?}"))?;
    let e = win.accumulate_strided(0, 3, layout, &[1; 4], Op::Sum);
    check(matches!(e, Err(AccError::Rma(RmaError::OutOfBounds { .. }))), || format!("{e:?}"))?;
    win.accumulate_strided(0, 1, layout, &[10, 20, 30, 40], Op::Sum).s()?;
    win.fence_with(Assert::NOSUCCEED).s()?;
    if core.rank() == 0 {
        let n = n as u64;
        let want = [n, 10 * n, 20 * n, 0, 0, 30 * n, 40 * n, 0];
        let got = win.local().to_vec();
        check(got == want, || format!("after errors and strided: {got:?} != {want:?}"))?;
    }
    win.free().s()?;
    let wf =
        core.window_with::<f64>(4, Placement::Mpb, AccStrategy::CallerComputes { granularity: 8 }).s()?;
    wf.fence_with(Assert::NONE).s()?;
    let e = wf.fetch_and_op(0, 0, 1.0, Op::BitXor);
    check(matches!(e, Err(AccError::Op(_))), || format!("{e:?}"))?;
    wf.fetch_and_op(0, 0, 0.5, Op::Sum).s()?;
    wf.fence_with(Assert::NOSUCCEED).s()?;
    if core.rank() == 0 {
        check(wf.local().get(0).s()? == 0.5 * n as f64, || "f64 sum".into())?;
    }
    wf.free().s()?;
    // Dropped without free (reclaimed at a later collective allocation, once every core
    // dropped it): the agent stops and is joined, and the job goes on.
    let leaked = core.window_with::<u64>(4, Placement::Dram, AccStrategy::OwnerComputes).s()?;
    leaked.fence_with(Assert::NONE).s()?;
    leaked.accumulate((core.rank() + 1) % n, 0, &[1], Op::Sum).s()?;
    leaked.fence_with(Assert::NOSUCCEED).s()?;
    drop(leaked);
    core.barrier().s()?;
    Ok(())
}

#[test]
fn bad_input_is_a_typed_error() {
    Job::new(3).run(&(), errors).unwrap();
}

/// Rank 2 dies; rank 1 floods rank 2's owner-computes queue (its agent died with it,
/// so the queue fills and rank 1 blocks in flow control) and rank 0 waits in a fence:
/// both must come back with the abort error naming rank 2, not hang.
fn die_under_owner_computes(core: &Core, _: ()) -> Result<String, String> {
    let win = core.window_with::<u64>(1024, Placement::Dram, AccStrategy::OwnerComputes).s()?;
    win.fence_with(Assert::NOPRECEDE).s()?;
    if core.rank() == 2 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL).s()?;
    }
    let result = if core.rank() == 1 {
        // Until the abort: rank 2's agent drains the queue for its first 100 ms.
        let started = std::time::Instant::now();
        std::iter::repeat(())
            .take_while(|_| started.elapsed() < std::time::Duration::from_secs(5))
            .try_for_each(|_| win.accumulate(2, 0, &[1u64; 100], Op::Sum).map_err(|e| e.to_string()))
    } else {
        win.fence_with(Assert::NONE).map_err(|e| e.to_string())
    };
    match result {
        Ok(()) => Err("completed without rank 2".into()),
        Err(e) => Ok(e),
    }
}

#[test]
fn a_dead_owner_aborts_blocked_origins() {
    let outcome = Job::new(3).run_outcome(&(), die_under_owner_computes).unwrap();
    // The launcher's clock: the test's would count waiting for another test's job.
    let took = outcome.report.elapsed;
    assert!(took < std::time::Duration::from_secs(10), "took {took:?}");
    assert_eq!(outcome.report.diagnosis().as_deref(), Some("rank 2 killed by SIGKILL"));
    for rank in [0, 1] {
        let r = outcome.ranks[rank].as_ref().expect("rank returned");
        assert!(r.contains("rank 2"), "rank {rank}: {r}");
    }
}

/// An owner-computes block that does not fit the heap is a collective allocation
/// error; the window is freed with it, and the job goes on with a smaller strategy.
fn heap_too_small(core: &Core, _: ()) -> Result<bool, String> {
    let before = core.heap_free_bytes().s()?;
    core.barrier().s()?; // everyone measured before anyone allocates
    let refused = core.window_with::<u64>(64, Placement::Dram, AccStrategy::OwnerComputes);
    let refused = matches!(refused, Err(sccemu::WindowError::Alloc(_)));
    core.barrier().s()?;
    let after = core.heap_free_bytes().s()?;
    core.barrier().s()?; // everyone measured before anyone allocates again
    check(after == before, || format!("the refused window leaked: {before} -> {after}"))?;
    let win =
        core.window_with::<u64>(64, Placement::Dram, AccStrategy::CallerComputes { granularity: 64 }).s()?;
    win.fence_with(Assert::NONE).s()?;
    win.accumulate(0, 0, &[1; 64], Op::Sum).s()?;
    win.fence_with(Assert::NOSUCCEED).s()?;
    win.free().s()?;
    Ok(refused)
}

#[test]
fn an_owner_block_too_big_for_the_heap_is_a_typed_error() {
    let out = Job::new(3).heap_bytes(1 << 20).run(&(), heap_too_small).unwrap();
    assert_eq!(out, vec![true; 3]);
}

/// A window of bytes takes accumulates of every element type at byte offsets, as an
/// MPI window does: every core adds into its own byte lane (and its own 16-bit lane) of
/// the same words of rank 0's part, many times and concurrently; neighbouring lanes
/// never overwrite each other. A misaligned element is refused.
fn byte_window(core: &Core, rounds: u32) -> Result<(), String> {
    let (n, me) = (core.size() as usize, core.rank() as usize);
    for strategy in STRATEGIES {
        let win = core.window_with::<u8>(if me == 0 { 64 } else { 0 }, Placement::Dram, strategy).s()?;
        win.fence_with(Assert::NONE).s()?;
        for _ in 0..rounds {
            win.accumulate_as(0, me, &[1i8], Op::Sum).s()?;
            win.accumulate_as(0, 16 + 2 * me, &[3u16], Op::Sum).s()?;
            win.fetch_and_op_as(0, 40, 1.5f64, Op::Sum).s()?;
        }
        // A compare-and-swap on this core's own byte: only the first of two swaps.
        let first = win.compare_and_swap_as(0, 56 + me, 0i8, 7).s()?;
        let second = win.compare_and_swap_as(0, 56 + me, 0i8, 9).s()?;
        check((first, second) == (0, 7), || format!("{strategy:?} CAS saw {first}, {second}"))?;
        let refused = win.accumulate_as(0, 17, &[1u16], Op::Sum);
        check(matches!(refused, Err(AccError::Rma(RmaError::Misaligned { .. }))), || format!("{refused:?}"))?;
        win.fence_with(Assert::NONE).s()?;
        if me == 0 {
            let part = win.local().to_vec();
            for r in 0..n {
                check(part[r] as u32 == rounds % 256, || format!("{strategy:?} byte lane {r}: {}", part[r]))?;
                let lane = u16::from_le_bytes([part[16 + 2 * r], part[17 + 2 * r]]);
                check(lane as u32 == 3 * rounds % 65536, || format!("{strategy:?} u16 lane {r}: {lane}"))?;
            }
            check(part[56..56 + n].iter().all(|&b| b == 7), || {
                format!("{strategy:?} CAS lanes {:?}", &part[56..56 + n])
            })?;
            let sum = f64::from_le_bytes(part[40..48].try_into().unwrap());
            check(sum == 1.5 * (n as f64) * rounds as f64, || format!("{strategy:?} f64 sum {sum}"))?;
        }
        win.fence_with(Assert::NOSUCCEED).s()?;
        win.free().s()?;
    }
    Ok(())
}

#[test]
fn byte_windows_take_every_element_type() {
    Job::new(4).run(&300u32, byte_window).unwrap();
}
