#![cfg(sccemu_loom)]
//! The shared receive buffer: two senders reserve, wait for space, publish; one
//! receiver consumes, zeroes and frees lazily (it publishes its position once half the
//! ring is unpublished or a sender waits). A 64-byte ring takes 112 bytes of entries, so
//! every interleaving fills the ring (a sender sleeps for space, rings the receiver,
//! and is rung back once the space is published), and some wrap around or straddle the
//! end. Drives `sccemu::srb`.

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::ring::frag::FragHeader;
use sccemu::protocol::ring::srb::{LoomRing, Srb, SrbCounters, entry_len};
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct World {
    counters: SrbCounters,
    ring: LoomRing,
    job: JobControl,
    /// Doorbells of the receiver (0) and the senders (1, 2).
    bells: [Doorbell; 3],
}

fn srb(w: &World) -> Srb<'_, &LoomRing> {
    Srb::new(&w.counters, &w.ring, 0, 3)
}

fn payload(src: u32, n: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (src * 100 + n as u32 * 10 + i as u32) as u8).collect()
}

/// One sender's message, as `sccemu`'s progress engine sends it: reserve unless the
/// ring looks full (then sleep until it may not be), wait for room if the reservation
/// does not fit yet, publish, ring the receiver.
fn send(w: &World, src: u32, n: usize, len: usize) {
    let ring = srb(w);
    let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
    let bell = &w.bells[src as usize];
    let elen = entry_len(len as u32);
    let r = loop {
        match ring.try_reserve(elen) {
            Some((r, true)) => break r,
            Some((r, false)) => {
                ring.add_space_waiter();
                w.bells[0].ring_after_rmw();
                waiter.wait_until(bell, || ring.fits(&r).then_some(())).unwrap();
                ring.remove_space_waiter();
                break r;
            }
            None => {
                ring.add_space_waiter();
                w.bells[0].ring_after_rmw();
                waiter.wait_until(bell, || ring.likely_fits(elen).then_some(())).unwrap();
                ring.remove_space_waiter();
            }
        }
    };
    let h = FragHeader { src, tag: n as u32, len: len as u32, total: len as u32, first: true };
    ring.publish(r, &h, &payload(src, n, len));
    w.bells[0].ring();
}

#[test]
fn two_senders_fill_and_wrap_the_ring() {
    loom::model(|| {
        let w = Arc::new(World {
            counters: SrbCounters::new(),
            ring: LoomRing::new(64),
            job: JobControl::new(),
            bells: [Doorbell::new(), Doorbell::new(), Doorbell::new()],
        });
        let a = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 1, 0, 16);
                send(&w, 1, 1, 0);
            })
        };
        let b = {
            let w = w.clone();
            thread::spawn(move || {
                send(&w, 2, 0, 8);
                send(&w, 2, 1, 16);
            })
        };
        let ring = srb(&w);
        let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
        let mut next = [0usize; 3];
        let (mut pos, mut published) = (0, 0);
        let mut taken = 0;
        while taken < 4 {
            // As the progress engine's receive: wait for an entry, or for senders that
            // wait for space this receiver consumed but has not published.
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
            if ring.free_consumed(pos, &mut published) {
                w.bells[1].ring();
                w.bells[2].ring();
            }
        }
        assert_eq!(next, [0, 2, 2]);
        assert!(ring.peek(pos).unwrap().is_none());
        a.join().unwrap();
        b.join().unwrap();
    });
}
