//! The main demo: a token travels round the ring of cores through their MPBs, then
//! every core runs barriers, and rank 0 prints a summary.
//!
//! Run it under the launcher: `sccrun -n 48 target/release/examples/demo [ROUNDS]`.

use std::process::ExitCode;
use std::time::Duration;

use sccemu::Core;

const BARRIERS: u32 = 200;

fn run(core: &Core, rounds: u32) -> Result<Option<String>, Box<dyn std::error::Error>> {
    let (rank, n) = (core.rank(), core.size());
    let next = (rank + 1) % n;
    let token_flag = core.flag_alloc()?;
    let token_slot = core.mpb_alloc(8)?;
    let pass = |token: u64, round: u32| -> Result<(), Box<dyn std::error::Error>> {
        core.mpb_put(next, token_slot.offset, &token.to_le_bytes())?;
        core.flag_write(token_flag, next, round)?;
        Ok(())
    };
    let receive = |round: u32| -> Result<u64, Box<dyn std::error::Error>> {
        core.flag_wait(token_flag, round)?;
        let mut bytes = [0u8; 8];
        core.mpb_get(rank, token_slot.offset, &mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    };

    core.barrier()?;
    let ring_started = core.clock();
    let mut token = 0u64;
    let mut mesh_hops = 0u64;
    for round in 1..=rounds {
        if rank == 0 {
            pass(token, round)?;
            token = receive(round)?;
        } else {
            pass(receive(round)? + 1, round)?;
        }
    }
    let ring_time = core.clock() - ring_started;
    for r in 0..n {
        mesh_hops += u64::from(
            sccemu::MeshPosition::of(r, core.mesh())
                .hops(&sccemu::MeshPosition::of((r + 1) % n, core.mesh())),
        );
    }

    core.barrier()?;
    let barriers_started = core.clock();
    for _ in 0..BARRIERS {
        core.barrier()?;
    }
    let barrier_time = core.clock() - barriers_started;

    if rank != 0 {
        return Ok(None);
    }
    let expected = u64::from(rounds) * u64::from(n - 1);
    if token != expected {
        return Err(format!("token arrived as {token}, expected {expected}: a hand-off was lost").into());
    }
    let per = |d: Duration, count: u64| d.as_secs_f64() * 1e6 / count.max(1) as f64;
    Ok(Some(format!(
        "sccemu demo: {n} cores on a {} mesh, wait policy {:?}\n\
         token ring:  {rounds} laps, {} MPB hand-offs, token {token} (correct), {mesh_hops} router hops per lap\n\
         \x20            {:.2} µs per hand-off, {:.1} µs per lap\n\
         barriers:    {BARRIERS} in {:.1} ms, {:.2} µs each",
        core.mesh(),
        core.wait_policy(),
        u64::from(rounds) * u64::from(n),
        per(ring_time, u64::from(rounds) * u64::from(n)),
        per(ring_time, u64::from(rounds)),
        barrier_time.as_secs_f64() * 1e3,
        per(barrier_time, u64::from(BARRIERS)),
    )))
}

fn main() -> ExitCode {
    let rounds = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let core = match Core::attach() {
        Ok(core) => core,
        Err(e) => {
            eprintln!("demo: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&core, rounds) {
        Ok(Some(summary)) => println!("{summary}"),
        Ok(None) => {}
        Err(e) => {
            eprintln!("demo: rank {}: {e}", core.rank());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
