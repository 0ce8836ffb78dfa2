//! The shared receive buffer against per-peer channels: shared memory per process and
//! per job as the job grows (from the real layout; rows carry bytes, not times), and
//! many-to-one throughput of small messages as the number of senders grows.

use sccemu::{ChannelKind, footprint};

use crate::measure::{Row, SuiteParams, row};
use crate::pt2pt::{PROTOCOLS, Plan, many_to_one, rows};

fn memory_row(pattern: &str, name: &str, cores: u32, bytes: u64, fits: bool) -> Row {
    let mut r = row("srb", name, pattern, cores, bytes, vec![]);
    r.mb_per_s = None;
    r.note =
        Some(format!("{bytes} shared bytes{}", if fits { "" } else { "; perpeer slots do not fit the MPB" }));
    r
}

pub fn run(params: &SuiteParams) -> Vec<Row> {
    let mut out = Vec::new();
    let mut ns: Vec<u32> = (1..=10).map(|k| 1 << k).chain([48]).collect();
    ns.sort_unstable();
    for &n in &ns {
        for (kind, name) in PROTOCOLS {
            let f = footprint(kind, n);
            out.push(memory_row("memory/process", name, n, f.per_process, f.fits));
            out.push(memory_row("memory/job", name, n, f.per_job, f.fits));
        }
    }
    let cores: &[u32] = if params.quick { &[2, 4] } else { &[2, 4, 8, 16, 48] };
    for &n in cores {
        for (kind, name) in PROTOCOLS {
            if kind == ChannelKind::PerPeer && !footprint(kind, n).fits {
                continue;
            }
            let plan = Plan::new(params, vec![64], if n > 8 { 5 } else { 10 });
            out.extend(rows("srb", "many-to-one 64B", n, kind, name, plan, many_to_one));
        }
    }
    out
}
