//! The waiter's sleep/wake protocol (`sccemu::waiter`): no lost wake-up, and aborts wake
//! sleepers. A lost wake-up shows up as a loom deadlock (every thread blocked).
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::{AbortCause, JobControl};
use sccemu::protocol::waiter::{Doorbell, Waiter};
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
