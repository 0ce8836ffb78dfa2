//! Measures what atomicity across the accumulate family costs: ARMW latency (fetch_add,
//! rank 1 into rank 0, uncontended) and accumulate bandwidth (one origin, 64 KiB of
//! f64 Sum) under every strategy. `cargo run --release --example armw_cost`.

use std::time::Instant;

use sccemu::{AccStrategy, Core, Job, Op, Placement};

const STRATEGIES: [AccStrategy; 4] = [
    AccStrategy::Atomic,
    AccStrategy::CallerComputes { granularity: 4096 },
    AccStrategy::CallerComputes { granularity: usize::MAX },
    AccStrategy::OwnerComputes,
];

fn measure(core: &Core, _: ()) -> Result<Vec<String>, String> {
    let s = |e: &dyn std::fmt::Display| e.to_string();
    let mut out = Vec::new();
    for strategy in STRATEGIES {
        let len = 64 * 1024 / 8;
        let win = core.window_with::<f64>(len, Placement::Dram, strategy).map_err(|e| s(&e))?;
        let wu = core.window_with::<u64>(16, Placement::Dram, strategy).map_err(|e| s(&e))?;
        let epoch = win.lock_all().map_err(|e| s(&e))?;
        let eu = wu.lock_all().map_err(|e| s(&e))?;
        core.barrier().map_err(|e| s(&e))?;
        if core.rank() == 1 {
            let mut best_armw = f64::MAX;
            let mut best_cas = f64::MAX;
            let mut best_acc = f64::MAX;
            let src = vec![1.0f64; len];
            for _ in 0..7 {
                let iters = 200_000;
                let t = Instant::now();
                for _ in 0..iters {
                    wu.fetch_add(0, 3, 1u64).map_err(|e| s(&e))?;
                }
                best_armw = best_armw.min(t.elapsed().as_secs_f64() * 1e9 / iters as f64);
                let t = Instant::now();
                let mut g = wu.load::<u64>(0, 5).map_err(|e| s(&e))?;
                for _ in 0..iters {
                    g = wu.compare_and_swap(0, 5, g, g + 1).map_err(|e| s(&e))? + 1;
                }
                best_cas = best_cas.min(t.elapsed().as_secs_f64() * 1e9 / iters as f64);
                let iters = 2000;
                let t = Instant::now();
                for _ in 0..iters {
                    epoch.accumulate(0, 0, &src, Op::Sum).map_err(|e| s(&e))?;
                    epoch.flush(0).map_err(|e| s(&e))?;
                }
                best_acc = best_acc.min(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
            }
            out.push(format!(
                "{strategy:?}: fetch_add {best_armw:.1} ns, cas {best_cas:.1} ns, accumulate 64 KiB {best_acc:.2} us ({:.1} GB/s)",
                65536.0 / best_acc / 1e3
            ));
        }
        core.barrier().map_err(|e| s(&e))?;
        eu.unlock_all().map_err(|e| s(&e))?;
        epoch.unlock_all().map_err(|e| s(&e))?;
        wu.free().map_err(|e| s(&e))?;
        win.free().map_err(|e| s(&e))?;
    }
    Ok(out)
}

fn main() {
    sccemu::job::init();
    let out = Job::new(2).run(&(), measure).unwrap();
    for line in &out[1] {
        println!("{line}");
    }
}
