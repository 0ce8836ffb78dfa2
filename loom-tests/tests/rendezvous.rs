//! The collectives' rendezvous (`sccemu::protocol::flag::meet`) with 2 members and 3 calls, as
//! `coll` uses it: each member writes its staging half of the call's parity, meets,
//! then reads the other member's half. Halves are reused two calls later, so loom
//! reports any read not ordered after its write, and any write into a half that the
//! other member may still be reading.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::flag;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};
use sccemu::sync::AtomicU32;

const CALLS: u32 = 3;

struct Comm {
    job: JobControl,
    flags: [AtomicU32; 2],
    bells: [Doorbell; 2],
    /// Member m's halves: byte 2m + parity.
    halves: LoomBytes,
}

fn member(c: &Comm, me: u32) {
    let waiter = Waiter::new(WaitPolicy::Block, &c.job);
    let other = 1 - me;
    for call in 1..=CALLS {
        let parity = (call % 2) as usize;
        c.halves.write(2 * me as usize + parity, &[call as u8]);
        flag::meet(2, me, call, |r| &c.flags[r as usize], |r| &c.bells[r as usize], &waiter).unwrap();
        let mut got = [0u8];
        c.halves.read(2 * other as usize + parity, &mut got);
        assert_eq!(got, [call as u8], "member {me} read a stale half in call {call}");
    }
}

#[test]
fn two_members_three_calls() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let c = Arc::new(Comm {
            job: JobControl::new(),
            flags: [AtomicU32::new(0), AtomicU32::new(0)],
            bells: [Doorbell::new(), Doorbell::new()],
            halves: LoomBytes::new(4),
        });
        let peer = {
            let c = c.clone();
            thread::spawn(move || member(&c, 1))
        };
        member(&c, 0);
        peer.join().unwrap();
    });
}
