//! The caller-computes striped lock (`sccemu::stripes`): two origins accumulate
//! overlapping ranges that span two granules (two stripes) of a loom-celled target,
//! through the real `striped_combine`; loom flags any copy-out/copy-back not ordered by
//! the stripe lock, and both updates survive in every element; and an ARMW's span lock
//! against such a combine.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::atomic::op::Op;
use sccemu::protocol::atomic::stripes::{CachePadded, Stripe, Striping, lock_span, striped_combine};
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct Shared {
    job: JobControl,
    bell: Doorbell,
    locks: [CachePadded<Stripe>; 2],
    /// Two u32 elements, one per 4-byte granule.
    part: LoomBytes,
}

#[test]
fn two_origins_two_stripes() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bell: Doorbell::new(),
            locks: [CachePadded::new(Stripe::new()), CachePadded::new(Stripe::new())],
            part: LoomBytes::new(8),
        });
        let striping = Striping::new(4, 8, 4);
        assert_eq!(striping.stripes, 2);
        let origins: Vec<_> = [1u32, 10]
            .into_iter()
            .map(|v| {
                let s = s.clone();
                thread::spawn(move || {
                    let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                    let mut old = [0u32; 2];
                    striped_combine(
                        &s.locks,
                        striping,
                        &s.part,
                        0,
                        Op::Sum,
                        &[v, v],
                        Some(&mut old),
                        &waiter,
                        &s.bell,
                    )
                    .unwrap();
                    old
                })
            })
            .collect();
        let seen: Vec<[u32; 2]> = origins.into_iter().map(|t| t.join().unwrap()).collect();
        let mut bytes = [0u8; 8];
        s.part.read(0, &mut bytes);
        let got = [
            u32::from_le_bytes(bytes[..4].try_into().unwrap()),
            u32::from_le_bytes(bytes[4..].try_into().unwrap()),
        ];
        assert_eq!(got, [11, 11], "an update was lost");
        for (e, olds) in [[seen[0][0], seen[1][0]], [seen[0][1], seen[1][1]]].iter_mut().enumerate() {
            olds.sort();
            assert!(*olds == [0, 1] || *olds == [0, 10], "element {e}: {olds:?}");
        }
    });
}

/// An ARMW's span lock (`lock_span`) over both stripes, racing a combine that takes
/// them one at a time: the span is taken in ascending order, so the two never deadlock
/// (loom reports a deadlock as a failure), and the update made under the span (a
/// read-modify-write of both elements, standing for the CPU atomic) is not lost.
#[test]
fn span_lock_against_combine() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let s = Arc::new(Shared {
            job: JobControl::new(),
            bell: Doorbell::new(),
            locks: [CachePadded::new(Stripe::new()), CachePadded::new(Stripe::new())],
            part: LoomBytes::new(8),
        });
        let striping = Striping::new(4, 8, 4);
        let armw = {
            let s = s.clone();
            thread::spawn(move || {
                let waiter = Waiter::new(WaitPolicy::Block, &s.job);
                let _held = lock_span(&s.locks, striping, 0, 8, &waiter, &s.bell).unwrap();
                let mut bytes = [0u8; 8];
                s.part.read(0, &mut bytes);
                let v = u64::from_le_bytes(bytes) + (1 << 32) + 1;
                s.part.write(0, &v.to_le_bytes());
            })
        };
        let waiter = Waiter::new(WaitPolicy::Block, &s.job);
        striped_combine(&s.locks, striping, &s.part, 0, Op::Sum, &[10u32, 10], None, &waiter, &s.bell)
            .unwrap();
        armw.join().unwrap();
        let mut bytes = [0u8; 8];
        s.part.read(0, &mut bytes);
        assert_eq!(bytes, [11, 0, 0, 0, 11, 0, 0, 0], "an update was lost");
    });
}
