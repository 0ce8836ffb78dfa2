//! Unit tests of SRB progress: held reservations and what a wait watches.

use super::*;
use crate::protocol::alloc::freelist::FreeList;
use crate::p2p::endpoint::{Source, TagMatch};
use shm_layout::{Config, WaitPolicy};

/// The loser of a reservation race (two senders saw room for one entry) holds space
/// that does not fit yet: progress must not wait for the receiver, and a later call
/// fills it once the receiver has drained.
#[test]
fn a_reservation_that_does_not_fit_yet_stays_queued() {
    let config = Config { heap_bytes: 1 << 22, ring_bytes: 1024, ..Config::new(3) };
    let seg = Segment::create(config).unwrap();
    let mut mpb = FreeList::new(config.mpb_bytes as usize, crate::segment::mpb::MPB_GRANULE);
    let place = Placement::setup(&config, &mut mpb).unwrap();
    let single = SingleCopy::new(None);
    let ctx = |rank| Ctx::new(&seg, &place, (rank, 3), Waiter::new(WaitPolicy::Spin, seg.job()), &single);
    let (receiver, sender) = (ctx(0), ctx(1));
    let ring = place.srb(&seg, 0);
    let max = ring.max_payload();
    // Rank 2 holds the whole ring, unpublished; rank 1 lost the race for the next
    // entry, and rank 2 reserved one more after it.
    let (a, b) = (ring.reserve(srb::entry_len(max)), ring.reserve(srb::entry_len(max)));
    let lost = ring.reserve(srb::entry_len(max));
    let _after = ring.reserve(srb::entry_len(max));
    let data = vec![7u8; max as usize];
    let mut st = State::default();
    let id = st.enqueue(0, (5, max, false), &data, (false, Model::Untimed), Some(lost));
    assert!(!sender.progress(&mut st, None).unwrap());
    assert!(!st.send_finished(id));
    // Its lone reservation is a ticket only for a wait that sleeps on the space bell:
    // the background's sleeps on its own doorbell, which only ordinary waiters get.
    for bell in [false, true] {
        let w = sender.watch(&st, None, bell);
        assert_eq!(w.ticket, bell.then_some((0, lost)));
        sender.unwatch(&w);
    }
    let h = |tag| FragHeader::data(2, tag, max, max, true);
    ring.publish(a, &h(1), &data);
    ring.publish(b, &h(2), &data);
    let mut inbox = Inbox::default();
    assert!(receiver.drain(&mut inbox, None, true).unwrap());
    // The hint counts `_after` as taken and says full: the wait must look at `lost`.
    let watch = sender.watch(&st, None, false);
    assert!(sender.movable(&watch));
    sender.unwatch(&watch);
    assert!(sender.progress(&mut st, None).unwrap());
    assert!(st.send_finished(id));
    receiver.drain(&mut inbox, None, true).unwrap();
    assert_eq!(inbox.probe(Source::Rank(1), TagMatch::Tag(5)).map(|s| s.len), Some(max as usize));
}
