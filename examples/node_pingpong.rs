//! A ping-pong between ranks 0 and 1, for timing the link between two nodes:
//! `sccrun --nodes 2 -n 2 target/release/examples/node_pingpong [ROUNDS [GAP_US]]`. Rank 0
//! prints, for 8 B and 1 MiB, the median and mean one-way time (half a round trip) over
//! ROUNDS round trips (default 1000 for 8 B, a tenth of that for 1 MiB) after a few
//! warm-up ones. With GAP_US, rank 0 sleeps that long before each round trip (the link
//! is then idle when a message comes). Any other rank only joins the final barrier.

use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let core = sccemu::Core::attach()?;
    let rounds: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(1000);
    let gap = Duration::from_micros(std::env::args().nth(2).map(|a| a.parse()).transpose()?.unwrap_or(0));
    for (size, rounds) in [(8usize, rounds), (1 << 20, (rounds / 10).max(1))] {
        let mut buf = vec![0u8; size];
        let mut times = Vec::with_capacity(rounds);
        for i in 0..rounds + 10 {
            if core.rank() == 0 && !gap.is_zero() {
                std::thread::sleep(gap);
            }
            let start = Instant::now();
            if core.rank() == 0 {
                core.send(1, 1, &buf)?;
                core.recv(1, 1, &mut buf)?;
            } else if core.rank() == 1 {
                core.recv(0, 1, &mut buf)?;
                core.send(0, 1, &buf)?;
            }
            if i >= 10 {
                times.push(start.elapsed().as_secs_f64() * 1e6 / 2.0);
            }
        }
        if core.rank() == 0 && !times.is_empty() {
            times.sort_by(f64::total_cmp);
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            println!(
                "size {size} B: median {:.1} us, mean {:.1} us one-way ({rounds} round trips)",
                times[times.len() / 2],
                mean
            );
        }
    }
    core.barrier()?;
    Ok(())
}
