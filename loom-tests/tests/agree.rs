//! Checking mode's argument agreement (`sccemu::protocol::agree`) with the real barrier:
//! two members run three checks on one slot set, the second with different roots, so
//! the third reuses the first's parity with only one barrier per check. Loom reports
//! any slot read not ordered after its write, or a slot rewritten while a member may
//! still read it; both members reach the same verdict every time.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::agree::{Disagreement, Fingerprint, MEMBER_BYTES, agree};
use sccemu::protocol::barrier::BarrierState;
use sccemu::protocol::payload::LoomBytes;
use sccemu::protocol::waiter::{Doorbell, Waiter};

const MEMBERS: u32 = 2;

struct Shared {
    job: JobControl,
    home: Doorbell,
    barrier: BarrierState,
    slots: LoomBytes,
}

#[test]
fn two_members_three_checks() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            home: Doorbell::new(),
            barrier: BarrierState::new(),
            slots: LoomBytes::new(MEMBERS as usize * MEMBER_BYTES),
        });
        let members: Vec<_> = (0..MEMBERS)
            .map(|me| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    let barrier = || s.barrier.wait(MEMBERS, &waiter, &s.home);
                    (1..=3u64)
                        .map(|seq| {
                            let root = if seq == 2 { u64::from(me) } else { 0 };
                            let fingerprint = Fingerprint::new("bcast").field("root", root);
                            agree(&s.slots, MEMBERS, me, seq, &fingerprint, barrier).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let verdicts: Vec<Vec<Result<(), Disagreement>>> =
            members.into_iter().map(|t| t.join().unwrap()).collect();
        let mismatch = Disagreement { what: "root", ranks: vec![1] };
        for v in verdicts {
            assert_eq!(v, vec![Ok(()), Err(mismatch.clone()), Ok(())]);
        }
    });
}
