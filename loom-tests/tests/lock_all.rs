//! lock_all against an exclusive locker (`sccemu::protocol::rwlock::AllLock` with the target's
//! `TicketRwLock`): one writer keeps a pair of cells equal under its exclusive lock,
//! two lock_all epochs read the pair. The one-word protocol must keep them apart
//! (loom flags any overlap as a race on the cells) without deadlock.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::rwlock::{AllLock, TicketRwLock};
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    target_bell: Doorbell,
    home: Doorbell,
    lock: TicketRwLock,
    all: AllLock,
    cells: LoomBytes,
}

#[test]
fn writer_and_two_lock_alls() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            target_bell: Doorbell::new(),
            home: Doorbell::new(),
            lock: TicketRwLock::new(),
            all: AllLock::new(),
            cells: LoomBytes::new(2),
        });
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                s.lock.lock_exclusive(&waiter, &s.target_bell, &s.all, &s.home).unwrap();
                s.cells.write(0, &[1]);
                s.cells.write(1, &[1]);
                s.lock.unlock_exclusive(&s.target_bell, &s.all, &s.home, None);
            })
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    s.all.lock_all(&waiter, &s.home).unwrap();
                    let mut pair = [0u8; 2];
                    s.cells.read(0, &mut pair);
                    s.all.unlock_all(&s.home);
                    assert_eq!(pair[0], pair[1]);
                })
            })
            .collect();
        writer.join().unwrap();
        for r in readers {
            r.join().unwrap();
        }
    });
}
