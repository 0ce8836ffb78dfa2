//! The `dropped` role: windows across nodes dropped without `free`, far more of them
//! than a node's heap holds at once, job-wide under every accumulate strategy and over
//! a communicator whose ranks run backwards. Each is used before it is dropped; the
//! creations must keep succeeding, and once the last is returned nothing stays behind.
//! Then rank 0 drops one more after the others have left the job: its drop must still
//! end.

use sccemu::{AccStrategy, Core, Op, Placement, Window};

/// Windows created and dropped.
const ROUNDS: usize = 24;

/// Puts this rank's stamp to the right and adds it into the left, then checks what
/// arrived from both sides.
fn exercise(win: &Window<'_, u64>, me: u32, n: u32, round: usize) -> Result<(), Box<dyn std::error::Error>> {
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let stamp = |r: u32| (round as u64) << 32 | u64::from(r);
    win.fence()?;
    win.put(right, 0, &[stamp(me)])?;
    win.accumulate(left, 1, &[stamp(me)], Op::Sum)?;
    win.fence()?;
    let mut got = [0u64; 2];
    win.get(me, 0, &mut got)?;
    assert_eq!(got, [stamp(left), stamp(right)], "round {round}");
    win.fence()?;
    Ok(())
}

pub fn dropped(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (me, n) = (core.rank(), core.size());
    let ctx = core.context();
    // Each window's parts on a node take at most an eighth of its free heap (this node's
    // ranks are at most all n): leaked, five would not fit.
    let len = ctx.heap_free_bytes()? / 8 / n as usize / 8;
    let world = core.world()?;
    let backwards = world.split(Some(0), -(me as i32))?.expect("every rank has colour 0");
    let strategies =
        [AccStrategy::Atomic, AccStrategy::CallerComputes { granularity: 64 }, AccStrategy::OwnerComputes];
    for round in 0..ROUNDS {
        let strategy = strategies[round % strategies.len()];
        if round % 4 == 3 {
            let win = backwards.window_with::<u64>(len, Placement::Dram, strategy)?;
            exercise(&win, backwards.rank(), backwards.size(), round)?;
        } else {
            let win = core.window_with::<u64>(len, Placement::Dram, strategy)?;
            exercise(&win, me, n, round)?;
        }
        // The window drops here, without free.
    }
    // One more creation returns the last dropped window; a freed one holds nothing.
    let last = core.window::<u64>(len, Placement::Dram)?;
    exercise(&last, me, n, ROUNDS)?;
    last.free()?;
    assert_eq!(ctx.orphaned(), (0, 0), "rank {me} keeps dropped windows");
    core.barrier()?;
    // Rank 0 drops its last window after every other rank has left the job.
    let late = core.window::<u64>(len, Placement::Dram)?;
    exercise(&late, me, n, ROUNDS + 1)?;
    if me == 0 {
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    drop(late);
    Ok(())
}
