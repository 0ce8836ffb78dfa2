//! Post-start-complete-wait counters (`sccemu::pscw`) with one target and two origins:
//! the target's local write before `post` is ordered before each origin's access after
//! `start`, and each origin's put before `complete` before the target's read after
//! `wait` (payload cells make loom report any unordered access).
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::abort::JobControl;
use sccemu::payload::{LoomBytes, Payload};
use sccemu::pscw::{self, PscwTarget};
use sccemu::sync::AtomicU32;
use sccemu::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    /// Doorbells of the target (0) and the origins (1, 2).
    bells: [Doorbell; 3],
    target: PscwTarget,
    /// Origin o's post counter for the target.
    posts: [AtomicU32; 2],
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
            target: PscwTarget::new(),
            posts: [AtomicU32::new(0), AtomicU32::new(0)],
            window: LoomBytes::new(3),
        });
        let origins: Vec<_> = (0..2)
            .map(|o| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    pscw::wait_post(&s.posts[o], 0, &waiter, &s.bells[1 + o]).unwrap();
                    let mut mine = [0u8];
                    s.window.read(0, &mut mine);
                    assert_eq!(mine, [7], "origin {o} started before the target's store");
                    s.window.write(1 + o, &[10 + o as u8]);
                    s.target.complete(&s.bells[0]);
                })
            })
            .collect();
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        s.window.write(0, &[7]);
        let expected = s.target.count() + 2;
        for o in 0..2 {
            pscw::post(&s.posts[o], &s.bells[1 + o]);
        }
        s.target.wait(expected, &waiter, &s.bells[0]).unwrap();
        let mut all = [0u8; 3];
        s.window.read(0, &mut all);
        assert_eq!(all, [7, 10, 11]);
        for o in origins {
            o.join().unwrap();
        }
    });
}
