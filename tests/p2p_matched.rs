//! Matched probes over real processes: `mprobe`/`improbe` take a message out of
//! matching, so that only its handle receives it; a dropped handle or a too-small
//! buffer puts it back in its place; a synchronous message counts as matched; and
//! threads that each probe and receive never take each other's messages. Both channel
//! kinds; every rank under a watchdog.

mod common;

use sccemu::sync::{AtomicU32, Ordering};

use common::{OrString, bounded, check};
use sccemu::{ANY_SOURCE, ANY_TAG, ChannelKind, Core, Job, RecvError};

fn run(entry: fn(&Core, ()) -> Result<(), String>) {
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        let result = Job::new(2).channel(kind).run(&(), entry);
        assert!(result.is_ok(), "{kind:?}: {}", result.unwrap_err());
    }
}

fn recv_exact(core: &Core, src: u32, tag: u32, len: usize) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; len];
    let s = core.recv(src, tag, &mut buf).s()?;
    check(s.len == len, || format!("got {} bytes, expected {len}", s.len))?;
    Ok(buf)
}

/// Two messages with one tag: the probed first one is out of reach of a plain receive,
/// which gets the second; a dropped handle and a truncated receive requeue theirs.
#[test]
fn a_probed_message_belongs_to_its_handle() {
    run(|core, ()| {
        bounded(core, || {
            let big = vec![7u8; 1 << 20];
            if core.rank() == 0 {
                for data in [&b"first"[..], b"second", b"third", &big] {
                    core.send(1, 4, data).s()?;
                }
                return core.barrier().s();
            }
            check(core.improbe(0, 99).s()?.is_none(), || "improbe matched a tag nobody sent".into())?;
            let first = core.mprobe(0, 4).s()?;
            check(first.status().len == 5, || format!("{:?}", first.status()))?;
            check(recv_exact(core, 0, 4, 6)? == b"second", || "a receive took the probed message".into())?;
            let mut buf = [0u8; 5];
            check(first.recv(&mut buf).s()?.len == 5 && &buf == b"first", || "first damaged".into())?;
            // Dropped: back in its place, the next receive takes it.
            drop(core.mprobe(0, 4).s()?);
            check(recv_exact(core, 0, 4, 5)? == b"third", || "a dropped handle lost its message".into())?;
            // Too small a buffer: Truncated, and the message requeued whole.
            let large = loop {
                if let Some(m) = core.improbe(ANY_SOURCE, ANY_TAG).s()? {
                    break m;
                }
            };
            let mut small = [0u8; 10];
            let truncated = large.recv(&mut small);
            check(matches!(truncated, Err(RecvError::Truncated { .. })), || format!("{truncated:?}"))?;
            let whole = core.mprobe(0, 4).s()?;
            let mut buf = vec![0u8; whole.status().len];
            whole.irecv(&mut buf).wait().s()?;
            check(buf == big, || "the large message damaged".into())?;
            core.barrier().s()
        })
    });
}

/// A synchronous send completes once a matched probe took its message, before the
/// message is received.
#[test]
fn a_matched_probe_completes_a_synchronous_send() {
    run(|core, ()| {
        bounded(core, || {
            if core.rank() == 0 {
                core.ssend(1, 1, b"sync").s()?;
                return core.send(1, 2, b"after").s();
            }
            let matched = core.mprobe(0, 1).s()?;
            check(recv_exact(core, 0, 2, 5)? == b"after", || "wrong message".into())?;
            let mut buf = [0u8; 4];
            matched.recv(&mut buf).s()?;
            check(&buf == b"sync", || "sync damaged".into())
        })
    });
}

/// Three threads of rank 1 each probe any message and receive it into a buffer of the
/// probed size: every message arrives once, intact, none truncated.
#[test]
fn threads_probing_at_once_never_take_each_others_messages() {
    const MESSAGES: usize = 300;
    run(|core, ()| {
        bounded(core, || {
            let len = |i: usize| (i * 37) % 3000;
            if core.rank() == 0 {
                for i in 0..MESSAGES {
                    core.send(1, i as u32, &vec![i as u8; len(i)]).s()?;
                }
                return Ok(());
            }
            let taken = AtomicU32::new(0);
            let seen: Vec<AtomicU32> = (0..MESSAGES).map(|_| AtomicU32::new(0)).collect();
            std::thread::scope(|s| {
                let workers: Vec<_> = (0..3)
                    .map(|_| {
                        s.spawn(|| -> Result<(), String> {
                            while (taken.fetch_add(1, Ordering::Relaxed) as usize) < MESSAGES {
                                let m = core.mprobe(0, ANY_TAG).s()?;
                                let mut buf = vec![0u8; m.status().len];
                                let st = m.recv(&mut buf).s()?;
                                let i = st.tag as usize;
                                check(buf.len() == len(i) && buf.iter().all(|&b| b == i as u8), || {
                                    format!("message {i} damaged")
                                })?;
                                seen[i].fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(())
                        })
                    })
                    .collect();
                workers.into_iter().try_for_each(|w| w.join().expect("worker panicked"))
            })?;
            let twice = seen.iter().position(|n| n.load(Ordering::Relaxed) != 1);
            check(twice.is_none(), || format!("message {twice:?} received other than once"))
        })
    });
}
