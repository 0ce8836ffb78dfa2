//! The waiter's sleep/wake protocol (`sccemu::waiter`): no lost wake-up, and aborts wake
//! sleepers; with background work (`Progress`), a ring of the work's doorbell wakes a
//! sleeper on another doorbell. A lost wake-up shows up as a loom deadlock (every
//! thread blocked).
//!
//! A ring wakes only a doorbell that a sleeper armed since the last wake (the `ARMED`
//! bit of its word), so the models also drive the states that skipping a wake depends
//! on: two ringers racing for one armed value (one wakes, the other skips), a sleeper
//! woken by the first of two changes that arms again for the second, and a sleeper that
//! armed but found its condition true beside one that is asleep on the same value.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::{AbortCause, JobControl};
use sccemu::protocol::waiter::{Armed, Doorbell, Movable, Progress, Waiter};
use sccemu::sync::{AtomicU32, Ordering};

struct Shared {
    job: JobControl,
    bell: Doorbell,
    word: AtomicU32,
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared { job: JobControl::new(), bell: Doorbell::new(), word: AtomicU32::new(0) })
}

#[test]
fn a_change_rung_after_publication_always_wakes_the_sleeper() {
    loom::model(|| {
        let s = shared();
        let waker = {
            let s = s.clone();
            thread::spawn(move || {
                s.word.store(1, Ordering::Release);
                s.bell.ring();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let seen = waiter.wait_until(&s.bell, || Some(s.word.load(Ordering::Acquire)).filter(|&v| v != 0));
        assert_eq!(seen, Ok(1));
        waker.join().unwrap();
    });
}

#[test]
fn two_sleepers_on_one_doorbell_both_wake() {
    loom::model(|| {
        let s = shared();
        let sleepers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    waiter
                        .wait_until(&s.bell, || (s.word.load(Ordering::Acquire) == 1).then_some(()))
                        .unwrap();
                })
            })
            .collect();
        s.word.store(1, Ordering::Release);
        s.bell.ring();
        for t in sleepers {
            t.join().unwrap();
        }
    });
}

/// Two ringers, one sleeper that needs both changes: woken by the first ring (or not),
/// it arms again, and the second ring must find it armed, or it must see the second
/// change; when both ringers read the same armed value, one wakes and the other skips.
/// One ringer rings after its RMW (`ring_after_rmw`), the other after a fence.
#[test]
fn two_ringers_and_a_sleeper_that_sleeps_again() {
    loom::model(|| {
        let s = shared();
        let ringers: Vec<_> = (0..2)
            .map(|i| {
                let s = s.clone();
                thread::spawn(move || {
                    // Release: the sleeper's Acquire load of the count sees our part.
                    s.word.fetch_add(1, Ordering::Release);
                    if i == 0 { s.bell.ring_after_rmw() } else { s.bell.ring() }
                })
            })
            .collect();
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let seen = waiter.wait_until(&s.bell, || Some(s.word.load(Ordering::Acquire)).filter(|&v| v == 2));
        assert_eq!(seen, Ok(2));
        for t in ringers {
            t.join().unwrap();
        }
    });
}

/// Two sleepers on one doorbell, waiting for different changes of one ringer: the one
/// whose condition the first change meets may arm and find it true (it cannot disarm,
/// the other may be asleep on the same armed value), while the other sleeps on through
/// the first ring, or wakes and arms again, until the second.
#[test]
fn a_sleeper_done_after_arming_leaves_the_other_asleep_and_armed() {
    loom::model(|| {
        let s = shared();
        let sleepers: Vec<_> = (1..=2)
            .map(|want| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    waiter
                        .wait_until(&s.bell, || (s.word.load(Ordering::Acquire) >= want).then_some(()))
                        .unwrap();
                })
            })
            .collect();
        for v in 1..=2 {
            s.word.store(v, Ordering::Release);
            s.bell.ring();
        }
        for t in sleepers {
            t.join().unwrap();
        }
    });
}

#[test]
fn an_abort_wakes_a_sleeper_whose_condition_never_comes() {
    loom::model(|| {
        let s = shared();
        let aborter = {
            let s = s.clone();
            thread::spawn(move || {
                assert!(s.job.begin_abort(Some(3), AbortCause::Signaled(9)));
                s.bell.ring();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let err = waiter.wait_until(&s.bell, || None::<()>).unwrap_err();
        assert_eq!(err.rank, Some(3));
        assert_eq!(err.cause, AbortCause::Signaled(9));
        aborter.join().unwrap();
    });
}

/// Background work of the waiting core: a partner makes it movable (`pending`) and
/// rings the core's own doorbell (`own`); polling it then completes what the waiting
/// call waits for (`word`, as the partner's next step would), without ringing anyone.
struct Work {
    own: Doorbell,
    pending: AtomicU32,
    word: AtomicU32,
}

struct Pending<'a>(&'a AtomicU32);

impl Movable for Pending<'_> {
    fn movable(&self) -> bool {
        self.0.load(Ordering::Acquire) != 0
    }
}

impl Progress for Work {
    fn poll(&self) -> bool {
        let moved = self.pending.swap(0, Ordering::Acquire) != 0;
        if moved {
            self.word.store(1, Ordering::Release);
        }
        moved
    }

    fn arm(&self) -> Armed<'_> {
        Armed::Watch(&self.own, Box::new(Pending(&self.pending)))
    }
}

/// The waiter sleeps on the call's doorbell, which nobody rings: only the work's ring,
/// on the other doorbell, can wake it.
#[test]
fn a_ring_of_the_background_doorbell_wakes_a_sleeper_on_another() {
    loom::model(|| {
        let s = shared();
        let work =
            Arc::new(Work { own: Doorbell::new(), pending: AtomicU32::new(0), word: AtomicU32::new(0) });
        let partner = {
            let work = work.clone();
            thread::spawn(move || {
                work.pending.store(1, Ordering::Release);
                work.own.ring();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job).with_progress(&*work);
        let seen = waiter.wait_until(&s.bell, || (work.word.load(Ordering::Acquire) == 1).then_some(()));
        assert_eq!(seen, Ok(()));
        partner.join().unwrap();
    });
}

/// Sleeping on both doorbells, the call's own ring still wakes it.
#[test]
fn with_background_work_armed_the_calls_own_ring_still_wakes() {
    loom::model(|| {
        let s = shared();
        let work =
            Arc::new(Work { own: Doorbell::new(), pending: AtomicU32::new(0), word: AtomicU32::new(0) });
        let waker = {
            let s = s.clone();
            thread::spawn(move || {
                s.word.store(1, Ordering::Release);
                s.bell.ring();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job).with_progress(&*work);
        let seen = waiter.wait_until(&s.bell, || (s.word.load(Ordering::Acquire) == 1).then_some(()));
        assert_eq!(seen, Ok(()));
        waker.join().unwrap();
    });
}

/// A second doorbell and nothing else: the sleeper's condition reads what that
/// doorbell's ringer changes itself (the watch says nothing).
struct SecondBell {
    own: Doorbell,
}

struct Nothing;

impl Movable for Nothing {
    fn movable(&self) -> bool {
        false
    }
}

impl Progress for SecondBell {
    fn poll(&self) -> bool {
        false
    }

    fn arm(&self) -> Armed<'_> {
        Armed::Watch(&self.own, Box::new(Nothing))
    }
}

/// Sleeping on both doorbells, the sleeper needs a ring of each: woken by the first, it
/// arms both again for the second.
#[test]
fn a_sleeper_on_two_doorbells_woken_by_one_sleeps_again_for_the_other() {
    loom::model(|| {
        let s = shared();
        let second = Arc::new((SecondBell { own: Doorbell::new() }, AtomicU32::new(0)));
        let partner = {
            let second = second.clone();
            thread::spawn(move || {
                second.1.store(1, Ordering::Release);
                second.0.own.ring();
            })
        };
        let waker = {
            let s = s.clone();
            thread::spawn(move || {
                s.word.store(1, Ordering::Release);
                s.bell.ring();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job).with_progress(&second.0);
        let both = || {
            let call = s.word.load(Ordering::Acquire) == 1;
            (call && second.1.load(Ordering::Acquire) == 1).then_some(())
        };
        assert_eq!(waiter.wait_until(&s.bell, both), Ok(()));
        partner.join().unwrap();
        waker.join().unwrap();
    });
}
