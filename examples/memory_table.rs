//! Shared memory per process and per job of the two channel protocols, N = 2..4096,
//! from the real segment layout: the SRB stays constant per process, per-peer grows
//! with N (and its MPB slots stop fitting the 8 KiB MPB beyond 64 cores).
//!
//!     cargo run --example memory_table

use sccemu::{ChannelKind, footprint};

fn kib(bytes: u64) -> String {
    if bytes >= 1 << 40 {
        format!("{:.1} TiB", bytes as f64 / (1u64 << 40) as f64)
    } else if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

fn main() {
    let mut ns: Vec<u32> = (1..=12).map(|k| 1 << k).collect();
    ns.push(48);
    ns.sort_unstable();
    println!(
        "{:>5} | {:>12} {:>12} | {:>12} {:>12} {:>10} {:>6}",
        "N", "srb/proc", "srb/job", "perpeer/proc", "perpeer/job", "MPB/proc", "fits"
    );
    for n in ns {
        let s = footprint(ChannelKind::Srb, n);
        let p = footprint(ChannelKind::PerPeer, n);
        println!(
            "{:>5} | {:>12} {:>12} | {:>12} {:>12} {:>10} {:>6}",
            n,
            kib(s.per_process),
            kib(s.per_job),
            kib(p.per_process),
            kib(p.per_job),
            kib(p.mpb_per_process),
            if p.fits { "yes" } else { "no" }
        );
    }
    println!(
        "srb: one {}-byte ring per core plus {} B of counters in its MPB, whatever N.",
        sccemu::Config::new(2).ring_bytes,
        sccemu::protocol::ring::srb::COUNTER_BYTES
    );
    println!(
        "perpeer: one MPB slot and one ring_bytes DRAM area per possible sender (O(N) per core, O(N^2) per job);"
    );
    println!("         'fits' = its slots (>= 64 B each) fit half of the 8 KiB MPB.");
}
