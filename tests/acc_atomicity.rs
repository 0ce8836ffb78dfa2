//! Atomicity across the accumulate family, over real processes: every pair of
//! accumulate (Sum), get_accumulate (Sum), fetch_and_op (Sum), the ARMW fetch_add and a
//! compare_and_swap increment loop races on one element from 4 cores, under every
//! accumulate strategy. The final value must be exact (no lost update), and every
//! value a fetching call returned must be distinct (each increment saw its own
//! predecessor). Before ARMW joined the accumulates' atomicity domain, CallerComputes
//! and OwnerComputes lost increments here.

use std::collections::BTreeSet;

use sccemu::{AccStrategy, Core, Job, Op, Placement, Window};
use serde::{Deserialize, Serialize};

mod common;
use common::{OrString, check};

const STRATEGIES: [AccStrategy; 5] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 64 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::CallerComputes { granularity: 4 },
    AccStrategy::OwnerComputes,
];

/// The racing calls, each adding 1 to the element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Accumulate,
    GetAccumulate,
    FetchAndOp,
    FetchAdd,
    CasLoop,
}

const KINDS: [Kind; 5] =
    [Kind::Accumulate, Kind::GetAccumulate, Kind::FetchAndOp, Kind::FetchAdd, Kind::CasLoop];

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Race {
    strategy: AccStrategy,
    iters: u64,
}

/// One increment of element `index` of rank 0's part; the value it replaced, if the
/// call returns one. `guess` carries the CAS loop's last observed value.
fn increment(
    win: &Window<'_, u64>,
    kind: Kind,
    index: usize,
    guess: &mut u64,
) -> Result<Option<u64>, String> {
    Ok(match kind {
        Kind::Accumulate => {
            win.accumulate(0, index, &[1], Op::Sum).s()?;
            None
        }
        Kind::GetAccumulate => {
            let mut old = [0u64];
            win.get_accumulate(0, index, &[1], &mut old, Op::Sum).s()?;
            Some(old[0])
        }
        Kind::FetchAndOp => Some(win.fetch_and_op(0, index, 1, Op::Sum).s()?),
        Kind::FetchAdd => Some(win.fetch_add(0, index, 1u64).s()?),
        Kind::CasLoop => loop {
            let seen = win.compare_and_swap(0, index, *guess, *guess + 1).s()?;
            if seen == *guess {
                *guess += 1;
                break Some(seen);
            }
            *guess = seen;
        },
    })
}

/// Every pair of kinds (a kind with itself too): even ranks run the first, odd ranks
/// the second, `iters` increments each on the pair's own element of rank 0. Returns,
/// per pair, the values this rank's fetching calls returned.
fn race(core: &Core, race: Race) -> Result<Vec<Vec<u64>>, String> {
    let pairs: Vec<(Kind, Kind)> =
        KINDS.iter().enumerate().flat_map(|(i, &a)| KINDS[i..].iter().map(move |&b| (a, b))).collect();
    let me = core.rank();
    let len = if me == 0 { pairs.len() * 2 } else { 0 };
    let win = core.window_with::<u64>(len, Placement::Dram, race.strategy).s()?;
    let epoch = win.lock_all().s()?;
    let mut fetched = Vec::new();
    for (p, &(a, b)) in pairs.iter().enumerate() {
        // Odd elements, so that a 4-byte granularity still covers the element in one
        // stripe while its neighbours sit under others.
        let index = 2 * p + 1;
        let kind = if me % 2 == 0 { a } else { b };
        let mut seen = Vec::new();
        let mut guess = 0;
        core.barrier().s()?;
        for _ in 0..race.iters {
            if let Some(old) = increment(&win, kind, index, &mut guess)? {
                seen.push(old);
            }
        }
        epoch.flush_all().s()?;
        core.barrier().s()?;
        if me == 0 {
            let got = win.local().get(index).s()?;
            let want = race.iters * u64::from(core.size());
            check(got == want, || format!("{:?}, {a:?} against {b:?}: {got}, want {want}", race.strategy))?;
        }
        fetched.push(seen);
    }
    epoch.unlock_all().s()?;
    win.free().s()?;
    Ok(fetched)
}

fn run(strategy: AccStrategy, iters: u64) {
    let out = Job::new(4).run(&Race { strategy, iters }, race).unwrap();
    for p in 0..out[0].len() {
        let all: Vec<u64> = out.iter().flat_map(|per_rank| per_rank[p].iter().copied()).collect();
        let distinct: BTreeSet<u64> = all.iter().copied().collect();
        assert_eq!(distinct.len(), all.len(), "{strategy:?}, pair {p}: two increments saw the same value");
    }
}

#[test]
fn atomic_strategy_pairs_are_atomic() {
    run(STRATEGIES[0], 3000);
}

#[test]
fn caller_computes_pairs_are_atomic() {
    run(STRATEGIES[1], 3000);
}

#[test]
fn caller_computes_whole_part_pairs_are_atomic() {
    run(STRATEGIES[2], 3000);
}

#[test]
fn caller_computes_element_granules_pairs_are_atomic() {
    run(STRATEGIES[3], 3000);
}

#[test]
fn owner_computes_pairs_are_atomic() {
    run(STRATEGIES[4], 3000);
}

/// One origin's accumulate, then its ARMW on the same element, apply in issue order
/// under every strategy: owner-computes accumulates return before their agent applies
/// them, so the ARMW must wait for them. Each origin works on its own element.
fn issue_order(core: &Core, iters: u64) -> Result<(), String> {
    let me = core.rank() as usize;
    let n = core.size() as usize;
    for strategy in STRATEGIES {
        let win = core.window_with::<u64>(if me == 0 { n } else { 0 }, Placement::Dram, strategy).s()?;
        let epoch = win.lock_all().s()?;
        for r in 1..=iters {
            win.accumulate(0, me, &[r * 10], Op::Replace).s()?;
            let seen = win.fetch_add(0, me, 1u64).s()?;
            check(seen == r * 10, || {
                format!("{strategy:?}: fetch_add saw {seen} before the replace by {}", r * 10)
            })?;
            win.accumulate(0, me, &[5], Op::Sum).s()?;
            let seen = win.compare_and_swap(0, me, r * 10 + 6, 0u64).s()?;
            check(seen == r * 10 + 6, || {
                format!("{strategy:?}: compare_and_swap saw {seen}, want {}", r * 10 + 6)
            })?;
            win.accumulate(0, me, &[7], Op::Sum).s()?;
            let seen = win.load::<u64>(0, me).s()?;
            check(seen == 7, || format!("{strategy:?}: load saw {seen}, want 7"))?;
        }
        epoch.unlock_all().s()?;
        win.free().s()?;
    }
    Ok(())
}

#[test]
fn an_origins_accumulates_and_armw_apply_in_issue_order() {
    Job::new(3).run(&300, issue_order).unwrap();
}

/// An ARMW wider than a stripe's granule (a u64 over two u32 elements of a window
/// striped every 4 bytes) holds both stripes while bulk accumulates over the whole part
/// take them one at a time: no deadlock, and no update lost on either element.
fn wide_armw(core: &Core, iters: u64) -> Result<(), String> {
    const LEN: usize = 64;
    let me = core.rank();
    let n = u64::from(core.size());
    let strategy = AccStrategy::CallerComputes { granularity: 4 };
    let win = core.window_with::<u32>(if me == 0 { LEN } else { 0 }, Placement::Dram, strategy).s()?;
    let epoch = win.lock_all().s()?;
    for i in 0..iters {
        if me % 2 == 0 {
            // Adds 1 to the low u32 (little-endian) of each pair (2k, 2k + 1).
            let k = (i as usize * 2) % LEN;
            win.fetch_add(0, k, 1u64).s()?;
        } else {
            win.accumulate(0, 0, &[1u32; LEN], Op::Sum).s()?;
        }
    }
    epoch.unlock_all().s()?;
    core.barrier().s()?;
    if me == 0 {
        let got = win.local().to_vec();
        let (armw, acc) = (n.div_ceil(2), n / 2);
        for (i, &v) in got.iter().enumerate() {
            let armw_here = if i % 2 == 0 { armw * (iters / (LEN as u64 / 2)) } else { 0 };
            let want = armw_here + acc * iters;
            check(u64::from(v) == want, || format!("element {i}: {v}, want {want}"))?;
        }
    }
    win.free().s()?;
    Ok(())
}

#[test]
fn an_armw_over_two_stripes_neither_deadlocks_nor_loses_updates() {
    Job::new(4).run(&3200, wide_armw).unwrap();
}
