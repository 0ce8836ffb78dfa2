//! Two-sided messaging from several threads of one core (`MPI_THREAD_MULTIPLE`): a
//! thread blocked in a receive never keeps another thread of its core from messaging.
//! Both channel kinds, the default wait policy and `Block`. Every rank runs under a
//! watchdog that turns a hang into a failed job.

mod common;

use std::time::Duration;

use common::{OrString, bounded, check};
use sccemu::{ANY_SOURCE, ChannelKind, Core, Job, WaitPolicy};

fn jobs() -> Vec<Job> {
    let mut all = Vec::new();
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        all.push(Job::new(2).channel(kind));
        all.push(Job::new(2).channel(kind).wait(WaitPolicy::Block));
    }
    all
}

/// Rank 0: thread A blocks receiving rank 1's reply, thread B (a moment later, so that
/// A is asleep) sends the request that rank 1 waits for before replying. Then the same
/// within rank 0 alone: A receives what B sends to its own core.
fn request_reply(core: &Core, _: ()) -> Result<(), String> {
    bounded(core, || {
        if core.rank() == 1 {
            let mut req = [0u8; 7];
            core.recv(0, 2, &mut req).s()?;
            check(&req == b"request", || "request damaged".into())?;
            return core.send(0, 1, b"reply").s();
        }
        let pause = || std::thread::sleep(Duration::from_millis(50));
        std::thread::scope(|s| {
            let a = s.spawn(|| {
                let mut reply = [0u8; 5];
                core.recv(1, 1, &mut reply).s()?;
                check(&reply == b"reply", || "reply damaged".into())
            });
            let b = s.spawn(|| {
                pause();
                core.send(1, 2, b"request").s()
            });
            b.join().unwrap()?;
            a.join().unwrap()
        })?;
        std::thread::scope(|s| {
            let a = s.spawn(|| {
                let mut got = [0u8; 4];
                core.recv(0, 3, &mut got).s()?;
                check(&got == b"self", || "self message damaged".into())
            });
            pause();
            core.send(0, 3, b"self").s()?;
            a.join().unwrap()
        })
    })
}

#[test]
fn a_blocked_receive_does_not_block_a_send_of_another_thread() {
    for job in jobs() {
        let config = job.config();
        job.run(&(), request_reply).unwrap_or_else(|e| panic!("{config:?}: {e}"));
    }
}

const THREADS: u32 = 4;
const MESSAGES: u32 = 48;
const SIZES: [usize; 7] = [0, 8, 100, 4000, 70_000, 9, 300_001];

fn message(rank: u32, thread: u32, i: u32) -> Vec<u8> {
    let len = SIZES[(i as usize + thread as usize) % SIZES.len()];
    let seed = rank.wrapping_mul(1_000_003) ^ thread.wrapping_mul(7919) ^ i;
    (0..len).map(|k| (k as u32).wrapping_mul(2654435761).wrapping_add(seed).to_le_bytes()[3]).collect()
}

/// Thread `t` of each rank exchanges `MESSAGES` messages tagged `t` with thread `t` of
/// the other rank, each thread through a different mix of calls; every message is
/// checked (content and order) and the bytes counted.
fn exchange(core: &Core, _: ()) -> Result<(u64, u64), String> {
    let peer = 1 - core.rank();
    let me = core.rank();
    bounded(core, || {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    s.spawn(move || -> Result<(u64, u64), String> {
                        let (mut sent, mut received) = (0u64, 0u64);
                        for i in 0..MESSAGES {
                            let out = message(me, t, i);
                            let want = message(peer, t, i);
                            let got = match t {
                                0 => {
                                    core.send(peer, t, &out).s()?;
                                    let mut buf = vec![0u8; want.len()];
                                    core.recv(peer, t, &mut buf).s()?;
                                    buf
                                }
                                1 => {
                                    let mut buf = vec![0u8; want.len()];
                                    let r = core.irecv(peer, t, &mut buf).s()?;
                                    let w = core.isend(peer, t, &out).s()?;
                                    r.wait().s()?;
                                    w.wait().s()?;
                                    buf
                                }
                                2 => {
                                    let w = core.isend(peer, t, &out).s()?;
                                    let status = core.probe(peer, t).s()?;
                                    check(status.len == want.len(), || format!("probe saw {status:?}"))?;
                                    let (buf, _) = core.recv_vec(peer, t).s()?;
                                    w.wait().s()?;
                                    buf
                                }
                                _ => {
                                    let mut buf = vec![0u8; want.len()];
                                    let status =
                                        core.sendrecv((peer, t, &out), ANY_SOURCE, t, &mut buf).s()?;
                                    check(status.source == peer, || format!("from {}", status.source))?;
                                    buf
                                }
                            };
                            check(got == want, || {
                                format!("thread {t}: message {i} damaged or out of order")
                            })?;
                            sent += out.len() as u64;
                            received += got.len() as u64;
                        }
                        Ok((sent, received))
                    })
                })
                .collect();
            let mut total = (0, 0);
            for h in handles {
                let (sent, received) = h.join().unwrap()?;
                total = (total.0 + sent, total.1 + received);
            }
            Ok(total)
        })
    })
}

#[test]
fn four_threads_per_core_exchange_exact_totals() {
    let expected: u64 =
        (0..THREADS).flat_map(|t| (0..MESSAGES).map(move |i| message(0, t, i).len() as u64)).sum();
    for job in jobs() {
        let config = job.config();
        let totals = job.run(&(), exchange).unwrap_or_else(|e| panic!("{config:?}: {e}"));
        assert_eq!(totals, vec![(expected, expected); 2], "{config:?}");
    }
}
