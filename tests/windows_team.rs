//! Windows over communicators (`Comm::window`) over real processes: teams of odd sizes,
//! in a permuted world order, two disjoint teams using their windows at the same time,
//! every synchronisation mode (fence, PSCW with wait and test, exclusive and shared
//! locks, lock_all with flush seen by a third member, a compare-and-swap mutex,
//! fetch-and-add counters, sync); windows over memory the members keep; typed errors
//! naming team ranks and the team's size; and the release of a window's memory by its
//! last member, freed or dropped. (Accumulate strategies, MPB placement, checking mode
//! and virtual time: `windows_team_more.rs`.)

use sccemu::protocol::payload::Payload;
use sccemu::{AccStrategy, Core, Group, Job, LockKind, Placement, RmaError, SyncError, Window, WindowError};

mod common;
use common::{OrString, bounded, check, halves};

/// What one member saw of every sync mode on its team's window.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Seen {
    /// World ranks of the team, by team rank (the window's members).
    members: Vec<u32>,
    /// Fence: the world rank its left neighbour put into its part.
    fence: u64,
    /// PSCW with wait, then with test: what its left neighbour put, each round.
    pscw: Vec<u64>,
    /// Exclusive-lock increments on team rank 0's word (rank 0 reports them).
    locked: u64,
    /// lock_all + flush: what the observer read after the flag.
    observed: u64,
    /// Fetch-and-add: the values this member got back.
    counted: Vec<u64>,
    /// The CAS mutex's counter (the last team rank's word), at the end.
    mutex: u64,
}

/// Word indexes in every part.
const FENCE: usize = 0;
const PSCW: usize = 1;
const LOCKED: usize = 2;
const PUT: usize = 3;
const FLAG: usize = 4;
const COUNTER: usize = 5;
const MUTEX: usize = 6;
const GUARDED: usize = 7;

/// Every sync mode, `rounds` times where it repeats, on the window of this core's half.
fn every_sync_mode(core: &Core, rounds: u64) -> Result<Seen, String> {
    bounded(core, || {
        let (world, team) = halves(core)?;
        let win = team.window::<u64>(8, Placement::Dram).s()?;
        let (r, n) = (win.rank(), win.size());
        check(r == team.rank() && n == team.size(), || format!("rank {r} of {n}"))?;
        check(win.members() == team.members(), || format!("members {:?}", win.members()))?;
        let (left, right) = ((r + n - 1) % n, (r + 1) % n);
        let me = u64::from(core.rank());

        win.fence().s()?;
        win.put(right, FENCE, &[me]).s()?;
        win.fence().s()?;
        let fence = win.local().get(FENCE).s()?;

        let mut pscw = Vec::new();
        for round in 0..2 {
            win.post(&Group::single(right)).s()?;
            win.start(&Group::single(left)).s()?;
            win.put(left, PSCW, &[me * 10 + round]).s()?;
            win.complete().s()?;
            if round == 0 {
                win.wait().s()?;
            } else {
                while !win.test().s()? {
                    std::thread::yield_now();
                }
            }
            pscw.push(win.local().get(PSCW).s()?);
        }

        for _ in 0..rounds {
            let epoch = win.lock(LockKind::Exclusive, 0).s()?;
            let mut v = [0u64];
            epoch.get(0, LOCKED, &mut v).s()?;
            std::thread::yield_now();
            epoch.put(0, LOCKED, &[v[0] + 1]).s()?;
            epoch.unlock().s()?;
            let shared = win.lock(LockKind::Shared, 0).s()?;
            shared.get(0, LOCKED, &mut v).s()?;
            drop(shared);
        }
        team.barrier().s()?;

        // Team rank 0 puts into rank 1's part, flushes, and raises rank 2's flag; rank 2
        // must then see the put.
        let all = win.lock_all().s()?;
        let mut observed = 0;
        if r == 0 {
            all.put(1, PUT, &[4242 + me]).s()?;
            all.flush(1).s()?;
            all.store::<u64>(2, FLAG, 1).s()?;
            all.flush_all().s()?;
        } else if r == 2 {
            while all.load::<u64>(2, FLAG).s()? == 0 {
                std::thread::yield_now();
            }
            let mut v = [0u64];
            all.get(1, PUT, &mut v).s()?;
            observed = v[0];
        }
        let counted =
            (0..rounds).map(|_| all.fetch_add(n - 1, COUNTER, 1u64)).collect::<Result<Vec<_>, _>>().s()?;
        for _ in 0..rounds {
            while all.compare_and_swap(n - 1, MUTEX, 0u64, me + 1).s()? != 0 {
                std::thread::yield_now();
            }
            let mut v = [0u64];
            all.get(n - 1, GUARDED, &mut v).s()?;
            all.put(n - 1, GUARDED, &[v[0] + 1]).s()?;
            all.flush(n - 1).s()?;
            let holder = all.swap(n - 1, MUTEX, 0u64).s()?;
            check(holder == me + 1, || format!("mutex held by {holder}"))?;
        }
        all.sync();
        all.unlock_all().s()?;
        team.barrier().s()?;
        let mutex = win.shared_query(n - 1).s()?.get(GUARDED).s()?;
        let locked = win.shared_query(0).s()?.get(LOCKED).s()?;
        win.free().s()?;
        let members = team.members().to_vec();
        team.free().s()?;
        world.free().s()?;
        Ok(Seen { members, fence, pscw, locked, observed, counted, mutex })
    })
}

/// Two disjoint teams at once (4 even cores, 3 odd ones in reverse order), each with
/// its own window.
#[test]
fn every_sync_mode_on_two_disjoint_teams_at_once() {
    let rounds = 40;
    let out = Job::new(7).run(&rounds, every_sync_mode).unwrap();
    for (world, seen) in out.iter().enumerate() {
        let team = &seen.members;
        let n = team.len();
        let r = team.iter().position(|&w| w == world as u32).expect("a member of its team");
        let left = u64::from(team[(r + n - 1) % n]);
        let right = u64::from(team[(r + 1) % n]);
        assert_eq!(*team, if world % 2 == 0 { vec![0, 2, 4, 6] } else { vec![5, 3, 1] });
        assert_eq!(seen.fence, left, "rank {world}");
        assert_eq!(seen.pscw, vec![right * 10, right * 10 + 1], "rank {world}");
        assert_eq!(seen.locked, rounds * n as u64, "rank {world}");
        assert_eq!(seen.observed, if r == 2 { 4242 + u64::from(team[0]) } else { 0 }, "rank {world}");
        assert_eq!(seen.mutex, rounds * n as u64, "rank {world}");
    }
    for half in [0, 1] {
        let mut counted: Vec<u64> = out
            .iter()
            .enumerate()
            .filter(|(w, _)| w % 2 == half)
            .flat_map(|(_, s)| s.counted.clone())
            .collect();
        counted.sort_unstable();
        assert_eq!(counted, (0..counted.len() as u64).collect::<Vec<_>>(), "half {half}");
    }
}

/// A window over memory each member keeps (`Comm::window_over`), on a team of 3 of 5
/// cores in a permuted order; the two others take no part at all.
fn over_kept_memory(core: &Core, _: ()) -> Result<Vec<u64>, String> {
    let world = core.world().s()?;
    let me = core.rank();
    // Members 4, 1, 2 (in that order); 0 and 3 join none.
    let colour = [None, Some(0), Some(0), None, Some(0)][me as usize];
    let key = [0, 1, 2, 0, 0][me as usize];
    let Some(team) = world.split(colour, key).s()? else {
        world.free().s()?;
        return Ok(Vec::new());
    };
    let r = team.rank();
    let part = core.heap_alloc_local(8 * (r as usize + 1) * 8).s()?;
    let bytes = core.heap_bytes(part);
    for i in 0..8 * (r as usize + 1) {
        bytes.write(i * 8, &(1000 * u64::from(me) + i as u64).to_le_bytes());
    }
    let win: Window<u64> = team.window_over(part, AccStrategy::Atomic).s()?;
    check(win.len() == 8 * (r as usize + 1), || format!("len {}", win.len()))?;
    win.fence().s()?;
    let mut got = Vec::new();
    for t in 0..win.size() {
        let mut v = [0u64; 2];
        win.get(t, 8 * t as usize + 1, &mut v).s()?;
        got.extend(v);
    }
    win.fence().s()?;
    win.free().s()?;
    core.heap_free_local(part).s()?;
    team.free().s()?;
    world.free().s()?;
    Ok(got)
}

#[test]
fn a_window_over_kept_memory_on_a_permuted_team() {
    let out = Job::new(5).run(&(), over_kept_memory).unwrap();
    let expect: Vec<u64> = [4u64, 1, 2]
        .iter()
        .enumerate()
        .flat_map(|(t, w)| [w * 1000 + 8 * t as u64 + 1, w * 1000 + 8 * t as u64 + 2])
        .collect();
    for (world, got) in out.iter().enumerate() {
        assert_eq!(
            *got,
            if [1, 2, 4].contains(&world) { expect.clone() } else { Vec::new() },
            "rank {world}"
        );
    }
}

/// Bad ranks on a team of 3 give typed errors naming the team rank and size; freeing
/// with an epoch open names the member's team rank.
fn typed_errors(core: &Core, _: ()) -> Result<usize, String> {
    let world = core.world().s()?;
    let me = core.rank();
    let Some(team) = world.split((me != 0).then_some(0), -(me as i32)).s()? else {
        world.free().s()?;
        return Ok(0);
    };
    let win = team.window::<u32>(4, Placement::Dram).s()?;
    let n = win.size();
    let mut errors = 0;
    let mut expect = |got: Result<(), String>, want: String| -> Result<(), String> {
        errors += 1;
        check(got.as_ref().err() == Some(&want), || format!("got {got:?}, want {want}"))
    };
    let out = RmaError::RankOutOfRange { rank: n, size: n };
    check(out.to_string() == format!("rank {n} is not a rank of this window of {n} ranks"), || {
        out.to_string()
    })?;
    let all = win.lock_all().s()?;
    expect(all.put(n, 0, &[1]).s(), out.to_string())?;
    expect(
        all.fetch_add(n + 5, 0, 1u32).map(drop).s(),
        RmaError::RankOutOfRange { rank: n + 5, size: n }.to_string(),
    )?;
    expect(win.len_of(n).map(drop).s(), out.to_string())?;
    expect(win.shared_query(n).map(drop).s(), out.to_string())?;
    expect(all.flush(n).s(), SyncError::RankOutOfRange { rank: n, size: n }.to_string())?;
    drop(all);
    expect(
        win.lock(LockKind::Shared, n).map(drop).s(),
        SyncError::RankOutOfRange { rank: n, size: n }.to_string(),
    )?;
    expect(win.post(&Group::single(n)).s(), SyncError::RankOutOfRange { rank: n, size: n }.to_string())?;
    expect(
        win.start(&Group::from(vec![0, n])).s(),
        SyncError::RankOutOfRange { rank: n, size: n }.to_string(),
    )?;
    team.barrier().s()?;
    // Team rank 1 (world rank 3 of 4, the members in reverse) keeps an epoch open.
    let held = if win.rank() == 1 { Some(win.lock(LockKind::Shared, 0).s()?) } else { None };
    team.barrier().s()?;
    std::mem::forget(held);
    let refused = WindowError::EpochOpen { rank: 1 }.to_string();
    expect(win.free().s(), refused)?;
    team.free().s()?;
    world.free().s()?;
    Ok(errors)
}

#[test]
fn bad_ranks_name_the_team_rank_and_size() {
    let out = Job::new(4).run(&(), typed_errors).unwrap();
    assert_eq!(out, vec![0, 9, 9, 9]);
}

/// Heap bytes free on this core's view, after a barrier of the whole job.
fn free_after_barrier(core: &Core) -> Result<usize, String> {
    core.barrier().s()?;
    let free = core.heap_free_bytes().s()?;
    core.barrier().s()?;
    Ok(free)
}

/// Windows over both halves, released every way: freed, dropped by every member,
/// dropped after a refused free, with every accumulate strategy's block; the heap
/// returns to what it was.
fn released(core: &Core, _: ()) -> Result<(usize, usize), String> {
    let (world, team) = halves(core)?;
    let before = free_after_barrier(core)?;
    let strategies =
        [AccStrategy::Atomic, AccStrategy::CallerComputes { granularity: 64 }, AccStrategy::OwnerComputes];
    for strategy in strategies {
        let freed = team.window_with::<u64>(1000, Placement::Dram, strategy).s()?;
        let dropped = team.window_with::<u64>(300, Placement::Dram, strategy).s()?;
        freed.free().s()?;
        drop(dropped);
        let refused = team.window_with::<u8>(10, Placement::Dram, strategy).s()?;
        refused.post(&Group::empty()).s()?;
        check(matches!(refused.free(), Err(WindowError::EpochOpen { rank: 0 })), || "free refused".into())?;
    }
    let after = free_after_barrier(core)?;
    team.free().s()?;
    world.free().s()?;
    Ok((before, after))
}

#[test]
fn a_teams_window_memory_returns_when_its_last_member_lets_go() {
    for (before, after) in Job::new(5).run(&(), released).unwrap() {
        assert_eq!(before, after);
    }
}

/// A window outlives its communicator: after creation it needs nothing of it.
fn outlives_its_communicator(core: &Core, _: ()) -> Result<u64, String> {
    let (world, team) = halves(core)?;
    let win = team.window_with::<u64>(2, Placement::Dram, AccStrategy::OwnerComputes).s()?;
    let members = team.members().to_vec();
    team.free().s()?;
    world.free().s()?;
    let (r, n) = (win.rank(), win.size());
    win.fence().s()?;
    win.put((r + 1) % n, 0, &[u64::from(core.rank())]).s()?;
    win.accumulate(0, 1, &[1], sccemu::Op::Sum).s()?;
    win.fence().s()?;
    let left = win.local().get(0).s()?;
    check(left == u64::from(members[((r + n - 1) % n) as usize]), || format!("left {left}"))?;
    let count = win.local().get(1).s()?;
    win.free().s()?;
    Ok(count)
}

#[test]
fn a_window_outlives_its_communicator() {
    assert_eq!(Job::new(5).run(&(), outlives_its_communicator).unwrap(), vec![3, 0, 0, 2, 0]);
}

/// In checking mode the windows of a communicator share a check area, which goes back
/// to the heap once the communicator and every window are gone, in any order.
fn checked_release(core: &Core, _: ()) -> Result<(usize, usize), String> {
    let world = core.world().s()?;
    let me = core.rank();
    // A first split makes the world communicator's staging, which stays.
    drop(world.split(Some(me % 2), 0).s()?);
    let before = free_after_barrier(core)?;
    let team = world.split(Some(me % 2), me as i32).s()?.ok_or("every core has a colour")?;
    let a = team.window::<u64>(8, Placement::Dram).s()?;
    let b = team.window::<u64>(8, Placement::Dram).s()?;
    drop(team);
    a.fence().s()?;
    b.fence().s()?;
    a.free().s()?;
    drop(b);
    let after = free_after_barrier(core)?;
    world.free().s()?;
    Ok((before, after))
}

#[test]
fn the_check_area_returns_when_the_communicator_and_its_windows_are_gone() {
    for (before, after) in Job::new(5).check(true).run(&(), checked_release).unwrap() {
        assert_eq!(before, after);
    }
}
