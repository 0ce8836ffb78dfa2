#![cfg(sccemu_loom)]
//! The shared receive buffer: two senders reserve, wait for space, publish; one
//! receiver consumes, zeroes and frees lazily (it publishes its position once half the
//! ring is unpublished or a sender waits). A 64-byte ring takes 112 bytes of entries, so
//! every interleaving fills the ring (a sender sleeps for space, rings the receiver,
//! and is rung back once the space is published), and some wrap around or straddle the
//! end. A second model fills the ring exactly (see `exactly_full`). Senders wait for
//! space both ways the progress engine does: with a ticket (a reservation taken although
//! the ring is full, slept for on its space bell, which the receiver's publication
//! rings) and without (on the sender's own doorbell, which the receiver rings when
//! `free_consumed` says so). Drives `sccemu::srb`.

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::flag;
use sccemu::protocol::ring::frag::FragHeader;
use sccemu::protocol::ring::srb::{LoomRing, Srb, SrbCounters, entry_len};
use sccemu::protocol::waiter::{Doorbell, Waiter};
use sccemu::sync::AtomicU32;

struct World {
    counters: SrbCounters,
    ring: LoomRing,
    job: JobControl,
    /// Doorbells of the receiver (0) and the senders (1, 2).
    bells: [Doorbell; 3],
    /// The sender's progress, for `exactly_full`: 1 once the ring is full, then 2 and 3
    /// as each message that waited for space is sent.
    stage: AtomicU32,
}

fn world() -> Arc<World> {
    Arc::new(World {
        counters: SrbCounters::new(),
        ring: LoomRing::new(64),
        job: JobControl::new(),
        bells: [Doorbell::new(), Doorbell::new(), Doorbell::new()],
        stage: AtomicU32::new(0),
    })
}

fn srb(w: &World) -> Srb<'_, &LoomRing> {
    Srb::new(&w.counters, &w.ring, 0, 3)
}

fn payload(src: u32, n: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (src * 100 + n as u32 * 10 + i as u32) as u8).collect()
}

/// One sender's message, as `sccemu`'s progress engine sends it: reserve unless the
/// ring looks full; a blocking send (`ticket`) then reserves anyway and sleeps on the
/// reservation's space bell until it fits, a non-blocking one sleeps on its own
/// doorbell until the ring may have room; publish, ring the receiver.
fn send(w: &World, src: u32, n: usize, len: usize, ticket: bool) {
    let ring = srb(w);
    let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
    let bell = &w.bells[src as usize];
    let elen = entry_len(len as u32);
    let wait_ticket = |r| {
        ring.add_space_waiter(true);
        waiter.wait_until(ring.space_bell(&r), || ring.fits(&r).then_some(())).unwrap();
        ring.remove_space_waiter(true);
        r
    };
    let r = loop {
        match ring.try_reserve(elen) {
            Some((r, true)) => break r,
            Some((r, false)) => break wait_ticket(r),
            None if ticket => {
                let r = ring.reserve(elen);
                break if ring.fits(&r) { r } else { wait_ticket(r) };
            }
            None => {
                ring.add_space_waiter(false);
                waiter.wait_until(bell, || ring.likely_fits(elen).then_some(())).unwrap();
                ring.remove_space_waiter(false);
            }
        }
    };
    let h = FragHeader::data(src, n as u32, len as u32, len as u32, true);
    ring.publish(r, &h, &payload(src, n, len));
    w.bells[0].ring();
}

#[test]
fn two_senders_fill_and_wrap_the_ring() {
    loom::model(|| {
        let w = world();
        let a = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 1, 0, 16, true);
                send(&w, 1, 1, 0, true);
            })
        };
        let b = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 2, 0, 8, false);
                send(&w, 2, 1, 16, false);
            })
        };
        assert_eq!(receive(&w, 4), [0, 2, 2]);
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// The receiver of the models that fill and wrap the ring: takes `count` entries, checks
/// their order per sender and their payloads, and returns how many came from each.
/// As the progress engine's receive: publishes what was consumed before a sleep (loom's
/// waiter sleeps at once), then waits for an entry, or for senders that wait for space
/// this receiver consumed but has not published.
fn receive(w: &World, count: usize) -> [usize; 3] {
    let ring = srb(w);
    let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
    let mut next = [0usize; 3];
    let (mut pos, mut published) = (0, 0);
    let mut taken = 0;
    while taken < count {
        if ring.flush_consumed(pos, &mut published) {
            w.bells[1].ring();
            w.bells[2].ring();
        }
        let entry = waiter
            .wait_until(&w.bells[0], || match ring.peek(pos).unwrap() {
                Some(e) => Some(Some(e)),
                None => ring.owes_space(pos, published).then_some(None),
            })
            .unwrap();
        if let Some(e) = entry {
            let h = e.header;
            let mut got = vec![0u8; h.len as usize];
            ring.read(&e, 0, &mut got);
            assert_eq!(h.tag as usize, next[h.src as usize], "per-sender order");
            assert_eq!(got, payload(h.src, h.tag as usize, h.len as usize), "intact payload");
            next[h.src as usize] += 1;
            pos = e.next();
            ring.release(e);
            taken += 1;
        }
        let caught_up = ring.peek(pos).unwrap().is_none();
        if ring.free_consumed(pos, &mut published, caught_up) {
            w.bells[1].ring();
            w.bells[2].ring();
        }
    }
    assert!(ring.peek(pos).unwrap().is_none());
    next
}

/// A run of reservations, as a sender takes for the messages queued behind a ticket far
/// from fitting (`Srb::run_behind`): one `reserve` for two entries, split with
/// `split_first`, each published once it fits (waiting for it with a ticket on its
/// space bell), in order. The other sender's two messages (48 bytes of entries) and the
/// run (32) overfill the 64-byte ring, so some interleavings make a part of the run, or
/// a message behind it, wait for space; a part published out of order, or a wait that
/// nobody ends, fails the model.
#[test]
fn a_run_of_reservations() {
    loom::model(|| {
        let w = world();
        let a = {
            let w = w.clone();
            thread::spawn(move || {
                let ring = srb(&w);
                let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
                let mut run = ring.reserve(2 * entry_len(0));
                for n in 0..2 {
                    let r = run.split_first(entry_len(0));
                    if !ring.fits(&r) {
                        ring.add_space_waiter(true);
                        waiter.wait_until(ring.space_bell(&r), || ring.fits(&r).then_some(())).unwrap();
                        ring.remove_space_waiter(true);
                    }
                    ring.publish(r, &FragHeader::data(1, n, 0, 0, true), &[]);
                    w.bells[0].ring();
                }
            })
        };
        let b = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 2, 0, 16, true);
                send(&w, 2, 1, 0, true);
            })
        };
        assert_eq!(receive(&w, 4), [0, 2, 2]);
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// The receiver's side of the models at capacity: takes the entry at `*pos` (waiting for
/// it), checks its payload, releases it, and returns its (source, tag).
fn take(w: &World, ring: &Srb<'_, &LoomRing>, pos: &mut u32) -> (u32, u32) {
    let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
    let e = waiter.wait_until(&w.bells[0], || ring.peek(*pos).unwrap()).unwrap();
    let h = e.header;
    let mut got = vec![0u8; h.len as usize];
    ring.read(&e, 0, &mut got);
    assert_eq!(got, payload(h.src, h.tag as usize, 16), "intact payload");
    *pos = e.next();
    ring.release(e);
    (h.src, h.tag)
}

/// The ring exactly at capacity: a 64-byte ring carries payloads of at most 16 bytes, in
/// entries of 32, half the ring. One sender sends two of them while the receiver takes
/// nothing (it waits for the sender's stage 1): the ring is then exactly full, and both
/// must fit without the receiver's help. Each later message must wait for space: the
/// receiver takes one message, freeing exactly the 32 bytes the next one needs, and
/// takes no other until that one is sent (stages 2 and 3). It publishes the first 32
/// bytes lazily (`free_consumed`: half the ring, so at once), the next 32 as it leaves
/// messaging to wait for the sender (`flush_consumed`, as the progress engine does
/// before a barrier). A space check off by one, or a lost wake-up of the sender waiting
/// for space, leaves a send waiting for space that never comes (a loom deadlock); an
/// off-by-one in the receiver's length check refuses the largest payload.
#[test]
fn exactly_full() {
    loom::model(|| {
        let w = world();
        let sender = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 1, 0, 16, true);
                send(&w, 1, 1, 16, true);
                for n in 2..4 {
                    flag::write(&w.stage, n - 1, &w.bells[0]);
                    send(&w, 1, n as usize, 16, n == 2);
                }
                flag::write(&w.stage, 3, &w.bells[0]);
            })
        };
        let ring = srb(&w);
        let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
        let (mut pos, mut published) = (0, 0);
        flag::wait_until(&w.stage, 1, &waiter, &w.bells[0]).unwrap();
        assert_eq!(take(&w, &ring, &mut pos), (1, 0));
        if ring.free_consumed(pos, &mut published, false) {
            w.bells[1].ring();
        }
        assert_eq!(published, 32, "half the ring consumed and not published");
        flag::wait_until(&w.stage, 2, &waiter, &w.bells[0]).unwrap();
        assert_eq!(take(&w, &ring, &mut pos), (1, 1));
        if ring.flush_consumed(pos, &mut published) {
            w.bells[1].ring();
        }
        flag::wait_until(&w.stage, 3, &waiter, &w.bells[0]).unwrap();
        assert_eq!(take(&w, &ring, &mut pos), (1, 2));
        assert_eq!(take(&w, &ring, &mut pos), (1, 3));
        assert!(ring.peek(pos).unwrap().is_none());
        sender.join().unwrap();
    });
}

/// Two senders at capacity: sender 1 sends two 16-byte messages, sender 2 one; three
/// entries of 32 bytes in a 64-byte ring. The receiver takes one entry once sender 1's
/// first message is in (and publishes the 32 bytes at once), then no other until sender
/// 1's second is sent: every reservation then fits exactly or better. When sender 2
/// reserves between sender 1's look at `producer` and its own reservation, sender 1's
/// second reservation does not fit yet though the ring looked to have room (`(_, false)`
/// from `Srb::try_reserve`), and it waits for exactly the 32 bytes the receiver frees; a
/// space check off by one waits for more, which never comes (a loom deadlock).
#[test]
fn exactly_full_two_senders() {
    loom::model(|| {
        let w = world();
        let first = {
            let w = w.clone();
            thread::spawn(move || {
                for n in 0..2 {
                    send(&w, 1, n, 16, true);
                    flag::write(&w.stage, n as u32 + 1, &w.bells[0]);
                }
            })
        };
        let second = {
            let w = w.clone();
            thread::spawn(move || send(&w, 2, 0, 16, false))
        };
        let ring = srb(&w);
        let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
        let (mut pos, mut published) = (0, 0);
        let mut seen = vec![];
        waiter.wait_until(&w.bells[0], || flag::reached(&w.stage, 1).then_some(())).unwrap();
        seen.push(take(&w, &ring, &mut pos));
        if ring.free_consumed(pos, &mut published, false) {
            w.bells[1].ring();
            w.bells[2].ring();
        }
        flag::wait_until(&w.stage, 2, &waiter, &w.bells[0]).unwrap();
        seen.push(take(&w, &ring, &mut pos));
        seen.push(take(&w, &ring, &mut pos));
        let ones: Vec<_> = seen.iter().filter(|(src, _)| *src == 1).collect();
        assert_eq!(ones, [&(1, 0), &(1, 1)], "sender 1's order: {seen:?}");
        assert!(seen.contains(&(2, 0)), "{seen:?}");
        first.join().unwrap();
        second.join().unwrap();
    });
}

/// The ring's bounds, each at its exact value (one thread: the bounds, not the races,
/// are under test): a reservation that ends exactly at the ring's end fits at once
/// (`Srb::try_reserve` says so, so its sender does not wait for space for nothing); one
/// short by exactly a quarter of the ring is not "far from fitting" (that is more than a
/// quarter, `Srb::far_from_fitting`); and a receiver that has consumed exactly a quarter
/// of the ring while a sender waits publishes it (`Srb::free_consumed`). Each of these
/// comparisons shifted by one fails here.
#[test]
fn bounds_are_exact() {
    loom::model(|| {
        let w = world();
        let ring = srb(&w);
        let (quarter, half) = (entry_len(0), entry_len(16));
        assert_eq!((quarter, half), (16, 32), "a 64-byte ring");
        let (_, fits) = ring.try_reserve(half).expect("an empty ring has room");
        assert!(fits);
        let (_, fits) = ring.try_reserve(half).expect("half the ring is free");
        assert!(fits, "a reservation that ends exactly at the ring's end fits");
        // The ring is full and nothing consumed: a quarter more is short by a quarter.
        let short = ring.reserve(quarter);
        assert!(!ring.fits(&short));
        assert!(!ring.far_from_fitting(&short), "short by exactly a quarter is not far");

        let w = world();
        let ring = srb(&w);
        ring.add_space_waiter(false);
        let r = ring.reserve(quarter);
        ring.publish(r, &FragHeader::data(1, 0, 0, 0, true), &[]);
        let e = ring.peek(0).unwrap().expect("the entry just published");
        let pos = e.next();
        ring.release(e);
        let mut published = 0;
        ring.free_consumed(pos, &mut published, false);
        assert_eq!(published, quarter, "a quarter consumed while a sender waits is published");
        ring.remove_space_waiter(false);
    });
}
