//! Two-sided messaging over real processes: both protocols, every error path.

use sccemu::{
    ANY_SOURCE, ANY_TAG, ChannelKind, Core, Job, RecvError, RequestError, SendError, Source, TagMatch,
};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2654435761).wrapping_add(seed).to_le_bytes()[1]).collect()
}

/// Rank 0 and 1 exchange messages of growing size both ways at once (blocking sends).
fn exchange(core: &Core, sizes: Vec<usize>) -> Result<usize, String> {
    let peer = 1 - core.rank();
    let mut moved = 0;
    for (i, &len) in sizes.iter().enumerate() {
        let out = pattern(core.rank() * 1000 + i as u32, len);
        core.send(peer, i as u32, &out).map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; len];
        let s = core.recv(peer, i as u32, &mut buf).map_err(|e| e.to_string())?;
        if s.len != len || buf != pattern(peer * 1000 + i as u32, len) {
            return Err(format!("message {i} of {len} bytes arrived damaged ({s:?})"));
        }
        moved += len;
    }
    Ok(moved)
}

#[test]
fn symmetric_exchange_of_every_size() {
    let sizes = vec![0, 1, 15, 16, 17, 31, 48, 100, 1000, 4096, 40_000, 65_536, 300_001, 1 << 20];
    for kind in BOTH {
        let total: usize = sizes.iter().sum();
        assert_eq!(Job::new(2).channel(kind).run(&sizes, exchange).unwrap(), vec![total; 2], "{kind:?}");
    }
}

/// Rank 0 probes a message, hits every receive error, then receives it intact.
fn errors(core: &Core, _: ()) -> Result<(), String> {
    let n = core.size();
    if let Err(SendError::RankOutOfRange { rank, size }) = core.send(n, 0, b"x") {
        assert_eq!((rank, size), (n, n));
    } else {
        return Err("send to a missing rank".into());
    }
    if !matches!(core.recv(n + 3, 0, &mut []), Err(RecvError::RankOutOfRange { .. })) {
        return Err("recv from a missing rank".into());
    }
    if !matches!(core.probe(n, ANY_TAG), Err(RecvError::RankOutOfRange { .. })) {
        return Err("probe of a missing rank".into());
    }
    if core.rank() == 1 {
        core.send(0, 7, &pattern(7, 5000)).map_err(|e| e.to_string())?;
        core.send(0, 8, b"after").map_err(|e| e.to_string())?;
        return Ok(());
    }
    let st = core.probe(ANY_SOURCE, 7).map_err(|e| e.to_string())?;
    assert_eq!((st.source, st.tag, st.len), (1, 7, 5000));
    let mut small = vec![0u8; 4999];
    match core.recv(1, 7, &mut small) {
        Err(RecvError::Truncated { status, capacity: 4999 }) if status == st => {}
        other => return Err(format!("expected truncation, got {other:?}")),
    }
    // Any-tag receive still sees the truncated message first: it was not lost.
    let mut req_buf = vec![0u8; 10];
    let req = core.irecv(ANY_SOURCE, ANY_TAG, &mut req_buf).map_err(|e| e.to_string())?;
    match req.wait() {
        Err(sccemu::RequestError::Recv(RecvError::Truncated { status, .. })) if status == st => {}
        other => return Err(format!("expected truncated request, got {other:?}")),
    }
    let (got, s) = core.recv_vec(Source::Any, TagMatch::Any).map_err(|e| e.to_string())?;
    if s != st || got != pattern(7, 5000) {
        return Err("message damaged after truncation".into());
    }
    let mut buf = [0u8; 5];
    core.recv(1, 8, &mut buf).map_err(|e| e.to_string())?;
    assert_eq!(&buf, b"after");
    Ok(())
}

#[test]
fn error_paths_leave_the_message_queued() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&(), errors).unwrap();
    }
}

/// Non-blocking: every rank isends to every other, irecvs from any source, waits all.
fn all_to_all(core: &Core, len: usize) -> Result<u32, String> {
    let (me, n) = (core.rank(), core.size());
    let mut bufs: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; len]).collect();
    let mut reqs = Vec::new();
    for buf in bufs.iter_mut().take(n as usize - 1) {
        reqs.push(core.irecv(ANY_SOURCE, 3, buf).map_err(|e| e.to_string())?);
    }
    for peer in (0..n).filter(|&p| p != me) {
        reqs.push(core.isend(peer, 3, &pattern(me, len)).map_err(|e| e.to_string())?);
    }
    let statuses = core.wait_all(reqs).map_err(|e| e.to_string())?;
    let mut seen = 0u32;
    for (s, buf) in statuses.iter().zip(&bufs).take(n as usize - 1) {
        if *buf != pattern(s.source, len) {
            return Err(format!("from {} damaged", s.source));
        }
        seen |= 1 << s.source;
    }
    core.barrier().map_err(|e| e.to_string())?;
    Ok(seen | 1 << me)
}

#[test]
fn nonblocking_all_to_all() {
    for kind in BOTH {
        for len in [0, 64, 70_000, 1 << 20] {
            assert_eq!(
                Job::new(4).channel(kind).run(&len, all_to_all).unwrap(),
                vec![15; 4],
                "{kind:?} {len}"
            );
        }
    }
}

/// Rank 1 scribbles a header word (`word`: kind and length) into its slot of rank 0's
/// MPB (perpeer); rank 0's receive reports the corruption instead of trusting it.
fn corrupt_slot(core: &Core, word: u32) -> Result<String, String> {
    let slot = core.channel().map_err(|e| e.to_string())?.slot;
    if core.rank() == 1 {
        core.mpb_put(0, slot + 16, &word.to_le_bytes()).map_err(|e| e.to_string())?;
        core.mpb_put(0, slot, &1u32.to_le_bytes()).map_err(|e| e.to_string())?;
        core.barrier().map_err(|e| e.to_string())?;
        return Ok(String::new());
    }
    core.barrier().map_err(|e| e.to_string())?;
    match core.recv(ANY_SOURCE, ANY_TAG, &mut [0u8; 64]) {
        Err(RecvError::Corrupt(c)) => Ok(format!("{:?}", c.kind)),
        other => Err(format!("expected corruption, got {other:?}")),
    }
}

#[test]
fn corrupted_slot_header_is_reported() {
    let job = Job::new(2).channel(ChannelKind::PerPeer);
    let got = job.run(&0x3fff_ffff, corrupt_slot).unwrap();
    assert!(got[0].starts_with("LengthPastRing"), "{got:?}");
    // A DRAM fragment longer than the bytes published to the pair's DRAM ring.
    let got = job.run(&(1 << 31 | 100), corrupt_slot).unwrap();
    assert_eq!(got[0], "LengthPastRing { len: 100, capacity: 0 }");
    // A DRAM fragment, even empty, when the pair has no DRAM ring.
    let got = job.heap_bytes(0).run(&(1 << 31), corrupt_slot).unwrap();
    assert!(got[0].starts_with("BadControlWord"), "{got:?}");
}

/// Rank 1 fails while rank 0 waits in a receive: the receive returns the abort error.
fn dies(core: &Core, kind: u32) -> Result<String, String> {
    if core.rank() == 1 {
        return Err(format!("rank 1 gives up ({kind})"));
    }
    match core.recv(1, 0, &mut [0u8; 8]) {
        Err(RecvError::Aborted(a)) => Ok(format!("{:?}", a.rank)),
        other => Err(format!("expected abort, got {other:?}")),
    }
}

#[test]
fn blocked_receive_returns_the_abort() {
    for kind in BOTH {
        let outcome = Job::new(2).channel(kind).run_outcome(&(kind as u32), dies).unwrap();
        assert_eq!(outcome.ranks[0], Ok("Some(1)".to_string()), "{kind:?}");
    }
}

/// Non-blocking receives posted before the messages arrive get them in post order;
/// a dropped request gives its message back.
fn post_order(core: &Core, _: ()) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    if core.rank() == 1 {
        core.barrier().map_err(|x| e(&x))?;
        for i in 0..4u8 {
            core.send(0, 9, &[i; 3000]).map_err(|x| e(&x))?;
        }
        return Ok(());
    }
    let (mut a, mut b, mut c) = ([0u8; 3000], [0u8; 3000], [0u8; 3000]);
    let ra = core.irecv(1, 9, &mut a).map_err(|x| e(&x))?;
    let rb = core.irecv(ANY_SOURCE, ANY_TAG, &mut b).map_err(|x| e(&x))?;
    let rc = core.irecv(1, 9, &mut c).map_err(|x| e(&x))?;
    core.barrier().map_err(|x| e(&x))?;
    drop(rc);
    let st = core.wait_all(vec![rb, ra]).map_err(|x| e(&x))?;
    assert_eq!(st.len(), 2);
    let mut d = [0u8; 3000];
    core.recv(1, 9, &mut d).map_err(|x| e(&x))?;
    let mut last = [0u8; 3000];
    core.recv(1, 9, &mut last).map_err(|x| e(&x))?;
    if a[0] != 0 || b[0] != 1 || d[0] != 2 || last[0] != 3 {
        return Err(format!("order {} {} {} {}", a[0], b[0], d[0], last[0]));
    }
    Ok(())
}

#[test]
fn irecv_matches_in_post_order_and_cancel_keeps_messages() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&(), post_order).unwrap();
    }
}

/// Non-blocking receives started on messages that arrived whole before them (a
/// blocking receive of a later message queued them): a dropped one gives its message
/// back in its place, ahead of later ones; a synchronous sender is released by the
/// receive's start; a too small buffer still reports the truncation at the wait.
fn started_on_arrived(core: &Core, _: ()) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    if core.rank() == 1 {
        for i in 0..3u8 {
            core.send(0, 9, &[i; 40]).map_err(|x| e(&x))?;
        }
        core.send(0, 99, b"last").map_err(|x| e(&x))?;
        core.barrier().map_err(|x| e(&x))?;
        // Released by rank 0's irecv, before that receive is ever tested.
        core.ssend(0, 7, &[7; 40]).map_err(|x| e(&x))?;
        return core.send(0, 8, b"done").map_err(|x| e(&x));
    }
    let mut last = [0u8; 4];
    core.recv(1, 99, &mut last).map_err(|x| e(&x))?;
    let (mut a, mut b, mut c) = ([0u8; 40], [0u8; 40], [0u8; 40]);
    let ra = core.irecv(1, 9, &mut a).map_err(|x| e(&x))?;
    let rb = core.irecv(ANY_SOURCE, ANY_TAG, &mut b).map_err(|x| e(&x))?;
    drop(ra);
    let st = rb.wait().map_err(|x| e(&x))?;
    if (st.tag, b[0]) != (9, 1) {
        return Err(format!("the second receive got tag {} message {}", st.tag, b[0]));
    }
    let mut small = [0u8; 39];
    let truncated = core.irecv(1, 9, &mut small).map_err(|x| e(&x))?;
    if !matches!(truncated.wait(), Err(RequestError::Recv(RecvError::Truncated { capacity: 39, .. }))) {
        return Err("a 39-byte receive of 40 bytes".into());
    }
    core.recv(1, 9, &mut a).map_err(|x| e(&x))?;
    core.recv(1, 9, &mut c).map_err(|x| e(&x))?;
    if (a[0], c[0]) != (0, 2) {
        return Err(format!("given back out of place: {} then {}", a[0], c[0]));
    }
    core.barrier().map_err(|x| e(&x))?;
    core.probe(1, 7).map_err(|x| e(&x))?;
    let mut sync = [0u8; 40];
    let rs = core.irecv(1, 7, &mut sync).map_err(|x| e(&x))?;
    let mut done = [0u8; 4];
    core.recv(1, 8, &mut done).map_err(|x| e(&x))?;
    rs.wait().map_err(|x| e(&x))?;
    if sync != [7; 40] || &done != b"done" {
        return Err("the synchronous message or the one after it".into());
    }
    Ok(())
}

#[test]
fn irecv_on_arrived_messages_keeps_order_and_errors() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&(), started_on_arrived).unwrap();
    }
}

/// Too-large messages and unavailable channels are typed errors.
fn limits(core: &Core, _: ()) -> Result<String, String> {
    match core.send(0, 0, &[]) {
        Err(SendError::Unavailable(e)) => Ok(e.to_string()),
        other => Err(format!("expected unavailable, got {other:?}")),
    }
}

#[test]
fn perpeer_beyond_the_mpb_is_refused_with_a_reason() {
    // 8 KiB MPB, half for slots of >= 64 B: 64 senders fit, 72 do not.
    let got = Job::new(72).channel(ChannelKind::PerPeer).run(&(), limits).unwrap();
    assert!(got[0].contains("--channel srb"), "{}", got[0]);
}

/// Every rank passes a large message around the ring with sendrecv.
fn ring_shift(core: &Core, len: usize) -> Result<u32, String> {
    let (me, n) = (core.rank(), core.size());
    let mut buf = vec![0u8; len];
    let st = core
        .sendrecv(((me + 1) % n, 5, &pattern(me, len)), (me + n - 1) % n, 5, &mut buf)
        .map_err(|e| e.to_string())?;
    if buf != pattern(st.source, len) {
        return Err("ring shift damaged".into());
    }
    Ok(st.source)
}

#[test]
fn sendrecv_ring_shift() {
    for kind in BOTH {
        assert_eq!(Job::new(3).channel(kind).run(&300_000, ring_shift).unwrap(), vec![2, 0, 1], "{kind:?}");
    }
}

#[test]
fn every_wait_policy() {
    use sccemu::WaitPolicy;
    let sizes = vec![0, 8, 5000, 200_000];
    let total: usize = sizes.iter().sum();
    for kind in BOTH {
        for policy in [WaitPolicy::Spin, WaitPolicy::Block, WaitPolicy::Adaptive] {
            let got = Job::new(2).channel(kind).wait(policy).run(&sizes, exchange).unwrap();
            assert_eq!(got, vec![total; 2], "{kind:?} {policy:?}");
        }
    }
}

#[test]
fn perpeer_with_little_or_no_dram() {
    let sizes = vec![0, 31, 32, 33, 2016, 2017, 9000, 100_000];
    let total: usize = sizes.iter().sum();
    for heap in [0u64, 1 << 16] {
        let job = Job::new(2).channel(ChannelKind::PerPeer).heap_bytes(heap);
        assert_eq!(job.run(&sizes, exchange).unwrap(), vec![total; 2], "heap {heap}");
    }
    // A small SRB ring: every message is chunked many times and wraps.
    let job = Job::new(2).channel(ChannelKind::Srb).ring_bytes(1024);
    assert_eq!(job.run(&sizes, exchange).unwrap(), vec![total; 2]);
}

/// A message that a posted receive gives back (truncated while tested, truncated when
/// resumed, or cancelled) goes to the next posted receive that matches it, before any
/// later message from its source: `arg` picks the way it is given back.
fn given_back(core: &Core, how: u8) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    if core.rank() == 1 {
        core.send(0, 0, &[1; 16]).map_err(|x| e(&x))?;
        core.barrier().map_err(|x| e(&x))?;
        // After the barrier: a perpeer slot holds one fragment until rank 0 drains it.
        core.send(0, 1, b"marker").map_err(|x| e(&x))?;
        core.barrier().map_err(|x| e(&x))?;
        return core.send(0, 0, &[2; 16]).map_err(|x| e(&x));
    }
    let (mut small, mut big, mut second) = (vec![0u8; if how == 2 { 64 } else { 4 }], [0u8; 64], [0u8; 64]);
    let mut p1 = core.irecv(1, 0, &mut small).map_err(|x| e(&x))?;
    let p2 = core.irecv(1, 0, &mut big).map_err(|x| e(&x))?;
    core.barrier().map_err(|x| e(&x))?;
    if how == 0 {
        // The message arrives while `p1` is tested: too long for it.
        while let Ok(None) = p1.test() {}
    }
    core.recv(1, 1, &mut [0u8; 8]).map_err(|x| e(&x))?;
    if how == 2 {
        drop(p1);
    } else {
        // Assigned to `p1` by the receive above (or already refused): refused now.
        match p1.test() {
            Err(sccemu::RequestError::Recv(RecvError::Truncated { .. })) => {}
            other => return Err(format!("expected truncation, got {other:?}")),
        }
        drop(p1);
    }
    core.barrier().map_err(|x| e(&x))?;
    let st = p2.wait().map_err(|x| e(&x))?;
    core.recv(1, 0, &mut second).map_err(|x| e(&x))?;
    if st.len != 16 || big[..16] != [1; 16] || second[..16] != [2; 16] {
        return Err(format!("overtaken: got {:?} then {:?}", &big[..16], &second[..16]));
    }
    Ok(())
}

#[test]
fn message_given_back_goes_to_the_next_posted_receive() {
    for kind in BOTH {
        for how in 0..3u8 {
            Job::new(2).channel(kind).run(&how, given_back).unwrap_or_else(|e| panic!("{kind:?} {how}: {e}"));
        }
    }
}

/// Every rank but 0 streams rounds of `window` isends into rank 0 and waits for them
/// all, as MPI's many-to-one benchmarks do; rank 0 receives from any source. More than
/// a ring's worth is in flight, so senders wait for space with their sends queued (and
/// take tickets on the shared ring, `p2p/progress/watch.rs`). Returns the messages rank
/// 0 got; each source's arrive whole and in order.
fn many_to_one(core: &Core, (len, window): (usize, u32)) -> Result<u32, String> {
    const ROUNDS: u32 = 3;
    let senders = core.size() - 1;
    if core.rank() != 0 {
        let out: Vec<Vec<u8>> =
            (0..ROUNDS * window).map(|k| pattern(core.rank() * 100_000 + k, len)).collect();
        for round in out.chunks(window as usize) {
            let requests = round.iter().map(|m| core.isend(0, 4, m)).collect::<Result<Vec<_>, _>>();
            core.wait_all(requests.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        }
        return Ok(0);
    }
    let mut next = vec![0u32; core.size() as usize];
    let mut buf = vec![0u8; len];
    for _ in 0..ROUNDS * window * senders {
        let s = core.recv(ANY_SOURCE, 4, &mut buf).map_err(|e| e.to_string())?;
        let k = &mut next[s.source as usize];
        if s.len != len || buf != pattern(s.source * 100_000 + *k, len) {
            return Err(format!("message {k} from {} arrived damaged or out of order", s.source));
        }
        *k += 1;
    }
    Ok(next.iter().sum())
}

#[test]
fn many_senders_stream_into_one_core_oversubscribed() {
    // 12 cores on this machine's 2 CPUs, sleeping when they wait: 11 x 64 messages of
    // 64 B (and of 4 KiB) per round overflow the 64 KiB shared ring many times over.
    for kind in BOTH {
        for len in [64, 4096] {
            let job = Job::new(12).channel(kind).wait(sccemu::WaitPolicy::Block);
            let got = job.run(&(len, 64u32), many_to_one).unwrap();
            assert_eq!(got[0], 3 * 64 * 11, "{kind:?}, {len} B");
        }
    }
}
