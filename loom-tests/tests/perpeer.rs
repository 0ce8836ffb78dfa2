#![cfg(sccemu_loom)]
//! The per-peer slot handoff: a sender passes an inline fragment and two DRAM
//! fragments through one 32-byte MPB slot (16 bytes inline) and a 32-byte DRAM ring.
//! In the first model the second DRAM fragment wraps and must wait for the first to be
//! freed; in the second every fragment is exactly at a capacity: 16 bytes inline (the
//! slot full), then 32 bytes through DRAM (the ring full), then one that must wait for
//! all of them to be freed. Drives `sccemu::perpeer`.

use loom::sync::Arc;
use loom::thread;
use sccemu::WaitPolicy;
use sccemu::protocol::abort::JobControl;
use sccemu::protocol::payload::LoomBytes;
use sccemu::protocol::ring::frag::FragHeader;
use sccemu::protocol::ring::perpeer::{PerPeer, SlotCtl};
use sccemu::protocol::waiter::{Doorbell, Waiter};

struct World {
    ctl: SlotCtl,
    ack: SlotCtl,
    slot: LoomBytes,
    dram: LoomBytes,
    job: JobControl,
    /// Receiver's (0) and sender's (1) doorbells.
    bells: [Doorbell; 2],
}

fn channel(w: &World) -> PerPeer<'_, &LoomBytes> {
    PerPeer::new(&w.ctl, &w.ack, &w.slot, Some(&w.dram), 1, 0)
}

fn payload(sizes: [usize; 3], n: usize) -> Vec<u8> {
    (0..sizes[n]).map(|i| (n * 50 + i + 1) as u8).collect()
}

#[test]
fn slot_handoff_inline_then_dram() {
    handoff([8, 20, 20]);
}

#[test]
fn slot_and_dram_ring_exactly_full() {
    handoff([16, 32, 20]);
}

/// A sender passes fragments of `sizes` bytes; the receiver takes them in order, intact.
fn handoff(sizes: [usize; 3]) {
    loom::model(move || {
        let w = Arc::new(World {
            ctl: SlotCtl::new(),
            ack: SlotCtl::new(),
            slot: LoomBytes::new(32),
            dram: LoomBytes::new(32),
            job: JobControl::new(),
            bells: [Doorbell::new(), Doorbell::new()],
        });
        let sender = {
            let w = w.clone();
            thread::spawn(move || {
                let ch = channel(&w);
                let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
                for n in 0..sizes.len() {
                    let data = payload(sizes, n);
                    let h = FragHeader::data(1, n as u32, data.len() as u32, data.len() as u32, true);
                    let inline = data.len() <= ch.inline_capacity();
                    let ready = || (ch.is_free() && (inline || ch.dram_fits(data.len()))).then_some(());
                    waiter.wait_until(&w.bells[1], ready).unwrap();
                    if inline {
                        ch.send_inline(&h, &data);
                    } else {
                        ch.send_dram(&h, &data);
                    }
                    w.bells[0].ring();
                }
            })
        };
        let ch = channel(&w);
        let waiter = Waiter::new(WaitPolicy::Adaptive, &w.job);
        for n in 0..sizes.len() {
            let inc = waiter.wait_until(&w.bells[0], || ch.peek().unwrap()).unwrap();
            assert_eq!(inc.header.tag as usize, n, "in order");
            let mut got = vec![0u8; inc.header.len as usize];
            if inc.in_dram {
                ch.take();
                w.bells[1].ring();
                ch.read_dram(0, &mut got);
                ch.free_dram(got.len());
            } else {
                ch.read_inline(0, &mut got);
                ch.take();
            }
            w.bells[1].ring();
            assert_eq!(got, payload(sizes, n), "intact payload");
        }
        sender.join().unwrap();
    });
}
