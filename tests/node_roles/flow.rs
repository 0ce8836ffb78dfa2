//! The roles of flow control between gateways (`sccemu::job::gateway`'s `credit`): a
//! slow receiver flooded from another node, and a window request that must pass the
//! flood's messages held back for it.

use std::time::{Duration, Instant};

use sccemu::{ANY_SOURCE, Core};

use super::NAMED_THE_DEAD;

/// Messages each sender of `flood` sends.
pub const FLOOD_MESSAGES: u32 = 32;

/// The length of `flood`'s message `i`: every fourth a large one (a blocking send past
/// the single-copy threshold: a whole frame the receiving gateway lends), the others
/// a few ring entries.
pub fn flood_len(i: u32) -> usize {
    if i % 4 == 3 { 512 * 1024 } else { 16 * 1024 }
}

/// Byte `at` of message `i` from rank `src`.
fn byte(src: u32, i: u32, at: usize) -> u8 {
    (at as u32 ^ (src * 31 + i * 7)) as u8
}

/// Sends messages `0..count` of lengths `len` to `dest`.
fn send_all(
    core: &Core,
    dest: u32,
    count: u32,
    len: fn(u32) -> usize,
) -> Result<(), Box<dyn std::error::Error>> {
    for i in 0..count {
        let message: Vec<u8> = (0..len(i)).map(|at| byte(core.rank(), i, at)).collect();
        core.send(dest, 8, &message)?;
    }
    Ok(())
}

/// Receives `count` messages from any of `sources` senders (ranks `0..sources`), each
/// checked whole and in its sender's order.
fn receive_all(
    core: &Core,
    sources: u32,
    count: u32,
    len: fn(u32) -> usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut next = vec![0u32; sources as usize];
    for _ in 0..count {
        let (got, status) = core.recv_vec(ANY_SOURCE, 8)?;
        let (src, i) = (status.source, next[status.source as usize]);
        assert_eq!(got.len(), len(i), "message {i} from rank {src}");
        assert!(got.iter().enumerate().all(|(at, &b)| b == byte(src, i, at)), "message {i} from rank {src}");
        next[src as usize] += 1;
    }
    Ok(())
}

/// Many to one: every rank but the last sends [`FLOOD_MESSAGES`] messages to the last,
/// which sleeps first (a slow receiver), then takes them from any source and checks
/// that each arrives whole and in its sender's order.
pub fn flood(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let sink = core.size() - 1;
    if core.rank() != sink {
        send_all(core, sink, FLOOD_MESSAGES, flood_len)?;
    } else {
        std::thread::sleep(Duration::from_millis(800));
        receive_all(core, sink, sink * FLOOD_MESSAGES, flood_len)?;
    }
    core.barrier()?;
    Ok(())
}

/// Three ranks, the last on another node than ranks 0 and 1: rank 0 sends the last
/// more large messages than its flow's credit lets through, which the last takes only
/// once rank 1, later, has written its flag: the flag's request must pass the messages
/// held back before it in the last rank's stand-in ring. The last rank polls the flag
/// with a deadline, so that a request held back fails the test instead of hanging it.
pub fn flood_flag(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    const MESSAGES: u32 = 6;
    let large = |_| 512 * 1024;
    let (rank, sink) = (core.rank(), core.size() - 1);
    let go = core.flag_alloc()?;
    match rank {
        0 => send_all(core, sink, MESSAGES, large)?,
        1 => {
            // Long enough for rank 0 to run out of credit.
            std::thread::sleep(Duration::from_millis(300));
            core.flag_write(go, sink, 1)?;
        }
        _ => {
            let deadline = Instant::now() + Duration::from_secs(20);
            while core.flag_read(go, rank)? != 1 {
                assert!(Instant::now() < deadline, "the flag's request never passed the messages held back");
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut next = 0;
            while next < MESSAGES {
                let mut got = vec![0u8; large(next)];
                core.recv(0, 8, &mut got)?;
                assert!(got.iter().enumerate().all(|(at, &b)| b == byte(0, next, at)), "message {next}");
                next += 1;
            }
        }
    }
    core.barrier()?;
    Ok(())
}

/// `flood`, but the receiver exits (status 3) instead of receiving, while its flows are
/// held back: every sender's error names it, and the job ends (a node that holds
/// messages back for a dead job still finishes).
pub fn flood_die(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let sink = core.size() - 1;
    if core.rank() == sink {
        std::thread::sleep(Duration::from_millis(300));
        std::process::exit(3);
    }
    let sent = send_all(core, sink, FLOOD_MESSAGES, flood_len).and_then(|()| Ok(core.barrier()?));
    match sent {
        Err(e) if e.to_string().contains(&format!("rank {sink} exited with status 3")) => {
            println!("rank {} named the dead rank {sink}", core.rank());
            std::process::exit(NAMED_THE_DEAD)
        }
        other => panic!("rank {} got {other:?}", core.rank()),
    }
}
