//! The concurrency paper's Figures 7 and 8: allgather time per algorithm for 512 B to
//! 32 KiB per process at N = 4 to 48; and allreduce time, the other collective users
//! compare first. `sccrun bench` puts MPICH's and Open MPI's figures beside them.

use std::time::Instant;

use sccemu::{Allgather, CollError, Comm, Core, Job, Op};
use serde::{Deserialize, Serialize};

use crate::measure::{Row, SuiteParams, row};

/// The algorithms measured, with their row names.
pub const ALGORITHMS: [(Allgather, &str); 6] = [
    (Allgather::Shared, "sccemu-shared"),
    (Allgather::Ring, "sccemu-ring"),
    (Allgather::RecursiveDoubling, "sccemu-recdbl"),
    (Allgather::Concurrent { index: 2, split: false }, "sccemu-conc-c2"),
    (Allgather::Concurrent { index: 4, split: false }, "sccemu-conc-c4"),
    (Allgather::Concurrent { index: 4, split: true }, "sccemu-conc-c4-split"),
];

#[derive(Serialize, Deserialize)]
struct Plan {
    sizes: Vec<usize>,
    algorithms: Vec<Allgather>,
    warmup: u32,
    reps: u32,
    iters: u32,
}

/// Per (algorithm, size) in plan order, then per allreduce size: rank 0's samples in µs.
fn measure(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, CollError> {
    let world = Comm::world(core)?;
    let n = core.size() as usize;
    let mut out = Vec::new();
    let mut time = |op: &mut dyn FnMut() -> Result<(), CollError>| -> Result<(), CollError> {
        for _ in 0..plan.warmup {
            op()?;
        }
        let mut samples = Vec::with_capacity(plan.reps as usize);
        for _ in 0..plan.reps {
            world.barrier()?;
            let started = Instant::now();
            for _ in 0..plan.iters {
                op()?;
            }
            samples.push(started.elapsed().as_secs_f64() * 1e6 / f64::from(plan.iters));
        }
        out.push(samples);
        Ok(())
    };
    for &algorithm in &plan.algorithms {
        for &size in &plan.sizes {
            let send = vec![core.rank() as u8; size];
            let mut recv = vec![0u8; size * n];
            time(&mut || world.allgather(&send, &mut recv, algorithm))?;
        }
    }
    for &size in &allreduce_sizes(&plan.sizes) {
        let send = vec![1.0f64; size.div_ceil(8)];
        let mut recv = send.clone();
        time(&mut || world.allreduce(&send, &mut recv, Op::Sum))?;
    }
    Ok(out)
}

/// Allreduce also at 8 B, the latency case users compare first.
fn allreduce_sizes(sizes: &[usize]) -> Vec<usize> {
    std::iter::once(8).chain(sizes.iter().copied()).collect()
}

pub fn sizes(params: &SuiteParams) -> Vec<usize> {
    if params.quick { vec![512] } else { (9..=15).map(|p| 1 << p).collect() }
}

pub fn cores(params: &SuiteParams) -> Vec<u32> {
    if params.quick { vec![4] } else { vec![2, 4, 8, 16, 32, 48] }
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let sizes = sizes(params);
    let mut rows = Vec::new();
    for n in cores(params) {
        let plan = Plan {
            sizes: sizes.clone(),
            algorithms: ALGORITHMS.iter().map(|(a, _)| *a).collect(),
            warmup: params.warmup(3),
            reps: params.reps(15),
            iters: if params.quick { 2 } else { 10 },
        };
        let samples = match Job::new(n).run(&plan, measure) {
            Ok(mut ranks) => ranks.swap_remove(0),
            Err(e) => {
                eprintln!("allgather suite: {n} cores failed: {e}");
                continue;
            }
        };
        let mut samples = samples.into_iter();
        for (_, name) in ALGORITHMS {
            for &size in &sizes {
                rows.push(row(
                    "allgather",
                    name,
                    "allgather",
                    n,
                    size as u64,
                    samples.next().unwrap_or_default(),
                ));
            }
        }
        for size in allreduce_sizes(&sizes) {
            rows.push(row(
                "allgather",
                "sccemu",
                "allreduce",
                n,
                size as u64,
                samples.next().unwrap_or_default(),
            ));
        }
    }
    rows
}
