//! Asynchronous progress over real processes: a core that computes without calling the
//! library does not stall a peer that sends to it, when the job asks for a progress
//! thread per core (`Job::async_progress`), and does stall it without one.
//!
//! Rank 0 makes blocking sends to rank 1: many 16 KiB messages (far more than either
//! channel holds) and one of 1 MiB (announced for the single-copy path, which rank 1
//! must take). Then it creates a file. Rank 1 meanwhile "computes": it polls for the
//! file without touching the library, for at most a limit. Only a progress thread on
//! rank 1 can drain its channels and take the announced message while it does, so the
//! file appears within the limit with the thread, and not without it. Rank 1 then
//! receives every message and checks its bytes.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{OrString, check};
use sccemu::{ChannelKind, Core, Job, WaitPolicy};

const TAG: u32 = 5;
const SMALL: usize = 16 << 10;
const SMALL_COUNT: usize = 256;
const LARGE: usize = 1 << 20;

/// Where rank 0 signals, and how long rank 1 computes at most.
#[derive(serde::Serialize, serde::Deserialize)]
struct Setup {
    flag: PathBuf,
    limit_ms: u64,
}

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(2654435761) >> 7 ^ seed) as u8).collect()
}

fn messages() -> impl Iterator<Item = Vec<u8>> {
    (0..SMALL_COUNT).map(|k| pattern(k, SMALL)).chain(std::iter::once(pattern(999, LARGE)))
}

/// Computes (sleeps) until `flag` exists or `limit` passed: whether it appeared.
fn compute_until(flag: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if flag.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

/// Rank 1's answer: whether rank 0 finished sending while rank 1 computed.
fn entry(core: &Core, setup: Setup) -> Result<bool, String> {
    if core.rank() == 0 {
        for data in messages() {
            core.send(1, TAG, &data).s()?;
        }
        std::fs::write(&setup.flag, b"sent").s()?;
        core.barrier().s()?;
        return Ok(true);
    }
    let sent = compute_until(&setup.flag, Duration::from_millis(setup.limit_ms));
    for (k, data) in messages().enumerate() {
        let mut buf = vec![0u8; data.len()];
        let status = core.recv(0, TAG, &mut buf).s()?;
        check(status.len == data.len() && buf == data, || format!("message {k} damaged: {status:?}"))?;
    }
    core.barrier().s()?;
    Ok(sent)
}

fn run(kind: ChannelKind, wait: WaitPolicy, progress: bool, limit_ms: u64) -> bool {
    let flag = std::env::temp_dir()
        .join(format!("sccemu-async-{}-{kind:?}-{wait:?}-{progress}", std::process::id()));
    let _ = std::fs::remove_file(&flag);
    let job = Job::new(2).channel(kind).wait(wait).async_progress(progress);
    let result = job.run(&Setup { flag: flag.clone(), limit_ms }, entry);
    let _ = std::fs::remove_file(&flag);
    let sent = result.unwrap_or_else(|e| panic!("{kind:?}, {wait:?}, progress {progress}: {e}"));
    sent[1]
}

#[test]
fn a_progress_thread_moves_messages_while_the_receiver_computes() {
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        for wait in [WaitPolicy::Block, WaitPolicy::Spin] {
            assert!(run(kind, wait, true, 20_000), "{kind:?}, {wait:?}: rank 0's sends stalled for 20 s");
        }
    }
}

#[test]
fn without_it_the_sender_waits_for_the_receivers_next_call() {
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        assert!(!run(kind, WaitPolicy::Block, false, 1_000), "{kind:?}: the sends finished without progress");
    }
}

/// Rank 1 adopts and releases a buffer of its own, again and again, while rank 0's
/// messages stream in and its progress thread drains them: each adoption must wait for
/// that thread to let go of the process's pages (`segment::pages_still`), and get them.
fn adopt_while_draining(core: &Core, _: ()) -> Result<(), String> {
    const ROUNDS: usize = 200;
    if core.rank() == 0 {
        for data in messages() {
            core.send(1, TAG, &data).s()?;
        }
        return core.barrier().s();
    }
    let ctx = core.context();
    let mut buf = vec![0u8; 3 * 4096];
    let mut adopt_and_release = |round: usize| {
        buf[5000] = round as u8;
        let base = buf.as_mut_ptr();
        // SAFETY: `buf` is this thread's private heap memory, reached only through
        // `base` until released; the library's own threads keep off its pages while
        // they move (what this test checks).
        unsafe { ctx.adopt(base.wrapping_add(100), 8000) }.s()?;
        // SAFETY: as above; adopted just now, and no window uses it.
        unsafe { ctx.release_adopted(base.wrapping_add(100)) }.s()?;
        check(buf[5000] == round as u8, || format!("round {round}: the buffer lost its contents"))
    };
    // While the messages stream in, then with the thread asleep on an idle core.
    (0..ROUNDS).try_for_each(&mut adopt_and_release)?;
    for (k, data) in messages().enumerate() {
        let mut got = vec![0u8; data.len()];
        let status = core.recv(0, TAG, &mut got).s()?;
        check(status.len == data.len() && got == data, || format!("message {k} damaged: {status:?}"))?;
    }
    std::thread::sleep(Duration::from_millis(50));
    (0..ROUNDS).try_for_each(adopt_and_release)?;
    core.barrier().s()
}

#[test]
fn memory_is_adopted_while_the_progress_thread_runs() {
    for kind in [ChannelKind::Srb, ChannelKind::PerPeer] {
        // An adoption that waits for a thread nobody wakes hangs: fail instead.
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let job = Job::new(2).channel(kind).async_progress(true);
            let _ = done.send(job.run(&(), adopt_while_draining).map_err(|e| e.to_string()));
        });
        match finished.recv_timeout(Duration::from_secs(120)) {
            Ok(result) => result.unwrap_or_else(|e| panic!("{kind:?}: {e}")),
            Err(_) => panic!("{kind:?}: an adoption hung beside the progress thread"),
        };
    }
}
