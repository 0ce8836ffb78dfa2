//! The `behind` role (issue 23): window and MPB requests that must complete before
//! their target takes two-sided messages queued for it, which flow control holds back.
//!
//! Three ranks, the last (the target) on another node than ranks 0 and 1. The target
//! takes no message until both flags are set. Rank 0 isends it more than a credit
//! window and a ring of messages, so they fill its flow's credit, the target's stand-in
//! ring and rank 0's own send queue; then rank 0 locks the target's part of a window,
//! puts, unlocks and sets the first flag: requests behind its own queued messages.
//! Rank 1 then puts and sets the second flag: requests behind another sender's data
//! that fills the stand-in ring. The target polls the flags with a deadline, so a
//! request that waits fails the role instead of hanging it; then it checks the puts and
//! takes every message, whole and in order.

use std::time::{Duration, Instant};

use sccemu::{Core, LockKind, Placement};

/// Messages rank 0 queues: 2.5 MiB in all, past the 1 MiB credit and a 64 KiB ring.
pub const MESSAGES: u32 = 160;
/// Bytes of each (a few ring entries, under the single-copy threshold: isends copied).
const LEN: usize = 16 * 1024;
/// What each origin puts into the target's part, at its own rank.
const PUT: u64 = 0x5eed_0000;

fn byte(i: u32, at: usize) -> u8 {
    (at as u32 ^ i.wrapping_mul(131)) as u8
}

pub fn behind(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let (rank, target) = (core.rank(), core.size() - 1);
    let win = core.window::<u64>(8, Placement::Dram)?;
    let flags = [core.flag_alloc()?, core.flag_alloc()?];
    core.barrier()?;
    match rank {
        0 => {
            let messages: Vec<Vec<u8>> =
                (0..MESSAGES).map(|i| (0..LEN).map(|at| byte(i, at)).collect()).collect();
            let sent: Vec<_> = messages.iter().map(|m| core.isend(target, 8, m)).collect::<Result<_, _>>()?;
            // Long enough for the gateway to run out of credit for the flow.
            std::thread::sleep(Duration::from_millis(200));
            let epoch = win.lock(LockKind::Exclusive, target)?;
            epoch.put(target, 0, &[PUT])?;
            epoch.unlock()?;
            core.flag_write(flags[0], target, 1)?;
            for request in sent {
                request.wait()?;
            }
        }
        1 => {
            std::thread::sleep(Duration::from_millis(400));
            let epoch = win.lock(LockKind::Shared, target)?;
            epoch.put(target, 1, &[PUT + 1])?;
            epoch.unlock()?;
            core.flag_write(flags[1], target, 1)?;
        }
        _ => {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let mut unset = Vec::new();
                for (origin, &flag) in flags.iter().enumerate() {
                    if core.flag_read(flag, rank)? != 1 {
                        unset.push(origin);
                    }
                }
                if unset.is_empty() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the requests of ranks {unset:?} waited behind two-sided data"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            let epoch = win.lock(LockKind::Shared, rank)?;
            let mut got = [0u64; 2];
            epoch.get(rank, 0, &mut got)?;
            epoch.unlock()?;
            assert_eq!(got, [PUT, PUT + 1], "the puts before the flags");
            let mut message = vec![0u8; LEN];
            for i in 0..MESSAGES {
                core.recv(0, 8, &mut message)?;
                assert!(message.iter().enumerate().all(|(at, &b)| b == byte(i, at)), "message {i}");
            }
        }
    }
    core.barrier()?;
    win.free()?;
    Ok(())
}
