//! Large non-blocking sends of buffers handed over (`Core::isend_owned`, see
//! `p2p::progress`): never copied, announced in their turn, read by the receiver
//! straight out of the sender's buffer. Over real processes and both channels: windows
//! of them in order with small messages between, every way of receiving, all-to-all
//! exchanges, a refused copy, and a sender that leaves without waiting.

use sccemu::{ANY_SOURCE, ChannelKind, Core, Job, Request};

mod common;
use common::{check, pattern, refuse_readers};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

/// Above the default single-copy threshold and the default 64 KiB ring.
const LARGE: usize = 200_003;

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// Rank 1 sends a window of large messages, a small one after each. Rank 0 takes them
/// in every way: a receive posted before, a blocking receive, `ANY_SOURCE`, by size;
/// order must hold.
fn window(core: &Core, len: usize) -> Result<(), String> {
    const N: u32 = 6;
    if core.rank() == 1 {
        let mut requests: Vec<Request<'_>> = Vec::new();
        for i in 0..N {
            requests.push(core.isend_owned(0, 7, pattern(i, len)).map_err(e)?);
            requests.push(core.isend(0, 7, &[i as u8; 3]).map_err(e)?);
        }
        core.wait_all(requests).map_err(e)?;
        return core.barrier().map_err(e);
    }
    let mut first = vec![0u8; len];
    let posted = core.irecv(1, 7, &mut first).map_err(e)?;
    posted.wait().map_err(e)?;
    check(first == pattern(0, len), || "posted receive damaged".into())?;
    for i in 0..N {
        if i > 0 {
            let (got, st) = match i % 3 {
                0 => core.recv_vec(ANY_SOURCE, 7).map_err(e)?,
                _ => core.recv_vec(1, 7).map_err(e)?,
            };
            check(st.len == len && got == pattern(i, len), || format!("large message {i} damaged: {st:?}"))?;
        }
        let mut small = [0u8; 3];
        let st = core.recv(1, 7, &mut small).map_err(e)?;
        check(st.len == 3 && small == [i as u8; 3], || format!("small message {i} out of order: {small:?}"))?;
    }
    core.barrier().map_err(e)
}

#[test]
fn windows_of_isends_arrive_whole_and_in_order() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&LARGE, window).unwrap();
    }
}

/// Every core isends a large message to every other, then receives them all, then
/// waits for its sends: each send completes only once its receiver read it.
fn all_to_all(core: &Core, len: usize) -> Result<(), String> {
    let (me, n) = (core.rank(), core.size());
    let sends = (1..n)
        .map(|k| core.isend_owned((me + k) % n, 3, pattern(me * 100 + k, len)).map_err(e))
        .collect::<Result<Vec<_>, _>>()?;
    for k in 1..n {
        let src = (me + n - k) % n;
        let (got, _) = core.recv_vec(src, 3).map_err(e)?;
        check(got == pattern(src * 100 + k, len), || format!("message from {src} damaged"))?;
    }
    core.wait_all(sends).map_err(e)?;
    Ok(())
}

#[test]
fn all_to_all_isends_complete() {
    for kind in BOTH {
        Job::new(4).channel(kind).run(&LARGE, all_to_all).unwrap();
    }
}

/// Nobody can read anybody: each queued announcement is refused, and its copy goes
/// through the channel in its place; the window still arrives whole and in order.
fn refused_window(core: &Core, len: usize) -> Result<(), String> {
    refuse_readers()?;
    window(core, len)
}

#[test]
fn a_refused_queued_copy_goes_through_the_channel() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&LARGE, refused_window).unwrap();
    }
}

/// Rank 1 isends and leaves the job without waiting (the request dropped): its exit
/// waits until rank 0, which receives only later, has read the copy out of it.
fn sender_leaves(core: &Core, len: usize) -> Result<(), String> {
    if core.rank() == 1 {
        drop(core.isend_owned(0, 9, pattern(9, len)).map_err(e)?);
        return Ok(());
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (got, _) = core.recv_vec(1, 9).map_err(e)?;
    check(got == pattern(9, len), || "the message of a sender that left is damaged".into())
}

#[test]
fn a_sender_that_leaves_waits_until_its_copy_is_read() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&LARGE, sender_leaves).unwrap();
    }
}

/// Ranks 1 and 2 each isend a window of large messages back to back to rank 0, which
/// receives only after a barrier: many announcements per sender are open at once. In
/// the second round rank 1's memory is unreadable: every copy of its open
/// announcements is refused and goes through the channel in its place. Rank 0 takes
/// them from any source, some through receives posted ahead, and each sender's must
/// arrive whole and in order; every send completes.
fn many_open(core: &Core, len: usize) -> Result<(), String> {
    const N: u32 = 40;
    // Each round has its own tag: a sender may start the next before rank 0 is done.
    let seed = |src: u32, round: u32, i: u32| src * 10_000 + round * 1000 + i;
    for round in 0..2 {
        let me = core.rank();
        if me != 0 {
            if round == 1 && me == 1 {
                refuse_readers()?;
            }
            let requests = (0..N)
                .map(|i| core.isend_owned(0, 7 + round, pattern(seed(me, round, i), len)).map_err(e))
                .collect::<Result<Vec<_>, _>>()?;
            core.barrier().map_err(e)?;
            core.wait_all(requests).map_err(e)?;
            continue;
        }
        if round == 1 {
            // Root may read what is not dumpable: rank 0 gives that up too.
            refuse_readers()?;
        }
        core.barrier().map_err(e)?;
        let mut next = [0u32; 3];
        let mut bufs = vec![vec![0u8; len]; 4];
        let posted = bufs
            .iter_mut()
            .map(|b| core.irecv(ANY_SOURCE, 7 + round, b).map_err(e))
            .collect::<Result<Vec<_>, _>>()?;
        let statuses = core.wait_all(posted).map_err(e)?;
        let mut got = statuses.into_iter().zip(bufs).map(|(st, b)| (st.source, b)).collect::<Vec<_>>();
        for _ in 4..2 * N {
            let (b, st) = core.recv_vec(ANY_SOURCE, 7 + round).map_err(e)?;
            got.push((st.source, b));
        }
        for (src, b) in got {
            let i = next[src as usize];
            check(b == pattern(seed(src, round, i), len), || {
                format!("round {round}: message {i} of {src} damaged or out of order")
            })?;
            next[src as usize] += 1;
        }
    }
    core.barrier().map_err(e)
}

#[test]
fn many_open_announcements_arrive_in_order_read_or_refused() {
    for kind in BOTH {
        Job::new(3).channel(kind).run(&LARGE, many_open).unwrap();
    }
}
