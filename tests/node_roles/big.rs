//! The `big` role: two-sided messages of 4 MiB and more between ranks 0 and 1, which a
//! 2-node job of 2 ranks puts on different nodes, checked byte for byte.
//!
//! Why these sizes: a blocking send (or `isend_owned`) of at least the single-copy
//! threshold is read out of its sender by the sending gateway, and a message of at most
//! 4 MiB crosses as one whole frame that the receiving gateway lends; a longer one
//! crosses as ring-sized data fragments, 4 MiB per collect (`sccemu::job::gateway`'s
//! `pull`). A borrowed `isend` is copied and crosses by the ring whatever its size. So
//! 4 MiB is the last whole frame, 4 MiB + 1 the first message in pieces, and 9 MiB + 3
//! takes three collects and ends in a partial entry.
//!
//! Every byte depends on its position (a word's index times an odd constant), so a
//! fragment lost, repeated or moved fails the check, which a pattern of period 256
//! would not see. Each size goes by each way of sending, from rank 0 or rank 1 in turn
//! (so both gateways read and lend), received by `recv`, a posted `irecv` or
//! `recv_vec` (each way of sending meets each over the sizes). Then a window of large and small
//! messages in flight at once must arrive in order at a slow receiver: the flow's
//! credit closes while rank 0's copied isend fills the stand-in ring with ring-sized
//! fragments, which the sending gateway must leave there without walking past them
//! (it once read on round the full ring forever, `channel`).

use std::time::Duration;

use sccemu::Core;

/// Message sizes: the last whole frame, the first in pieces, three collects' worth.
pub const SIZES: [usize; 3] = [4 << 20, (4 << 20) + 1, (9 << 20) + 3];

/// The ways of sending: blocking, nonblocking copied, nonblocking handed over.
const MODES: [&str; 3] = ["send", "isend", "isend_owned"];

/// The word at index `k` of a message seeded `seed`: distinct for every `k`.
fn word(k: usize, seed: u64) -> [u8; 8] {
    ((k as u64) ^ (seed << 40)).wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes()
}

/// A message of `len` bytes seeded `seed`.
fn message(len: usize, seed: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    for (k, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&word(k, seed)[..chunk.len()]);
    }
    bytes
}

/// Where `got` first differs from [`message`]`(len, seed)`, if it does.
fn first_wrong(got: &[u8], len: usize, seed: u64) -> Option<usize> {
    if got.len() != len {
        return Some(got.len().min(len));
    }
    got.chunks(8).enumerate().find_map(|(k, chunk)| {
        let want = word(k, seed);
        chunk.iter().zip(want).position(|(a, b)| *a != b).map(|i| 8 * k + i)
    })
}

/// Sends `data` to `dest` by `mode`, waiting for the request if there is one.
fn send(
    core: &Core,
    mode: &str,
    dest: u32,
    tag: u32,
    data: Vec<u8>,
) -> Result<(), Box<dyn std::error::Error>> {
    match mode {
        "send" => core.send(dest, tag, &data)?,
        "isend" => {
            core.isend(dest, tag, &data)?.wait()?;
        }
        "isend_owned" => {
            core.isend_owned(dest, tag, data)?.wait()?;
        }
        other => panic!("unknown mode {other}"),
    }
    Ok(())
}

/// Receives a message of `len` bytes from `src`: by `recv`, a posted `irecv` or
/// `recv_vec`, as `way` says.
fn receive(
    core: &Core,
    way: usize,
    src: u32,
    tag: u32,
    len: usize,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    Ok(match way % 3 {
        0 => {
            let mut got = vec![0u8; len];
            let status = core.recv(src, tag, &mut got)?;
            got.truncate(status.len);
            got
        }
        1 => {
            let mut got = vec![0u8; len];
            let status = core.irecv(src, tag, &mut got)?.wait()?;
            got.truncate(status.len);
            got
        }
        _ => core.recv_vec(src, tag)?.0,
    })
}

pub fn big(core: &Core) -> Result<(), Box<dyn std::error::Error>> {
    let rank = core.rank();
    if rank > 1 {
        return Ok(core.barrier()?);
    }
    let peer = 1 - rank;
    for (s, &len) in SIZES.iter().enumerate() {
        for (m, mode) in MODES.iter().enumerate() {
            let (sender, seed) = (((s + m) % 2) as u32, (s * 4 + m) as u64 + 1);
            if rank == sender {
                send(core, mode, peer, 11, message(len, seed))?;
            } else {
                let got = receive(core, s + m, peer, 11, len)?;
                let wrong = first_wrong(&got, len, seed);
                assert_eq!(
                    wrong,
                    None,
                    "{len} B by {mode} from rank {peer}: {} B, first wrong byte",
                    got.len()
                );
            }
        }
    }
    // A window in flight to a receiver that sleeps first: large messages copied and
    // handed over, a small one between them, all of one pair, to arrive in the order
    // sent. The first fills the stand-in ring with entries of half a ring each while
    // the credit is closed.
    let window =
        [((2 << 20) + 9, "isend"), (8, "isend"), ((5 << 20) + 5, "isend_owned"), ((1 << 20) + 7, "isend")];
    if rank == 0 {
        let mut sent = Vec::new();
        for (i, &(len, mode)) in window.iter().enumerate() {
            let data = message(len, 100 + i as u64);
            sent.push(match mode {
                "isend" => core.isend(1, 12, &data)?,
                _ => core.isend_owned(1, 12, data)?,
            });
        }
        core.wait_all(sent)?;
    } else {
        std::thread::sleep(Duration::from_millis(300));
        for (i, &(len, _)) in window.iter().enumerate() {
            let got = receive(core, i, 0, 12, len)?;
            assert_eq!(
                first_wrong(&got, len, 100 + i as u64),
                None,
                "window message {i}: {} of {len} B",
                got.len()
            );
        }
    }
    core.barrier()?;
    if rank == 0 {
        println!("big messages crossed intact");
    }
    Ok(())
}
