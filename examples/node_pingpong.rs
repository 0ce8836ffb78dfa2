//! Two-sided latency and bandwidth between ranks 0 and 1 of whatever job runs it: on one
//! node (`sccrun -n 2`), or on two (`sccrun --nodes 2 -n 2`, where rank 1 is on the
//! other node and every message crosses the gateways). `sccrun bench nodes` runs it
//! beside `benches/mpi/pt2pt.c` under the gateways' own mpirun flags.
//!
//! Same options and output as the MPI peer programs (`benches/mpi/common.h`), so that
//! one parser reads both and the two sides take samples of the same shape:
//!
//! ```text
//! node_pingpong --patterns latency,bandwidth --sizes 8,1048576 --reps 20 --warmup 3 --inner 1000
//! BEGIN pattern bytes
//! ROW pattern bytes reps median p10 p90          (µs per operation, rank 0 prints)
//! ```
//!
//! - `latency`: ping-pong, one-way µs (half a round trip);
//! - `bandwidth`: rank 0 isends a window of [`WINDOW`] messages, rank 1 has a receive
//!   posted for each and acknowledges the window with an empty message; µs per message.
//!
//! A sample is `count` operations timed on rank 0 and divided by `count`; `count` is
//! `--inner` (shrunk for large messages as the C programs shrink it) and then cut so
//! that a sample takes about [`SAMPLE_BUDGET`], from one timed operation. Every sample
//! starts from a world barrier; other ranks (a job of more than 2, e.g. ranks 0 and 1
//! on one node of a 2-node job) only take part in the barriers.
//!
//! `sccrun --nodes 2 -n 2 -- target/release/examples/node_pingpong --patterns latency --sizes 8`

use std::time::{Duration, Instant};

use clap::Parser;
use sccemu::Core;

/// Messages in flight in one `bandwidth` operation (as in `benches/mpi/pt2pt.c`).
const WINDOW: usize = 64;
/// About how long one timed sample should take.
const SAMPLE_BUDGET: Duration = Duration::from_millis(20);

#[derive(Parser, Debug)]
#[command(about = "latency and bandwidth between ranks 0 and 1, one node or two")]
struct Cli {
    /// Patterns: latency, bandwidth.
    #[arg(long, value_delimiter = ',', default_value = "latency,bandwidth")]
    patterns: Vec<String>,
    /// Message sizes in bytes.
    #[arg(long, value_delimiter = ',', default_value = "8,1048576")]
    sizes: Vec<usize>,
    /// Timed samples per (pattern, size).
    #[arg(long, default_value_t = 20)]
    reps: u32,
    /// Untimed samples first (at least one).
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Operations per sample before the shrinking rules.
    #[arg(long, default_value_t = 1000)]
    inner: u32,
}

type Error = Box<dyn std::error::Error>;

/// `count` operations of `pattern` at `size` bytes (ranks 0 and 1 only); `window` is
/// rank 1's receive buffers for `bandwidth`, [`WINDOW`] times `buf`'s length.
fn run(core: &Core, pattern: &str, buf: &mut [u8], window: &mut [u8], count: u32) -> Result<(), Error> {
    let me = core.rank();
    let size = buf.len();
    for _ in 0..count {
        match (pattern, me) {
            ("latency", 0) => {
                core.send(1, 1, buf)?;
                core.recv(1, 1, buf)?;
            }
            ("latency", _) => {
                core.recv(0, 1, buf)?;
                core.send(0, 1, buf)?;
            }
            ("bandwidth", 0) => {
                let sends = (0..WINDOW).map(|_| core.isend(1, 2, &buf[..])).collect::<Result<Vec<_>, _>>()?;
                core.wait_all(sends)?;
                core.recv(1, 3, &mut [])?;
            }
            ("bandwidth", _) => {
                // One buffer per message: posted receives may not share one.
                let recvs = window
                    .chunks_mut(size.max(1))
                    .map(|chunk| core.irecv(0, 2, &mut chunk[..size]))
                    .collect::<Result<Vec<_>, _>>()?;
                core.wait_all(recvs)?;
                core.send(0, 3, &[])?;
            }
            (other, _) => return Err(format!("unknown pattern {other}").into()),
        }
    }
    Ok(())
}

/// What one operation counts for: half a round trip, or one message of the window.
fn per_op_scale(pattern: &str) -> f64 {
    if pattern == "latency" { 0.5 } else { 1.0 / WINDOW as f64 }
}

/// `--inner` shrunk for large messages, as `benches/mpi/common.h` does.
fn inner_for(inner: u32, bytes: usize) -> u32 {
    let mut n = inner;
    if bytes >= 65536 {
        n /= 10;
    }
    if bytes >= 524288 {
        n /= 4;
    }
    n.max(1)
}

/// Rank 0 times one operation and tells rank 1 how many make a sample.
fn calibrate(
    core: &Core,
    pattern: &str,
    buf: &mut [u8],
    window: &mut [u8],
    planned: u32,
) -> Result<u32, Error> {
    core.barrier()?;
    let start = Instant::now();
    run(core, pattern, buf, window, 1)?;
    let one = start.elapsed().as_secs_f64();
    let mut word = [0u8; 4];
    if core.rank() == 0 {
        let fits = (SAMPLE_BUDGET.as_secs_f64() / one.max(1e-9)) as u32;
        word = planned.min(fits).max(1).to_le_bytes();
        core.send(1, 4, &word)?;
    } else {
        core.recv(0, 4, &mut word)?;
    }
    Ok(u32::from_le_bytes(word))
}

/// The `q` percentile of sorted samples, by `benches/mpi/common.h`'s rule.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() -> Result<(), Error> {
    sccemu::job::init();
    let cli = Cli::parse();
    let core = Core::attach()?;
    if core.size() < 2 {
        return Err("needs at least 2 ranks".into());
    }
    let me = core.rank();
    let active = me < 2;
    let warmup = cli.warmup.max(1);
    for pattern in &cli.patterns {
        for &size in &cli.sizes {
            if me == 0 {
                println!("BEGIN {pattern} {size}");
            }
            let mut buf = vec![7u8; size];
            // Allocated once, as the C peer's one buffer is: a fresh window per operation
            // would time its page faults (64 of 16 MiB: a GiB each operation).
            let mut window =
                vec![0u8; if me == 1 && pattern == "bandwidth" { size.max(1) * WINDOW } else { 0 }];
            let count = if active {
                calibrate(&core, pattern, &mut buf, &mut window, inner_for(cli.inner, size))?
            } else {
                core.barrier()?;
                0
            };
            let mut samples = Vec::new();
            for rep in 0..warmup + cli.reps {
                core.barrier()?;
                if !active {
                    continue;
                }
                let start = Instant::now();
                run(&core, pattern, &mut buf, &mut window, count)?;
                let us = start.elapsed().as_secs_f64() * 1e6 / f64::from(count) * per_op_scale(pattern);
                if rep >= warmup {
                    samples.push(us);
                }
            }
            if me == 0 {
                samples.sort_by(f64::total_cmp);
                let (median, p10, p90) =
                    (percentile(&samples, 0.5), percentile(&samples, 0.1), percentile(&samples, 0.9));
                println!("ROW {pattern} {size} {} {median:.6} {p10:.6} {p90:.6}", cli.reps);
            }
        }
    }
    core.barrier()?;
    Ok(())
}
