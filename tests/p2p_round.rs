//! Requests tested together under one hold of the core's state (`Core::test_round`,
//! `Core::wait_all`), and receives that take their message straight out of the channel
//! at their start, over real processes and both channels.

use std::panic::{AssertUnwindSafe, catch_unwind};

use sccemu::job::vtime::VirtualTime;
use sccemu::{ANY_TAG, ChannelKind, Core, Job, RecvError, RequestError};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// Rank 1 starts 3 small messages (tags 9, 10, 11) and meets rank 0 in a barrier, in
/// which rank 0 drains nothing (it has no receive posted): message 9 waits in its
/// channel. Rank 0's receive takes it out of the channel at its start; probes then
/// drain messages 10 and 11 into the queue; the receive is dropped untested, and
/// message 9 must go back ahead of them.
fn taken_from_the_channel_goes_back_in_place(core: &Core, _: ()) -> Result<(), String> {
    if core.rank() == 1 {
        let sends = (9..12u32).map(|t| core.isend(0, t, &[t as u8; 16])).collect::<Result<Vec<_>, _>>();
        let sends = sends.map_err(e)?;
        core.barrier().map_err(e)?;
        return core.wait_all(sends).map(drop).map_err(e);
    }
    core.barrier().map_err(e)?;
    let mut a = [0u8; 16];
    let first = core.irecv(1, ANY_TAG, &mut a).map_err(e)?;
    // Each probe drains what the channel holds (perpeer's slot takes one at a time).
    while core.iprobe(1, 11).map_err(e)?.is_none() {}
    drop(first);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let mut buf = [0u8; 16];
        let status = core.recv(1, ANY_TAG, &mut buf).map_err(e)?;
        seen.push((status.tag, buf[0]));
    }
    if seen != [(9, 9), (10, 10), (11, 11)] {
        return Err(format!("received {seen:?} after the give-back"));
    }
    Ok(())
}

#[test]
fn a_receive_that_took_its_message_from_the_channel_gives_it_back_in_place() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&(), taken_from_the_channel_goes_back_in_place).unwrap();
    }
}

/// Each rank streams `n` messages to the other and receives as many, testing all its
/// requests in rounds until every one is complete.
fn stream_in_rounds(core: &Core, n: u32) -> Result<u32, String> {
    let peer = 1 - core.rank();
    let mut bufs = vec![[0u8; 8]; n as usize];
    let mut recvs =
        bufs.iter_mut().map(|b| core.irecv(peer, 3, b)).collect::<Result<Vec<_>, _>>().map_err(e)?;
    let mut sends = (0..n)
        .map(|i| core.isend(peer, 3, &(i + 1000 * core.rank()).to_le_bytes().repeat(2)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut round = core.test_round().map_err(e)?;
        let mut open = 0;
        for r in recvs.iter_mut().chain(sends.iter_mut()) {
            open += usize::from(round.test(r).map_err(e)?.is_none());
        }
        if open == 0 {
            break;
        }
    }
    // A finished request's wait returns what the round saw.
    for r in recvs {
        if r.wait().map_err(e)?.len != 8 {
            return Err("a status changed after the round".into());
        }
    }
    core.wait_all(sends).map_err(e)?;
    for (i, b) in bufs.iter().enumerate() {
        let want = i as u32 + 1000 * peer;
        if b[..4] != want.to_le_bytes() || b[4..] != want.to_le_bytes() {
            return Err(format!("message {i} is {b:?}, not {want}"));
        }
    }
    Ok(rounds)
}

#[test]
fn rounds_complete_every_request_with_its_own_message() {
    for kind in BOTH {
        let rounds = Job::new(2).channel(kind).run(&200, stream_in_rounds).unwrap();
        assert!(rounds.iter().all(|&r| r >= 1), "{kind:?}: {rounds:?}");
    }
}

#[test]
fn rounds_in_virtual_time_test_each_request_by_itself() {
    // A round holds nothing there; polling with rounds still completes every request.
    let timing = VirtualTime { chip: "[compute]\nsource = \"none\"\n".into(), trace: None };
    let rounds = Job::new(2).timing(timing).run(&50, stream_in_rounds).unwrap();
    assert!(rounds.iter().all(|&r| r >= 1), "{rounds:?}");
}

/// `wait_all` reports the first failed request in order, after completing the ones
/// before it; a later request keeps its message for the next receive.
fn wait_all_in_order(core: &Core, _: ()) -> Result<(), String> {
    if core.rank() == 1 {
        for len in [8usize, 40, 8] {
            core.send(0, 4, &vec![len as u8; len]).map_err(e)?;
        }
        return core.barrier().map_err(e);
    }
    let (mut a, mut b, mut c) = ([0u8; 8], [0u8; 8], [0u8; 8]);
    let reqs = vec![
        core.irecv(1, 4, &mut a).map_err(e)?,
        core.irecv(1, 4, &mut b).map_err(e)?,
        core.irecv(1, 4, &mut c).map_err(e)?,
    ];
    match core.wait_all(reqs) {
        Err(RequestError::Recv(RecvError::Truncated { status, capacity: 8 })) if status.len == 40 => {}
        other => return Err(format!("expected the 40-byte message's truncation, got {other:?}")),
    }
    if a != [8; 8] {
        return Err(format!("the first receive got {a:?}"));
    }
    // The truncated message and the one after it are still there, in order.
    let mut big = [0u8; 40];
    core.recv(1, 4, &mut big).map_err(e)?;
    core.recv(1, 4, &mut c).map_err(e)?;
    if big != [40; 40] || c != [8; 8] {
        return Err("the messages after the failure were lost or reordered".into());
    }
    core.barrier().map_err(e)
}

#[test]
fn wait_all_reports_the_first_failure_in_order_and_loses_nothing() {
    for kind in BOTH {
        Job::new(2).channel(kind).run(&(), wait_all_in_order).unwrap();
    }
}

/// A thread that holds a round and calls the core's messaging panics (it would wait
/// for itself); the core works on afterwards. The round holds the state from its test
/// of a synchronous send, which needs it whatever the channel holds.
fn messaging_inside_a_round(core: &Core, _: ()) -> Result<String, String> {
    let peer = 1 - core.rank();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let mut sync = core.issend(peer, 3, b"sync").expect("issend");
        let mut round = core.test_round().expect("a round");
        round.test(&mut sync).expect("a test");
        core.send(peer, 1, b"never")
    }));
    let message = match caught {
        Err(panic) => panic.downcast_ref::<&str>().map_or_else(String::new, |s| s.to_string()),
        Ok(sent) => return Err(format!("the send inside a round returned {sent:?}")),
    };
    // The synchronous message, whose request went with the panic.
    core.recv(peer, 3, &mut [0u8; 4]).map_err(e)?;
    core.send(peer, 2, b"after").map_err(e)?;
    let mut buf = [0u8; 5];
    core.recv(peer, 2, &mut buf).map_err(e)?;
    if &buf != b"after" {
        return Err("the core's messaging after the panic".into());
    }
    Ok(message)
}

#[test]
fn messaging_inside_a_round_panics_instead_of_hanging() {
    let got = Job::new(2).run(&(), messaging_inside_a_round).unwrap();
    assert!(got.iter().all(|m| m.contains("test round")), "{got:?}");
}
