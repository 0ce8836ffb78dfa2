//! Conformance of one-sided windows over real processes, modelled on MPICH's RMA tests:
//! lock contention, fetch-and-add counters, accumulate under fence, put under PSCW,
//! lock_all + flush seen by a third core, a compare-and-swap mutex, and visibility
//! after store/sync/barrier/sync; plus typed errors for bad input and epoch misuse.
//! (Placement, sizes, strides, fetch_and_op, user types and failure: `windows_api.rs`.)

use std::collections::BTreeSet;

use sccemu::{Assert, Core, Group, Job, LockKind, Placement, RmaError, SyncError, Vector, WindowError};

mod common;
use common::{OrString, check};

/// Three cores race exclusive-lock read-modify-write cycles on a pair of words of rank
/// 0, each word written by its own put; a shared-lock reader checks the pair is never
/// torn. Every increment must survive.
fn lock_contention(core: &Core, rounds: u64) -> Result<[u64; 2], String> {
    let win = core.window::<u64>(if core.rank() == 0 { 2 } else { 0 }, Placement::Dram).s()?;
    for _ in 0..rounds {
        {
            let epoch = win.lock(LockKind::Exclusive, 0).s()?;
            let mut pair = [0u64; 2];
            epoch.get(0, 0, &mut pair).s()?;
            check(pair[0] == pair[1], || format!("torn pair under exclusive lock: {pair:?}"))?;
            epoch.put(0, 0, &[pair[0] + 1]).s()?;
            std::thread::yield_now();
            epoch.put(0, 1, &[pair[1] + 1]).s()?;
            epoch.unlock().s()?;
        }
        let epoch = win.lock(LockKind::Shared, 0).s()?;
        let mut pair = [0u64; 2];
        epoch.get(0, 0, &mut pair).s()?;
        check(pair[0] == pair[1], || format!("torn pair under shared lock: {pair:?}"))?;
        drop(epoch);
    }
    core.barrier().s()?;
    let mut pair = [0u64; 2];
    let all = win.lock_all().s()?;
    all.get(0, 0, &mut pair).s()?;
    drop(all);
    win.free().s()?;
    Ok(pair)
}

#[test]
fn lock_contention_3_cores() {
    let out = Job::new(3).run(&200, lock_contention).unwrap();
    assert!(out.iter().all(|p| *p == [600, 600]), "{out:?}");
}

/// Seven cores fetch-and-add one counter of rank 3; every value must be returned to
/// exactly one increment.
fn fetch_add_counter(core: &Core, per_core: u64) -> Result<Vec<u64>, String> {
    let win = core.window::<u64>(1, Placement::Dram).s()?;
    let all = win.lock_all().s()?;
    let seen = (0..per_core).map(|_| all.fetch_add(3, 0, 1u64)).collect::<Result<Vec<_>, _>>().s()?;
    all.unlock_all().s()?;
    core.barrier().s()?;
    win.free().s()?;
    Ok(seen)
}

#[test]
fn fetch_add_counter_7_cores_sees_every_increment_once() {
    let per_core = 300;
    let out = Job::new(7).run(&per_core, fetch_add_counter).unwrap();
    let all: Vec<u64> = out.into_iter().flatten().collect();
    let distinct: BTreeSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), 7 * per_core as usize);
    assert_eq!(distinct, (0..7 * per_core).collect::<BTreeSet<_>>());
}

/// Every core adds into every core's elements under fence: integer, f64 and f32 sums.
fn accumulate_under_fence(core: &Core, rounds: u32) -> Result<(i64, f64, f32), String> {
    let win = core.window::<u64>(3, Placement::Dram).s()?;
    let n = core.size();
    let me = core.rank() as i64;
    win.fence_with(Assert::NOPRECEDE).s()?;
    for _ in 0..rounds {
        for t in 0..n {
            win.fetch_add(t, 0, me + 1).s()?;
            win.fetch_add(t, 1, 0.5f64).s()?;
        }
        win.fence().s()?;
    }
    for t in 0..n {
        // f32 in a u64 window: the low half of element 2 (4-byte aligned).
        win.fetch_add(t, 2, 0.25f32).s()?;
    }
    win.fence_with(Assert::NOSUCCEED).s()?;
    let l = win.local();
    let bits = l.get(2).s()?;
    let out = (l.get(0).s()? as i64, f64::from_bits(l.get(1).s()?), f32::from_bits(bits as u32));
    check(win.fetch_add(0, 0, 1i64) == Err(RmaError::NoEpoch { rank: 0 }), || "op after NOSUCCEED".into())?;
    win.free().s()?;
    Ok(out)
}

#[test]
fn accumulate_under_fence_5_cores() {
    let n = 5i64;
    let rounds = 20;
    let out = Job::new(n as u32).run(&rounds, accumulate_under_fence).unwrap();
    let expect = (rounds as i64 * n * (n + 1) / 2, rounds as f64 * n as f64 * 0.5, n as f32 * 0.25);
    assert!(out.iter().all(|o| *o == expect), "{out:?} != {expect:?}");
}

/// A ring under PSCW: each core exposes itself to its left neighbour and accesses its
/// right one, putting a round-tagged value (a put to a core outside the access group is
/// refused); then pairs of cores, with `test` polling instead of `wait`; then an epoch
/// with NOCHECK.
fn put_under_pscw(core: &Core, rounds: u32) -> Result<u32, String> {
    let n = core.size();
    let me = core.rank();
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    let win = core.window::<u32>(2, Placement::Mpb).s()?;
    for round in 1..=rounds {
        win.post(&Group::single(left)).s()?;
        win.start(&Group::single(right)).s()?;
        win.put(right, 0, &[round, me]).s()?;
        // The target is not in our access group: refused.
        if n > 2 {
            let other = (me + 2) % n;
            check(win.put(other, 0, &[0]) == Err(RmaError::NoEpoch { rank: other }), || {
                "outside group".into()
            })?;
        }
        win.complete().s()?;
        win.wait().s()?;
        let got = win.local().to_vec();
        check(got == [round, left], || format!("round {round}: {got:?}"))?;
    }
    // Pairs (0,1), (2,3)... with test() polling instead of wait.
    let partner = me ^ 1;
    if partner < n {
        win.post(&Group::single(partner)).s()?;
        win.start(&Group::single(partner)).s()?;
        win.fetch_add(partner, 1, 100u32).s()?;
        win.complete().s()?;
        while !win.test().s()? {
            std::thread::yield_now();
        }
        let got = win.local().get(1).s()?;
        check(got == left + 100, || format!("test(): {got}"))?;
    }
    // NOCHECK: the barrier guarantees every post happened, so start skips the handshake.
    win.post_with(&Group::single(left), Assert::NOCHECK).s()?;
    core.barrier().s()?;
    win.start_with(&Group::single(right), Assert::NOCHECK).s()?;
    win.put(right, 0, &[999]).s()?;
    win.complete().s()?;
    win.wait().s()?;
    check(win.local().get(0).s()? == 999, || "NOCHECK epoch lost the put".into())?;
    core.barrier().s()?;
    win.free().s()?;
    Ok(rounds)
}

#[test]
fn put_under_pscw_ring_of_6() {
    assert_eq!(Job::new(6).run(&50, put_under_pscw).unwrap(), vec![50; 6]);
}

/// Rank 0 puts into rank 1 under lock_all, flushes, and tells rank 2 through an atomic
/// flag in rank 2's part; rank 2 then reads rank 1's part and must see the data.
fn lock_all_flush_third_party(core: &Core, rounds: u64) -> Result<u64, String> {
    let win = core.window::<u64>(64, Placement::Dram).s()?;
    let epoch = win.lock_all().s()?;
    for round in 1..=rounds {
        match core.rank() {
            0 => {
                let data: Vec<u64> = (0..63).map(|i| round * 1000 + i).collect();
                epoch.put(1, 1, &data).s()?;
                epoch.flush(1).s()?;
                epoch.atomic_store(2, 0, round).s()?;
                while epoch.atomic_load::<u64>(0, 0).s()? != round {
                    std::thread::yield_now();
                }
            }
            2 => {
                while epoch.atomic_load::<u64>(2, 0).s()? != round {
                    std::thread::yield_now();
                }
                let mut got = vec![0u64; 63];
                epoch.get(1, 1, &mut got).s()?;
                let want: Vec<u64> = (0..63).map(|i| round * 1000 + i).collect();
                check(got == want, || format!("round {round}: rank 1 shows {:?}", &got[..3]))?;
                epoch.atomic_store(0, 0, round).s()?;
            }
            _ => {}
        }
    }
    epoch.unlock_all().s()?;
    core.barrier().s()?;
    win.free().s()?;
    Ok(rounds)
}

#[test]
fn lock_all_flush_is_seen_by_a_third_core() {
    assert_eq!(Job::new(3).run(&200, lock_all_flush_third_party).unwrap(), vec![200; 3]);
}

/// A mutex made of compare-and-swap on rank 0's word 0 protects a plain read-modify-
/// write of word 1 (get, then put): every increment must survive.
fn cas_mutex(core: &Core, rounds: u64) -> Result<u64, String> {
    let win = core.window::<u64>(if core.rank() == 0 { 2 } else { 0 }, Placement::Dram).s()?;
    let me = core.rank() as u64 + 1;
    let epoch = win.lock_all().s()?;
    for _ in 0..rounds {
        while epoch.compare_and_swap(0, 0, 0u64, me).s()? != 0 {
            std::thread::yield_now();
        }
        let mut v = [0u64];
        epoch.get(0, 1, &mut v).s()?;
        epoch.put(0, 1, &[v[0] + 1]).s()?;
        let owner = epoch.swap(0, 0, 0u64).s()?;
        check(owner == me, || format!("mutex held by {owner}, not {me}"))?;
    }
    core.barrier().s()?;
    let mut v = [0u64];
    epoch.get(0, 1, &mut v).s()?;
    drop(epoch);
    win.free().s()?;
    Ok(v[0])
}

#[test]
fn cas_mutex_8_cores() {
    assert_eq!(Job::new(8).run(&100, cas_mutex).unwrap(), vec![800; 8]);
}

/// Store to the local part, sync, barrier, sync: every other core then sees the value.
fn visibility_after_sync(core: &Core, rounds: u32) -> Result<u32, String> {
    let n = core.size();
    let win = core.window::<u32>(1, Placement::Mpb).s()?;
    let all = win.lock_all().s()?;
    for round in 1..=rounds {
        all.local().set(0, round * 100 + core.rank()).s()?;
        all.sync();
        core.barrier().s()?;
        all.sync();
        for t in 0..n {
            let mut v = [0u32];
            all.get(t, 0, &mut v).s()?;
            check(v[0] == round * 100 + t, || format!("round {round}: rank {t} shows {}", v[0]))?;
        }
        core.barrier().s()?;
    }
    drop(all);
    win.free().s()?;
    Ok(rounds)
}

#[test]
fn window_visibility_after_store_sync_barrier_sync() {
    assert_eq!(Job::new(4).run(&50, visibility_after_sync).unwrap(), vec![50; 4]);
}

/// Bad input and epoch misuse: each is a typed error, and the window works afterwards.
fn typed_errors(core: &Core, _: ()) -> Result<usize, String> {
    let n = core.size();
    let win = core.window::<u32>(8, Placement::Dram).s()?;
    let mut errors = 0;
    let mut expect = |got: Result<(), String>, want: String| -> Result<(), String> {
        errors += 1;
        check(got.as_ref().err() == Some(&want), || format!("got {got:?}, want {want}"))
    };
    // Outside any epoch.
    expect(win.put(1, 0, &[1]).s(), RmaError::NoEpoch { rank: 1 }.to_string())?;
    expect(win.fetch_add(1, 0, 1u32).map(drop).s(), RmaError::NoEpoch { rank: 1 }.to_string())?;
    expect(win.unlock(1).s(), SyncError::NotLocked { rank: 1 }.to_string())?;
    expect(win.unlock_all().s(), SyncError::NotLockedAll.to_string())?;
    expect(win.complete().s(), SyncError::NoAccessEpoch.to_string())?;
    expect(win.wait().s(), SyncError::NoExposureEpoch.to_string())?;
    expect(win.flush(0).s(), SyncError::NotLocked { rank: 0 }.to_string())?;
    // Inside a lock epoch.
    let epoch = win.lock(LockKind::Exclusive, 1).s()?;
    expect(epoch.put(n, 0, &[1]).s(), RmaError::RankOutOfRange { rank: n, size: n }.to_string())?;
    expect(
        epoch.put(1, 6, &[1, 2, 3]).s(),
        RmaError::OutOfBounds { rank: 1, index: 6, len: 3, part_len: 8 }.to_string(),
    )?;
    expect(
        epoch.fetch_add(1, 1, 1u64).map(drop).s(),
        RmaError::Misaligned { rank: 1, byte_offset: 4, width: 8 }.to_string(),
    )?;
    expect(
        epoch.fetch_add(1, 7, 1u64).map(drop).s(),
        RmaError::OutOfBounds { rank: 1, index: 7, len: 1, part_len: 8 }.to_string(),
    )?;
    expect(
        epoch.put_strided(1, 0, Vector { count: 2, block_len: 2, stride: 4 }, &[1, 2, 3]).s(),
        RmaError::LengthMismatch { expected: 4, found: 3 }.to_string(),
    )?;
    expect(epoch.rput(0, 0, &[1]).map(drop).s(), RmaError::NotPassive { rank: 0 }.to_string())?;
    expect(win.lock(LockKind::Shared, 1).map(drop).s(), SyncError::AlreadyLocked { rank: 1 }.to_string())?;
    expect(win.lock_all().map(drop).s(), SyncError::LockAllConflict.to_string())?;
    expect(win.fence().s(), SyncError::OtherEpochOpen.to_string())?;
    // Still usable: these work.
    epoch.rput(1, 0, &[5]).s()?.wait().s()?;
    let mut v = [0u32];
    epoch.rget(1, 0, &mut v).s()?.wait().s()?;
    epoch.unlock().s()?;
    expect(win.unlock(1).s(), SyncError::NotLocked { rank: 1 }.to_string())?;
    // A raw unlock ends the epoch; the guard then does nothing.
    let epoch = win.lock(LockKind::Shared, 0).s()?;
    win.unlock(0).s()?;
    drop(epoch);
    // Fence asserts.
    win.fence().s()?;
    win.put(0, 0, &[1]).s()?;
    expect(
        win.fence_with(Assert::NOPRECEDE).s(),
        SyncError::Assert(sccemu::protocol::fence::AssertError::PrecedingOps).to_string(),
    )?;
    win.fence_with(Assert::NOSUCCEED).s()?;
    expect(win.put(0, 0, &[1]).s(), RmaError::NoEpoch { rank: 0 }.to_string())?;
    // PSCW misuse.
    win.post(&Group::empty()).s()?;
    expect(win.post(&Group::empty()).s(), SyncError::ExposureEpochOpen.to_string())?;
    expect(win.start(&Group::single(n)).s(), SyncError::RankOutOfRange { rank: n, size: n }.to_string())?;
    win.wait().s()?;
    core.barrier().s()?;
    win.free().s()?;
    // Freeing with an epoch open is refused (the window is then leaked).
    let w2 = core.window::<u8>(1, Placement::Dram).s()?;
    w2.post(&Group::empty()).s()?;
    expect(w2.free().s(), WindowError::EpochOpen { rank: 0 }.to_string())?;
    core.barrier().s()?;
    Ok(errors)
}

#[test]
fn misuse_gets_typed_errors_and_the_window_goes_on() {
    let out = Job::new(2).run(&(), typed_errors).unwrap();
    assert!(out.iter().all(|&e| e >= 20), "{out:?}");
}
