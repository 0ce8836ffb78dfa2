//! Instruction counts of 8 B one-sided operations on the native API, for callgrind:
//! the loop of `rma_cost.c` (the same operations through the MPI library) written
//! as the `rma` bench suite writes it. Rank 0 runs OP ITERS times on rank
//! `size - 1` (itself when alone): put, get, fop (fetch-and-add) and cas each followed
//! by a flush in one shared lock epoch; lock is an exclusive lock and its unlock, slock
//! a shared one, alock lock_all and its unlock_all.
//!
//! The cost of one operation is the difference of two runs' totals over the
//! difference of their ITERS, counting `rma_loop` alone (the waits at start-up spin
//! for a number of rounds that differs from run to run):
//!
//! ```text
//! cargo build --release -p sccemu-tools -p sccemu-mpi --example rma_cost
//! target/release/sccmpicc -O2 capi/mpi/examples/rma_cost.c -o /tmp/rma_cost_c
//! for n in 10000 20000; do
//!   target/release/sccrun -n 1 -- valgrind --tool=callgrind --toggle-collect='*rma_loop*' \
//!     --callgrind-out-file=/tmp/cg.%p target/release/examples/rma_cost put $n
//! done   # and the same with /tmp/rma_cost_c; compare the "Collected" totals
//! ```

use std::hint::black_box;

use sccemu::{Core, LockKind, Placement, Window};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (op, iters) = match &args[..] {
        [_, op, n] => (op.clone(), n.parse::<u64>()?),
        _ => return Err("usage: rma_cost put|get|fop|cas|lock|slock|alock ITERS".into()),
    };
    let core = Core::attach()?;
    let win = core.window::<u8>(64, Placement::Dram)?;
    core.barrier()?;
    let t = core.size() - 1;
    let mut buf = [1u8; 8];
    if core.rank() == 0 {
        rma_loop(&win, &op, iters, t, &mut buf)?;
    }
    black_box(&buf);
    core.barrier()?;
    win.free()?;
    Ok(())
}

/// Rank 0's loop, out of line so that callgrind counts it alone
/// (`--toggle-collect='*rma_loop*'`): the waits at start-up and in barriers spin for a
/// number of rounds that differs from run to run.
#[inline(never)]
fn rma_loop(
    win: &Window<'_, u8>,
    op: &str,
    iters: u64,
    t: u32,
    buf: &mut [u8; 8],
) -> Result<(), Box<dyn std::error::Error>> {
    if op == "lock" || op == "slock" {
        let kind = if op == "lock" { LockKind::Exclusive } else { LockKind::Shared };
        for _ in 0..iters {
            win.lock(kind, t)?.unlock()?;
        }
    } else if op == "alock" {
        for _ in 0..iters {
            win.lock_all()?.unlock_all()?;
        }
    } else {
        let epoch = win.lock(LockKind::Shared, t)?;
        let mut compare = 0u64;
        let k = op.as_bytes()[0];
        for _ in 0..iters {
            match k {
                b'p' => epoch.put(t, 0, buf)?,
                b'g' => epoch.get(t, 0, buf)?,
                b'f' => _ = black_box(epoch.fetch_add(t, 0, 1u64)?),
                _ => compare = epoch.compare_and_swap(t, 0, compare, compare + 1)? + 1,
            }
            epoch.flush(t)?;
        }
        epoch.unlock()?;
    }
    Ok(())
}
