//! Corrupted shared state (issue 19): a rank of a running job overwrites protocol words
//! of another core with garbage — an SRB ring entry's header, a window's lock word, a
//! request in an owner-computes queue — and the job must detect it, not trust it: the
//! reader reports the corruption naming where it is (a ring), or the job aborts with
//! `AbortCause::Corrupted` naming the core that found it (a lock, a request). Neither a
//! hang (every rank runs under a watchdog that aborts the job with status 3, which the
//! checks then reject) nor a crash is acceptable.
//!
//! The words are reached through the hidden test accessors
//! (`CoreContext::segment_for_tests`, `Window::lock_region_for_tests`,
//! `Window::owner_queue_for_tests`).

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use sccemu::protocol::payload::Payload;
use sccemu::{
    AbortCause, AccStrategy, ChannelKind, CollError, Core, Job, JobAborted, LockKind, Op, Placement,
    RankFailure, RecvError, SyncError,
};

mod common;
use common::{OrString, check};

/// How long a rank may run before its watchdog declares a hang.
const LIMIT: Duration = Duration::from_secs(30);

/// Runs `body` under a watchdog that aborts the job (status 3) if it hangs.
fn bounded<R>(core: &Core, body: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    let (done, finished) = channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            if finished.recv_timeout(LIMIT) == Err(RecvTimeoutError::Timeout) {
                eprintln!("rank {} still blocked after {LIMIT:?}: hung", core.rank());
                core.abort(3);
            }
        });
        let result = body();
        drop(done);
        result
    })
}

/// Writes `bytes` at absolute `offset` of the segment.
fn scribble(core: &Core, offset: usize, bytes: &[u8]) {
    let region = shm_layout::Region { offset, len: bytes.len() };
    core.segment_for_tests().bytes(region).write(0, bytes);
}

/// Rank 1 writes `ctl` as the control word of the first entry of rank 0's SRB ring;
/// rank 0's receive must report it (and rank 0 then fails); rank 1, waiting for a
/// message from rank 0, gets the abort naming rank 0.
fn corrupt_ring(core: &Core, ctl: u32) -> Result<String, String> {
    bounded(core, || {
        if core.rank() == 1 {
            let ring = core.segment_for_tests().layout().rings.get(0).expect("rank 0's ring");
            scribble(core, ring.offset, &ctl.to_le_bytes());
            core.barrier().s()?;
            core.ring(0);
            return match core.recv(0, 0, &mut [0u8; 8]) {
                Err(RecvError::Aborted(a)) => Ok(format!("{a:?}")),
                other => Err(format!("expected the abort, got {other:?}")),
            };
        }
        core.barrier().s()?;
        match core.recv(1, 0, &mut [0u8; 64]) {
            Err(RecvError::Corrupt(c)) => {
                check(c.channel == "srb" && c.owner == 0 && c.position == 0, || {
                    format!("wrong place: {c:?}")
                })?;
                Err(format!("{:?} / {c}", c.kind))
            }
            other => Err(format!("expected the corruption, got {other:?}")),
        }
    })
}

#[test]
fn corrupted_srb_ring_entry_is_reported_where_it_is() {
    let job = Job::new(2).channel(ChannelKind::Srb);
    for (ctl, want) in [(0x40u32, "BadControlWord"), (1 << 31 | 0x3fff_ffff, "LengthPastRing")] {
        let outcome = job.run_outcome(&ctl, corrupt_ring).unwrap();
        match &outcome.ranks[0] {
            Err(RankFailure::Returned(e)) => {
                assert!(e.starts_with(want), "{ctl:#x}: {e}");
                assert!(e.contains("corrupted srb channel of core 0 at 0"), "{e}");
            }
            other => panic!("{ctl:#x}: rank 0 should report the corruption: {other:?}"),
        }
        let aborted = outcome.ranks[1].as_ref().expect("rank 1 sees the abort");
        assert!(aborted.contains("rank: Some(0)"), "{aborted}");
    }
}

/// Every rank's first error, which must be the job's abort for corrupted state.
fn corrupted(e: &JobAborted) -> Result<String, String> {
    check(e.cause == AbortCause::Corrupted, || format!("not a corruption abort: {e:?}"))?;
    Ok(format!("{e:?}"))
}

fn sync_abort(r: Result<(), SyncError>) -> Result<String, String> {
    match r {
        Err(SyncError::Aborted(a)) => corrupted(&a),
        other => Err(format!("expected the corruption abort, got {other:?}")),
    }
}

/// Rank 1 overwrites rank 0's lock word of a window (`users`, `read`, `write` in one
/// u64) with `garbage`; ranks 1 and 2 then lock rank 0, and rank 0 waits in a barrier.
fn corrupt_lock(core: &Core, garbage: u64) -> Result<String, String> {
    bounded(core, || {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        let lock = win.lock_region_for_tests(0).s()?;
        if core.rank() == 1 {
            scribble(core, lock.offset, &garbage.to_le_bytes());
        }
        core.barrier().s()?;
        if core.rank() == 0 {
            return match core.barrier() {
                Err(CollError::Aborted(a)) => corrupted(&a),
                Err(e) => Err(format!("expected the corruption abort, got {e:?}")),
                Ok(()) => Err("the barrier passed: nobody detected the lock".into()),
            };
        }
        let kind = if core.rank() == 1 { LockKind::Exclusive } else { LockKind::Shared };
        sync_abort(win.lock(kind, 0).map(drop))
    })
}

/// The lock word of `src/protocol/rwlock.rs`: `users` in the top 20 bits, `write` in
/// bits 20..40, `read` in bits 0..20.
fn lock_word(users: u64, read: u64, write: u64) -> u64 {
    users << 44 | write << 20 | read
}

#[test]
fn corrupted_lock_word_stops_the_job() {
    // A ticket far ahead of `read` and `write`; `read` and `write` ahead of every ticket.
    for garbage in [lock_word(0x12345, 0, 0), lock_word(5, 9, 9)] {
        let got = Job::new(3).run(&garbage, corrupt_lock).unwrap_or_else(|e| panic!("{garbage:#x}: {e}"));
        for (rank, text) in got.iter().enumerate() {
            let by_locker = text.contains("rank: Some(1)") || text.contains("rank: Some(2)");
            assert!(by_locker, "{garbage:#x}: rank {rank}: {text}");
        }
    }
}

/// Rank 1 takes an exclusive lock on rank 0 (which registers the target for lock_all,
/// in a slot beside the window's lock_all word), then overwrites that slot with a rank
/// that does not exist; rank 2's lock_all, which must revoke the registration, finds
/// the slot and stops the job.
fn corrupt_lock_all_slot(core: &Core, _: ()) -> Result<String, String> {
    bounded(core, || {
        let win = core.window::<u64>(4, Placement::Dram).s()?;
        if core.rank() == 1 {
            win.lock(LockKind::Exclusive, 0).s()?.unlock().s()?;
            let slots = win.lock_all_slots_for_tests();
            let mut first = [0u8; 4];
            core.segment_for_tests().bytes(slots).read(0, &mut first);
            if u32::from_le_bytes(first) != 1 {
                return Err(format!("target 0 not registered in slot 0: {first:?}"));
            }
            scribble(core, slots.offset, &1000u32.to_le_bytes());
        }
        core.barrier().s()?;
        if core.rank() == 2 {
            return sync_abort(win.lock_all().map(drop));
        }
        match core.barrier() {
            Err(CollError::Aborted(a)) => corrupted(&a),
            Err(e) => Err(format!("expected the corruption abort, got {e:?}")),
            Ok(()) => Err("the barrier passed: nobody detected the slot".into()),
        }
    })
}

#[test]
fn corrupted_lock_all_slot_stops_the_job() {
    let got = Job::new(3).run(&(), corrupt_lock_all_slot).unwrap();
    for (rank, text) in got.iter().enumerate() {
        assert!(text.contains("rank: Some(2)"), "rank {rank}: {text}");
    }
}

/// A fake request injected into rank 0's owner-computes queue: its length word and
/// its bytes (the request header, then the operand).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
enum Fake {
    /// A length past any slot.
    HugeLength,
    /// One past the largest message (the queue copies nothing out of it).
    SlotLength,
    /// A plausible length over garbage bytes.
    GarbageHeader,
    /// A well-formed request of an unknown kind.
    UnknownKind,
    /// A well-formed request crediting rank 2, which issued none.
    ForeignOrigin,
    /// No request: the next position's `seq` word claims a later lap.
    SeqAhead,
    /// No request: the next position's `seq` word lies far behind any lap.
    SeqBehind,
}

const HEADER: usize = 40;

fn request(kind: u32, origin: u32) -> Vec<u8> {
    let mut r = vec![0u8; HEADER + 8];
    r[0..4].copy_from_slice(&kind.to_le_bytes());
    r[4..8].copy_from_slice(&origin.to_le_bytes());
    r[16..20].copy_from_slice(&1u32.to_le_bytes()); // one element at index 0, op Sum
    r[HEADER..].copy_from_slice(&1u64.to_le_bytes());
    r
}

/// Rank 1 publishes `fake` in rank 0's queue as the next request (slot, `seq`, then
/// `tail` past it) or overwrites the next `seq` word, then accumulates to rank 0 and
/// unlocks; then everyone passes a barrier and a fence, whose quiesce checks every
/// origin's completions.
fn corrupt_request(core: &Core, fake: Fake) -> Result<String, String> {
    bounded(core, || {
        let win = core.window_with::<u64>(8, Placement::Dram, AccStrategy::OwnerComputes).s()?;
        let [ctl, seqs, slots] = win.owner_queue_for_tests(0).ok_or("no owner-computes queue")?;
        core.barrier().s()?;
        if core.rank() == 1 {
            let cap = seqs.len / 8;
            let slot_bytes = slots.len / cap;
            let (len, body) = match fake {
                Fake::HugeLength => (0xdead_beef, vec![0xab; 64]),
                Fake::SlotLength => (slot_bytes as u32, vec![0xab; 64]),
                Fake::GarbageHeader => ((HEADER + 8) as u32, vec![0xab; HEADER + 8]),
                Fake::UnknownKind => ((HEADER + 8) as u32, request(7, 1)),
                Fake::ForeignOrigin => ((HEADER + 8) as u32, request(0, 2)),
                Fake::SeqAhead | Fake::SeqBehind => (0, vec![]),
            };
            let mut tail = [0u8; 8];
            core.segment_for_tests().bytes(ctl).read(0, &mut tail);
            let pos = u64::from_le_bytes(tail);
            let seq = seqs.offset + (pos as usize % cap) * 8;
            match fake {
                Fake::SeqAhead => scribble(core, seq, &(pos + 5).to_le_bytes()),
                Fake::SeqBehind => scribble(core, seq, &pos.wrapping_sub(1000).to_le_bytes()),
                _ => {
                    let slot = slots.offset + (pos as usize % cap) * slot_bytes;
                    scribble(core, slot, &len.to_le_bytes());
                    scribble(core, slot + 4, &body);
                    scribble(core, seq, &(pos + 1).to_le_bytes());
                    scribble(core, ctl.offset, &(pos + 1).to_le_bytes());
                }
            }
            let epoch = win.lock(LockKind::Shared, 0).map_err(|e| format!("{e:?}"))?;
            match epoch.accumulate(0, 1, &[1u64], Op::Sum) {
                Ok(()) => {}
                Err(sccemu::AccError::Aborted(a)) => return corrupted(&a),
                Err(e) => return Err(format!("accumulate: {e:?}")),
            }
            if let Err(e) = epoch.unlock() {
                return sync_abort(Err(e));
            }
        }
        match core.barrier() {
            Err(CollError::Aborted(a)) => return corrupted(&a),
            Err(e) => return Err(format!("expected the corruption abort, got {e:?}")),
            Ok(()) => {}
        }
        sync_abort(win.fence())
    })
}

#[test]
fn corrupted_owner_computes_request_stops_the_job() {
    use Fake::*;
    for fake in [HugeLength, SlotLength, GarbageHeader, UnknownKind, ForeignOrigin, SeqAhead, SeqBehind] {
        // The agent on rank 0 finds a malformed request; rank 2's quiesce finds more
        // requests applied for it than it issued; rank 1's push finds the bad `seq`.
        let finder = match fake {
            ForeignOrigin => 2,
            SeqAhead | SeqBehind => 1,
            _ => 0,
        };
        let got = Job::new(3).run(&fake, corrupt_request).unwrap_or_else(|e| panic!("{fake:?}: {e}"));
        for (rank, text) in got.iter().enumerate() {
            assert!(text.contains(&format!("rank: Some({finder})")), "{fake:?}: rank {rank}: {text}");
        }
    }
}
