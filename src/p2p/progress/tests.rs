//! Unit tests of SRB progress: held reservations and what a wait watches.

use super::*;
use crate::p2p::endpoint::{Source, TagMatch};
use crate::p2p::matching::{Pull, PullError};
use crate::p2p::rendezvous::MAX_OPEN;
use crate::protocol::alloc::freelist::FreeList;
use crate::protocol::ring::frag::Rendezvous;
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
    // Its core may not leave before it publishes that space: the receiver (and rank
    // 2's entry after it) would stop at it for good. Unless the receiver left.
    assert_eq!(st.owing_to(|_| false), Some(0));
    assert_eq!(st.owing_to(|rank| rank == 0), None);
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
    assert_eq!(st.owing_to(|_| false), None);
    receiver.drain(&mut inbox, None, true).unwrap();
    assert_eq!(inbox.probe(Source::Rank(1), TagMatch::Tag(5)).map(|s| s.len), Some(max as usize));
}

/// Three cores in one process over SRB, rank 1's memory readable as its own (the test
/// process's): what the single-copy tests below need.
fn single_copy_job(run: impl FnOnce(&Ctx<'_>, &Ctx<'_>, &SingleCopy)) {
    let config = Config { heap_bytes: 1 << 22, ring_bytes: 1 << 16, ..Config::new(3) };
    let seg = Segment::create(config).unwrap();
    let mut mpb = FreeList::new(config.mpb_bytes as usize, crate::segment::mpb::MPB_GRANULE);
    let place = Placement::setup(&config, &mut mpb).unwrap();
    let single = SingleCopy::new(Some(1000));
    if !single.usable() {
        return; // the host forbids the copy: nothing to check here
    }
    seg.slot(1).pid.store(std::process::id(), crate::sync::Ordering::Relaxed);
    let ctx = |rank| Ctx::new(&seg, &place, (rank, 3), Waiter::new(WaitPolicy::Spin, seg.job()), &single);
    run(&ctx(0), &ctx(1), &single);
}

fn message(i: u32, len: usize) -> Vec<u8> {
    (0..len).map(|k| (k as u32).wrapping_mul(7).wrapping_add(i * 31) as u8).collect()
}

/// Receives the next message of rank 1 (tag 5) into a buffer, copying an announced one
/// with `pull`, driving both sides until it is complete.
fn take(receiver: &Ctx<'_>, inbox: &mut Inbox, sender: &Ctx<'_>, st: &mut State, pull: &dyn Pull) -> Vec<u8> {
    let mut buf = vec![0u8; 1 << 14];
    let mut t = Target { id: None, src: Source::Rank(1), tag: TagMatch::Tag(5), buf: &mut buf, state: TargetState::Open };
    inbox.start(&mut t, pull).unwrap();
    for _ in 0..1000 {
        if let TargetState::Done(status) = t.state {
            receiver.push_answers(inbox).unwrap();
            return buf[..status.len].to_vec();
        }
        receiver.push_answers(inbox).unwrap();
        sender.progress(st, None).unwrap();
        receiver.drain(inbox, Some(&mut t), false).unwrap();
        if t.state == TargetState::Open {
            inbox.start(&mut t, pull).unwrap();
        }
    }
    panic!("the message never completed: {:?}", t.state);
}

/// A sender with a window of queued single copies to one receiver announces up to
/// `MAX_OPEN` of them at once, each finishing on its own answer; the receiver gets
/// them in order, whole.
#[test]
fn queued_single_copies_are_announced_together_and_arrive_in_order() {
    single_copy_job(|receiver, sender, _| {
        let n = MAX_OPEN as u32 + 5;
        let len = |i: u32| 1000 + 100 * i as usize;
        let mut st = State::default();
        let ids: Vec<u64> =
            (0..n).map(|i| st.enqueue_given(0, (5, len(i) as u32), Box::new(message(i, len(i))), Model::Untimed)).collect();
        assert!(sender.progress(&mut st, None).unwrap());
        assert_eq!(st.inbox.rdv.open_to(0), (MAX_OPEN, false));
        // Nothing behind the open ones waits for room: the wait watches for answers.
        assert_eq!(st.waiting_queues().count(), 0);
        let mut inbox = Inbox::default();
        assert!(receiver.drain(&mut inbox, None, true).unwrap());
        assert!(inbox.has_deferred());
        for i in 0..n {
            let got = take(receiver, &mut inbox, sender, &mut st, receiver);
            assert!(got == message(i, len(i)), "message {i} damaged or out of order");
            // Its send finished on its answer, whatever the ones behind it do.
            sender.progress(&mut st, None).unwrap();
            assert!(st.send_finished(ids[i as usize]), "send {i} not finished on its answer");
            assert!(st.inbox.rdv.open_to(0).0 <= MAX_OPEN);
        }
        assert!(!st.inbox.rdv.open(0) && st.unfinished.is_empty());
    });
}

/// Refuses the copies of announcements with odd tokens, reads the others.
struct RefuseOdd<'a, 'c>(&'a Ctx<'c>);

impl Pull for RefuseOdd<'_, '_> {
    fn pull(&self, src: u32, at: Rendezvous, dst: &mut [u8]) -> Result<(), PullError> {
        if at.token % 2 == 1 { Err(PullError::Refused) } else { self.0.pull(src, at, dst) }
    }
}

/// With many announcements open, some refused (into memory the inbox owns before a
/// wait, or into a receive's buffer) and some read: every refused one gets its bytes
/// through the channel in its place, the sender announces no more, and the window
/// still arrives whole and in order.
#[test]
fn refused_copies_among_many_open_announcements_keep_their_place() {
    single_copy_job(|receiver, sender, single| {
        let n = MAX_OPEN as u32 + 6;
        let len = |i: u32| 1000 + 150 * i as usize;
        let mut st = State::default();
        let ids: Vec<u64> =
            (0..n).map(|i| st.enqueue_given(0, (5, len(i) as u32), Box::new(message(i, len(i))), Model::Untimed)).collect();
        assert!(sender.progress(&mut st, None).unwrap());
        assert_eq!(st.inbox.rdv.open_to(0), (MAX_OPEN, false));
        let mut inbox = Inbox::default();
        let refuse = RefuseOdd(receiver);
        receiver.drain(&mut inbox, None, true).unwrap();
        // The core is about to wait: the first half is copied (or refused) now.
        for i in 0..n / 2 {
            if i == 3 {
                inbox.pull_deferred(&refuse).unwrap();
                receiver.push_answers(&mut inbox).unwrap();
                assert!(!inbox.has_deferred());
            }
            let got = take(receiver, &mut inbox, sender, &mut st, &refuse);
            assert!(got == message(i, len(i)), "message {i} damaged or out of order");
        }
        assert!(!single.usable(), "a refusal turns announcing off");
        for i in n / 2..n {
            let got = take(receiver, &mut inbox, sender, &mut st, &refuse);
            assert!(got == message(i, len(i)), "message {i} damaged or out of order");
        }
        for _ in 0..10 {
            sender.progress(&mut st, None).unwrap();
        }
        assert!(ids.iter().all(|&id| st.send_finished(id)));
        assert!(!st.inbox.rdv.open(0));
    });
}
