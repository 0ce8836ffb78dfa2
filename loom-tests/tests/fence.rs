//! Fence (`sccemu::protocol::fence::FenceState`) with 3 cores and two epochs: each core puts into
//! its right neighbour's cell in epoch 1 and gets it back from there in epoch 2; after
//! each fence every put of the closing epoch is visible, and loom reports any put not
//! ordered before the next epoch's accesses.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::fence::FenceState;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};

const N: usize = 3;

struct Shared {
    job: JobControl,
    home: Doorbell,
    fence: FenceState,
    /// Cell i is core i's window.
    cells: LoomBytes,
}

#[test]
fn three_cores_two_epochs() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            home: Doorbell::new(),
            fence: FenceState::new(),
            cells: LoomBytes::new(N),
        });
        let cores: Vec<_> = (0..N)
            .map(|me| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    let right = (me + 1) % N;
                    // Epoch 1: put.
                    s.cells.write(right, &[me as u8 + 1]);
                    s.fence.fence(N as u32, &waiter, &s.home).unwrap();
                    // Epoch 2: read our own cell (written by the left neighbour).
                    let mut mine = [0u8];
                    s.cells.read(me, &mut mine);
                    assert_eq!(mine[0] as usize, (me + N - 1) % N + 1, "core {me}");
                    s.fence.fence(N as u32, &waiter, &s.home).unwrap();
                })
            })
            .collect();
        for c in cores {
            c.join().unwrap();
        }
    });
}
