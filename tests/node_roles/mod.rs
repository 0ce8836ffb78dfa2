//! The programs the multi-node tests run as every rank (`tests/gateway.rs` over memory,
//! `tools/tests/multinode.rs` under `sccrun --nodes` over MPI): a test binary re-run
//! with [`ROLE`] set calls [`rank_main`], which runs that role and returns.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sccemu::{ANY_SOURCE, ANY_TAG, CollError, Core};

pub mod behind;
mod big;
mod coll;
mod dropped;
pub mod flow;
mod mpb;
mod rma;
mod rma_acc;
pub mod rma_timed;

/// The variable that names a rank's role.
pub const ROLE: &str = "NODE_TEST_ROLE";
/// What a survivor of `die` exits with when its error named the dead rank.
pub const NAMED_THE_DEAD: i32 = 42;

fn micros_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

/// A token around the ring, messages larger than a ring, synchronous sends, sums at
/// rank 0 from any source, and barriers that nobody leaves early.
pub fn ring(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, size) = (core.rank(), core.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    for lap in 0..3u64 {
        let mut token = [0u8; 8];
        if rank == 0 {
            core.send(next, 1, &lap.to_le_bytes())?;
            core.recv(prev, 1, &mut token)?;
            let expect = lap + u64::from(size * (size - 1) / 2);
            assert_eq!(u64::from_le_bytes(token), expect, "lap {lap}");
        } else {
            core.recv(prev, 1, &mut token)?;
            core.send(next, 1, &(u64::from_le_bytes(token) + u64::from(rank)).to_le_bytes())?;
        }
    }
    // 200 KiB: several fragments, more than a 64 KiB ring holds.
    let big: Vec<u8> = (0..200 * 1024).map(|i| (i as u32 * 7 + rank) as u8).collect();
    let request = core.isend(next, 2, &big)?;
    let (got, status) = core.recv_vec(prev, 2)?;
    request.wait()?;
    assert_eq!(status.source, prev);
    assert!(
        got.iter().enumerate().all(|(i, &b)| b == (i as u32 * 7 + prev) as u8),
        "big message from {prev}"
    );
    // Blocking sends of large messages (the single-copy path: across nodes the
    // gateways read the sender and lend to the receiver), rank 0 first: one whole frame,
    // and one longer than a whole frame, which crosses in pieces.
    for len in [300 * 1024, 5 << 20] {
        let mine: Vec<u8> = (0..len).map(|i| (i as u32 * 13 + rank) as u8).collect();
        let mut got = vec![0u8; len];
        if rank == 0 {
            core.send(next, 7, &mine)?;
            core.recv(prev, 7, &mut got)?;
        } else {
            core.recv(prev, 7, &mut got)?;
            core.send(next, 7, &mine)?;
        }
        assert!(
            got.iter().enumerate().all(|(i, &b)| b == (i as u32 * 13 + prev) as u8),
            "{len} B from {prev}"
        );
    }
    // Synchronous sends around the ring, rank 0 first (all sending first would deadlock).
    let mut word = [0u8; 4];
    if rank == 0 {
        core.ssend(next, 3, &rank.to_le_bytes())?;
        core.recv(prev, 3, &mut word)?;
    } else {
        core.recv(prev, 3, &mut word)?;
        core.ssend(next, 3, &rank.to_le_bytes())?;
    }
    assert_eq!(u32::from_le_bytes(word), prev);
    if rank == 0 {
        let mut sum = 0;
        for _ in 1..size {
            let status = core.recv(ANY_SOURCE, ANY_TAG, &mut word)?;
            assert_eq!(u32::from_le_bytes(word), status.source * 10);
            sum += status.source;
        }
        assert_eq!(sum, size * (size - 1) / 2);
    } else {
        core.send(0, 4, &(rank * 10).to_le_bytes())?;
    }
    for round in 0..4 {
        let late = round % size;
        let entered = if rank == late {
            std::thread::sleep(Duration::from_millis(30));
            micros_now()
        } else {
            0
        };
        core.barrier()?;
        let left = micros_now();
        if rank == late {
            for r in (0..size).filter(|&r| r != late) {
                core.send(r, 5, &entered.to_le_bytes())?;
            }
        } else {
            let mut at = [0u8; 8];
            core.recv(late, 5, &mut at)?;
            assert!(
                left >= u64::from_le_bytes(at),
                "rank {rank} left barrier {round} before rank {late} entered it"
            );
        }
    }
    Ok(())
}

/// The last rank dies after a barrier; everyone else waits for a message that never
/// comes, and must get an error naming it.
pub fn die(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let dead = core.size() - 1;
    core.barrier()?;
    if core.rank() == dead {
        std::process::exit(3);
    }
    let mut buf = [0u8; 4];
    match core.recv(ANY_SOURCE, 9, &mut buf) {
        Err(e) if e.to_string().contains(&format!("rank {dead} exited with status 3")) => {
            println!("rank {} named the dead rank {dead}", core.rank());
            std::process::exit(NAMED_THE_DEAD)
        }
        other => panic!("rank {} got {other:?}", core.rank()),
    }
}

/// Round trips per size of the `timed` role.
pub const TIMED_ROUNDS: u64 = 3;
/// Message sizes of the `timed` role: one fragment, and several.
pub const TIMED_SIZES: [usize; 2] = [8, 100 * 1024];

/// Ping-pong between ranks 0 and 1, then a barrier: communication only (for virtual
/// time).
pub fn timed(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    for size in TIMED_SIZES {
        let mut buf = vec![0u8; size];
        for _ in 0..TIMED_ROUNDS {
            if core.rank() == 0 {
                core.send(1, 6, &buf)?;
                core.recv(1, 6, &mut buf)?;
            } else if core.rank() == 1 {
                core.recv(0, 6, &mut buf)?;
                core.send(0, 6, &buf)?;
            }
        }
    }
    // Rank 0, which received last, arrives last.
    core.barrier()?;
    Ok(())
}

/// The ranks' entry: does nothing unless started as a rank of a node test.
pub fn rank_main() {
    let Ok(role) = std::env::var(ROLE) else { return };
    let core = Core::attach().unwrap();
    match role.as_str() {
        "ring" => ring(&core).unwrap(),
        "die" => die(&core).unwrap(),
        "timed" => timed(&core).unwrap(),
        "flood" => flow::flood(&core).unwrap(),
        "flood_flag" => flow::flood_flag(&core).unwrap(),
        "flood_die" => flow::flood_die(&core).unwrap(),
        "behind" => behind::behind(&core).unwrap(),
        "big" => big::big(&core).unwrap(),
        "cpus" => {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let cpus =
                status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_owned();
            println!("rank {} runs on cpus {cpus}", core.rank());
        }
        "coll" => coll::coll(&core).unwrap(),
        "rma_die" => {
            let dead = core.size() - 1;
            let e = rma::rma_die(&core);
            assert!(
                e.to_string().contains(&format!("rank {dead} exited with status 3")),
                "rank {}: {e}",
                core.rank()
            );
            println!("rank {} named the dead rank {dead}", core.rank());
            std::process::exit(NAMED_THE_DEAD)
        }
        "rma" => rma::rma(&core).unwrap(),
        "rma_acc" => rma_acc::rma_acc(&core).unwrap(),
        "dropped" => dropped::dropped(&core).unwrap(),
        "rma_timed" => rma_timed::rma_timed(&core).unwrap(),
        "rma_link" => rma_timed::rma_link(&core).unwrap(),
        "mpb" => mpb::mpb(&core).unwrap(),
        "coll_die" => {
            let dead = core.size() - 1;
            match coll::coll_die(&core) {
                CollError::Aborted(e)
                    if e.to_string().contains(&format!("rank {dead} exited with status 3")) =>
                {
                    println!("rank {} named the dead rank {dead}", core.rank());
                    std::process::exit(NAMED_THE_DEAD)
                }
                other => panic!("rank {} got {other:?}", core.rank()),
            }
        }
        // Waits for a message nobody sends, until the job aborts.
        "wait" => {
            let _ = core.barrier();
            println!("rank {} waits", core.rank());
            let _ = core.recv(ANY_SOURCE, 9, &mut [0u8; 4]);
        }
        other => panic!("unknown role {other}"),
    }
}
