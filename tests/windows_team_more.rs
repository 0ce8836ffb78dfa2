//! Windows over communicators, continued: every accumulate strategy on teams in world
//! and in reverse order (exact sums, distinct fetched values, staged owner-computes
//! requests), MPB placement from the job's MPB window pool (each part in its owner's
//! MPB, two teams at once, ranges returned; no pool is a typed error), checking mode
//! naming team ranks, and virtual time: a team's fence, a put's cost through the
//! target core's memory controller or MPB, and exact times whatever the wait policy.

use sccemu::job::vtime::VirtualTime;
use sccemu::timing::Chip;
use sccemu::{
    AccStrategy, Assert, Core, Group, Job, LockKind, Op, Placement, PoolError, SyncError, WaitPolicy,
    WindowError,
};

mod common;
use common::{OrString, bounded, check, halves};

const STRATEGIES: [AccStrategy; 4] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 64 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::OwnerComputes,
];

/// Under each strategy, on this core's half: every member adds (its world rank + 1)
/// into every member's elements under fence, a staged-size accumulate into team rank
/// 0, fetch-and-add on the last rank's counter under lock_all; returns the sums seen in
/// the own part, the staged block's sum, and the fetched values.
fn accumulates(core: &Core, rounds: u64) -> Result<Vec<(i64, i64, Vec<u64>)>, String> {
    const STAGED: usize = 9000; // 72 KB of i64: larger than a staging buffer
    bounded(core, || {
        let (world, team) = halves(core)?;
        let me = i64::from(core.rank());
        let mut out = Vec::new();
        for strategy in STRATEGIES {
            let win = team.window_with::<i64>(STAGED, Placement::Dram, strategy).s()?;
            let counter = team.window_with::<u64>(1, Placement::Dram, strategy).s()?;
            let n = win.size();
            win.fence_with(Assert::NOPRECEDE).s()?;
            for _ in 0..rounds {
                for t in 0..n {
                    win.accumulate(t, 0, &[me + 1; 16], Op::Sum).s()?;
                }
            }
            win.accumulate(0, 0, &vec![me + 1; STAGED], Op::Sum).s()?;
            win.fence().s()?;
            let mut old = [0i64; 16];
            win.get_accumulate(win.rank(), 0, &[0; 16], &mut old, Op::NoOp).s()?;
            check(old.iter().all(|v| *v == old[0]), || format!("{strategy:?}: {old:?}"))?;
            win.fence_with(Assert::NOSUCCEED).s()?;
            let all = counter.lock_all().s()?;
            let fetched = (0..rounds)
                .map(|_| all.fetch_and_op(n - 1, 0, 1, Op::Sum))
                .collect::<Result<Vec<_>, _>>()
                .s()?;
            all.unlock_all().s()?;
            team.barrier().s()?;
            let staged = win.shared_query(0).s()?.get(STAGED - 1).s()?;
            out.push((old[0], staged, fetched));
            counter.free().s()?;
            win.free().s()?;
        }
        team.free().s()?;
        world.free().s()?;
        Ok(out)
    })
}

#[test]
fn every_accumulate_strategy_on_two_teams_at_once() {
    let rounds = 10;
    let out = Job::new(5).run(&rounds, accumulates).unwrap();
    for half in [0usize, 1] {
        let team: Vec<i64> = (0..5).filter(|w| w % 2 == half as i64).collect();
        let weight: i64 = team.iter().map(|w| w + 1).sum();
        for (s, strategy) in STRATEGIES.iter().enumerate() {
            let mut fetched = Vec::new();
            for (r, w) in team.iter().map(|&w| w as usize).enumerate() {
                let (sum, staged, got) = &out[w][s];
                // The staged accumulate went to team rank 0: world rank 0, or 3 of [3, 1].
                let first = if half == 0 { r == 0 } else { r + 1 == team.len() };
                let want = rounds as i64 * weight + if first { weight } else { 0 };
                assert_eq!(*sum, want, "{strategy:?}: rank {w}");
                assert_eq!(*staged, weight, "{strategy:?}: rank {w}");
                fetched.extend(got.iter().copied());
            }
            fetched.sort_unstable();
            assert_eq!(fetched, (0..fetched.len() as u64).collect::<Vec<_>>(), "{strategy:?}");
        }
    }
}

/// MPB windows of both halves at once: each part lies in its owner's MPB, inside the
/// pool; the pool's ranges come back at free, so windows of half the pool each fit
/// again and again; a second reservation is refused.
fn mpb_windows(core: &Core, _: ()) -> Result<u32, String> {
    let free = core.mpb_largest_free();
    core.reserve_mpb_pool(free).s()?;
    let again = core.reserve_mpb_pool(64);
    check(again == Err(PoolError::Reserved { bytes: free }), || format!("{again:?}"))?;
    let pool = core.mpb_pool().ok_or("a pool")?;
    let (world, team) = halves(core)?;
    let magic = 0xC0DE_0000 + core.rank();
    let win = team.window::<u32>(16, Placement::Mpb).s()?;
    check(win.placement() == Placement::Mpb, || "placement".into())?;
    let (r, n) = (win.rank(), win.size());
    win.fence().s()?;
    win.put((r + 1) % n, 0, &[magic; 16]).s()?;
    win.fence().s()?;
    let left = team.members()[((r + n - 1) % n) as usize];
    check(win.local().to_vec() == vec![0xC0DE_0000 + left; 16], || "ring".into())?;
    // The part is in this core's own MPB, inside the pool.
    let mut mine = vec![0u8; pool.bytes()];
    core.mpb_get(core.rank(), pool.base(), &mut mine).s()?;
    let words: Vec<u32> = mine.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
    check(words.windows(16).any(|w| w == [0xC0DE_0000 + left; 16]), || "not in the own MPB".into())?;
    win.fence().s()?;
    win.free().s()?;
    // Both teams' small windows are back before either takes half the pool.
    world.barrier().s()?;
    let half = (pool.bytes() / 2) / 64 * 64;
    for _ in 0..3 {
        let big = team.window::<u8>(half, Placement::Mpb).s()?;
        big.fence().s()?;
        big.put((r + 1) % n, half - 1, &[7]).s()?;
        big.fence().s()?;
        check(big.local().get(half - 1).s()? == 7, || "last byte".into())?;
        big.free().s()?;
        world.barrier().s()?;
    }
    team.free().s()?;
    world.free().s()?;
    Ok(n)
}

#[test]
fn mpb_windows_on_teams_take_their_parts_from_the_pool() {
    assert_eq!(Job::new(5).run(&(), mpb_windows).unwrap(), vec![3, 2, 3, 2, 3]);
}

/// Without a pool, MPB placement on a team is refused on every member; the team goes on.
fn no_pool(core: &Core, _: ()) -> Result<(), String> {
    let (world, team) = halves(core)?;
    let refused = team.window::<u64>(4, Placement::Mpb);
    check(matches!(refused, Err(WindowError::NoMpbPool)), || format!("{:?}", refused.err()))?;
    let win = team.window::<u64>(4, Placement::Dram).s()?;
    win.fence().s()?;
    win.free().s()?;
    team.free().s()?;
    world.free().s()
}

#[test]
fn mpb_placement_on_a_team_needs_the_pool() {
    Job::new(3).run(&(), no_pool).unwrap();
}

/// Checking mode on both halves: a member passing another element type, then a fence
/// whose asserts differ, then a member fencing another window of the communicator, are
/// mismatches naming team ranks; the windows go on.
fn checking(core: &Core, _: ()) -> Result<(), String> {
    let (world, team) = halves(core)?;
    let (r, n) = (team.rank(), team.size());
    let mismatch = if r == 1 {
        team.window::<u32>(4, Placement::Dram).map(drop)
    } else {
        team.window::<u64>(4, Placement::Dram).map(drop)
    };
    let want = WindowError::Mismatch { what: "element size", ranks: vec![1] };
    check(mismatch.as_ref().err() == Some(&want), || format!("{mismatch:?}"))?;
    let win = team.window::<u64>(4, Placement::Dram).s()?;
    let asserts = if r == n - 1 { Assert::NOPRECEDE } else { Assert::NONE };
    let fenced = win.fence_with(asserts);
    let want = SyncError::Mismatch { what: "asserts", ranks: vec![n - 1] };
    check(fenced.as_ref().err() == Some(&want), || format!("{fenced:?}"))?;
    let other = team.window::<u64>(4, Placement::Dram).s()?;
    let fenced = if r == n - 1 { other.fence() } else { win.fence() };
    let want = SyncError::Mismatch { what: "window", ranks: vec![n - 1] };
    check(fenced.as_ref().err() == Some(&want), || format!("{fenced:?}"))?;
    win.fence().s()?;
    win.put((r + 1) % n, 0, &[1]).s()?;
    win.fence().s()?;
    other.free().s()?;
    win.free().s()?;
    team.free().s()?;
    world.free().s()
}

#[test]
fn checking_mode_names_team_ranks() {
    Job::new(5).check(true).run(&(), checking).unwrap();
}

/// The SCC, with compute not charged.
fn communication_only() -> VirtualTime {
    VirtualTime { chip: "[compute]\nsource = \"none\"\n".into(), trace: None }
}

fn ps(core: &Core) -> u64 {
    (core.wtime() * 1e12).round() as u64
}

/// On this core's half, team rank r puts r + 1 blocks before a fence.
fn team_fence(core: &Core, _: ()) -> Result<(u64, u64), String> {
    let (world, team) = halves(core)?;
    let win = team.window::<u64>(4096, Placement::Dram).s()?;
    let (r, n) = (win.rank(), win.size());
    win.fence().s()?;
    for _ in 0..=r {
        win.put((r + 1) % n, 0, &[7; 512]).s()?;
    }
    let before = ps(core);
    win.fence().s()?;
    let after = ps(core);
    win.free().s()?;
    team.free().s()?;
    world.free().s()?;
    Ok((before, after))
}

#[test]
fn a_team_fence_ends_every_member_at_the_latest_arrival() {
    let times = Job::new(6).timing(communication_only()).run(&(), team_fence).unwrap();
    let chip = Chip::default();
    let divider = chip.clocks.divider;
    let call = chip.core_ps(u64::from(chip.ops.call_core_cycles), divider);
    // Members arrive after the call and an atomic on the fence word, in DRAM near the
    // team's rank 0 (world rank 0 for the evens, 5 for the odds), and leave at the
    // team's latest arrival plus a read of that word.
    for (team, home) in [([0u32, 2, 4], 0u32), ([5, 3, 1], 5)] {
        let word =
            |w: u32| chip.dram_line_ps(chip.tile_of(w), chip.controller_of(chip.tile_of(home)), divider);
        let latest = team.iter().map(|&w| times[w as usize].0 + call + word(w)).max().unwrap();
        for &w in &team {
            assert_eq!(times[w as usize].1, latest + word(w), "rank {w}: {times:?}");
        }
    }
}

/// A team of world ranks 7 and 0, in that order: world rank 0 (team rank 1) puts
/// `bytes` into team rank 0's part; its clock around the put.
fn team_put(core: &Core, (placement, bytes): (Placement, usize)) -> Result<u64, String> {
    core.reserve_mpb_pool(core.mpb_largest_free()).s()?;
    let world = core.world().s()?;
    let me = core.rank();
    let pair = world.split([0, 7].contains(&me).then_some(0), -(me as i32)).s()?;
    let mut cost = 0;
    if let Some(pair) = pair {
        let win = pair.window::<u8>(bytes, placement).s()?;
        if pair.rank() == 1 {
            let all = win.lock_all().s()?;
            let before = ps(core);
            all.put(0, 0, &vec![1u8; bytes]).s()?;
            cost = ps(core) - before;
            all.unlock_all().s()?;
        }
        pair.barrier().s()?;
        win.free().s()?;
        pair.free().s()?;
    }
    world.free().s()?;
    Ok(cost)
}

#[test]
fn a_team_put_costs_its_lines_at_the_target_cores_distance() {
    let chip = Chip::default();
    let divider = chip.clocks.divider;
    let call = chip.core_ps(u64::from(chip.ops.call_core_cycles), divider);
    let (me, there) = (chip.tile_of(0), chip.tile_of(7));
    assert_ne!(chip.controller_of(me), chip.controller_of(there), "the test needs two controllers");
    for (placement, bytes) in [(Placement::Dram, 4096), (Placement::Mpb, 1024)] {
        let got = Job::new(8).timing(communication_only()).run(&(placement, bytes), team_put).unwrap()[0];
        let target = match placement {
            Placement::Dram => chip.dram_line_ps(me, chip.controller_of(there), divider),
            Placement::Mpb => chip.mpb_line_ps(me, there, divider),
        };
        let line = chip.private_line_ps(me, bytes, divider) + target;
        assert_eq!(got, call + chip.lines(bytes) * line, "{placement:?}");
    }
}

/// Every sync mode on this core's half, the clock read after each, from a start after
/// the communicators exist and a world barrier (a split's allgather picks its
/// algorithm by whether members share CPUs, which the wait policy decides: its time is
/// the host's, not the model's; the barrier's meeting evens that out).
fn exercise(core: &Core, _: ()) -> Result<Vec<u64>, String> {
    core.reserve_mpb_pool(core.mpb_largest_free()).s()?;
    let (world, team) = halves(core)?;
    world.barrier().s()?;
    let start = ps(core);
    let win = team.window::<u64>(1024, Placement::Dram).s()?;
    let mpb = team.window::<u32>(64, Placement::Mpb).s()?;
    let (r, n) = (win.rank(), win.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    let mut t = vec![ps(core)];
    win.fence().s()?;
    win.put(right, 0, &vec![u64::from(r); 128 * (r as usize + 1)]).s()?;
    win.fence().s()?;
    t.push(ps(core));
    win.post(&Group::single(left)).s()?;
    win.start(&Group::single(right)).s()?;
    win.put(right, 0, &[1, 2, 3]).s()?;
    win.complete().s()?;
    win.wait().s()?;
    t.push(ps(core));
    let own = win.lock(LockKind::Exclusive, r).s()?;
    own.put(r, 0, &[9; 64]).s()?;
    own.unlock().s()?;
    t.push(ps(core));
    mpb.fence().s()?;
    mpb.put(right, 0, &[r; 64]).s()?;
    mpb.fence().s()?;
    t.push(ps(core));
    mpb.free().s()?;
    win.free().s()?;
    team.free().s()?;
    world.free().s()?;
    Ok(t.iter().map(|t| t - start).collect())
}

#[test]
fn team_windows_in_virtual_time_are_exact_whatever_the_wait_policy() {
    let job = || Job::new(5).timing(communication_only());
    let reference = job().run(&(), exercise).unwrap();
    assert!(reference.iter().all(|t| t.windows(2).all(|w| w[0] < w[1])), "{reference:?}");
    for policy in [WaitPolicy::Spin, WaitPolicy::Block] {
        assert_eq!(job().wait(policy).run(&(), exercise).unwrap(), reference, "{policy:?}");
    }
}
