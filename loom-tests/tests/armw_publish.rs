//! Data published through an ARMW (`sccemu::protocol::atomic::armw::Word`): a core writes
//! a payload, then announces it with a fetch-add or a compare-and-swap on a word; a core
//! that observes the announcement through its own ARMW (or an atomic load) reads the
//! payload whole. loom reports a data race on the payload if an ordering is too weak;
//! both models fail when `fetch_op` or `compare_and_swap` is weakened to Relaxed.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::atomic::armw::{Kind, RmwOp, Word};
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::sync::AtomicU64;

struct Shared {
    word: AtomicU64,
    payload: LoomBytes,
}

fn model(announce: fn(Word<'_>), observe: fn(Word<'_>) -> bool) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(move || {
        let s = Arc::new(Shared { word: AtomicU64::new(0), payload: LoomBytes::new(2) });
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                s.payload.write(0, &[7, 9]);
                announce(Word::W64(&s.word));
            })
        };
        if observe(Word::W64(&s.word)) {
            let mut got = [0u8; 2];
            s.payload.read(0, &mut got);
            assert_eq!(got, [7, 9], "the announcement overtook the payload");
        }
        writer.join().unwrap();
    });
}

#[test]
fn fetch_add_publishes_what_came_before_it() {
    // The observer's own fetch-add of 0 returns the announcement once it landed.
    model(
        |w| {
            w.fetch_op(RmwOp::Add, Kind::Int, 1);
        },
        |w| w.fetch_op(RmwOp::Add, Kind::Int, 0) == 1,
    );
}

#[test]
fn compare_and_swap_publishes_what_came_before_it() {
    // The announcement is a CAS 0 -> 1; the observer's CAS 1 -> 2 succeeds only after it.
    model(
        |w| {
            w.compare_and_swap(0, 1);
        },
        |w| w.compare_and_swap(1, 2) == 1,
    );
}
