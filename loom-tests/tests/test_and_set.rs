//! Test-and-set words (`sccemu::protocol::test_and_set`): two takers never hold the
//! word at once, the second sees the first's work, and a release wakes a sleeping
//! taker.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::test_and_set::{release, take};
use sccemu::protocol::waiter::{Doorbell, Waiter};
use sccemu::sync::{AtomicU32, Ordering};

struct Register {
    job: JobControl,
    word: AtomicU32,
    bell: Doorbell,
    /// Work done under the lock: a non-atomic-style read-modify-write (Relaxed load
    /// then store), which loses an update unless the lock orders the holders.
    count: AtomicU32,
}

#[test]
fn holders_exclude_each_other_and_see_each_others_work() {
    loom::model(|| {
        let r = Arc::new(Register {
            job: JobControl::new(),
            word: AtomicU32::new(0),
            bell: Doorbell::new(),
            count: AtomicU32::new(0),
        });
        let holder = |r: Arc<Register>| {
            move || {
                let waiter = Waiter::new(WaitPolicy::Block, &r.job);
                take(&r.word, &waiter, &r.bell).unwrap();
                let seen = r.count.load(Ordering::Relaxed);
                r.count.store(seen + 1, Ordering::Relaxed);
                release(&r.word, &r.bell);
            }
        };
        let other = thread::spawn(holder(r.clone()));
        holder(r.clone())();
        other.join().unwrap();
        assert_eq!(r.count.load(Ordering::Relaxed), 2);
        assert_eq!(r.word.load(Ordering::Relaxed), 0);
    });
}
