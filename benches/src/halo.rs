//! The MPICH2 paper's ghost-area exchange: every core swaps `bytes` with its four
//! neighbours on a 2-D torus, by isend/irecv or by put under fence, PSCW or lock
//! (see `exchange`). Its suite gives the times behind the paper's Tables 1 and 2 (each
//! one-sided version over the two-sided one, 16 B to 256 KiB); the report divides them.

use std::time::Instant;

use sccemu::{Comm, Core, Job, Op};
use serde::{Deserialize, Serialize};

use crate::exchange::{BoxError, Exchange, Version};
use crate::measure::{Row, SuiteParams, row};

/// One measurement: `iters` exchanges of `bytes` per neighbour, `reps` times.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Params {
    pub bytes: usize,
    pub iters: u32,
    pub reps: u32,
    pub warmup: u32,
    pub version: Version,
}

/// The most square `cols x rows` factorisation of `n`.
pub fn torus(n: u32) -> (u32, u32) {
    let cols = (1..=n).filter(|c| n % c == 0 && c * c <= n).max().unwrap_or(1);
    (cols, n / cols)
}

/// West, east, north and south neighbours on the torus; `opposite(d) = d ^ 1`.
pub fn neighbours(rank: u32, n: u32) -> Vec<Option<u32>> {
    let (cols, rows) = torus(n);
    let (x, y) = (rank % cols, rank / cols);
    let at = |x: u32, y: u32| Some(y * cols + x);
    vec![
        at((x + cols - 1) % cols, y),
        at((x + 1) % cols, y),
        at(x, (y + rows - 1) % rows),
        at(x, (y + 1) % rows),
    ]
}

/// Runs the exchange; returns this core's microseconds per exchange for each
/// repetition, and whether every inbox held exactly what its neighbour sent. The suite
/// reports rank 0's, as the MPI peers (`benches/mpi/common.h`) report theirs.
pub fn run(core: &Core, p: Params) -> Result<(Vec<f64>, bool), BoxError> {
    let me = core.rank();
    let nb = neighbours(me, core.size());
    let mut exchange = Exchange::new(core, p.version, nb.clone(), |d| d ^ 1, p.bytes)?;
    let world = Comm::world(core)?;
    // Each core sends, in direction d, bytes naming itself, d and the repetition; the
    // inboxes are checked after each timed repetition, outside the timing.
    let payload = |from: u32, d: usize, rep: u32| -> Vec<u8> {
        (0..p.bytes).map(|i| (from as usize * 7 + d * 31 + rep as usize + i) as u8).collect()
    };
    let mut inbox = vec![vec![0u8; p.bytes]; 4];
    let mut intact = true;
    let mut samples = Vec::with_capacity(p.reps as usize);
    for rep in 0..p.warmup + p.reps {
        let out: Vec<Vec<u8>> = (0..4).map(|d| payload(me, d, rep)).collect();
        let out_refs: Vec<&[u8]> = out.iter().map(Vec::as_slice).collect();
        world.barrier()?;
        let started = Instant::now();
        for _ in 0..p.iters {
            let mut in_refs: Vec<&mut [u8]> = inbox.iter_mut().map(Vec::as_mut_slice).collect();
            exchange.exchange(&out_refs, &mut in_refs, || {})?;
        }
        let took = started.elapsed().as_secs_f64() * 1e6 / f64::from(p.iters.max(1));
        for (d, got) in inbox.iter().enumerate() {
            intact &= *got == payload(nb[d].expect("torus"), d ^ 1, rep);
        }
        if rep >= p.warmup {
            samples.push(took);
        }
    }
    let mut all_intact = [u32::from(intact)];
    let mine = all_intact;
    world.allreduce(&mine, &mut all_intact, Op::Min)?;
    exchange.free()?;
    world.free()?;
    Ok((samples, all_intact[0] == 1))
}

fn measure(core: &Core, p: Params) -> Result<(Vec<f64>, bool), String> {
    run(core, p).map_err(|e| e.to_string())
}

/// Message sizes of the paper's tables: 16 B to 256 KiB (the quick sizes are the MPI
/// peers' too, so that each quick row has its counterparts).
pub fn sizes(params: &SuiteParams) -> Vec<usize> {
    if params.quick { vec![16, 1024] } else { (2..=9).map(|p| 1 << (2 * p)).collect() }
}

/// Exchanges per sample, as the MPI peers time them (`--inner 200` shrunk by
/// `inner_for` in benches/mpi/common.h): a tenth from 64 KiB on, a quarter of that from
/// 512 KiB. Samples of the same length matter on a shared host: a sample of 100
/// exchanges of 64 KiB (2 ms) nearly always met a preemption of one rank, which stalls
/// its partner in the next epoch, where the peers' 20-exchange samples mostly did not
/// (sccemu 413 µs against its own MPI library's 20 µs on the same C pattern, one run).
pub fn iters_for(params: &SuiteParams, bytes: usize) -> u32 {
    let mut n = if params.quick { 10 } else { 200 };
    if bytes >= 65536 {
        n /= 10;
    }
    if bytes >= 524_288 {
        n /= 4;
    }
    n.max(1)
}

/// The suite: each version's time per exchange, as patterns `halo-<version>` that the
/// harness pairs with the MPI peers' and divides by `halo-p2p` (the paper's ratios).
pub fn suite(params: &SuiteParams) -> Vec<Row> {
    let mut rows = Vec::new();
    for n in if params.quick { vec![2] } else { vec![2, 4] } {
        for bytes in sizes(params) {
            for version in Version::ALL {
                let p = Params {
                    bytes,
                    iters: iters_for(params, bytes),
                    // The peers' repetitions and warm-up samples (`sccrun bench`'s
                    // `--reps` and `--warmup`).
                    reps: params.reps(20),
                    warmup: params.warmup(3),
                    version,
                };
                let pattern = format!("halo-{}", version.pattern());
                match Job::new(n).run(&p, measure) {
                    Ok(mut ranks) => {
                        let (samples, intact) = ranks.swap_remove(0);
                        let mut r = row("halo", "sccemu", &pattern, n, bytes as u64, samples);
                        r.note = (!intact).then(|| "data check FAILED".to_owned());
                        rows.push(r);
                    }
                    Err(e) => eprintln!("halo suite: {pattern} at {bytes} B on {n} cores failed: {e}"),
                }
            }
        }
    }
    rows
}
