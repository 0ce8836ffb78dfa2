//! The f64 fetch-add compare-and-swap loop (`sccemu::protocol::atomic::armw::Word::fetch_op`): two
//! concurrent adds both land, each sees a distinct previous value.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::atomic::armw::{Kind, RmwOp, Word};
use sccemu::sync::AtomicU64;

#[test]
fn two_float_adds() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let cell = Arc::new(AtomicU64::new(1.0f64.to_bits()));
        let adders: Vec<_> = [0.5f64, 0.25]
            .into_iter()
            .map(|v| {
                let cell = cell.clone();
                thread::spawn(move || {
                    f64::from_bits(Word::W64(&cell).fetch_op(RmwOp::Add, Kind::F64, v.to_bits()))
                })
            })
            .collect();
        let mut seen: Vec<f64> = adders.into_iter().map(|t| t.join().unwrap()).collect();
        seen.sort_by(f64::total_cmp);
        assert!(seen == [1.0, 1.25] || seen == [1.0, 1.5], "{seen:?}");
        assert_eq!(f64::from_bits(Word::W64(&cell).load()), 1.75);
    });
}
