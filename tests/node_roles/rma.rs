//! The `rma` role: a window across nodes under every synchronisation it offers, with
//! targets on this node and on others mixed in each pattern.

use sccemu::{Core, Group, LockKind, Op, Placement, RmaError, SyncError, WindowError};

/// Elements of each part: past a request's chunk (`rma::remote::CHUNK`).
const LEN: usize = 20_000;
/// Where the large transfers land.
const BIG: usize = 4_000;
const BIG_LEN: usize = 12_000;
/// Rounds of the counters and the mutex.
const ROUNDS: u64 = 5;
// Words of each part: the counters and the mutex.
const FETCH_ADD: usize = 1;
const MUTEX: usize = 2;
const GUARDED: usize = 3;
const EXCLUSIVE: usize = 4;
const ALL_ADD: usize = 6;
const ALL_RMW: usize = 7;
const ACC: usize = 100;
const ACC_LEN: usize = 1_000;

fn pattern(from: u32, i: usize) -> u64 {
    u64::from(from) << 32 | i as u64
}

pub fn rma(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let last = n - 1;
    let win = core.window::<u64>(LEN, Placement::Dram)?;

    // Fence: a word and a large block to the right, a get from the left.
    win.fence()?;
    win.put(right, 0, &[u64::from(me) + 1])?;
    let big: Vec<u64> = (0..BIG_LEN).map(|i| pattern(me, i)).collect();
    win.put(right, BIG, &big)?;
    win.fence()?;
    let mut got = vec![0u64; BIG_LEN];
    win.get(left, BIG, &mut got)?;
    let mut first = [0u64];
    win.get(me, 0, &mut first)?;
    win.fence()?;
    assert_eq!(first[0], u64::from(left) + 1, "rank {me}: the fence put from {left}");
    let from_left_of_left = (left + n - 1) % n;
    assert!(
        got.iter().enumerate().all(|(i, &v)| v == pattern(from_left_of_left, i)),
        "rank {me}: the large get"
    );

    // Fetch-and-add counters on rank 0 and on the last rank, under shared locks.
    for target in [0, last] {
        for _ in 0..ROUNDS {
            let epoch = win.lock(LockKind::Shared, target)?;
            epoch.fetch_add(target, FETCH_ADD, 1u64)?;
            epoch.unlock()?;
        }
    }
    // A compare-and-swap mutex on the last rank guards a plain get and put there.
    for _ in 0..ROUNDS {
        let epoch = win.lock(LockKind::Shared, last)?;
        while epoch.compare_and_swap(last, MUTEX, 0u64, u64::from(me) + 1)? != 0 {
            std::thread::yield_now();
        }
        let mut value = [0u64];
        epoch.get(last, GUARDED, &mut value)?;
        epoch.put(last, GUARDED, &[value[0] + 1])?;
        epoch.flush(last)?;
        assert_eq!(epoch.swap(last, MUTEX, 0u64)?, u64::from(me) + 1, "rank {me}: the mutex changed hands");
        epoch.unlock()?;
    }
    // Exclusive locks guard a plain read-modify-write on rank 1.
    let one = 1 % n;
    for _ in 0..ROUNDS {
        let epoch = win.lock(LockKind::Exclusive, one)?;
        let mut value = [0u64];
        epoch.get(one, EXCLUSIVE, &mut value)?;
        epoch.put(one, EXCLUSIVE, &[value[0] + 1])?;
        epoch.unlock()?;
    }
    // lock_all epochs (fetch-adds on every target) beside exclusive lockers of every
    // target (plain read-modify-writes), at once: even ranks one, odd ranks the other.
    core.barrier()?;
    for _ in 0..ROUNDS {
        if me % 2 == 0 {
            let epoch = win.lock_all()?;
            for t in 0..n {
                epoch.fetch_add(t, ALL_ADD, 1u64)?;
                // No exclusive locker gets in while the epoch is open.
                let (mut before, mut after) = ([0u64], [0u64]);
                epoch.get(t, ALL_RMW, &mut before)?;
                std::thread::sleep(std::time::Duration::from_micros(200));
                epoch.get(t, ALL_RMW, &mut after)?;
                assert_eq!(before, after, "rank {me}: an exclusive lock of {t} inside lock_all");
            }
            epoch.unlock_all()?;
        } else {
            for t in 0..n {
                let epoch = win.lock(LockKind::Exclusive, t)?;
                let mut value = [0u64];
                epoch.get(t, ALL_RMW, &mut value)?;
                epoch.put(t, ALL_RMW, &[value[0] + 1])?;
                epoch.unlock()?;
            }
        }
    }
    core.barrier()?;
    let (evens, odds) = (u64::from(n.div_ceil(2)), u64::from(n / 2));
    let epoch = win.lock_all()?;
    let mut pair = [0u64; 2];
    for t in 0..n {
        epoch.get(t, ALL_ADD, &mut pair)?;
        assert_eq!(pair, [ROUNDS * evens, ROUNDS * odds], "rank {me}: lock_all and exclusive counts at {t}");
    }
    epoch.unlock_all()?;
    // Accumulates and get_accumulates into rank 0, from every rank.
    win.fence()?;
    let ones: Vec<u64> = vec![u64::from(me) + 1; ACC_LEN];
    win.accumulate(0, ACC, &ones, Op::Sum)?;
    let mut old = vec![0u64; 2];
    win.get_accumulate(0, ACC + ACC_LEN, &[1, 2], &mut old, Op::Sum)?;
    win.fence()?;

    let total = u64::from(n);
    let counted = |yes: bool| if yes { ROUNDS * total } else { 0 };
    for target in [0, one, last] {
        let mut words = [0u64; 5];
        let epoch = win.lock(LockKind::Shared, target)?;
        epoch.get(target, 0, &mut words)?;
        epoch.unlock()?;
        let from_left = u64::from((target + n - 1) % n) + 1;
        let want = [
            from_left,
            counted(target == 0 || target == last),
            0,
            counted(target == last),
            counted(target == one),
        ];
        assert_eq!(words, want, "rank {me}: the counters of rank {target}");
    }
    let mut sums = vec![0u64; ACC_LEN + 2];
    win.fence()?;
    win.get(0, ACC, &mut sums)?;
    win.fence()?;
    let want = total * (total + 1) / 2;
    assert!(sums[..ACC_LEN].iter().all(|&s| s == want), "rank {me}: accumulated {:?}", &sums[..3]);
    assert_eq!(sums[ACC_LEN..], [total, 2 * total], "rank {me}: get_accumulate");

    // PSCW around the ring: expose to the left, access the right.
    win.post(&Group::single(left))?;
    win.start(&Group::single(right))?;
    win.put(right, 5, &[100 + u64::from(me)])?;
    win.complete()?;
    win.wait()?;
    let mut word = [0u64];
    win.fence()?;
    win.get(me, 5, &mut word)?;
    win.fence()?;
    assert_eq!(word[0], 100 + u64::from(left), "rank {me}: PSCW put from {left}");

    refusals(core, &win)?;
    core.barrier()?;
    win.free()?;
    // Freeing gives every node's memory back (the barrier: every leader has freed).
    core.barrier()?;
    let before = core.heap_free_bytes()?;
    for _ in 0..3 {
        core.window::<u64>(LEN, Placement::Dram)?.free()?;
    }
    core.barrier()?;
    assert_eq!(core.heap_free_bytes()?, before, "rank {me}: the node's heap after freeing windows");
    comm_windows(core)
}

/// Windows over communicators that span nodes: the odd and even ranks, in reverse
/// order, one allocated and one over memory each member brings.
fn comm_windows(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let me = core.rank();
    let half = core.world()?.split(Some(me % 2), -(me as i32))?.expect("a color");
    let (rank, size) = (half.rank(), half.size());
    let right = (rank + 1) % size;
    let allocated = half.window::<u64>(16, Placement::Dram)?;
    let own = core.heap_alloc_local(16 * 8)?;
    let brought = half.window_over::<u64>(own, sccemu::AccStrategy::Atomic)?;
    // Memory brought in is exposed as it is: clear it before anyone's epoch.
    brought.local().write(0, &[0u64; 16])?;
    for win in [&allocated, &brought] {
        win.fence()?;
        win.put(right, 0, &[u64::from(me)])?;
        win.fence()?;
        for t in 0..size {
            let epoch = win.lock(LockKind::Exclusive, t)?;
            epoch.fetch_add(t, 1, 1u64)?;
            epoch.unlock()?;
        }
        // lock_all over the communicator, beside nothing: it enters and leaves.
        win.lock_all()?.unlock_all()?;
        half.barrier()?;
        let left_world = half.members()[((rank + size - 1) % size) as usize];
        let mut counts = [0u64; 2];
        win.fence()?;
        win.get(rank, 0, &mut counts)?;
        win.fence()?;
        assert_eq!(counts, [u64::from(left_world), u64::from(size)], "rank {me}: a communicator's window");
    }
    allocated.free()?;
    brought.free()?;
    core.heap_free_local(own)?;
    // A window over the first and the last rank only (two nodes): its fences and locks
    // involve nobody else, who meanwhile wait in a barrier.
    let last = core.size() - 1;
    let ends = core.world()?.split((me == 0 || me == last).then_some(0), 0)?;
    if let Some(ends) = ends {
        let win = ends.window::<u64>(2, Placement::Dram)?;
        for round in 1..=3u64 {
            win.fence()?;
            win.put(1 - ends.rank(), 0, &[round * 10 + u64::from(me)])?;
            win.fence()?;
            let mut got = [0u64];
            win.get(ends.rank(), 0, &mut got)?;
            let other = if me == 0 { last } else { 0 };
            assert_eq!(
                got[0],
                round * 10 + u64::from(other),
                "rank {me}: round {round} of the two ends' window"
            );
        }
        win.fence()?;
        win.free()?;
    }
    core.barrier()?;
    Ok(())
}

/// Bad input on a window across nodes: typed errors, and the window stays usable.
fn refusals(core: &Core, win: &sccemu::Window<'_, u64>) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    let other = (me + 1) % n;
    win.fence()?;
    let past = win.put(other, LEN - 1, &[1, 2]);
    assert!(matches!(past, Err(RmaError::OutOfBounds { rank, .. }) if rank == other), "{past:?}");
    assert!(matches!(win.get(n, 0, &mut [0u64]), Err(RmaError::RankOutOfRange { .. })));
    win.fence()?;
    assert!(matches!(win.unlock_all(), Err(SyncError::NotLockedAll)));
    if let Err(e) = win.shared_query(other) {
        assert_eq!(e, RmaError::OnOtherNode { rank: other });
    }
    // A window in the cores' MPBs: the SCC's fast path, across nodes too.
    let mpb = core.window::<u64>(4, Placement::Mpb)?;
    mpb.fence()?;
    mpb.put(other, 0, &[u64::from(me) + 1])?;
    mpb.fence()?;
    let epoch = mpb.lock(LockKind::Exclusive, 0)?;
    epoch.fetch_add(0, 1, 1u64)?;
    epoch.unlock()?;
    core.barrier()?;
    let mut got = [0u64; 2];
    mpb.fence()?;
    mpb.get(me, 0, &mut got[..1])?;
    mpb.get(0, 1, &mut got[1..])?;
    mpb.fence()?;
    assert_eq!(got, [u64::from((me + n - 1) % n) + 1, u64::from(n)], "rank {me}: the MPB window");
    mpb.free()?;
    let too_big = core.window::<u64>(core.mpb_bytes(), Placement::Mpb);
    assert!(matches!(too_big, Err(WindowError::TooBigForMpb { .. })), "{:?}", too_big.err());
    Ok(())
}

/// The `rma_die` role: the last rank dies while the others hold a lock epoch on it and
/// wait for its data: every survivor's call fails naming it. Returns the survivor's
/// error.
pub fn rma_die(core: &Core) -> Box<dyn std::error::Error> {
    let dead = core.size() - 1;
    let win = match core.window::<u64>(8, Placement::Dram) {
        Ok(win) => win,
        Err(e) => return e.into(),
    };
    if let Err(e) = core.barrier() {
        return e.into();
    }
    if core.rank() == dead {
        std::process::exit(3);
    }
    // Locks, gets and fences until the death reaches this core: a get from a dead
    // rank's node never answers, a fence never completes.
    loop {
        let step = || -> Result<(), Box<dyn std::error::Error>> {
            let epoch = win.lock(LockKind::Shared, dead)?;
            epoch.get(dead, 0, &mut [0u64])?;
            epoch.unlock()?;
            win.fence()?;
            Ok(())
        };
        if let Err(e) = step() {
            return e;
        }
    }
}
