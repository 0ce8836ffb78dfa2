//! Synchronous sends over real processes: `ssend` and `issend` complete only once a
//! receive has matched the message, and the receiver's engine acknowledges the match
//! from whatever call it is blocked in.
//!
//! "Not yet complete" is checked by polling for a while: a send that completed early
//! lets the sender's next message through, or its request's test succeed, and the
//! check fails. Every rank runs under a watchdog ([`bounded`]), so a missing
//! acknowledgement fails the test instead of hanging it. Both channel kinds; small
//! messages and ones far larger than either channel.

mod common;

use std::time::{Duration, Instant};

use common::{OrString, bounded, check};
use sccemu::{ChannelKind, Core, Job, RecvError, Source, TagMatch};

const DATA: u32 = 1;
const AFTER: u32 = 2;
const GO: u32 = 3;
const SIZES: [usize; 2] = [8, 1 << 20];
/// How long a peer watches for a sign that a synchronous send completed too early.
const WATCH: Duration = Duration::from_millis(100);

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn run(entry: fn(&Core, ()) -> Result<(), String>) {
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        let result = Job::new(2).channel(kind).run(&(), entry);
        assert!(result.is_ok(), "{kind:?}: {}", result.unwrap_err());
    }
}

/// Rank 0 sends synchronously, then a plain message. Rank 1 first watches for the
/// plain one without receiving anything: it must not come while the synchronous
/// message is unmatched (though that message itself may have arrived).
#[test]
fn ssend_returns_only_after_the_match() {
    run(|core, ()| {
        bounded(core, || {
            for len in SIZES {
                let data = pattern(len, 1);
                if core.rank() == 0 {
                    core.ssend(1, DATA, &data).s()?;
                    core.send(1, AFTER, &[7]).s()?;
                } else {
                    let start = Instant::now();
                    while start.elapsed() < WATCH {
                        let early = core.iprobe(0, AFTER).s()?;
                        check(early.is_none(), || format!("{len} B: ssend returned before its receive"))?;
                    }
                    let mut buf = vec![0u8; len];
                    core.recv(0, DATA, &mut buf).s()?;
                    check(buf == data, || format!("{len} B: message damaged"))?;
                    core.recv(0, AFTER, &mut [0u8; 1]).s()?;
                }
            }
            Ok(())
        })
    });
}

/// The receiver posts its receive, then blocks in a barrier that the sender enters
/// only after its synchronous send: only an acknowledgement sent from within the
/// barrier lets both go on.
#[test]
fn receiver_blocked_elsewhere_acknowledges() {
    run(|core, ()| {
        bounded(core, || {
            for len in SIZES {
                let data = pattern(len, 2);
                if core.rank() == 0 {
                    core.ssend(1, DATA, &data).s()?;
                    core.barrier().s()?;
                } else {
                    let mut buf = vec![0u8; len];
                    let posted = core.irecv(0, DATA, &mut buf).s()?;
                    core.barrier().s()?;
                    posted.wait().s()?;
                    check(buf == data, || format!("{len} B: message damaged"))?;
                }
            }
            Ok(())
        })
    });
}

/// An `issend` request stays incomplete while its message is unmatched, then
/// completes; two of them complete when the receiver matches them in the opposite
/// order; a receive whose buffer is too small does not match.
#[test]
fn issend_completes_on_the_match() {
    run(|core, ()| {
        bounded(core, || {
            for len in SIZES {
                let (a, b) = (pattern(len, 3), pattern(len, 4));
                if core.rank() == 0 {
                    let mut first = core.issend(1, DATA, &a).s()?;
                    let second = core.issend(1, AFTER, &b).s()?;
                    let start = Instant::now();
                    while start.elapsed() < WATCH {
                        let done = first.test().s()?;
                        check(done.is_none(), || format!("{len} B: issend completed before any receive"))?;
                    }
                    core.send(1, GO, &[]).s()?;
                    second.wait().s()?;
                    first.wait().s()?;
                } else {
                    core.recv(0, GO, &mut []).s()?;
                    let mut buf = vec![0u8; len];
                    if len > 1 {
                        let small = core.recv(0, AFTER, &mut buf[..len - 1]);
                        check(matches!(small, Err(RecvError::Truncated { .. })), || {
                            format!("{len} B into {} B: {small:?}", len - 1)
                        })?;
                    }
                    core.recv(0, AFTER, &mut buf).s()?;
                    check(buf == b, || format!("{len} B: second message damaged"))?;
                    core.recv(0, DATA, &mut buf).s()?;
                    check(buf == a, || format!("{len} B: first message damaged"))?;
                }
            }
            Ok(())
        })
    });
}

/// Synchronous sends to oneself: matched by a receive posted before, or by one made
/// after (the request completes then, not before).
#[test]
fn ssend_to_self() {
    run(|core, ()| {
        bounded(core, || {
            let me = core.rank();
            let mut buf = [0u8; 3];
            let posted = core.irecv(Source::Rank(me), TagMatch::Tag(DATA), &mut buf).s()?;
            core.ssend(me, DATA, b"abc").s()?;
            posted.wait().s()?;
            check(&buf == b"abc", || format!("self ssend delivered {buf:?}"))?;

            let mut request = core.issend(me, AFTER, b"xyz").s()?;
            check(request.test().s()?.is_none(), || "self issend completed with no receive".into())?;
            core.recv(me, AFTER, &mut buf).s()?;
            check(request.test().s()?.is_some(), || "self issend incomplete after its receive".into())?;
            check(&buf == b"xyz", || format!("self issend delivered {buf:?}"))
        })
    });
}

/// The receiver returns, and leaves the job, right after its receives, while the
/// sender is busy elsewhere: acknowledgements that found no room yet (the per-peer
/// slot still holds the first) are sent as the receiver leaves.
#[test]
fn a_leaving_receiver_still_acknowledges() {
    run(|core, ()| {
        bounded(core, || {
            if core.rank() == 0 {
                let requests: Vec<_> =
                    (10..14).map(|tag| core.issend(1, tag, &[tag as u8; 8])).collect::<Result<_, _>>().s()?;
                // Once this leaves, so have the four messages (sends to one core leave in
                // order); the receiver takes them only after it.
                core.send(1, GO, &[]).s()?;
                // Not draining its channel for a while: the acknowledgements queue up.
                std::thread::sleep(WATCH);
                core.wait_all(requests).s()?;
            } else {
                core.recv(0, GO, &mut []).s()?;
                for tag in 10..14 {
                    let mut buf = [0u8; 8];
                    core.recv(0, tag, &mut buf).s()?;
                    check(buf == [tag as u8; 8], || format!("message {tag} damaged"))?;
                }
            }
            Ok(())
        })
    });
}

/// The sender drops its synchronous requests and leaves before the receiver takes the
/// messages: the receiver's acknowledgements are for nobody, and its departure does
/// not wait for room at a core that left.
#[test]
fn answers_to_a_departed_sender_are_dropped() {
    run(|core, ()| {
        bounded(core, || {
            if core.rank() == 0 {
                for tag in 10..14 {
                    drop(core.issend(1, tag, &[tag as u8; 8]).s()?);
                }
                core.send(1, GO, &[]).s()?;
            } else {
                core.recv(0, GO, &mut []).s()?;
                // Rank 0 leaves meanwhile.
                std::thread::sleep(WATCH);
                for tag in 10..14 {
                    let mut buf = [0u8; 8];
                    core.recv(0, tag, &mut buf).s()?;
                    check(buf == [tag as u8; 8], || format!("message {tag} damaged"))?;
                }
            }
            Ok(())
        })
    });
}
