//! Receives completed by polling alone, with `Request::test` or in test rounds, never
//! by a wait, over real processes and both channels. A test that finds nothing new skips the core's state
//! (`Engine::nothing_new`); these are the cases where something other than a new
//! fragment in the channel is what the poll must see or do. Each fails by hanging, so
//! each job runs under a time limit.

use std::sync::mpsc;
use std::time::Duration;

use sccemu::{ChannelKind, Core, Job, Request, Status};

const BOTH: [ChannelKind; 2] = [ChannelKind::PerPeer, ChannelKind::Srb];

/// Far longer than any of these jobs takes (well under a second each).
const LIMIT: Duration = Duration::from_secs(120);

fn e(x: impl std::fmt::Display) -> String {
    x.to_string()
}

/// Runs `body` on 2 cores of each channel kind with a 4 KiB ring, polling by tests
/// and by rounds, failing if it hangs.
fn run_limited(what: &'static str, body: fn(&Core, bool) -> Result<(), String>) {
    for (kind, rounds) in BOTH.into_iter().flat_map(|kind| [(kind, false), (kind, true)]) {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let job = Job::new(2).channel(kind).ring_bytes(4096);
            let _ = done.send(job.run(&rounds, body).map_err(|e| e.to_string()));
        });
        match finished.recv_timeout(LIMIT) {
            Ok(result) => drop(result.unwrap_or_else(|e| panic!("{kind:?}, rounds {rounds}: {e}"))),
            Err(_) => panic!("{kind:?}, rounds {rounds}: {what}"),
        }
    }
}

/// One test of `request`, by itself or in a round of its own.
fn test(core: &Core, request: &mut Request<'_>, rounds: bool) -> Result<Option<Status>, String> {
    let tested = if rounds { core.test_round().map_err(e)?.test(request) } else { request.test() };
    tested.map_err(e)
}

/// Tests `request` until it completes.
fn poll(core: &Core, request: &mut Request<'_>, rounds: bool) -> Result<Status, String> {
    loop {
        if let Some(status) = test(core, request, rounds)? {
            return Ok(status);
        }
    }
}

/// Rank 0 starts more sends than rank 1's ring holds (the rest is queued), then polls
/// a receive of rank 1's answer, which rank 1 sends only once it has every message.
/// The polls must push the queued sends.
fn queued_sends_then_poll(core: &Core, rounds: bool) -> Result<(), String> {
    const MESSAGES: u32 = 64;
    let payload = [7u8; 512];
    if core.rank() == 1 {
        let mut buf = [0u8; 512];
        for _ in 0..MESSAGES {
            core.recv(0, 1, &mut buf).map_err(e)?;
        }
        return core.send(0, 2, b"answer!!").map_err(e);
    }
    let sends =
        (0..MESSAGES).map(|_| core.isend(1, 1, &payload)).collect::<Result<Vec<_>, _>>().map_err(e)?;
    let mut answer = [0u8; 8];
    let mut reply = core.irecv(1, 2, &mut answer).map_err(e)?;
    poll(core, &mut reply, rounds)?;
    drop(reply);
    core.wait_all(sends).map(drop).map_err(e)?;
    if &answer != b"answer!!" {
        return Err(format!("answer {answer:?}"));
    }
    Ok(())
}

#[test]
fn polling_a_receive_pushes_the_sends_queued_before_it() {
    run_limited("the polls did not push the queued sends", queued_sends_then_poll);
}

/// Rank 0 posts receives for tags 1 and 2; rank 1 sends only tag 2. Rank 0 tests the
/// tag-1 receive, which drains the message and matches it to the tag-2 one; then it
/// polls the tag-2 receive, which must find the message matched to it.
fn matched_while_testing_another(core: &Core, rounds: bool) -> Result<(), String> {
    if core.rank() == 1 {
        core.barrier().map_err(e)?;
        core.send(0, 2, b"second!!").map_err(e)?;
        return core.barrier().map_err(e);
    }
    let (mut first, mut second) = ([0u8; 8], [0u8; 8]);
    let mut one = core.irecv(1, 1, &mut first).map_err(e)?;
    let mut two = core.irecv(1, 2, &mut second).map_err(e)?;
    core.barrier().map_err(e)?;
    // Every fragment the message sent before the barrier has arrived.
    core.barrier().map_err(e)?;
    if test(core, &mut one, rounds)?.is_some() {
        return Err("the tag-1 receive completed with nothing sent to it".into());
    }
    let status = poll(core, &mut two, rounds)?;
    drop(two);
    drop(one);
    if (status.tag, &second) != (2, b"second!!") {
        return Err(format!("tag {} and {second:?}", status.tag));
    }
    Ok(())
}

#[test]
fn polling_finds_a_message_matched_while_another_receive_was_tested() {
    run_limited("the poll missed the message matched to it", matched_while_testing_another);
}
