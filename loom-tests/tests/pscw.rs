//! Post-start-complete-wait counters (`sccemu::pscw`) with one target and two origins,
//! one pair of counters per origin: the target's local write before `post` is ordered
//! before each origin's access after `start`, and each origin's put before `complete`
//! before the target's read after `wait` (payload cells make loom report any unordered
//! access).
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::pscw::PairWords;
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    /// Doorbells of the target (0) and the origins (1, 2).
    bells: [Doorbell; 3],
    /// The counters of the pairs (origin o, the target).
    pairs: [PairWords; 2],
    /// The target's window: byte 0 is its own, byte 1 + o is written by origin o.
    window: LoomBytes,
}

#[test]
fn one_target_two_origins() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bells: [Doorbell::new(), Doorbell::new(), Doorbell::new()],
            pairs: [PairWords::new(), PairWords::new()],
            window: LoomBytes::new(3),
        });
        let origins: Vec<_> = (0..2)
            .map(|o| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    s.pairs[o].wait_post(0, &waiter, &s.bells[1 + o]).unwrap();
                    let mut mine = [0u8];
                    s.window.read(0, &mut mine);
                    assert_eq!(mine, [7], "origin {o} started before the target's store");
                    s.window.write(1 + o, &[10 + o as u8]);
                    s.pairs[o].complete(&s.bells[0]);
                })
            })
            .collect();
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        s.window.write(0, &[7]);
        for o in 0..2 {
            s.pairs[o].post(&s.bells[1 + o]);
        }
        // As `Window::wait`: every origin has completed the one epoch posted to it.
        let done = || s.pairs.iter().all(|p| p.completed(1)).then_some(());
        waiter.wait_until(&s.bells[0], done).unwrap();
        let mut all = [0u8; 3];
        s.window.read(0, &mut all);
        assert_eq!(all, [7, 10, 11]);
        for o in origins {
            o.join().unwrap();
        }
    });
}
