//! The ticket reader-writer lock (`sccemu::protocol::rwlock::TicketRwLock`) with 2 writers and 1
//! reader: writers are alone (each does a read-modify-write of a payload cell that loom
//! would flag as a race if two overlapped, and both increments survive), and the reader
//! never sees a writer's critical section half done. The first writer registers the
//! target with the window's `AllLock` and leaves it sticky, so the second takes the
//! two-atomic path. With 2 readers and 1 writer: the readers may share the lock (the
//! first through the one-CAS path when it finds the lock idle), but neither overlaps the
//! writer. The threads note CPUs (two share one), so the handoff hints are written and
//! read as in an oversubscribed job.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::lock_all::AllLock;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::rwlock::TicketRwLock;
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    bell: Doorbell,
    home: Doorbell,
    lock: TicketRwLock,
    all: AllLock,
    /// Two bytes a writer keeps equal: [n, n].
    cells: LoomBytes,
}

#[test]
fn two_writers_one_reader() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bell: Doorbell::new(),
            home: Doorbell::new(),
            lock: TicketRwLock::new(),
            all: AllLock::new(),
            cells: LoomBytes::new(2),
        });
        let writers: Vec<_> = (0..2)
            .map(|cpu| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job).on_cpu(Some(cpu));
                    let hold = s.lock.lock_exclusive(0, &waiter, &s.bell, &s.all, &s.home).unwrap();
                    let mut pair = [0u8; 2];
                    s.cells.read(0, &mut pair);
                    s.cells.write(0, &[pair[0] + 1]);
                    s.cells.write(1, &[pair[1] + 1]);
                    s.lock.unlock_exclusive(hold, &s.bell, &s.all, &s.home, waiter.handoff_cpu());
                })
            })
            .collect();
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job).on_cpu(Some(1));
                s.lock.lock_shared(&waiter, &s.bell).unwrap();
                let mut pair = [0u8; 2];
                s.cells.read(0, &mut pair);
                s.lock.unlock_shared(&s.bell);
                assert_eq!(pair[0], pair[1], "reader saw a torn write");
                pair[0]
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        assert!(reader.join().unwrap() <= 2);
        let mut pair = [0u8; 2];
        s.cells.read(0, &mut pair);
        assert_eq!(pair, [2, 2], "an increment was lost");
        assert_eq!(s.lock.queued(), 0);
        assert!(s.lock.is_sticky(), "the first writer's registration stays");
    });
}

#[test]
fn two_readers_one_writer() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bell: Doorbell::new(),
            home: Doorbell::new(),
            lock: TicketRwLock::new(),
            all: AllLock::new(),
            cells: LoomBytes::new(2),
        });
        let readers: Vec<_> = (0..2)
            .map(|cpu| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job).on_cpu(Some(cpu));
                    s.lock.lock_shared(&waiter, &s.bell).unwrap();
                    let mut pair = [0u8; 2];
                    s.cells.read(0, &mut pair);
                    s.lock.unlock_shared(&s.bell);
                    pair
                })
            })
            .collect();
        let waiter = Waiter::new(WaitPolicy::Block, &s.job).on_cpu(Some(1));
        let hold = s.lock.lock_exclusive(0, &waiter, &s.bell, &s.all, &s.home).unwrap();
        s.cells.write(0, &[1]);
        s.cells.write(1, &[1]);
        s.lock.unlock_exclusive(hold, &s.bell, &s.all, &s.home, waiter.handoff_cpu());
        for reader in readers {
            let pair = reader.join().unwrap();
            assert!(pair == [0, 0] || pair == [1, 1], "a reader saw the writer half way: {pair:?}");
        }
    });
}
