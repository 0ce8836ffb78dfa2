//! The rest of the window API over real processes: per-core sizes and both placements,
//! strided and indexed transfers, the window table, self-locking, lock_all against
//! writers, `fetch_and_op` with every op, windows of user types, and a rank dying in
//! an epoch.

use sccemu::{Assert, Core, Group, Job, LockKind, Placement, Vector, WindowError};

mod common;
use common::{OrString, check};

/// Per-core sizes (including 0), both placements, strided and indexed transfers, and
/// collective free and reuse.
fn sizes_placements_strides(core: &Core, _: ()) -> Result<(), String> {
    let me = core.rank();
    let n = core.size();
    for placement in [Placement::Dram, Placement::Mpb] {
        let len = (me as usize) * 40; // rank 0 has size 0
        let win = core.window::<i32>(len, placement).s()?;
        let listed = core.live_windows();
        check(listed.len() == 1 && listed[0].1.elem_bytes == 4, || format!("window table: {listed:?}"))?;
        for t in 0..n {
            check(win.len_of(t).s()? == t as usize * 40, || "len_of".into())?;
        }
        check(win.local().to_vec() == vec![0; len], || "not zeroed".into())?;
        win.fence().s()?;
        let right = (me + 1) % n;
        if right != 0 {
            // Column `me` of a 10-wide row-major matrix in the right neighbour's part.
            let col: Vec<i32> = (0..4).map(|i| (me * 100 + i) as i32).collect();
            let v = Vector { count: 4, block_len: 1, stride: 10 };
            win.put_strided(right, me as usize, v, &col).s()?;
            win.put_blocks(right, &[(35, 2), (38, 1)], &[7, 8, 9]).s()?;
        }
        win.fence().s()?;
        if me != 0 {
            let left = me - 1;
            let mut col = [0i32; 4];
            win.get_strided(me, left as usize, Vector { count: 4, block_len: 1, stride: 10 }, &mut col)
                .s()?;
            let want: Vec<i32> = (0..4).map(|i| (left * 100 + i) as i32).collect();
            check(col.to_vec() == want, || format!("strided {col:?}"))?;
            let mut b = [0i32; 3];
            win.get_blocks(me, &[(35, 2), (38, 1)], &mut b).s()?;
            check(b == [7, 8, 9], || format!("blocks {b:?}"))?;
        }
        win.fence_with(Assert::NOSUCCEED).s()?;
        win.free().s()?;
        // Rank 0 unlists the window in `free`; others may run ahead of it.
        check(me != 0 || core.live_windows().is_empty(), || "still listed after free".into())?;
    }
    // An MPB window too big for an MPB is refused everywhere, and the job goes on.
    let e = core.window::<u8>(core.mpb_bytes() + 1, Placement::Mpb).err();
    check(matches!(e, Some(WindowError::TooBigForMpb { .. })), || format!("{e:?}"))?;
    let win = core.window::<u8>(8, Placement::Mpb).s()?;
    win.free().s()?;
    Ok(())
}

#[test]
fn sizes_placements_strided_and_indexed() {
    Job::new(4).run(&(), sizes_placements_strides).unwrap();
}

/// Locking one's own part takes effect at once, and lock_all excludes exclusive lockers.
fn self_lock_and_lock_all(core: &Core, rounds: u32) -> Result<u32, String> {
    let win = core.window::<u64>(2, Placement::Dram).s()?;
    {
        let me = win.lock(LockKind::Exclusive, core.rank()).s()?;
        me.put(core.rank(), 0, &[7, 7]).s()?;
    }
    core.barrier().s()?;
    for _ in 0..rounds {
        // Exclusive writers keep rank 0's pair equal; lock_all readers must agree.
        if core.rank() % 2 == 0 {
            let e = win.lock(LockKind::Exclusive, 0).s()?;
            let mut p = [0u64; 2];
            e.get(0, 0, &mut p).s()?;
            e.put(0, 0, &[p[0] + 1]).s()?;
            e.put(0, 1, &[p[1] + 1]).s()?;
        } else {
            let a = win.lock_all().s()?;
            let mut p = [0u64; 2];
            a.get(0, 0, &mut p).s()?;
            check(p[0] == p[1], || format!("lock_all saw a torn pair {p:?}"))?;
        }
    }
    core.barrier().s()?;
    win.free().s()?;
    Ok(rounds)
}

#[test]
fn self_lock_is_immediate_and_lock_all_excludes_writers() {
    assert_eq!(Job::new(4).run(&200, self_lock_and_lock_all).unwrap(), vec![200; 4]);
}

/// `MPI_Fetch_and_op` with every kind of op: native (sum, bitwise, replace), loads
/// (no-op) and compare-and-swap loops (max, min, prod), on integers and floats.
fn fetch_and_op_all_kinds(core: &Core, _: ()) -> Result<(u64, i64, f64, f64, u32), String> {
    use sccemu::Op;
    let len = |n: usize| if core.rank() == 0 { n } else { 0 };
    let wu = core.window::<u64>(len(1), Placement::Dram).s()?;
    let wi = core.window::<i64>(len(1), Placement::Dram).s()?;
    let wf = core.window::<f64>(len(2), Placement::Dram).s()?;
    let wb = core.window::<u32>(len(1), Placement::Dram).s()?;
    if core.rank() == 0 {
        wi.local().set(0, -50).s()?;
        wf.local().set(0, 1.0).s()?;
        wf.local().set(1, 100.0).s()?;
    }
    core.barrier().s()?;
    let me = core.rank() as u64 + 1;
    let (au, ai, af, ab) = (wu.lock_all().s()?, wi.lock_all().s()?, wf.lock_all().s()?, wb.lock_all().s()?);
    wu.fetch_and_op(0, 0, me * 10, Op::Max).s()?;
    wi.fetch_and_op(0, 0, -(me as i64), Op::Min).s()?;
    wf.fetch_and_op(0, 0, 2.0, Op::Prod).s()?;
    wf.fetch_and_op(0, 1, me as f64, Op::Sum).s()?;
    wb.fetch_and_op(0, 0, 1u32 << me, Op::BitOr).s()?;
    let err = wf.fetch_and_op(0, 0, 1.0, Op::BitXor).unwrap_err();
    check(err.to_string().contains("BitXor is not defined on f64"), || format!("{err:?}"))?;
    core.barrier().s()?;
    let out = (
        wu.fetch_and_op(0, 0, 0, Op::NoOp).s()?,
        wi.load::<i64>(0, 0).s()?,
        wf.atomic_load::<f64>(0, 0).s()?,
        wf.atomic_load::<f64>(0, 1).s()?,
        wb.atomic_load::<u32>(0, 0).s()?,
    );
    drop((au, ai, af, ab));
    core.barrier().s()?;
    for free in [wu.free(), wi.free(), wf.free(), wb.free()] {
        free.s()?;
    }
    Ok(out)
}

#[test]
fn fetch_and_op_native_and_cas_loop_ops() {
    let out = Job::new(4).run(&(), fetch_and_op_all_kinds).unwrap();
    assert!(out.iter().all(|o| *o == (40, -50, 16.0, 110.0, 0b11110)), "{out:?}");
}

/// A user-defined `#[repr(C)]` plain type as the element.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable, serde::Serialize)]
#[repr(C)]
struct Particle {
    pos: [f64; 3],
    id: u64,
}

fn user_type_window(core: &Core, _: ()) -> Result<u64, String> {
    let n = core.size();
    let win = core.window::<Particle>(n as usize, Placement::Dram).s()?;
    win.fence().s()?;
    let p = Particle { pos: [core.rank() as f64; 3], id: core.rank() as u64 };
    for t in 0..n {
        win.put(t, core.rank() as usize, &[p]).s()?;
    }
    // ids are u64 at byte 24 of each 32-byte element: aligned for a u64 atomic.
    win.fence_with(Assert::NOSUCCEED).s()?;
    let mine = win.local().to_vec();
    for (r, q) in mine.iter().enumerate() {
        check(q.id == r as u64 && q.pos == [r as f64; 3], || format!("{q:?}"))?;
    }
    win.free().s()?;
    Ok(mine.iter().map(|q| q.id).sum())
}

#[test]
fn windows_of_user_plain_types() {
    assert_eq!(Job::new(3).run(&(), user_type_window).unwrap(), vec![3; 3]);
}

/// Rank 1 dies holding rank 0's exclusive lock; rank 2, queued for the lock, and rank 0,
/// waiting in PSCW for rank 1's completion, get the abort error naming rank 1.
fn die_holding_a_lock(core: &Core, _: ()) -> Result<String, String> {
    let win = core.window::<u64>(1, Placement::Dram).s()?;
    match core.rank() {
        1 => {
            let _held = win.lock(LockKind::Exclusive, 0).s()?;
            core.barrier().s()?;
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::process::abort();
        }
        2 => {
            core.barrier().s()?;
            match win.lock(LockKind::Shared, 0) {
                Ok(_) => Err("locked past a dead exclusive holder".into()),
                Err(e) => Ok(e.to_string()),
            }
        }
        _ => {
            core.barrier().s()?;
            win.post(&Group::single(1)).s()?;
            match win.wait() {
                Ok(()) => Err("wait completed without rank 1".into()),
                Err(e) => Ok(e.to_string()),
            }
        }
    }
}

#[test]
fn a_rank_dying_in_an_epoch_aborts_blocked_lockers_and_waiters() {
    let outcome = Job::new(3).run_outcome(&(), die_holding_a_lock).unwrap();
    assert!(!outcome.report.success());
    for rank in [0, 2] {
        let msg = outcome.ranks[rank].as_ref().unwrap();
        assert!(msg.contains("rank 1"), "rank {rank}: {msg}");
    }
}

/// Direct loads and stores into other cores' parts (`shared_query`), ordered by a
/// barrier, like an MPI shared-memory window.
fn shared_query_loads_and_stores(core: &Core, _: ()) -> Result<u32, String> {
    let n = core.size();
    let me = core.rank();
    let win = core.window::<u32>(n as usize, Placement::Mpb).s()?;
    for t in 0..n {
        win.shared_query(t).s()?.set(me as usize, me * 1000 + t).s()?;
    }
    core.barrier().s()?;
    let mine = win.local().to_vec();
    let want: Vec<u32> = (0..n).map(|w| w * 1000 + me).collect();
    check(mine == want, || format!("{mine:?}"))?;
    check(win.shared_query(n).is_err(), || "rank n accepted".into())?;
    core.barrier().s()?;
    win.free().s()?;
    Ok(n)
}

#[test]
fn shared_query_gives_load_store_access_to_every_part() {
    assert_eq!(Job::new(4).run(&(), shared_query_loads_and_stores).unwrap(), vec![4; 4]);
}

/// 48 oversubscribed cores: a fetch-add counter under lock_all, a PSCW ring and fences.
fn forty_eight(core: &Core, rounds: u32) -> Result<u64, String> {
    let n = core.size();
    let me = core.rank();
    let win = core.window::<u64>(2, Placement::Dram).s()?;
    {
        let all = win.lock_all().s()?;
        for _ in 0..rounds {
            all.fetch_add(0, 0, 1u64).s()?;
        }
    }
    for round in 1..=rounds as u64 {
        win.post(&Group::single((me + n - 1) % n)).s()?;
        win.start(&Group::single((me + 1) % n)).s()?;
        win.put((me + 1) % n, 1, &[round]).s()?;
        win.complete().s()?;
        win.wait().s()?;
    }
    win.fence().s()?;
    let total = win.atomic_load::<u64>(0, 0).s()?;
    let ring = win.local().get(1).s()?;
    win.fence_with(Assert::NOSUCCEED).s()?;
    check(ring == rounds as u64, || format!("ring shows {ring}"))?;
    win.free().s()?;
    Ok(total)
}

#[test]
fn forty_eight_cores_counter_ring_and_fence() {
    assert_eq!(Job::new(48).run(&5, forty_eight).unwrap(), vec![240; 48]);
}

/// Runs `f`, aborting the process (so the job fails) if it takes longer than `secs`: a
/// call that loops over a huge layout would otherwise eat memory until killed.
fn within<R>(secs: u64, f: impl FnOnce() -> R) -> R {
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        if watch.recv_timeout(std::time::Duration::from_secs(secs)).is_err() {
            std::process::abort();
        }
    });
    let r = f();
    let _ = done.send(());
    let _ = dog.join();
    r
}

/// Refused calls do nothing: layouts whose blocks do not add up to the buffer are
/// refused before any block is looked at, whatever their `count`; empty blocks cost
/// nothing; and after calls refused on rank 1 alone, `fence(NOPRECEDE)` holds on every
/// core (a failure there would leave the others in the fence).
fn refused_calls_do_nothing(core: &Core, _: ()) -> Result<(), String> {
    use sccemu::{Op, RmaError};
    let win = core.window::<u32>(8, Placement::Dram).s()?;
    win.fence().s()?;
    if core.rank() == 1 {
        let huge = Vector { count: usize::MAX, block_len: 1, stride: 0 };
        let mismatch = RmaError::LengthMismatch { expected: usize::MAX, found: 1 };
        let e = within(3, || win.put_strided(0, 0, huge, &[7])).unwrap_err();
        check(e == mismatch, || format!("{e:?}"))?;
        let e = within(3, || win.get_strided(0, 0, huge, &mut [0])).unwrap_err();
        check(e == mismatch, || format!("{e:?}"))?;
        let e = win.put_blocks(0, &[(0, usize::MAX), (0, 2)], &[7]).unwrap_err();
        check(e == mismatch, || format!("{e:?}"))?;
        let e = within(3, || win.accumulate_strided(0, 0, huge, &[7], Op::Sum)).unwrap_err();
        check(e.to_string() == mismatch.to_string(), || format!("{e:?}"))?;
        check(win.put(0, 7, &[1, 2]).is_err(), || "put past the part".into())?;
        check(win.get(0, 9, &mut [0]).is_err(), || "get past the part".into())?;
        check(win.fetch_add(0, 1, 1u64).is_err(), || "misaligned u64".into())?;
        check(win.accumulate(0, 7, &[1, 2], Op::Sum).is_err(), || "accumulate past the part".into())?;
    }
    win.fence_with(Assert::NOPRECEDE).s()?;
    if core.rank() == 1 {
        let empty = Vector { count: usize::MAX, block_len: 0, stride: 3 };
        within(3, || win.get_strided(0, 0, empty, &mut [])).s()?;
        within(3, || win.put_strided(0, 0, empty, &[])).s()?;
        within(3, || win.accumulate_strided(0, 0, empty, &[], Op::Sum)).s()?;
    }
    win.fence_with(Assert::NOSUCCEED).s()?;
    win.free().s()?;
    Ok(())
}

#[test]
fn refused_calls_do_nothing_and_count_no_operation() {
    Job::new(2).run(&(), refused_calls_do_nothing).unwrap();
}

/// Collective errors reach every core, and the job goes on: an absurd length on one
/// core (overflowing the byte count, the heap granule rounding, or the sum of the
/// parts), and a free while one core has an epoch open.
fn collective_window_errors(core: &Core, _: ()) -> Result<(), String> {
    let me = core.rank();
    let on = |rank: u32, len: usize| if me == rank { len } else { 4 };
    // Barriers around each snapshot: rank 0 allocates before the others arrive.
    core.barrier().s()?;
    let free_before = core.heap_free_bytes().s()?;
    core.barrier().s()?;
    for placement in [Placement::Dram, Placement::Mpb] {
        let e = core.window::<u64>(on(1, usize::MAX), placement).err();
        check(e == Some(WindowError::TooLarge { rank: 1 }), || format!("{placement:?}: {e:?}"))?;
    }
    let e = core.window::<u8>(on(0, usize::MAX), Placement::Dram).err();
    check(e == Some(WindowError::TooLarge { rank: 0 }), || format!("rounding: {e:?}"))?;
    let e = core.window::<u8>(on(2, usize::MAX - 5000), Placement::Dram).err();
    check(e == Some(WindowError::TooLarge { rank: 2 }), || format!("rounding up: {e:?}"))?;
    let half = if me < 2 { usize::MAX / 2 } else { 0 };
    let e = core.window::<u8>(half, Placement::Dram).err();
    check(e == Some(WindowError::TooLarge { rank: 1 }), || format!("sum: {e:?}"))?;
    core.barrier().s()?;
    let free_after = core.heap_free_bytes().s()?;
    core.barrier().s()?;
    check(free_after == free_before, || format!("heap {free_before} -> {free_after}"))?;
    // Rank 2 alone keeps an exposure epoch open: every core is refused, naming it.
    let win = core.window::<u64>(4, Placement::Dram).s()?;
    if me == 2 {
        win.post(&Group::empty()).s()?;
    }
    let e = win.free().err();
    check(e == Some(WindowError::EpochOpen { rank: 2 }), || format!("free: {e:?}"))?;
    // Later windows work.
    let win = core.window::<u64>(4, Placement::Dram).s()?;
    win.fence().s()?;
    win.put((me + 1) % core.size(), 0, &[me as u64 + 10]).s()?;
    win.fence_with(Assert::NOSUCCEED).s()?;
    let left = (me + core.size() - 1) % core.size();
    check(win.local().get(0).s()? == left as u64 + 10, || "put lost".into())?;
    win.free().s()?;
    Ok(())
}

#[test]
fn collective_window_errors_reach_every_core() {
    Job::new(3).run(&(), collective_window_errors).unwrap();
}
