//! Data published through an ARMW (`sccemu::protocol::atomic::armw::Word`): a core writes
//! a payload, then announces it with an atomic on a word (a fetch-add, a float add's
//! compare-and-swap loop, a compare-and-swap, a store); a core that observes the
//! announcement through its own atomic (a fetch-add, a float add, a compare-and-swap
//! that succeeds or fails, a load) reads the payload whole. Every pairing runs on a
//! 4-byte and an 8-byte word, which are separate code paths. loom reports a data race
//! on the payload if an ordering is too weak: each ordering of `Word` is the only
//! synchronisation on its side of one of these pairings, so weakening any of them
//! (Release, Acquire, or AcqRel to either) makes one of them fail.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::atomic::armw::{Kind, RmwOp, Word};
use sccemu::protocol::payload::{LoomBytes, Payload};
use sccemu::sync::{AtomicU32, AtomicU64};

struct Shared {
    narrow: AtomicU32,
    wide: AtomicU64,
    payload: LoomBytes,
}

/// Which word a model uses, and the float kind of its width.
#[derive(Clone, Copy)]
enum Width {
    W32,
    W64,
}

impl Width {
    fn word(self, s: &Shared) -> Word<'_> {
        match self {
            Width::W32 => Word::W32(&s.narrow),
            Width::W64 => Word::W64(&s.wide),
        }
    }

    fn float(self) -> Kind {
        match self {
            Width::W32 => Kind::F32,
            Width::W64 => Kind::F64,
        }
    }

    /// The bits of 1.0 in this width's float.
    fn one(self) -> u64 {
        match self {
            Width::W32 => u64::from(1.0f32.to_bits()),
            Width::W64 => 1.0f64.to_bits(),
        }
    }
}

/// The word holds 0 (also 0.0 in either float); the writer writes the payload and
/// `announce`s; the observer reads the payload if `observe` says it saw the
/// announcement.
fn model(width: Width, announce: fn(Width, Word<'_>), observe: fn(Width, Word<'_>) -> bool) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(move || {
        let s = Arc::new(Shared {
            narrow: AtomicU32::new(0),
            wide: AtomicU64::new(0),
            payload: LoomBytes::new(2),
        });
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                s.payload.write(0, &[7, 9]);
                announce(width, width.word(&s));
            })
        };
        if observe(width, width.word(&s)) {
            let mut got = [0u8; 2];
            s.payload.read(0, &mut got);
            assert_eq!(got, [7, 9], "the announcement overtook the payload");
        }
        writer.join().unwrap();
    });
}

fn both(announce: fn(Width, Word<'_>), observe: fn(Width, Word<'_>) -> bool) {
    model(Width::W32, announce, observe);
    model(Width::W64, announce, observe);
}

#[test]
fn fetch_add_publishes_what_came_before_it() {
    // The observer's own fetch-add of 0 returns the announcement once it landed.
    both(
        |_, w| {
            w.fetch_op(RmwOp::Add, Kind::Int, 1);
        },
        |_, w| w.fetch_op(RmwOp::Add, Kind::Int, 0) == 1,
    );
}

#[test]
fn compare_and_swap_publishes_what_came_before_it() {
    // The announcement is a CAS 0 -> 1; the observer's CAS 1 -> 2 succeeds only after it.
    both(
        |_, w| {
            w.compare_and_swap(0, 1);
        },
        |_, w| w.compare_and_swap(1, 2) == 1,
    );
}

#[test]
fn a_float_add_publishes_what_came_before_it() {
    // A float add is a compare-and-swap loop (`Word::fetch_update`). The observer is an
    // integer add of 0 (an RMW that reads the bits): loom's scheduler runs the float add's
    // first step, a plain load, before a plain load of the observer in no execution, so
    // with a load as observer the payload would never be read.
    both(
        |width, w| {
            w.fetch_op(RmwOp::Add, width.float(), width.one());
        },
        |width, w| w.fetch_op(RmwOp::Add, Kind::Int, 0) == width.one(),
    );
}

#[test]
fn a_float_add_observes_what_a_store_published() {
    // Adding 0.0 succeeds at the first compare-and-swap, which must acquire.
    both(|width, w| w.store(width.one()), |width, w| w.fetch_op(RmwOp::Add, width.float(), 0) == width.one());
}

#[test]
fn a_load_observes_what_a_store_published() {
    both(|_, w| w.store(1), |_, w| w.load() == 1);
}

#[test]
fn a_failed_compare_and_swap_observes_what_a_store_published() {
    // CAS 0 -> 2 fails once the store landed, returning what it read with Acquire.
    both(|_, w| w.store(1), |_, w| w.compare_and_swap(0, 2) == 1);
}
