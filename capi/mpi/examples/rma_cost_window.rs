//! The loop of `rma_cost.rs` on the calls of `sccemu::Window` that the MPI library's
//! fast paths make (no epoch guard, lock_unguarded): what the library's operations
//! cost without its C layer, measured as `rma_cost.rs` says. A binary of its own, so
//! that it does not change how LLVM compiles that one's loop.

use std::hint::black_box;

use sccemu::{Core, LockKind, Placement};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (op, iters) = match &args[..] {
        [_, op, n] => (op.clone(), n.parse::<u64>()?),
        _ => return Err("usage: rma_cost_window put|get|fop|cas|lock ITERS".into()),
    };
    let core = Core::attach()?;
    let win = core.window::<u8>(64, Placement::Dram)?;
    core.barrier()?;
    if core.rank() == 0 {
        window_calls(&win, core.size() - 1, &op, iters)?;
    }
    core.barrier()?;
    win.free()?;
    Ok(())
}

/// The loop, on rank `t`.
fn window_calls(
    win: &sccemu::Window<'_, u8>,
    t: u32,
    op: &str,
    iters: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut buf = [1u8; 8];
    if op == "lock" {
        for _ in 0..iters {
            win.lock_unguarded(LockKind::Exclusive, t)?;
            win.unlock(t)?;
        }
        return Ok(());
    }
    win.lock_unguarded(LockKind::Shared, t)?;
    let mut compare = 0u64;
    let k = op.as_bytes()[0];
    for _ in 0..iters {
        match k {
            b'p' => win.put(t, 0, &buf)?,
            b'g' => win.get(t, 0, &mut buf)?,
            b'f' => _ = black_box(win.fetch_add(t, 0, 1u64)?),
            _ => compare = win.compare_and_swap(t, 0, compare, compare + 1)? + 1,
        }
        win.flush(t)?;
    }
    black_box(&buf);
    win.unlock(t)?;
    Ok(())
}
