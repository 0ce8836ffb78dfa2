//! The world barrier (`sccemu::barrier`) with 3 threads and two phases: nobody leaves a
//! phase before everyone arrived, and every write made before a phase is visible after
//! it (the payload cells make loom report any read not ordered after the write).
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::barrier::BarrierState;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};

const PARTIES: u32 = 3;

struct Shared {
    job: JobControl,
    home: Doorbell,
    barrier: BarrierState,
    /// One byte per thread, written in phase p as p.
    cells: LoomBytes,
}

#[test]
fn three_cores_two_phases() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            home: Doorbell::new(),
            barrier: BarrierState::new(),
            cells: LoomBytes::new(PARTIES as usize),
        });
        let threads: Vec<_> = (0..PARTIES as usize)
            .map(|me| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    for phase in 1..=2u8 {
                        s.cells.write(me, &[phase]);
                        s.barrier.wait(PARTIES, &waiter, &s.home).unwrap();
                        let mut all = [0u8; PARTIES as usize];
                        s.cells.read(0, &mut all);
                        assert_eq!(all, [phase; PARTIES as usize], "thread {me} left phase {phase} early");
                        // A second barrier separates the reads of this phase from the
                        // writes of the next, as any real use would.
                        s.barrier.wait(PARTIES, &waiter, &s.home).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    });
}
