//! API fuzzing (issue 19): random scripts of public calls, valid and invalid mixed, run
//! by every rank of a 3- or 4-core job against a reference model of the epoch rules.
//!
//! proptest generates one script per case; the script is the job argument, so every
//! rank runs the same calls in the same order (collectives line up) with peers named
//! relative to the caller. Each rank records `Ok` or the error's `Debug` text per step;
//! the model ([`Model`]) predicts, per rank, which steps fail and with which typed
//! error. A script ends with cleanup and correct collectives (a barrier, an allreduce,
//! a fenced put/get) that must succeed, so the job is still usable after every error.
//! A panic fails the rank (the job reports it); a hang is turned into a failure by a
//! watchdog in each rank.
//!
//! Steps that could deadlock a correct program (an exclusive lock while others may
//! hold this core's lock, a blocking collective inside a lock epoch) are dropped from
//! the script by the model before it runs: the fuzzing is about refused calls, not
//! about programs that are wrong in ways no library can report.

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sccemu::{AccStrategy, Allgather, Assert, CollError, Core, Group, Job, LockKind, Op, Placement, Window};

#[path = "api_fuzz/model.rs"]
mod model;
use model::{MINE, MPB, PART, Script, Step, expected, offset_of, script};

/// How long a rank may run before its watchdog declares a hang.
const LIMIT: Duration = Duration::from_secs(60);

type Win<'c> = Window<'c, u32>;

fn text<T: std::fmt::Debug, E: std::fmt::Debug>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(e) => format!("{e:?}"),
    }
}

/// Runs one step on this rank; returns its outcome as the model words it.
fn run_step<'c>(
    core: &'c Core,
    win: &mut Option<Win<'c>>,
    script: &Script,
    step: &Step,
    mine: usize,
) -> String {
    let (me, n) = (core.rank(), core.size());
    let w = win.as_ref().expect("a window is always live between steps");
    let world = || core.world().expect("world communicator");
    match step {
        Step::Put { t, index, len } => text(w.put(t.rank(me, n), *index, &vec![me; *len])),
        Step::Get { t, index, len } => text(w.get(t.rank(me, n), *index, &mut vec![0; *len])),
        Step::FetchAdd64 { t, index } => text(w.fetch_add(t.rank(me, n), *index, 1u64)),
        Step::Acc { t, index, len } => text(w.accumulate(t.rank(me, n), *index, &vec![1; *len], Op::Sum)),
        Step::Cas32 { t, index } => text(w.compare_and_swap(t.rank(me, n), *index, 0u32, me)),
        Step::LenOf { t } => match w.len_of(t.rank(me, n)) {
            Ok(len) => format!("{len:?}"),
            Err(e) => format!("{e:?}"),
        },
        Step::Fence => text(w.fence_with(Assert::NONE)),
        Step::Lock { t, exclusive } => {
            let kind = if *exclusive { LockKind::Exclusive } else { LockKind::Shared };
            // The epoch stays open past the guard: `Unlock` closes it through the window.
            text(w.lock(kind, t.rank(me, n)).map(std::mem::forget))
        }
        Step::Unlock { t } => text(w.unlock(t.rank(me, n))),
        Step::LockAll => text(w.lock_all().map(std::mem::forget)),
        Step::UnlockAll => text(w.unlock_all()),
        Step::Flush { t } => text(w.flush(t.rank(me, n))),
        Step::FlushAll => text(w.flush_all()),
        Step::Pscw => {
            let (left, right) = ((me + n - 1) % n, (me + 1) % n);
            let run = || -> Result<(), String> {
                w.post(&Group::single(left)).map_err(|e| format!("{e:?}"))?;
                w.start(&Group::single(right)).map_err(|e| format!("{e:?}"))?;
                w.put(right, 0, &[me]).map_err(|e| format!("{e:?}"))?;
                w.complete().map_err(|e| format!("{e:?}"))?;
                w.wait().map_err(|e| format!("{e:?}"))
            };
            run().map_or_else(|e| e, |()| "Ok".into())
        }
        Step::Complete => text(w.complete()),
        Step::Wait => text(w.wait()),
        Step::Test => text(w.test()),
        Step::Free | Step::FreeLocked => {
            if *step == Step::FreeLocked {
                if let Err(e) = core.barrier() {
                    return format!("barrier: {e:?}");
                }
                // The guard is forgotten: the epoch is open when `free` runs.
                if let Err(e) = w.lock_all().map(std::mem::forget) {
                    return format!("lock_all: {e:?}");
                }
            }
            let freed = win.take().expect("live").free();
            match new_window(core, script) {
                Ok(new) => *win = Some(new),
                Err(e) => return format!("new window: {e:?}"),
            }
            text(freed)
        }
        Step::MpbPut { t, off, len } => {
            text(core.mpb_put(t.rank(me, n), offset_of(*off, *len, mine), &vec![7; *len]))
        }
        Step::MpbGet { t, off, len } => {
            text(core.mpb_get(t.rank(me, n), offset_of(*off, *len, mine), &mut vec![0; *len]))
        }
        Step::FlagWrite { t, value } => {
            text(FLAG.with(|f| core.flag_write(f.get().unwrap(), t.rank(me, n), *value)))
        }
        Step::FlagRead { t } => text(FLAG.with(|f| core.flag_read(f.get().unwrap(), t.rank(me, n)))),
        Step::FlagWaitAt { t } => text(FLAG.with(|f| core.flag_wait_at(f.get().unwrap(), t.rank(me, n), 1))),
        Step::Barrier => text(core.barrier()),
        Step::Allreduce => {
            let mut sum = [0u64];
            match world().allreduce(&[u64::from(me)], &mut sum, Op::Sum) {
                Ok(()) if sum[0] == u64::from(n * (n - 1) / 2) => "Ok".into(),
                other => format!("allreduce {other:?} gave {sum:?}"),
            }
        }
        Step::AllreduceMismatch => text(world().allreduce(&[1u32], &mut [0u32; 2], Op::Sum)),
        Step::AllreduceBadOp => text(world().allreduce(&[1.0f64], &mut [0.0f64], Op::BitAnd)),
        Step::Bcast { root } => {
            let mut buf = if me == *root { [7, *root] } else { [0, 0] };
            match world().bcast(*root, &mut buf) {
                Ok(()) if buf == [7, *root] => "Ok".into(),
                Ok(()) => format!("bcast gave {buf:?}"),
                Err(e) => format!("{e:?}"),
            }
        }
        Step::Split => {
            let run = || -> Result<(), CollError> {
                let half = world().split(Some(me % 2), 0)?.expect("a colour");
                let mut ranks = vec![0u32; half.size() as usize];
                half.allgather(&[me], &mut ranks, Allgather::Auto)?;
                assert!(ranks.iter().all(|r| r % 2 == me % 2), "split mixed colours: {ranks:?}");
                half.free()
            };
            text(run())
        }
    }
}

thread_local! {
    static FLAG: std::cell::Cell<Option<sccemu::Flag>> = const { std::cell::Cell::new(None) };
}

/// Closes whatever the script left open, then checks that the job still works: a
/// barrier, an allreduce and a fenced put/get round the ring.
fn epilogue(core: &Core, win: Win<'_>) -> Result<(), String> {
    let (me, n) = (core.rank(), core.size());
    let _ = win.unlock_all();
    for t in 0..n {
        let _ = win.unlock(t);
    }
    core.barrier().map_err(|e| format!("final barrier: {e}"))?;
    let mut sum = [0u64];
    core.world()
        .and_then(|w| w.allreduce(&[u64::from(me) + 1], &mut sum, Op::Sum))
        .map_err(|e| e.to_string())?;
    if sum[0] != u64::from(n * (n + 1) / 2) {
        return Err(format!("final allreduce gave {sum:?}"));
    }
    win.fence().map_err(|e| format!("final fence: {e:?}"))?;
    win.put((me + 1) % n, PART - 1, &[1000 + me]).map_err(|e| format!("final put: {e:?}"))?;
    win.fence().map_err(|e| format!("final fence: {e:?}"))?;
    let got = win.local().get(PART - 1).map_err(|e| e.to_string())?;
    if got != 1000 + (me + n - 1) % n {
        return Err(format!("final put delivered {got}"));
    }
    win.free().map_err(|e| format!("final free: {e:?}"))
}

/// One rank: runs the script under a watchdog that aborts the job on a hang.
fn fuzz_rank(core: &Core, script: Script) -> Result<Vec<String>, String> {
    let (done, finished) = channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            if finished.recv_timeout(LIMIT) == Err(RecvTimeoutError::Timeout) {
                eprintln!("rank {} still running after {LIMIT:?}: hung", core.rank());
                core.abort(3);
            }
        });
        let result = run_script(core, &script);
        drop(done);
        result
    })
}

/// Collective: the script's window (its placement and accumulate strategy).
fn new_window<'c>(core: &'c Core, script: &Script) -> Result<Win<'c>, sccemu::WindowError> {
    let placement = if script.mpb { Placement::Mpb } else { Placement::Dram };
    let strategy = if script.owner { AccStrategy::OwnerComputes } else { AccStrategy::Atomic };
    core.window_with::<u32>(PART, placement, strategy)
}

fn run_script(core: &Core, script: &Script) -> Result<Vec<String>, String> {
    let mine = core.mpb_alloc(MINE).map_err(|e| e.to_string())?.offset;
    FLAG.with(|f| core.flag_alloc().map(|flag| f.set(Some(flag)))).map_err(|e| e.to_string())?;
    let mut win = Some(new_window(core, script).map_err(|e| e.to_string())?);
    let outcomes = script.steps.iter().map(|step| run_step(core, &mut win, script, step, mine)).collect();
    epilogue(core, win.expect("live"))?;
    Ok(outcomes)
}

#[test]
fn random_call_sequences_fail_only_as_the_model_predicts() {
    sccemu::job::init(); // a rank of the job runs `fuzz_rank` here and exits
    // Each case is a whole job: unbounded shrinking of a failure could run for hours.
    let config = Config { cases: 24, failure_persistence: None, max_shrink_iters: 20, ..Config::default() };
    let mut runner = TestRunner::new(config);
    runner
        .run(&script(), |script| {
            let got = Job::new(script.n)
                .mpb_bytes(MPB as u32)
                .run(&script, fuzz_rank)
                .map_err(|e| TestCaseError::fail(format!("job failed: {e}")))?;
            for (me, outcomes) in got.iter().enumerate() {
                let want = expected(&script, me as u32);
                for (i, (g, w)) in outcomes.iter().zip(&want).enumerate() {
                    prop_assert_eq!(g, w, "rank {} step {}: {:?}", me, i, script.steps[i]);
                }
                prop_assert_eq!(outcomes.len(), want.len());
            }
            Ok(())
        })
        .unwrap();
}
