//! The lock-free accumulate (`sccemu::acc_atomic`): two origins run the
//! compare-and-swap loop (an op with no native instruction: i64 `Prod`, f64 `Max`)
//! and the native path (`Sum`) concurrently on the same elements; no update is lost
//! and each sees a previous value consistent with a serial order.
#![cfg(sccemu_loom)]

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::atomic::acc_atomic::{Words, accumulate_words, fetch_and_op_slot, fetch_and_op_word};
use sccemu::protocol::atomic::op::Op;
use sccemu::sync::{AtomicU64, Ordering};

#[test]
fn cas_loop_products_do_not_lose_updates() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let cells = Arc::new([AtomicU64::new(1), AtomicU64::new(0)]);
        let origins: Vec<_> = [(2i64, 5i64), (3, 7)]
            .into_iter()
            .map(|(factor, addend)| {
                let cells = cells.clone();
                thread::spawn(move || {
                    let mut old = [0i64; 2];
                    // Element 0: Prod through the CAS loop; element 1: Sum, native.
                    let words = Words::W64(&cells[..]);
                    let src = [factor, addend];
                    let op_prod = fetch_and_op_slot(words.slot(0), Op::Prod, src[0]);
                    accumulate_words(Words::W64(&cells[1..]), Op::Sum, &src[1..], Some(&mut old[1..]));
                    (op_prod, old[1])
                })
            })
            .collect();
        let seen: Vec<(i64, i64)> = origins.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(cells[0].load(Ordering::Relaxed) as i64, 6, "a product was lost");
        assert_eq!(cells[1].load(Ordering::Relaxed) as i64, 12, "a sum was lost");
        // Serial order: whichever went first saw the initial value.
        let mut prods = [seen[0].0, seen[1].0];
        prods.sort();
        assert!(prods == [1, 2] || prods == [1, 3], "{prods:?}");
        let mut sums = [seen[0].1, seen[1].1];
        sums.sort();
        assert!(sums == [0, 5] || sums == [0, 7], "{sums:?}");
    });
}

#[test]
fn float_max_cas_loop() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let cell = Arc::new(AtomicU64::new(1.0f64.to_bits()));
        let origins: Vec<_> = [3.0f64, 2.0]
            .into_iter()
            .map(|v| {
                let cell = cell.clone();
                thread::spawn(move || {
                    fetch_and_op_word(sccemu::protocol::atomic::armw::Word::W64(&cell), Op::Max, v)
                })
            })
            .collect();
        let seen: Vec<f64> = origins.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(f64::from_bits(cell.load(Ordering::Relaxed)), 3.0);
        assert!(seen.contains(&1.0), "one of them went first: {seen:?}");
    });
}

/// Two origins update neighbouring 1-byte lanes of one word (each through the CAS loop
/// on the whole word) while a third adds to a 2-byte lane of it: no update overwrites
/// another's lane.
#[test]
fn neighbouring_lanes_of_one_word() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(2);
    builder.check(|| {
        let word = Arc::new([sccemu::sync::AtomicU32::new(0x0102_0304)]);
        let lanes: [(usize, usize, i16); 3] = [(0, 1, 5), (1, 1, 7), (2, 2, 300)];
        let origins: Vec<_> = lanes
            .into_iter()
            .map(|(first, width, v)| {
                let word = word.clone();
                thread::spawn(move || {
                    let run = Words::Lanes { words: &word[..], first, width, count: 1 };
                    if width == 1 {
                        fetch_and_op_slot(run.slot(0), Op::Sum, v as i8) as i16
                    } else {
                        fetch_and_op_slot(run.slot(0), Op::Sum, v)
                    }
                })
            })
            .collect();
        let seen: Vec<i16> = origins.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(seen, [0x04, 0x03, 0x0102], "each saw its own lane's old value");
        assert_eq!(word[0].load(Ordering::Relaxed), (0x0102 + 300) << 16 | (0x03 + 7) << 8 | (0x04 + 5));
    });
}
