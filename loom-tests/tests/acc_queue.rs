//! The owner-computes request queue (`sccemu::acc_queue`), 2 slots: two origins
//! enqueue three requests, so in some interleavings an origin finds the queue full and
//! takes the flow-control path (sleeps on `space` until the owner frees a slot); the
//! owner's consumer receives all, intact (loom flags a slot copy not ordered by the
//! slot's sequence word) and in each origin's order. A second model: one origin, three
//! requests (always the full path), then a stop request that loses nothing. A third:
//! the stop comes from another thread than the pushes, which learned of them through a
//! flag (as the owner stops its agent after the origins' requests, across a barrier):
//! a consumer that sees the stop must see every push made before it.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::atomic::acc_queue::{Bells, Consumer, Next, Queue, QueueCtl};
use sccemu::protocol::flag;
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};
use sccemu::sync::{AtomicU32, AtomicU64};

const SLOT: usize = 6;

struct Shared {
    job: JobControl,
    work: Doorbell,
    space: Doorbell,
    ctl: QueueCtl,
    seqs: Vec<AtomicU64>,
    slots: LoomBytes,
    /// For `stop_from_another_thread`: set once the origin's pushes are done.
    pushed: AtomicU32,
}

impl Shared {
    fn new(cap: usize) -> Arc<Shared> {
        let s = Shared {
            job: JobControl::new(),
            work: Doorbell::new(),
            space: Doorbell::new(),
            ctl: QueueCtl::new(),
            seqs: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            slots: LoomBytes::new(cap * SLOT),
            pushed: AtomicU32::new(0),
        };
        s.queue().init();
        Arc::new(s)
    }

    fn queue(&self) -> Queue<'_, Slots<'_>> {
        Queue::new(
            &self.ctl,
            Bells { work: &self.work, space: &self.space },
            &self.seqs,
            Slots(&self.slots),
            SLOT,
        )
    }
}

/// The queue owns its payload view; this one borrows the model's cells.
struct Slots<'a>(&'a LoomBytes);

impl Payload for Slots<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn write(&self, offset: usize, src: &[u8]) {
        self.0.write(offset, src)
    }
    fn read(&self, offset: usize, dst: &mut [u8]) {
        self.0.read(offset, dst)
    }
    fn zero(&self, offset: usize, len: usize) {
        self.0.zero(offset, len)
    }
}

#[test]
fn full_queue_blocks_an_origin() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Shared::new(2);
        let origins: Vec<_> = [&[1u8, 2][..], &[9]]
            .into_iter()
            .map(|values| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    for &v in values {
                        s.queue().push(&[v, v], &waiter).unwrap();
                    }
                })
            })
            .collect();
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let q = s.queue();
        let mut consumer = Consumer::new();
        let mut got = Vec::new();
        let mut buf = [0u8; SLOT];
        for _ in 0..3 {
            assert_eq!(consumer.pop(&q, &mut buf, &waiter).unwrap(), Next::Message(2));
            assert_eq!(buf[0], buf[1], "torn message");
            got.push(buf[0]);
        }
        for o in origins {
            o.join().unwrap();
        }
        let ones: Vec<u8> = got.iter().copied().filter(|v| *v != 9).collect();
        assert_eq!(ones, [1, 2], "one origin's order: {got:?}");
        assert!(got.contains(&9), "{got:?}");
    });
}

#[test]
fn one_origin_in_order_and_stop() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Shared::new(2);
        let origin = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                for v in 1..=3u8 {
                    s.queue().push(&[v], &waiter).unwrap();
                }
                s.queue().request_stop();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let q = s.queue();
        let mut consumer = Consumer::new();
        let mut buf = [0u8; SLOT];
        let mut got = Vec::new();
        while let Next::Message(n) = consumer.pop(&q, &mut buf, &waiter).unwrap() {
            assert_eq!(n, 1);
            got.push(buf[0]);
        }
        origin.join().unwrap();
        assert_eq!(got, [1, 2, 3], "out of order or lost");
    });
}

#[test]
fn stop_from_another_thread() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Shared::new(2);
        let origin = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                s.queue().push(&[5], &waiter).unwrap();
                flag::write(&s.pushed, 1, &s.space);
            })
        };
        let stopper = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                flag::wait_until(&s.pushed, 1, &waiter, &s.space).unwrap();
                s.queue().request_stop();
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        let q = s.queue();
        let mut consumer = Consumer::new();
        let mut buf = [0u8; SLOT];
        let mut got = Vec::new();
        while let Next::Message(n) = consumer.pop(&q, &mut buf, &waiter).unwrap() {
            got.push(buf[..n].to_vec());
        }
        origin.join().unwrap();
        stopper.join().unwrap();
        assert_eq!(got, [vec![5]], "a push before the stop was lost");
    });
}
