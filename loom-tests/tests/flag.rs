//! The RCCE flag handoff (`sccemu::flag`): a payload copied before a flag write is
//! intact for whoever waits for that flag value, in both directions of a ping-pong.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::flag;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};
use sccemu::sync::AtomicU32;

/// Two cores' flags, doorbells and MPB payload areas.
struct Pair {
    job: JobControl,
    flags: [AtomicU32; 2],
    bells: [Doorbell; 2],
    mpbs: [LoomBytes; 2],
}

#[test]
fn ping_pong_hands_payloads_over_intact() {
    loom::model(|| {
        let p = Arc::new(Pair {
            job: JobControl::new(),
            flags: [AtomicU32::new(0), AtomicU32::new(0)],
            bells: [Doorbell::new(), Doorbell::new()],
            mpbs: [LoomBytes::new(4), LoomBytes::new(4)],
        });
        let pong = {
            let p = p.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &p.job);
                flag::wait_until(&p.flags[1], 1, &waiter, &p.bells[1]).unwrap();
                let mut got = [0u8; 4];
                p.mpbs[1].read(0, &mut got);
                assert_eq!(got, [1, 2, 3, 4]);
                p.mpbs[0].write(0, &[5, 6, 7, 8]);
                flag::write(&p.flags[0], 1, &p.bells[0]);
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &p.job);
        p.mpbs[1].write(0, &[1, 2, 3, 4]);
        flag::write(&p.flags[1], 1, &p.bells[1]);
        flag::wait_until(&p.flags[0], 1, &waiter, &p.bells[0]).unwrap();
        let mut got = [0u8; 4];
        p.mpbs[0].read(0, &mut got);
        assert_eq!(got, [5, 6, 7, 8]);
        assert_eq!(flag::read(&p.flags[1]), 1);
        pong.join().unwrap();
    });
}
