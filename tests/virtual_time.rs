//! The Rust API in virtual time (`Job::timing`), checked against the model itself:
//! a communication-only program gives the same virtual times to the picosecond
//! whatever the wait policy, the pinning or the host's load; a fence ends every core at
//! the latest arrival, as the model's meeting says; a put costs its lines at the target's distance, as the chip
//! description says; a lock, a PSCW start and a message carry their writer's time to
//! whoever waits for them. Compute is not charged here (`compute.source = "none"`), so
//! every figure is exact.

use sccemu::core::pin::PinPolicy;
use sccemu::job::vtime::VirtualTime;
use sccemu::timing::Chip;
use sccemu::{Core, Group, Job, LockKind, Op, Placement, WaitPolicy};
use sccemu_benches::hog::Hog;

/// The SCC, with compute not charged.
fn communication_only() -> VirtualTime {
    VirtualTime { chip: "[compute]\nsource = \"none\"\n".into(), trace: None }
}

fn ps(core: &Core) -> u64 {
    (core.wtime() * 1e12).round() as u64
}

fn s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Every kind of synchronisation and transfer, with the clock read after each.
fn exercise(core: &Core, _: ()) -> Result<Vec<u64>, String> {
    let (n, me) = (core.size(), core.rank());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut t = Vec::new();
    for _ in 0..3 {
        core.barrier().map_err(s)?;
    }
    t.push(ps(core));
    let world = core.world().map_err(s)?;
    let mut sum = [0u64];
    world.allreduce(&[u64::from(me)], &mut sum, Op::Sum).map_err(s)?;
    world.barrier().map_err(s)?;
    t.push(ps(core));
    for len in [8, 100_000] {
        let data = vec![me as u8; len];
        let mut buf = vec![0u8; len];
        let sent = core.isend(right, 7, &data).map_err(s)?;
        core.recv(left, 7, &mut buf).map_err(s)?;
        sent.wait().map_err(s)?;
        t.push(ps(core));
    }
    let win = core.window::<u64>(1024, Placement::Dram).map_err(s)?;
    win.fence().map_err(s)?;
    win.put(right, 0, &vec![u64::from(me); 128 * (me as usize + 1)]).map_err(s)?;
    win.fence().map_err(s)?;
    t.push(ps(core));
    win.post(&Group::from(vec![left])).map_err(s)?;
    win.start(&Group::from(vec![right])).map_err(s)?;
    win.put(right, 0, &[1, 2, 3]).map_err(s)?;
    win.complete().map_err(s)?;
    win.wait().map_err(s)?;
    t.push(ps(core));
    let own = win.lock(LockKind::Exclusive, me).map_err(s)?;
    own.put(me, 0, &[9; 64]).map_err(s)?;
    own.unlock().map_err(s)?;
    t.push(ps(core));
    win.free().map_err(s)?;
    let mpb = core.window::<u32>(64, Placement::Mpb).map_err(s)?;
    mpb.fence().map_err(s)?;
    mpb.put(right, 0, &[me; 64]).map_err(s)?;
    mpb.fence().map_err(s)?;
    t.push(ps(core));
    mpb.free().map_err(s)?;
    world.free().map_err(s)?;
    Ok(t)
}

#[test]
fn communication_is_exact_whatever_the_host_does() {
    for n in [3, 4] {
        let job = || Job::new(n).timing(communication_only());
        let reference = job().run(&(), exercise).unwrap();
        assert!(reference.iter().all(|t| t.windows(2).all(|w| w[0] <= w[1])), "{reference:?}");
        for policy in [WaitPolicy::Spin, WaitPolicy::Block] {
            assert_eq!(job().wait(policy).run(&(), exercise).unwrap(), reference, "{n} cores, {policy:?}");
        }
        assert_eq!(job().pin(PinPolicy::None).run(&(), exercise).unwrap(), reference, "{n} cores, unpinned");
        let _hog = Hog::start();
        assert_eq!(job().run(&(), exercise).unwrap(), reference, "{n} cores beside a CPU hog");
    }
}

/// Rank r puts r + 1 blocks before a fence; the fence's meeting ends everyone at once.
fn fence_after_uneven_work(core: &Core, _: ()) -> Result<(u64, u64), String> {
    let me = core.rank();
    let win = core.window::<u64>(4096, Placement::Dram).map_err(s)?;
    win.fence().map_err(s)?;
    for _ in 0..=me {
        win.put((me + 1) % core.size(), 0, &[7; 512]).map_err(s)?;
    }
    let before = ps(core);
    win.fence().map_err(s)?;
    let after = ps(core);
    win.free().map_err(s)?;
    Ok((before, after))
}

#[test]
fn a_fence_ends_every_core_at_the_latest_arrival() {
    let times = Job::new(5).timing(communication_only()).run(&(), fence_after_uneven_work).unwrap();
    assert!(times[4].0 > times[0].0, "more puts take longer: {times:?}");
    // Each core arrives after the call and an atomic on the fence's word (in DRAM
    // through the controller nearest rank 0), and leaves at the latest arrival plus a
    // read of that word.
    let chip = Chip::default();
    let divider = chip.clocks.divider;
    let call = chip.core_ps(u64::from(chip.ops.call_core_cycles), divider);
    let word =
        |rank: u32| chip.dram_line_ps(chip.tile_of(rank), chip.controller_of(chip.tile_of(0)), divider);
    let latest = (0..5).map(|r| times[r as usize].0 + call + word(r)).max().unwrap();
    for (rank, t) in times.iter().enumerate() {
        assert_eq!(t.1, latest + word(rank as u32), "rank {rank}: {times:?}");
    }
}

/// Rank 0 puts `bytes` into rank `target`'s part inside lock_all; its clock around it.
fn timed_put(core: &Core, (target, bytes): (u32, usize)) -> Result<u64, String> {
    let win = core.window::<u8>(1 << 16, Placement::Dram).map_err(s)?;
    let mut cost = 0;
    if core.rank() == 0 {
        let all = win.lock_all().map_err(s)?;
        let data = vec![1u8; bytes];
        let before = ps(core);
        all.put(target, 0, &data).map_err(s)?;
        cost = ps(core) - before;
        all.unlock_all().map_err(s)?;
    }
    core.barrier().map_err(s)?;
    win.free().map_err(s)?;
    Ok(cost)
}

#[test]
fn a_put_costs_its_lines_through_the_targets_memory_controller() {
    let chip = Chip::default();
    for (target, bytes) in [(1, 8), (1, 4096), (47, 4096), (47, 60_000)] {
        let got = Job::new(48).timing(communication_only()).run(&(target, bytes), timed_put).unwrap()[0];
        let (me, there) = (chip.tile_of(0), chip.tile_of(target));
        let divider = chip.clocks.divider;
        let call = chip.core_ps(u64::from(chip.ops.call_core_cycles), divider);
        let line = chip.private_line_ps(me, bytes, divider)
            + chip.dram_line_ps(me, chip.controller_of(there), divider);
        // The clock reads around the put are calls of their own: wtime costs nothing
        // but the compute before it, which is not charged here.
        assert_eq!(got, call + chip.lines(bytes) * line, "{bytes} B to rank {target}");
    }
}

/// Rank 1 holds an exclusive lock on rank 2's part for a long time (many puts), then
/// raises a word of another window that rank 0 polls with atomic loads inside
/// lock_all (which carry no time between them); rank 0 then locks rank 2's part: it
/// must not hold the lock before rank 1's release, in virtual time.
fn lock_handoff(core: &Core, _: ()) -> Result<(u64, u64), String> {
    let win = core.window::<u64>(8192, Placement::Dram).map_err(s)?;
    let signal = core.window::<u64>(1, Placement::Dram).map_err(s)?;
    let mut times = (0, 0);
    match core.rank() {
        1 => {
            let held = win.lock(LockKind::Exclusive, 2).map_err(s)?;
            for _ in 0..20 {
                held.put(2, 0, &[3; 4096]).map_err(s)?;
            }
            held.unlock().map_err(s)?;
            times.0 = ps(core);
            let all = signal.lock_all().map_err(s)?;
            all.store::<u64>(0, 0, 1).map_err(s)?;
            all.unlock_all().map_err(s)?;
        }
        0 => {
            let all = signal.lock_all().map_err(s)?;
            while all.load::<u64>(0, 0).map_err(s)? == 0 {
                std::thread::yield_now();
            }
            all.unlock_all().map_err(s)?;
            win.lock(LockKind::Exclusive, 2).map_err(s)?.unlock().map_err(s)?;
            times.1 = ps(core);
        }
        _ => {}
    }
    core.barrier().map_err(s)?;
    signal.free().map_err(s)?;
    win.free().map_err(s)?;
    Ok(times)
}

#[test]
fn a_lock_waits_for_the_previous_holders_release() {
    let times = Job::new(3).timing(communication_only()).run(&(), lock_handoff).unwrap();
    let (released, locked) = (times[1].0, times[0].1);
    assert!(
        locked > released,
        "rank 0 held the lock at {locked} ps, before rank 1 released it at {released}"
    );
}

/// Rank 1 works a long while (self-sends of 100 KB) before it receives what rank 0
/// sends, in the standard mode and then synchronously: returns rank 0's clock after
/// each send and rank 1's before each receive.
fn late_receiver(core: &Core, _: ()) -> Result<[u64; 2], String> {
    let mut times = [0; 2];
    for (round, tag) in [(0, 1), (1, 2)] {
        if core.rank() == 0 {
            let send = if round == 0 { Core::send } else { Core::ssend };
            send(core, 1, tag, &[7; 8]).map_err(s)?;
            times[round] = ps(core);
        } else {
            let work = vec![0u8; 100_000];
            let mut buf = vec![0u8; work.len()];
            for _ in 0..20 {
                core.isend(1, 9, &work).map_err(s)?.wait().map_err(s)?;
                core.recv(1, 9, &mut buf).map_err(s)?;
            }
            times[round] = ps(core);
            core.recv(0, tag, &mut [0u8; 8]).map_err(s)?;
        }
        core.barrier().map_err(s)?;
    }
    Ok(times)
}

#[test]
fn a_synchronous_send_waits_for_the_receivers_match() {
    let times = Job::new(2).timing(communication_only()).run(&(), late_receiver).unwrap();
    let (sent, posted) = ((times[0][0], times[0][1]), (times[1][0], times[1][1]));
    assert!(sent.0 < posted.0, "the standard send waited for the receive: {times:?}");
    assert!(
        sent.1 > posted.1,
        "the synchronous send ended at {} ps, before the receive at {} ps",
        sent.1,
        posted.1
    );
}
