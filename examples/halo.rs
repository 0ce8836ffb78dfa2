//! The MPICH2 paper's ghost-area exchange: every core swaps a message with its four
//! neighbours on a 2-D torus, by isend/irecv or by put under fence, PSCW or lock.
//! Prints time per exchange and the one-sided/two-sided ratio (Tables 1 and 2).
//!
//! `cargo run --release --example halo -- --cores 4 --bytes 16,1024,65536`

use clap::Parser;
use sccemu::{Core, Job};
use sccemu_benches::exchange::Version;
use sccemu_benches::halo::{self, Params};

#[derive(Parser, Debug)]
#[command(about = "4-neighbour ghost exchange: two-sided vs fence, PSCW and lock")]
struct Cli {
    #[arg(long, default_value_t = 4)]
    cores: u32,
    /// Message sizes per neighbour, in bytes.
    #[arg(long, value_delimiter = ',', default_value = "16,256,4096,65536,262144")]
    bytes: Vec<usize>,
    #[arg(long, default_value_t = 200)]
    iters: u32,
}

fn entry(core: &Core, p: Params) -> Result<(Vec<f64>, bool), String> {
    halo::run(core, p).map_err(|e| e.to_string())
}

fn main() -> Result<(), String> {
    sccemu::job::init();
    let cli = Cli::parse();
    let (cols, rows) = halo::torus(cli.cores);
    println!("ghost exchange on a {cols}x{rows} torus of {} cores (µs per exchange, median of 7)", cli.cores);
    println!(
        "{:>8} {:>11} {:>18} {:>18} {:>18}",
        "bytes", "two-sided", "fence (ratio)", "pscw (ratio)", "lock (ratio)"
    );
    for &bytes in &cli.bytes {
        let mut times = Vec::new();
        for version in Version::ALL {
            let p = Params { bytes, iters: cli.iters, reps: 7, warmup: 1, version };
            let (mut samples, intact) =
                Job::new(cli.cores).run(&p, entry).map_err(|e| e.to_string())?.swap_remove(0);
            if !intact {
                return Err(format!("{} delivered wrong bytes", version.name()));
            }
            times.push(sccemu_benches::measure::summarize(&mut samples).0);
        }
        let cell = |t: f64| format!("{t:.2} ({:.2})", t / times[0]);
        println!(
            "{bytes:>8} {:>11.2} {:>18} {:>18} {:>18}",
            times[0],
            cell(times[1]),
            cell(times[2]),
            cell(times[3])
        );
    }
    Ok(())
}
