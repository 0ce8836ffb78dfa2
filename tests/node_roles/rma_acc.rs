//! The `rma_acc` role: windows across nodes whose accumulates take locks
//! (`CallerComputes`, with small granules and with one lock per part, and
//! `OwnerComputes`, whose agents combine under their owners' stripes). In one lock_all
//! epoch every rank accumulates into every target, on its node and on others, while
//! everyone else does: block sums over many granules, fetch-and-add and
//! compare-and-swap counters, and MAXLOC on value-index pairs (16 bytes, which no CPU
//! atomic covers). A target's gateway combines remote requests into memory that the
//! target's local origins (or its agent) combine into with plain loads and stores under
//! the stripes, so a gateway that skipped the stripes would lose updates, and the exact
//! totals would not come out.

use sccemu::protocol::atomic::pair::DoubleIndex;
use sccemu::{AccStrategy, Core, LockKind, Op, Placement};

/// Elements of each part (`u64`).
const LEN: usize = 2_048;
/// The block every rank adds into every target: many 64-byte granules.
const BLOCK: usize = 600;
/// The counters, past the block.
const FETCH_ADD: usize = 1_000;
const CAS: usize = 1_001;
/// Where the pair lies (in `u64`s: even, so the 16-byte pair is aligned).
const PAIR: usize = 1_002;
const HOT: usize = 1_004;
const ROUNDS: u64 = 12;
const HAMMER: u64 = 3_000;

pub fn rma_acc(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    for strategy in [
        AccStrategy::CallerComputes { granularity: 64 },
        AccStrategy::CallerComputes { granularity: usize::MAX },
        AccStrategy::OwnerComputes,
    ] {
        let win = core.window_with::<u64>(LEN, Placement::Dram, strategy)?;
        assert_eq!(win.acc_strategy(), strategy);
        let add = vec![u64::from(me) + 1; BLOCK];
        let epoch = win.lock_all()?;
        for round in 0..ROUNDS {
            for t in (0..n).map(|i| (me + i + round as u32) % n) {
                epoch.accumulate(t, 0, &add, Op::Sum)?;
                epoch.fetch_add(t, FETCH_ADD, 1u64)?;
                // An increment by compare-and-swap, retried until it lands.
                let mut seen = epoch.fetch_and_op(t, CAS, 0, Op::NoOp)?;
                loop {
                    let was = epoch.compare_and_swap(t, CAS, seen, seen + 1)?;
                    if was == seen {
                        break;
                    }
                    seen = was;
                }
                let value = ((me + n - t) % n + 1) as f64;
                epoch.accumulate_as(t, PAIR, &[DoubleIndex::new(value, me as i32)], Op::MaxLoc)?;
            }
        }
        // One element that everyone hammers with single-element sums: a local origin's
        // plain update under its stripe meets the gateway's remote ones head on.
        for _ in 0..HAMMER {
            epoch.accumulate(0, HOT, &[1u64], Op::Sum)?;
        }
        epoch.unlock_all()?;
        core.barrier()?;
        let mut part = vec![0u64; LEN];
        let mut pair = [DoubleIndex::default()];
        let epoch = win.lock(LockKind::Shared, me)?;
        epoch.get(me, 0, &mut part)?;
        epoch.get_accumulate_as(me, PAIR, &[DoubleIndex::default()], &mut pair, Op::NoOp)?;
        epoch.unlock()?;
        let sum = ROUNDS * u64::from(n) * u64::from(n + 1) / 2;
        let lost = part[..BLOCK].iter().filter(|&&v| v != sum).count();
        assert_eq!(lost, 0, "rank {me}, {strategy:?}: {lost} elements of the block lost updates");
        if me == 0 {
            assert_eq!(part[HOT], HAMMER * u64::from(n), "{strategy:?}: the hammered element lost updates");
        }
        let counted = ROUNDS * u64::from(n);
        assert_eq!([part[FETCH_ADD], part[CAS]], [counted, counted], "rank {me}, {strategy:?}: the counters");
        let winner = ((me + n - 1) % n) as i32;
        assert_eq!(pair[0], DoubleIndex::new(n as f64, winner), "rank {me}, {strategy:?}: MAXLOC");
        win.free()?;
    }
    Ok(())
}
