#![cfg(sccemu_loom)]
//! The request channel's mark (`sccemu::rma::remote::channel`, the gateway's
//! `requests`): a gateway that acquired a message published after a request was
//! reserved, then reads the ring's producer counter (`Srb::reserved`), gets a mark at
//! or past that request's end, so draining up to the mark drains the request. Here the
//! origin reserves and publishes its request, then publishes a "message" (a Release
//! store standing for a stand-in ring's publication); another origin reserves a request
//! of its own meanwhile. The gateway, having seen the message, reads the mark and
//! drains until it reaches it: the first origin's request must be among what it drained.
//! Drives `sccemu::srb`.

use loom::sync::Arc;
use loom::thread;
use sccemu::protocol::ring::frag::FragHeader;
use sccemu::protocol::ring::srb::{LoomRing, Srb, SrbCounters, entry_len};
use sccemu::sync::{AtomicU32, Ordering};

struct World {
    counters: SrbCounters,
    ring: LoomRing,
    message: AtomicU32,
}

fn srb(w: &World) -> Srb<'_, &LoomRing> {
    Srb::new(&w.counters, &w.ring, 0, 3)
}

fn request(w: &World, src: u32) {
    let ring = srb(w);
    let r = ring.reserve(entry_len(4));
    assert!(ring.fits(&r), "two small requests fit the ring");
    ring.publish(r, &FragHeader::data(src, 9, 4, 4, true), &[src as u8; 4]);
}

#[test]
fn a_mark_read_after_a_message_covers_the_requests_before_it() {
    loom::model(|| {
        let w = Arc::new(World {
            counters: SrbCounters::new(),
            ring: LoomRing::new(64),
            message: AtomicU32::new(0),
        });
        let origin = {
            let w = w.clone();
            thread::spawn(move || {
                request(&w, 1);
                // Release: the message's publication, after the request's reservation.
                w.message.store(1, Ordering::Release);
            })
        };
        let other = {
            let w = w.clone();
            thread::spawn(move || request(&w, 2))
        };
        // Acquire: pairs with the message's publication.
        while w.message.load(Ordering::Acquire) == 0 {
            thread::yield_now();
        }
        let ring = srb(&w);
        let mark = ring.reserved();
        assert!(mark >= entry_len(4), "the mark covers the request reserved before the message");
        let (mut pos, mut drained) = (0u32, Vec::new());
        while pos != mark {
            match ring.peek(pos).unwrap() {
                Some(e) => {
                    drained.push(e.header.src);
                    pos = e.next();
                    ring.release(e);
                }
                // Another origin's reservation, not yet published: as the gateway, wait.
                None => thread::yield_now(),
            }
        }
        assert!(drained.contains(&1), "the request before the message was drained: {drained:?}");
        origin.join().unwrap();
        other.join().unwrap();
    });
}
