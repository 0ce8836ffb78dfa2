//! Per-peer channels (RCKMPI style): each core's MPB is split into one slot per
//! possible sender; messages above the slot's inline capacity move through a per-pair
//! area of shared DRAM, as in RCKMPI's mixed MPB/DRAM channel.
//!
//! Slot of sender `s` in receiver `r`'s MPB: a [`SlotCtl`] (four 32-bit counters) and
//! then the slot bytes: a 16-byte fragment header (DRAM and first bits, the fragment's
//! [`FragKind`] in bits 28-29 and the length; tag; message
//! length) and the inline payload. Each pair also owns a `dram`-byte ring in the heap,
//! written only by `s` and read only by `r`.
//!
//! Flags live where they are polled (the RCCE discipline): of the channel `s -> r`,
//! `sent` and `dram_head` are in `r`'s slot for `s`, while the receiver's
//! acknowledgements `taken` and `dram_freed` are in `s`'s slot for `r`. So every
//! slot's counters are written by one core (the slot's peer) and polled by the MPB's
//! owner only: nobody spins on a line that the other side keeps writing.
//!
//! Slot handoff (one fragment at a time, a flag handshake with counters as flags):
//! - the slot is free when `sent == taken`; the sender checks that with an Acquire
//!   load of `taken`, which pairs with the receiver's Release store: the receiver's
//!   reads of the slot happen-before the sender overwrites it;
//! - the sender writes the header and payload, then stores `sent + 1` with Release
//!   and rings `r`'s doorbell; the receiver sees `sent != taken` with an Acquire
//!   load, so the bytes it then reads are complete;
//! - the receiver copies the fragment, stores `taken + 1` (Release) and rings `s`'s
//!   doorbell.
//!
//! DRAM fragments: the sender waits for room (`dram_head + len - dram_freed <= dram`,
//! Acquire on `dram_freed`), copies the payload to the pair's ring at `dram_head`,
//! advances `dram_head`, and publishes a header of kind DRAM through the slot as above.
//! The receiver frees the slot as soon as it has the header (so the next header can
//! come while it copies: the pipeline), copies the payload from `dram_freed` (the
//! pair's ring is consumed in order), then stores `dram_freed + len` with Release and
//! rings the sender: its reads happen-before the sender reuses those bytes.
//!
//! Memory per receiver: its MPB share plus one DRAM area per possible sender: O(N).

use crate::protocol::payload::Payload;
use crate::protocol::ring::frag::{CorruptError, CorruptKind, FragHeader, FragKind, KIND_SHIFT, split, word};
use crate::sync::{AtomicU32, Ordering};

/// Bytes of a fragment header in the slot.
pub const HEADER: usize = 16;
/// Bytes of [`SlotCtl`] at the start of each slot.
pub const CTL_BYTES: usize = 16;
const DRAM: u32 = 1 << 31;
const FIRST: u32 = 1 << 30;
const LEN_MASK: u32 = (1 << KIND_SHIFT) - 1;

/// A slot's handshake counters (all wrap modulo 2^32).
#[repr(C)]
#[derive(Default)]
pub struct SlotCtl {
    /// Fragments published by the sender.
    sent: AtomicU32,
    /// Fragments the receiver has taken out of the slot.
    taken: AtomicU32,
    /// Bytes the sender has written to the pair's DRAM ring.
    dram_head: AtomicU32,
    /// Bytes the receiver has finished reading from it.
    dram_freed: AtomicU32,
}

#[cfg(not(sccemu_loom))]
const _: () = assert!(size_of::<SlotCtl>() == CTL_BYTES);

impl SlotCtl {
    /// A slot with nothing sent, taken, written or freed.
    pub fn new() -> SlotCtl {
        SlotCtl::default()
    }
}

/// A fragment waiting in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// The fragment's header, decoded and validated.
    pub header: FragHeader,
    /// The payload is in the pair's DRAM ring rather than inline in the slot.
    pub in_dram: bool,
}

/// The channel from sender `src` to receiver `owner`.
pub struct PerPeer<'a, B: Payload> {
    /// `sent`, `dram_head`: in the receiver's slot for the sender.
    ctl: &'a SlotCtl,
    /// `taken`, `dram_freed`: in the sender's slot for the receiver.
    ack: &'a SlotCtl,
    /// Header and inline payload.
    slot: B,
    /// The pair's DRAM ring (`None` when the job has no room for one).
    dram: Option<B>,
    src: u32,
    owner: u32,
}

impl<'a, B: Payload> PerPeer<'a, B> {
    /// The channel from `src` to `owner`: `ctl` is in the receiver's slot for the
    /// sender, `ack` in the sender's slot for the receiver; `slot` holds the header and
    /// inline payload, `dram` is the pair's DRAM ring, if the job has one.
    pub fn new(
        ctl: &'a SlotCtl,
        ack: &'a SlotCtl,
        slot: B,
        dram: Option<B>,
        src: u32,
        owner: u32,
    ) -> PerPeer<'a, B> {
        // At least one byte inline, so that every fragment carries payload (with none, a
        // job without DRAM rings could never send). The mutation script's `>=` survives:
        // no channel of a job is within a byte of this bound (slots are at least
        // `sizing::MIN_SLOT`, 64 bytes), so both bounds accept the same channels.
        assert!(slot.len() > HEADER, "slot too small");
        PerPeer { ctl, ack, slot, dram, src, owner }
    }

    /// Largest inline payload.
    pub fn inline_capacity(&self) -> usize {
        self.slot.len() - HEADER
    }

    /// Bytes of the pair's DRAM ring (0 when there is none).
    pub fn dram_capacity(&self) -> usize {
        self.dram.as_ref().map_or(0, |d| d.len())
    }

    /// Sender: whether the slot is free for the next fragment.
    pub fn is_free(&self) -> bool {
        // Relaxed for our own counter; Acquire pairs with the receiver's Release in
        // `take`: its reads of the slot happen-before our overwrite.
        self.ctl.sent.load(Ordering::Relaxed) == self.ack.taken.load(Ordering::Acquire)
    }

    /// Sender: whether `len` more bytes fit in the pair's DRAM ring.
    pub fn dram_fits(&self, len: usize) -> bool {
        let cap = self.dram_capacity();
        let head = self.ctl.dram_head.load(Ordering::Relaxed);
        // Acquire pairs with the receiver's Release in `free_dram`.
        let freed = self.ack.dram_freed.load(Ordering::Acquire);
        len <= cap && head.wrapping_sub(freed) as usize + len <= cap
    }

    fn write_header(&self, header: &FragHeader, in_dram: bool) {
        let kind = if in_dram { DRAM } else { 0 } | if header.first { FIRST } else { 0 } | header.kind.bits();
        let mut head = [0u8; HEADER];
        head[0..4].copy_from_slice(&(kind | header.len).to_le_bytes());
        head[4..8].copy_from_slice(&header.tag.to_le_bytes());
        head[8..12].copy_from_slice(&header.total.to_le_bytes());
        self.slot.write(0, &head);
    }

    fn publish(&self) {
        let sent = self.ctl.sent.load(Ordering::Relaxed);
        // Release: the header and payload writes happen-before the receiver's Acquire
        // load that sees the new count. The caller rings the receiver.
        self.ctl.sent.store(sent.wrapping_add(1), Ordering::Release);
    }

    /// Sender: publishes a fragment inline. The slot must be free and the payload at
    /// most [`PerPeer::inline_capacity`].
    pub fn send_inline(&self, header: &FragHeader, payload: &[u8]) {
        debug_assert!(self.is_free() && payload.len() <= self.inline_capacity());
        self.slot.write(HEADER, payload);
        self.write_header(header, false);
        self.publish();
    }

    /// Sender: publishes a fragment through the DRAM ring. The slot must be free and
    /// the payload must [`PerPeer::dram_fits`].
    pub fn send_dram(&self, header: &FragHeader, payload: &[u8]) {
        let dram = self.dram.as_ref().expect("a DRAM ring");
        let cap = dram.len();
        let head = self.ctl.dram_head.load(Ordering::Relaxed);
        let (p1, n1, n2) = split(head as usize % cap, payload.len(), cap);
        dram.write(p1, &payload[..n1]);
        dram.write(0, &payload[n1..n1 + n2]);
        // Relaxed: read back only by this sender; the receiver learns of the bytes via
        // the Release in `publish`.
        self.ctl.dram_head.store(head.wrapping_add(payload.len() as u32), Ordering::Relaxed);
        self.write_header(header, true);
        self.publish();
    }

    /// Receiver: whether a fragment waits in the slot.
    pub fn has_incoming(&self) -> bool {
        // Acquire: pairs with the sender's Release in `publish`.
        self.ctl.sent.load(Ordering::Acquire) != self.ack.taken.load(Ordering::Relaxed)
    }

    fn corrupt(&self, kind: CorruptKind) -> CorruptError {
        CorruptError { channel: "perpeer", owner: self.owner, position: self.src, kind }
    }

    /// Receiver: the fragment waiting in the slot, validated.
    pub fn peek(&self) -> Result<Option<Incoming>, CorruptError> {
        if !self.has_incoming() {
            return Ok(None);
        }
        let mut head = [0u8; HEADER];
        self.slot.read(0, &mut head);
        let kind = word(&head, 0);
        let len = kind & LEN_MASK;
        let in_dram = kind & DRAM != 0;
        if in_dram && self.dram.is_none() {
            // No sender sets the bit without a DRAM ring to read the payload from.
            return Err(self.corrupt(CorruptKind::BadControlWord { word: kind }));
        }
        let capacity = if in_dram { self.dram_published() } else { self.inline_capacity() };
        if len as usize > capacity {
            return Err(self.corrupt(CorruptKind::LengthPastRing { len, capacity: capacity as u32 }));
        }
        let Some(frag_kind) = FragKind::of_word(kind) else {
            return Err(self.corrupt(CorruptKind::BadControlWord { word: kind }));
        };
        let header = FragHeader {
            src: self.src,
            tag: word(&head, 4),
            total: word(&head, 8),
            len,
            first: kind & FIRST != 0,
            kind: frag_kind,
        };
        header.check().map_err(|k| self.corrupt(k))?;
        Ok(Some(Incoming { header, in_dram }))
    }

    /// Receiver: bytes the sender has written to the DRAM ring and we have not freed
    /// (at most the ring's size, whatever the counters say).
    fn dram_published(&self) -> usize {
        // Relaxed: the sender stores `dram_head` before its Release of `sent`, which our
        // Acquire in `has_incoming` saw; `dram_freed` is ours.
        let head = self.ctl.dram_head.load(Ordering::Relaxed);
        let freed = self.ack.dram_freed.load(Ordering::Relaxed);
        (head.wrapping_sub(freed) as usize).min(self.dram_capacity())
    }

    /// Receiver: copies inline payload bytes `offset..offset + dst.len()`.
    pub fn read_inline(&self, offset: usize, dst: &mut [u8]) {
        self.slot.read(HEADER + offset, dst);
    }

    /// Receiver: frees the slot for the sender's next fragment. The caller then rings
    /// the sender (and must have copied any inline payload first).
    pub fn take(&self) {
        let taken = self.ack.taken.load(Ordering::Relaxed);
        // Release: our reads of the slot happen-before the sender's Acquire in `is_free`.
        self.ack.taken.store(taken.wrapping_add(1), Ordering::Release);
    }

    /// Receiver: copies bytes `offset..offset + dst.len()` of the DRAM fragment at the
    /// front of the pair's ring (valid after [`PerPeer::take`] too).
    pub fn read_dram(&self, offset: usize, dst: &mut [u8]) {
        let dram = self.dram.as_ref().expect("peek checked the DRAM ring");
        let cap = dram.len();
        let freed = self.ack.dram_freed.load(Ordering::Relaxed);
        let (p1, n1, n2) = split((freed as usize + offset) % cap, dst.len(), cap);
        let (a, b) = dst.split_at_mut(n1);
        dram.read(p1, a);
        dram.read(0, &mut b[..n2]);
    }

    /// Receiver: frees `len` bytes at the front of the pair's DRAM ring. The caller then
    /// rings the sender.
    pub fn free_dram(&self, len: usize) {
        let freed = self.ack.dram_freed.load(Ordering::Relaxed);
        // Release: our reads happen-before the sender's Acquire in `dram_fits`.
        self.ack.dram_freed.store(freed.wrapping_add(len as u32), Ordering::Release);
    }
}
