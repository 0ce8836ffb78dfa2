//! lock_all against exclusive lockers (`sccemu::protocol::lock_all::AllLock` with the
//! targets' `sccemu::protocol::rwlock::TicketRwLock`s). Each target owns a pair of cells
//! that its exclusive holders keep equal; lock_all epochs read every pair. The protocol
//! must keep them apart (loom flags any overlap as a race on the cells) without
//! deadlock, through each way an exclusive hold keeps lock_all out:
//! - `writer_and_two_lock_alls`: a writer's first epoch registers and leaves its target
//!   sticky; each lock_all either enters first, or parks and revokes the registration
//!   (two revokers of one target);
//! - `sticky_writer_then_lock_all`: a writer's second epoch runs on the sticky path
//!   (no access to the lock_all word), against one lock_all;
//! - `claim_races_park`: writers on two targets register while a lock_all parks, so a
//!   slot claim races the park (the Dekker pair of `writer_enter`): a registration the
//!   lock_all missed must not stick, or its wait for the writers never ends.
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
    /// Target t's doorbell and lock; its cells are 2t and 2t + 1.
    bells: [Doorbell; 2],
    locks: [TicketRwLock; 2],
    home: Doorbell,
    all: AllLock,
    cells: LoomBytes,
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        job: JobControl::new(),
        bells: [Doorbell::new(), Doorbell::new()],
        locks: [TicketRwLock::new(), TicketRwLock::new()],
        home: Doorbell::new(),
        all: AllLock::new(),
        cells: LoomBytes::new(4),
    })
}

/// One exclusive epoch on `target`: its pair goes from [n, n] to [n + 1, n + 1].
fn write_epoch(s: &Shared, target: usize) {
    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
    let t = target as u32;
    let hold = s.locks[target].lock_exclusive(t, &waiter, &s.bells[target], &s.all, &s.home).unwrap();
    let mut pair = [0u8; 2];
    s.cells.read(2 * target, &mut pair);
    s.cells.write(2 * target, &[pair[0] + 1]);
    s.cells.write(2 * target + 1, &[pair[1] + 1]);
    s.locks[target].unlock_exclusive(hold, &s.bells[target], &s.all, &s.home, None);
}

/// One lock_all epoch reading the pairs of the first `targets` targets: each whole.
fn read_all(s: &Shared, targets: usize) {
    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
    let find = |t: u32| (t < 2).then(|| (&s.locks[t as usize], &s.bells[t as usize]));
    s.all.lock_all(&waiter, &s.home, find).unwrap();
    let mut cells = [0u8; 4];
    s.cells.read(0, &mut cells[..2 * targets]);
    s.all.unlock_all(&s.home);
    for t in 0..targets {
        assert_eq!(cells[2 * t], cells[2 * t + 1], "lock_all saw target {t}'s epoch half done");
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(f);
}

#[test]
fn writer_and_two_lock_alls() {
    model(|| {
        let s = shared();
        let writer = {
            let s = s.clone();
            thread::spawn(move || write_epoch(&s, 0))
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || read_all(&s, 1))
            })
            .collect();
        writer.join().unwrap();
        for r in readers {
            r.join().unwrap();
        }
    });
}

#[test]
fn sticky_writer_then_lock_all() {
    model(|| {
        let s = shared();
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                write_epoch(&s, 0);
                write_epoch(&s, 0);
            })
        };
        read_all(&s, 1);
        writer.join().unwrap();
        let mut pair = [0u8; 2];
        s.cells.read(0, &mut pair);
        assert_eq!(pair, [2, 2]);
    });
}

#[test]
fn claim_races_park() {
    model(|| {
        let s = shared();
        let writers: Vec<_> = (0..2)
            .map(|target| {
                let s = s.clone();
                thread::spawn(move || write_epoch(&s, target))
            })
            .collect();
        read_all(&s, 2);
        for w in writers {
            w.join().unwrap();
        }
    });
}
