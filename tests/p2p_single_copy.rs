//! Messages to oneself and the single-copy path of large messages (`p2p::rendezvous`),
//! over real processes and both channels: sizes past the ring, probes, truncation,
//! any-source order, posted receives filled while the receiver blocks elsewhere, the
//! fallback when the kernel refuses the copy, and failure of either side.

use sccemu::{ANY_SOURCE, ANY_TAG, ChannelKind, Core, Job, RecvError, SendError};

mod common;
use common::{check, pattern, refuse_readers};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

/// Above the default single-copy threshold and the default 64 KiB ring.
const LARGE: usize = 300_001;

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// Every way of sending to oneself: blocking before the receive, into a posted
/// receive, non-blocking, past the ring's size, probed, truncated, then received whole.
fn to_self(core: &Core, len: usize) -> Result<(), String> {
    let me = core.rank();
    let big = pattern(me, len);
    core.send(me, 1, &big).map_err(e)?;
    let st = core.probe(me, 1).map_err(e)?;
    check(st.len == len && st.source == me, || format!("probe of a message to self: {st:?}"))?;
    let mut small = vec![0u8; len - 1];
    match core.recv(me, 1, &mut small) {
        Err(RecvError::Truncated { status, .. }) if status.len == len => {}
        other => return Err(format!("truncation to self: {other:?}")),
    }
    let mut buf = vec![0u8; len];
    core.recv(me, 1, &mut buf).map_err(e)?;
    check(buf == big, || "blocking self message damaged".into())?;

    let mut posted = vec![0u8; len];
    let r = core.irecv(me, 2, &mut posted).map_err(e)?;
    core.send(me, 2, &big).map_err(e)?;
    r.wait().map_err(e)?;
    check(posted == big, || "self message into a posted receive damaged".into())?;

    let mut data = pattern(me + 7, len);
    let s = core.isend(me, 3, &data).map_err(e)?;
    // The bytes were taken at isend: changing them now must not show.
    data.fill(0);
    s.wait().map_err(e)?;
    let (got, st) = core.recv_vec(me, 3).map_err(e)?;
    check(got == pattern(me + 7, len) && st.len == len, || "isend to self damaged".into())
}

#[test]
fn messages_to_self_of_every_kind() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&LARGE, to_self).unwrap();
        Job::new(1).channel(kind).run(&5000, to_self).unwrap();
    }
}

/// Any-source receives take messages in arrival order, whether they came from this
/// core or through the channel (large ones announced for the single copy included).
fn any_source_order(core: &Core, len: usize) -> Result<(), String> {
    if core.rank() == 1 {
        core.send(0, 5, &pattern(1, len)).map_err(e)?;
        core.send(0, 9, b"go").map_err(e)?;
        let mut go = [0u8; 2];
        core.recv(0, 9, &mut go).map_err(e)?;
        return core.send(0, 5, &pattern(2, len)).map_err(e);
    }
    let mut go = [0u8; 2];
    // Rank 1's first message precedes "go" in the channel: it arrives first.
    core.recv(1, 9, &mut go).map_err(e)?;
    core.send(0, 5, &pattern(0, len)).map_err(e)?;
    core.send(1, 9, b"go").map_err(e)?;
    let mut buf = vec![0u8; len];
    for (want_src, seed) in [(1, 1), (0, 0), (1, 2)] {
        let st = core.recv(ANY_SOURCE, ANY_TAG, &mut buf).map_err(e)?;
        check(st.source == want_src && st.tag == 5 && buf == pattern(seed, len), || {
            format!("expected the message from {want_src} (seed {seed}), got {st:?}")
        })?;
    }
    Ok(())
}

#[test]
fn any_source_receives_keep_arrival_order_with_self_and_large_messages() {
    for kind in BOTH {
        for len in [100, LARGE] {
            Job::new(2).channel(kind).run(&len, any_source_order).unwrap();
        }
    }
}

/// Large blocking sends meet probes (the whole length), a too-small receive (the
/// message stays first in line), and posted receives that the receiver fills while it
/// blocks in a barrier; one receive is cancelled and gives its message back.
fn announced(core: &Core, len: usize) -> Result<(), String> {
    if core.rank() == 1 {
        core.send(0, 1, &pattern(10, len)).map_err(e)?;
        // Each send returns once rank 0 copied the message, which it does inside its
        // barrier, into the receives it posted before.
        for i in 0..3 {
            core.send(0, 9, &pattern(20 + i, len)).map_err(e)?;
        }
        core.barrier().map_err(e)?;
        return core.send(0, 9, &pattern(23, len)).map_err(e);
    }
    let st = core.probe(ANY_SOURCE, 1).map_err(e)?;
    check(st.len == len && st.source == 1, || format!("probe: {st:?}"))?;
    let mut small = vec![0u8; 10];
    match core.recv(1, 1, &mut small) {
        Err(RecvError::Truncated { status, capacity: 10 }) if status.len == len => {}
        other => return Err(format!("truncation: {other:?}")),
    }
    let (got, _) = core.recv_vec(1, 1).map_err(e)?;
    check(got == pattern(10, len), || "probed message damaged".into())?;
    let (mut a, mut b, mut c) = (vec![0u8; len], vec![0u8; len], vec![0u8; len]);
    let ra = core.irecv(1, 9, &mut a).map_err(e)?;
    let rb = core.irecv(ANY_SOURCE, ANY_TAG, &mut b).map_err(e)?;
    let rc = core.irecv(1, 9, &mut c).map_err(e)?;
    core.barrier().map_err(e)?;
    drop(rc);
    core.wait_all(vec![rb, ra]).map_err(e)?;
    let mut d = vec![0u8; len];
    core.recv(1, 9, &mut d).map_err(e)?;
    let (last, _) = core.recv_vec(1, 9).map_err(e)?;
    check(a == pattern(20, len) && b == pattern(21, len), || "posted receives damaged".into())?;
    check(d == pattern(22, len) && last == pattern(23, len), || "given-back message out of order".into())
}

#[test]
fn announced_messages_probe_truncate_and_fill_posted_receives() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&LARGE, announced).unwrap();
    }
}

/// Every core sends a large message to every other at once with blocking sends, then
/// receives: every core waits in a send while it holds others' announcements, which
/// its wait must copy (the pattern completed when such messages were buffered).
fn all_send_first(core: &Core, len: usize) -> Result<(), String> {
    let (me, n) = (core.rank(), core.size());
    for k in 1..n {
        core.send((me + k) % n, 3, &pattern(me * 100 + k, len)).map_err(e)?;
    }
    for k in 1..n {
        let src = (me + n - k) % n;
        let (got, _) = core.recv_vec(src, 3).map_err(e)?;
        check(got == pattern(src * 100 + k, len), || format!("message from {src} damaged"))?;
    }
    Ok(())
}

#[test]
fn blocking_sends_before_any_receive_complete() {
    for kind in BOTH {
        Job::new(4).channel(kind).run(&LARGE, all_send_first).unwrap();
    }
}

/// No core can read another (each makes itself unreadable and gives up its right to
/// read others): every copy is refused, and each sender sends its bytes through the
/// channel, into the message in its place, whichever way rank 0 receives it: a
/// receive that is running (rank 1), a posted receive filled while rank 0 receives
/// from rank 1 or is in a barrier (rank 2), a receive after a probe (rank 3). Each sender learns once and
/// sends its next message through the channel at once.
fn refused(core: &Core, len: usize) -> Result<(), String> {
    refuse_readers()?;
    let me = core.rank();
    if me > 0 {
        if me == 3 {
            core.barrier().map_err(e)?;
        }
        core.send(0, 4, &pattern(me, len)).map_err(e)?;
        core.send(0, 5, &pattern(me + 10, len)).map_err(e)?;
        if me != 3 {
            core.barrier().map_err(e)?;
        }
        return Ok(());
    }
    // Posted first, before anything is drained, so that rank 2's message fills it
    // wherever rank 0 drains it: had it arrived whole before the post, the receive
    // would have taken it at once, and nothing posted would keep rank 0 draining in
    // the barrier, where ranks 1 and 2 send their second messages, which nothing
    // matches yet (MPI lets such sends wait for their receives).
    let mut posted = vec![0u8; len];
    let r = core.irecv(2, 4, &mut posted).map_err(e)?;
    let mut buf = vec![0u8; len];
    core.recv(1, 4, &mut buf).map_err(e)?;
    check(buf == pattern(1, len), || "running receive damaged".into())?;
    core.barrier().map_err(e)?;
    r.wait().map_err(e)?;
    check(posted == pattern(2, len), || "posted receive damaged".into())?;
    let st = core.probe(3, 4).map_err(e)?;
    check(st.len == len, || format!("probe: {st:?}"))?;
    let (got, _) = core.recv_vec(3, 4).map_err(e)?;
    check(got == pattern(3, len), || "probed receive damaged".into())?;
    for src in 1..4 {
        let (got, _) = core.recv_vec(src, 5).map_err(e)?;
        check(got == pattern(src + 10, len), || format!("second message of {src} damaged"))?;
    }
    Ok(())
}

#[test]
fn a_refused_copy_falls_back_to_the_channel() {
    for kind in BOTH {
        Job::new(4).channel(kind).run(&LARGE, refused).unwrap();
    }
}

/// Rank 1 dies without receiving: rank 0's large send, waiting for the copy, returns
/// the abort naming rank 1.
fn receiver_dies(core: &Core, _: ()) -> Result<String, String> {
    if core.rank() == 1 {
        return Err("rank 1 gives up".into());
    }
    match core.send(1, 0, &pattern(0, LARGE)) {
        Err(SendError::Aborted(a)) => Ok(format!("{:?}", a.rank)),
        other => Err(format!("expected abort, got {other:?}")),
    }
}

/// Rank 1 dies while a thread of it waits in a large send: rank 0, copying from a
/// process that is gone, returns the abort naming rank 1.
fn sender_dies(core: &Core, _: ()) -> Result<String, String> {
    if core.rank() == 1 {
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = core.send(0, 0, &pattern(0, LARGE));
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            std::process::exit(3);
        })
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    match core.recv(1, 0, &mut vec![0u8; LARGE]) {
        Err(RecvError::Aborted(a)) => Ok(format!("{:?}", a.rank)),
        other => Err(format!("expected abort, got {other:?}")),
    }
}

#[test]
fn either_side_dying_aborts_the_other() {
    for kind in BOTH {
        let outcome = Job::new(2).channel(kind).run_outcome(&(), receiver_dies).unwrap();
        assert_eq!(outcome.ranks[0], Ok("Some(1)".to_string()), "{kind:?}");
        let outcome = Job::new(2).channel(kind).run_outcome(&(), sender_dies).unwrap();
        assert_eq!(outcome.ranks[0], Ok("Some(1)".to_string()), "{kind:?}");
    }
}
