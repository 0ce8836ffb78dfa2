//! Scale: start N cores, meet at a barrier, allgather, leave; print how long each step
//! took and the memory the job used.
//!
//!     cargo run --release --example scale               # 48, 1024 and 4096 cores
//!     cargo run --release --example scale -- 256 2048   # other sizes
//!
//! Started alone, it launches itself as each job through the library's launcher (the
//! one `sccrun` uses, with `sccrun`'s defaults) and prints one row per job. As a core:
//! attach, world barrier, world communicator and an allgather of one u64 per core
//! (checked), then each core reads its own memory from `/proc/self` while every core is
//! still alive (between two collectives), and a gather brings every core's
//! figures to rank 0, which writes them to the file named by `SCALE_REPORT`. Last, after
//! a barrier, each core sends its rank to the next over the default channel and checks
//! what the previous one sent.
//!
//! Times are from the segment's creation (the launcher's clock zero): when the last core
//! had attached, had left the barrier, had the world communicator, had its allgather; and
//! when the launcher had reaped every process (wall: the measuring and the ring too).
//! RSS and PSS are per process, averaged; PSS shares each
//! page among the processes that map it, so PSS x N is the job's memory. The segment is
//! the memfd's size (address space) and its resident pages (`st_blocks`).

use std::error::Error;
use std::os::unix::fs::MetadataExt;
use std::time::Instant;

use sccemu::job::launcher::Launch;
use sccemu::{Allgather, Config, Core};

const DEFAULT_SIZES: [u32; 3] = [48, 1024, 4096];
const REPORT_VAR: &str = "SCALE_REPORT";
/// Figures each core contributes: attach, barrier, world and allgather times (ns), then
/// RSS, PSS and page tables (KiB).
const FIGURES: usize = 7;

fn main() -> Result<(), Box<dyn Error>> {
    if std::env::var_os("SCCEMU_RANK").is_some() {
        return core();
    }
    let sizes: Vec<u32> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { sizes };
    println!("seconds from launch until the last core was past each step; memory per process (mean)");
    println!(
        "cores  attached  barrier  world  allgather  wall   | RSS       PSS      PTE     | segment  resident"
    );
    for n in sizes {
        println!("{}", job(n)?);
    }
    Ok(())
}

/// Runs one job of `n` cores; its row of the table.
fn job(n: u32) -> Result<String, Box<dyn Error>> {
    let report = std::env::temp_dir().join(format!("sccemu-scale-{}-{n}", std::process::id()));
    let config = Config { wait: sccemu::job::resolve_wait(n) as u32, ..Config::new(n) };
    let mut launch = Launch::new(config, std::env::current_exe()?);
    launch.env.push((REPORT_VAR.into(), report.clone().into()));
    let started = Instant::now();
    let outcome = launch.spawn()?.wait();
    let wall = started.elapsed().as_secs_f64();
    if let Some(why) = outcome.diagnosis() {
        return Err(format!("{n} cores: {why}").into());
    }
    let figures = std::fs::read_to_string(&report)?;
    let _ = std::fs::remove_file(&report);
    Ok(format!("{n:>5}  {}", figures.replacen('@', &format!("{wall:>5.2}"), 1)))
}

/// One core's part (module docs).
fn core() -> Result<(), Box<dyn Error>> {
    let core = Core::attach()?;
    let attached = core.clock();
    core.barrier()?;
    let met = core.clock();
    let world = core.world()?;
    let created = core.clock();
    let n = core.size() as usize;
    let mut all = vec![0u64; n];
    world.allgather(&[u64::from(core.rank()) * 3 + 1], &mut all, Allgather::Auto)?;
    let gathered = core.clock();
    if let Some(r) = (0..n).find(|&r| all[r] != r as u64 * 3 + 1) {
        return Err(format!("allgather: block {r} is {}", all[r]).into());
    }
    let (rss, pss) = smaps_rollup()?;
    let nanos = |d: std::time::Duration| d.as_nanos() as u64;
    let mine =
        [nanos(attached), nanos(met), nanos(created), nanos(gathered), rss, pss, status_kib("VmPTE:")?];
    // The segment as the allgather left it: read before the barrier, which nobody
    // passes, to write the gather's staging, before rank 0 arrives.
    let segment = (core.rank() == 0).then(segment_bytes).transpose()?;
    world.barrier()?;
    let mut rows = if core.rank() == 0 { vec![0u64; n * FIGURES] } else { Vec::new() };
    world.gather(0, &mine, &mut rows)?;
    if let Some(segment) = segment {
        let path = std::env::var_os(REPORT_VAR).ok_or("SCALE_REPORT is not set")?;
        std::fs::write(path, summary(&rows, n, segment))?;
    }
    // Then a message round the ring over the default channel (srb).
    let me = core.rank();
    let size = core.size();
    core.send((me + 1) % size, 1, &me.to_le_bytes())?;
    let mut word = [0u8; 4];
    core.recv((me + size - 1) % size, 1, &mut word)?;
    if u32::from_le_bytes(word) != (me + size - 1) % size {
        return Err(format!("ring: got {word:?} from the left").into());
    }
    Ok(())
}

/// Rank 0's part of the row: the latest time of each step, the mean memory figures,
/// and the segment. `@` stands for the wall time, which only the launcher knows.
fn summary(rows: &[u64], n: usize, (size, resident): (u64, u64)) -> String {
    let column = |i: usize| rows.chunks_exact(FIGURES).map(move |r| r[i]);
    let last = |i: usize| column(i).max().unwrap_or(0) as f64 / 1e9;
    let mean = |i: usize| column(i).sum::<u64>() as f64 / n as f64;
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    format!(
        "{:>8.3}  {:>7.3}  {:>5.3}  {:>9.3}  @  | {:>5.0} KiB {:>4.0} KiB {:>3.0} KiB | {:>3.0} MiB  {:>5.1} MiB",
        last(0),
        last(1),
        last(2),
        last(3),
        mean(4),
        mean(5),
        mean(6),
        mib(size),
        mib(resident),
    )
}

/// The segment's size and resident bytes (the memfd's allocated blocks).
fn segment_bytes() -> Result<(u64, u64), Box<dyn Error>> {
    let fd = std::env::var("SCCEMU_FD")?;
    let segment = std::fs::metadata(format!("/proc/self/fd/{fd}"))?;
    Ok((segment.size(), segment.blocks() * 512))
}

/// This process's RSS and PSS in KiB.
fn smaps_rollup() -> Result<(u64, u64), Box<dyn Error>> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup")?;
    Ok((kib(&text, "Rss:")?, kib(&text, "Pss:")?))
}

/// A `/proc/self/status` figure in KiB.
fn status_kib(field: &str) -> Result<u64, Box<dyn Error>> {
    kib(&std::fs::read_to_string("/proc/self/status")?, field)
}

fn kib(text: &str, field: &str) -> Result<u64, Box<dyn Error>> {
    let line = text.lines().find(|l| l.starts_with(field)).ok_or(format!("no {field} in /proc"))?;
    Ok(line[field.len()..].trim().trim_end_matches("kB").trim().parse()?)
}
