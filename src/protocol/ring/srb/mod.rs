//! The shared receive buffer (SRB, post-K style): one ring per receiving core, written
//! by any number of senders that reserve space with remote atomics.
//!
//! State: the receiver's ring of `cap` bytes (a power of two, in shared DRAM) and its
//! [`SrbCounters`] (in its MPB): `producer`, advanced by senders, and `consumer`,
//! advanced by the receiver, both byte counters that wrap modulo 2^32. An entry is a
//! 16-byte header (a control word, then source, tag and message length) followed by
//! the fragment's payload padded to 16 bytes; entries start on 16-byte boundaries, so
//! a header never straddles the end of the ring, but a payload may (it is copied in two
//! pieces).
//!
//! Sender:
//! 1. reserve `len` bytes: `producer.fetch_add(len)` (ARMW-add; Relaxed, the RMW alone
//!    makes reservations disjoint);
//! 2. read `consumer` with `fetch_or(0)` (ARMW-or, Acquire) and wait, through the
//!    waiter, while `pos + len - consumer > cap` (writing would overrun unread data);
//! 3. copy the payload, then the header's source/tag/length bytes;
//! 4. store the control word (valid bit, first bit, the fragment's kind in bits 28-29,
//!    length) LAST, with Release, and ring the receiver's doorbell.
//!
//! Receiver: Acquire-loads the control word at its consumer position; zero means
//! nothing yet (the region was zeroed when it was last consumed, and the fresh segment
//! is zero). It validates the header (length within the ring, source a real core, first
//! fragment not longer than its message, control fragments as their kind says, see
//! [`FragHeader::check`]) and reports [`CorruptError`] otherwise; copies
//! the payload out; and zeroes the entry's control word and every 16-byte boundary word
//! after it, where a later entry may start (the whole entry, when it is large). It keeps its position itself
//! ([`Entry::next`]) and publishes it to `consumer` lazily, with a Release RMW
//! ([`Srb::free_consumed`]): once half the ring is consumed but unpublished, or when a
//! sender waits for space. So in steady traffic `consumer` stays in the senders'
//! caches, and a send moves one line, the entry's, instead of also pulling `consumer`
//! back from the receiver (2 cores, 8 B one way: 0.13 -> 0.115 µs).
//!
//! Invariants and happens-before edges:
//! - sender writes -> control-word Release -> receiver Acquire -> receiver reads;
//! - receiver reads and zeroing -> `consumer` Release -> a later sender's `fetch_or`
//!   Acquire -> that sender's writes into the freed bytes: no sender overwrites bytes
//!   the receiver has not finished with, and the control word it later publishes
//!   follows the zeroing in modification order;
//! - a sender waits only for its own reservations (a sender may hold several: a run
//!   reserved with one fetch-add and split into entries, [`Reservation::split_first`],
//!   which it publishes in order, each once it fits; a ticket's owner may sleep until a
//!   later member of its run fits, one that fits by the time the receiver reaches the
//!   ticket, [`Srb::fits_behind`]), and the earliest reservation always
//!   fits once the receiver reaches it and publishes (entries are at most `cap / 2`),
//!   so the ring cannot deadlock while both sides make progress: a waiting sender is
//!   counted in `space_waiters`, and a receiver publishes what it consumed before it
//!   waits (or its waits end when it owes space, [`Srb::owes_space`]).
//!
//! Flow control (how senders wait for space, and whom a publication of `consumer`
//! wakes) is `space`; the ring's memory, shared bytes or a loom model's, is `mem`.
//!
//! Memory per receiver: `cap` bytes of ring plus the counters ([`COUNTER_BYTES`]),
//! whatever the job size.

use crossbeam_utils::CachePadded;

use crate::protocol::payload::Payload;
use crate::protocol::ring::frag::{
    CorruptError, CorruptKind, FragHeader, FragKind, KIND_SHIFT, MAX_FRAGMENT, split, word,
};
use crate::sync::{AtomicU32, Ordering};

mod mem;
mod space;

#[cfg(sccemu_loom)]
pub use mem::LoomRing;
pub use mem::RingMem;
pub use space::SPACE_BELLS;
use space::SpaceLine;

/// Bytes of an entry header.
pub const HEADER: u32 = 16;

/// Entries up to this many bytes are released word by word (see [`Srb::release`]).
const SMALL_RELEASE: u32 = 4 * HEADER;
const VALID: u32 = 1 << 31;
const FIRST: u32 = 1 << 30;
const LEN_MASK: u32 = (1 << KIND_SHIFT) - 1;

/// A receiver's counters, each on a line of its own: `producer` (senders hammer it),
/// `consumer` (senders read it, the receiver writes it now and then) and the senders
/// waiting for space with the bells they sleep on (the receiver polls the count;
/// senders rarely write the line).
#[repr(C)]
#[derive(Default)]
pub struct SrbCounters {
    producer: CachePadded<AtomicU32>,
    consumer: CachePadded<AtomicU32>,
    space: CachePadded<SpaceLine>,
}

impl SrbCounters {
    /// Counters of an empty ring, no sender waiting.
    pub fn new() -> SrbCounters {
        SrbCounters::default()
    }
}

/// Bytes of [`SrbCounters`] in production (five 128-byte lines: `producer`,
/// `consumer`, and three for the space waiters and their 64 bells).
pub const COUNTER_BYTES: usize = 640;
#[cfg(not(sccemu_loom))]
const _: () = assert!(size_of::<SrbCounters>() <= COUNTER_BYTES);

/// Space a sender owns in a ring: `len` bytes from counter value `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    pos: u32,
    len: u32,
}

/// An entry the receiver found at its consumer position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pos: u32,
    len: u32,
    /// The fragment's header, decoded and validated.
    pub header: FragHeader,
}

impl Reservation {
    /// Where in the ring the entry starts (a counter; the offset is it modulo the
    /// ring's size).
    pub fn pos(&self) -> u32 {
        self.pos
    }

    /// Splits off the first `len` bytes (an [`entry_len`]) of a run of entries reserved
    /// with one [`Srb::reserve`], leaving the rest in `self`. Each part is then an
    /// entry's reservation like any other: disjoint from all others, at most `cap / 2`,
    /// published on its own once it [`Srb::fits`]. The run's owner publishes its parts in
    /// order (the receiver stops at the first unpublished one).
    pub fn split_first(&mut self, len: u32) -> Reservation {
        debug_assert!(len <= self.len && len % HEADER == 0);
        let first = Reservation { pos: self.pos, len };
        self.pos = self.pos.wrapping_add(len);
        self.len -= len;
        first
    }
}

impl Entry {
    /// Where in the ring the entry starts (see [`Reservation::pos`]).
    pub fn pos(&self) -> u32 {
        self.pos
    }

    /// The consumer position after this entry.
    pub fn next(&self) -> u32 {
        self.pos.wrapping_add(self.len)
    }
}

/// One receiver's ring, seen by a sender or by the receiver itself.
pub struct Srb<'a, M: RingMem> {
    counters: &'a SrbCounters,
    mem: M,
    owner: u32,
    cores: u32,
}

/// Bytes an entry carrying `payload` bytes occupies.
pub fn entry_len(payload: u32) -> u32 {
    HEADER + payload.div_ceil(HEADER) * HEADER
}

impl<'a, M: RingMem> Srb<'a, M> {
    /// The ring of core `owner` of a `cores`-core job. The memory's length must be a
    /// power of two and at least 64.
    pub fn new(counters: &'a SrbCounters, mem: M, owner: u32, cores: u32) -> Srb<'a, M> {
        let cap = mem.bytes().len();
        assert!(cap.is_power_of_two() && (64..=1 << 30).contains(&cap), "ring of {cap} bytes");
        Srb { counters, mem, owner, cores }
    }

    fn cap(&self) -> u32 {
        self.mem.bytes().len() as u32
    }

    /// The ring offset of counter value `pos`. A mask, not `%`: the capacity is a power
    /// of two (checked in `new`), which the compiler cannot know, and a division on
    /// every publish, poll and release cost tens of cycles each.
    fn offset(&self, pos: usize) -> usize {
        pos & (self.cap() as usize - 1)
    }

    /// The largest payload one entry may carry: entries are at most half the ring, so
    /// two senders can always pipeline (and at most what the length field holds).
    pub fn max_payload(&self) -> u32 {
        (self.cap() / 2 - HEADER).min(MAX_FRAGMENT & !(HEADER - 1))
    }

    fn consumer_armw(&self) -> u32 {
        // ARMW-or with 0: reads the receiver's counter without a lock. Acquire pairs
        // with the receiver's Release swap in `publish_consumer`: its reads and zeroing
        // of the freed bytes happen-before our writes to them.
        self.counters.consumer.fetch_or(0, Ordering::Acquire)
    }

    /// Sender: whether `len` more bytes would fit now (a hint for not reserving space
    /// that cannot be filled soon; another sender may still get there first).
    pub fn likely_fits(&self, len: u32) -> bool {
        // Relaxed loads: a hint only (it orders nothing); `fits`, with its ARMW read
        // of `consumer`, decides before any byte is written.
        let producer = self.counters.producer.load(Ordering::Relaxed);
        let consumer = self.counters.consumer.load(Ordering::Relaxed);
        producer.wrapping_add(len).wrapping_sub(consumer) <= self.cap()
    }

    /// Sender: claims `len` bytes (an [`entry_len`], at most `cap / 2`). The caller
    /// must publish into them: the receiver stops at an unpublished entry.
    pub fn reserve(&self, len: u32) -> Reservation {
        debug_assert!(len <= self.cap() / 2 && len % HEADER == 0);
        // Relaxed: the RMW alone makes reservations disjoint; the bytes are handed over
        // by `consumer` (Acquire in `fits`) and the control word (Release in `publish`).
        let pos = self.counters.producer.fetch_add(len, Ordering::Relaxed);
        Reservation { pos, len }
    }

    /// Sender: reserves `len` bytes (an [`entry_len`], at most `cap / 2`) unless the
    /// ring looks too full to take them now. Reads `consumer` once, by ARMW, first:
    /// that value (a lower bound, since `consumer` only grows) both decides whether to
    /// reserve and, usually, shows that the reservation already fits (`.1`); if not,
    /// wait until [`Srb::fits`]. The caller must then publish into the reservation.
    pub fn try_reserve(&self, len: u32) -> Option<(Reservation, bool)> {
        let seen = self.consumer_armw();
        // Relaxed: a hint; the reservation itself is the fetch_add below.
        let producer = self.counters.producer.load(Ordering::Relaxed);
        if producer.wrapping_add(len).wrapping_sub(seen) > self.cap() {
            return None;
        }
        let r = self.reserve(len);
        // A shortcut only: `false` sends the caller to wait until `Srb::fits`, which then
        // holds at once wherever this would have. So `<` here would be safe, but would
        // register a sender as a space waiter for nothing when its reservation fills the
        // ring exactly (the loom model `bounds_are_exact` checks the bound).
        let fits = r.pos.wrapping_add(len).wrapping_sub(seen) <= self.cap();
        Some((r, fits))
    }

    /// Sender: whether the reservation can be written without overrunning unread data.
    pub fn fits(&self, r: &Reservation) -> bool {
        r.pos.wrapping_add(r.len).wrapping_sub(self.consumer_armw()) <= self.cap()
    }

    /// Sender: writes the fragment into a reservation that [`Srb::fits`], publishing
    /// the control word last. The caller then rings the receiver's doorbell.
    /// Inlined: its one caller, every send's push, lost it to an unrelated change and
    /// paid about 30 instructions a message (callgrind, 8 B sends).
    #[inline]
    pub fn publish(&self, r: Reservation, header: &FragHeader, payload: &[u8]) {
        debug_assert_eq!(entry_len(payload.len() as u32), r.len);
        let cap = self.cap() as usize;
        let bytes = self.mem.bytes();
        let at = self.offset(r.pos as usize);
        let (p1, n1, n2) = split(self.offset(at + HEADER as usize), payload.len(), cap);
        bytes.write(p1, &payload[..n1]);
        bytes.write(0, &payload[n1..n1 + n2]);
        let mut head = [0u8; 12];
        head[0..4].copy_from_slice(&header.src.to_le_bytes());
        head[4..8].copy_from_slice(&header.tag.to_le_bytes());
        head[8..12].copy_from_slice(&header.total.to_le_bytes());
        bytes.write(at + 4, &head);
        let ctl = VALID | if header.first { FIRST } else { 0 } | header.kind.bits() | payload.len() as u32;
        // Release: the payload and header bytes above happen-before the receiver's
        // Acquire load that sees this word.
        self.mem.ctl(at).store(ctl, Ordering::Release);
    }

    fn corrupt(&self, pos: u32, kind: CorruptKind) -> CorruptError {
        CorruptError { channel: "srb", owner: self.owner, position: pos, kind }
    }

    /// Receiver: the producer counter, the end of every reservation made so far; at
    /// least the end of every reservation that happens-before the call.
    pub fn reserved(&self) -> u32 {
        // Relaxed: a reservation's RMW that happens-before this load is seen by it, or a
        // later value (read-write coherence); a later one only makes the bound safer.
        self.counters.producer.load(Ordering::Relaxed)
    }

    /// Receiver: whether an entry is published at `pos`, the consumer position (a reason
    /// to look: read it with [`Srb::peek`]).
    pub fn has_entry(&self, pos: u32) -> bool {
        // Relaxed: it only decides whether to look; `peek` loads the word again with
        // Acquire before any byte is read. (A waiter's watch evaluates it after its
        // SeqCst fence, which is what pairs with the sender's ring.)
        self.mem.ctl(self.offset(pos as usize)).load(Ordering::Relaxed) != 0
    }

    /// Receiver: the entry at `pos`, the consumer position, if one is published. The
    /// receiver keeps its position itself ([`Entry::next`] after each release): it is
    /// the only writer of `consumer`, which it stores for the senders' benefit.
    pub fn peek(&self, pos: u32) -> Result<Option<Entry>, CorruptError> {
        let at = self.offset(pos as usize);
        // Acquire: pairs with the sender's Release in `publish`; the bytes are complete.
        let ctl = self.mem.ctl(at).load(Ordering::Acquire);
        if ctl == 0 {
            return Ok(None);
        }
        if ctl & VALID == 0 {
            return Err(self.corrupt(pos, CorruptKind::BadControlWord { word: ctl }));
        }
        let len = ctl & LEN_MASK;
        if len > self.max_payload() {
            return Err(self.corrupt(pos, CorruptKind::LengthPastRing { len, capacity: self.cap() }));
        }
        let Some(kind) = FragKind::of_word(ctl) else {
            return Err(self.corrupt(pos, CorruptKind::BadControlWord { word: ctl }));
        };
        let mut head = [0u8; 12];
        self.mem.bytes().read(at + 4, &mut head);
        let header = FragHeader {
            src: word(&head, 0),
            tag: word(&head, 4),
            total: word(&head, 8),
            len,
            first: ctl & FIRST != 0,
            kind,
        };
        if header.src >= self.cores {
            return Err(self.corrupt(pos, CorruptKind::BadSource { src: header.src }));
        }
        header.check().map_err(|kind| self.corrupt(pos, kind))?;
        Ok(Some(Entry { pos, len: entry_len(len), header }))
    }

    /// Receiver: copies payload bytes `offset..offset + dst.len()` of an entry.
    pub fn read(&self, e: &Entry, offset: usize, dst: &mut [u8]) {
        debug_assert!(offset + dst.len() <= e.header.len as usize);
        let cap = self.cap() as usize;
        let start = self.offset(e.pos as usize + HEADER as usize + offset);
        let (p1, n1, n2) = split(start, dst.len(), cap);
        let (a, b) = dst.split_at_mut(n1);
        self.mem.bytes().read(p1, a);
        self.mem.bytes().read(0, &mut b[..n2]);
    }

    /// Receiver: zeroes the entry's control word and every 16-byte boundary after it
    /// (where a later entry's control word may fall); [`Srb::free_consumed`] later
    /// frees its bytes for senders. Only those words must read zero until a sender
    /// publishes there: every other byte is written by the sender of the entry that
    /// covers it before a receiver reads it. A small entry zeroes just those words
    /// (8 B messages: two stores instead of two calls to `memset`); a larger one all
    /// its bytes, which is cheaper than a store per 16 bytes.
    pub fn release(&self, e: Entry) {
        let cap = self.cap() as usize;
        let at = self.offset(e.pos as usize);
        // Relaxed: ordered before the Release publication of `consumer` in
        // `free_consumed`, which every sender that reuses these bytes synchronises with.
        self.mem.ctl(at).store(0, Ordering::Relaxed);
        if e.len <= SMALL_RELEASE {
            for boundary in (HEADER..e.len).step_by(HEADER as usize) {
                // Through the bytes, as a larger entry's zeroing: in production they
                // are the boundary's word (ordered as the store above).
                self.mem.bytes().zero(self.offset(at + boundary as usize), 4);
            }
            return;
        }
        let (p1, n1, n2) = split(at + 4, e.len as usize - 4, cap);
        self.mem.bytes().zero(p1, n1);
        if n2 > 0 {
            self.mem.bytes().zero(0, n2);
        }
    }
}
