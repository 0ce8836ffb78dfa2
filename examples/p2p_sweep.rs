//! Two-sided message cost from 4 KiB to 4 MiB between two cores, over both channels:
//! ping-pong (one-way µs, half a round trip) and streaming (µs per message of back-to-back
//! blocking sends, acknowledged at the end), plus many-to-one (N-1 senders, any-source
//! receives). The figures behind the single-copy crossover in `p2p::cma`; run it with
//! `SCCEMU_SINGLE_COPY=off` for the ring path alone.
//!
//! `cargo run --release --example p2p_sweep -- --sizes 4096,65536 --reps 9`

use std::time::Instant;

use clap::Parser;
use sccemu::{ANY_SOURCE, ChannelKind, Core, Job};
use serde::{Deserialize, Serialize};

#[derive(Parser, Debug)]
#[command(about = "ping-pong, streaming and many-to-one over both channels")]
struct Cli {
    /// Message sizes in bytes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4096,16384,32768,65536,131072,262144,1048576,4194304"
    )]
    sizes: Vec<usize>,
    /// Timed samples per size (the median and the minimum are printed).
    #[arg(long, default_value_t = 9)]
    reps: u32,
    /// Patterns: pingpong, stream, m2o.
    #[arg(long, value_delimiter = ',', default_value = "pingpong,stream")]
    patterns: Vec<String>,
    /// Channels: srb, perpeer.
    #[arg(long, value_delimiter = ',', default_value = "srb,perpeer")]
    channels: Vec<String>,
    /// Cores for many-to-one.
    #[arg(long, default_value_t = 48)]
    cores: u32,
    /// SRB receive ring bytes per core (a power of two; default: the configuration's).
    #[arg(long)]
    ring_bytes: Option<u32>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Plan {
    pattern: String,
    sizes: Vec<usize>,
    reps: u32,
}

fn iters(size: usize) -> u32 {
    ((16 << 20) / size).clamp(8, 2000) as u32
}

fn run(core: &Core, plan: Plan) -> Result<Vec<Vec<f64>>, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (me, n) = (core.rank(), core.size());
    let mut out = Vec::new();
    for &size in &plan.sizes {
        let mut buf = vec![7u8; size];
        let mut samples = Vec::new();
        let iters = if plan.pattern == "m2o" { (iters(size) / (n - 1)).max(4) } else { iters(size) };
        for rep in 0..plan.reps + 2 {
            core.barrier().map_err(|x| e(&x))?;
            let t = Instant::now();
            let per = match plan.pattern.as_str() {
                "pingpong" => {
                    for _ in 0..iters {
                        if me == 0 {
                            core.send(1, 1, &buf).map_err(|x| e(&x))?;
                            core.recv(1, 1, &mut buf).map_err(|x| e(&x))?;
                        } else if me == 1 {
                            core.recv(0, 1, &mut buf).map_err(|x| e(&x))?;
                            core.send(0, 1, &buf).map_err(|x| e(&x))?;
                        }
                    }
                    2 * iters
                }
                "stream" => {
                    if me == 0 {
                        for _ in 0..iters {
                            core.send(1, 2, &buf).map_err(|x| e(&x))?;
                        }
                        core.recv(1, 3, &mut [0u8; 1]).map_err(|x| e(&x))?;
                    } else if me == 1 {
                        for _ in 0..iters {
                            core.recv(0, 2, &mut buf).map_err(|x| e(&x))?;
                        }
                        core.send(0, 3, &[0u8; 1]).map_err(|x| e(&x))?;
                    }
                    iters
                }
                _ => {
                    if me == 0 {
                        for _ in 0..iters * (n - 1) {
                            core.recv(ANY_SOURCE, 4, &mut buf).map_err(|x| e(&x))?;
                        }
                    } else {
                        for _ in 0..iters {
                            core.send(0, 4, &buf).map_err(|x| e(&x))?;
                        }
                    }
                    iters * (n - 1)
                }
            };
            if rep >= 2 {
                samples.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(per));
            }
        }
        out.push(samples);
    }
    Ok(out)
}

fn main() -> Result<(), String> {
    sccemu::job::init();
    let cli = Cli::parse();
    println!(
        "{:<9} {:<8} {:>9} {:>11} {:>11} {:>9}",
        "pattern", "channel", "bytes", "median µs", "min µs", "MB/s"
    );
    for pattern in &cli.patterns {
        for channel in &cli.channels {
            let kind = if channel == "perpeer" { ChannelKind::PerPeer } else { ChannelKind::Srb };
            let cores = if pattern == "m2o" { cli.cores } else { 2 };
            let plan = Plan { pattern: pattern.clone(), sizes: cli.sizes.clone(), reps: cli.reps };
            let mut job = Job::new(cores).channel(kind);
            if let Some(bytes) = cli.ring_bytes {
                job = job.ring_bytes(bytes);
            }
            let ranks = job.run(&plan, run).map_err(|e| e.to_string())?;
            for (&size, mut samples) in cli.sizes.iter().zip(ranks[0].clone()) {
                samples.sort_by(f64::total_cmp);
                let median = samples[samples.len() / 2];
                println!(
                    "{pattern:<9} {channel:<8} {size:>9} {median:>11.2} {:>11.2} {:>9.0}",
                    samples[0],
                    size as f64 / median
                );
            }
        }
    }
    Ok(())
}
