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
//! the payload out; and zeroes the whole entry. It keeps its position itself
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
//! - a sender waits only for its own reservation, and the earliest reservation always
//!   fits once the receiver reaches it and publishes (entries are at most `cap / 2`),
//!   so the ring cannot deadlock while both sides make progress: a waiting sender is
//!   counted in `space_waiters`, and a receiver publishes what it consumed before it
//!   waits (or its waits end when it owes space, [`Srb::owes_space`]).
//!
//! Waking: senders ring the receiver's doorbell after publishing. A sender that waits
//! for space counts itself in `space_waiters`. The receiver publishes `consumer` when
//! half the ring is unpublished; and, while senders wait for space, whenever it caught
//! up with its ring (it is about to wait) or a quarter of the ring is unpublished, and
//! before it sleeps (`flush_consumed`): so no sender ever waits for space that a
//! sleeping receiver owes, and senders need not ring it for that. After publishing it
//! rings a space bell (whose SeqCst fence is free after the publishing RMW) and reads
//! the waiters; each wake is a Dekker pair with the fence in `Waiter::wait_until` (as
//! in `waiter.rs`).
//! Whom it wakes:
//! - a sender holding a reservation that does not fit yet (a *ticket*: blocking sends
//!   reserve even when the ring is full, and wait for their own reservation) sleeps on
//!   one of the [`SPACE_BELLS`] space bells, the one for the quarter of a ring's worth
//!   of positions (over four rings' worth) where its reservation ends
//!   ([`Srb::space_bell`]). A publication from `c0` to `c1` makes exactly the
//!   reservations ending in `(c0 + cap, c1 + cap]` fit; it rings the bells of the
//!   quarters that range completes (all their waiters fit), and of the last one it
//!   reaches in part only if the receiver caught up or is leaving (it would otherwise
//!   wait for that waiter's entry). So a publication wakes about the senders that fit,
//!   not every sender; a ticket far from fitting sleeps at once rather than waiting
//!   awake ([`Srb::far_from_fitting`]);
//! - any other space waiter (no reservation yet, a wait on several destinations, or one
//!   that does not sleep on the space bell: the background wait of a barrier or lock
//!   holding a queued send's reservation) sleeps on its own doorbell, and the receiver
//!   rings every core while such a waiter is counted (the low half of `space_waiters`).
//!
//! Why: with 47 senders of 4 KiB into one 64 KiB ring on 2 CPUs, ringing every core at
//! every publication woke all of them to find room for a few, and each re-registered
//! and rang the receiver back: 66 futex calls and 41 voluntary context switches per
//! message, 57-320 µs per message (median 230 over 7 runs, by the machine's load),
//! against 3.5-6.5 µs for per-peer channels. With tickets and bells: 0.3 futex calls,
//! 1.4 context switches and 6.7-9.8 µs (median 8.7) per message (`examples/p2p_sweep`,
//! `--patterns m2o --sizes 4096`). With the bells over one ring's worth of positions
//! instead of four: 20 µs; over two: 15 µs; eighths instead of quarters: the same.
//!
//! Memory per receiver: `cap` bytes of ring plus the counters ([`COUNTER_BYTES`]),
//! whatever the job size.

use crossbeam_utils::CachePadded;

use crate::protocol::payload::Payload;
use crate::protocol::ring::frag::{
    CorruptError, CorruptKind, FragHeader, FragKind, KIND_SHIFT, MAX_FRAGMENT, split, word,
};
use crate::protocol::waiter::Doorbell;
use crate::sync::{AtomicU32, Ordering};

/// Bytes of an entry header.
pub const HEADER: u32 = 16;
/// Space bells per ring: each covers a quarter of a ring's worth of positions, over
/// four rings' worth (module docs).
pub const SPACE_BELLS: u32 = BELLS_PER_LAP * 4;
/// Space bells per ring's worth of positions (a power of two, as [`SPACE_BELLS`] is:
/// bell indices then stay consistent when the counters wrap).
const BELLS_PER_LAP: u32 = 4;
/// A ticketed space waiter counts this much in `space_waiters` (the low half counts
/// the others).
const TICKETED: u32 = 1 << 16;
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

/// Senders waiting for space: how many (ticketed ones in the high half), and the bells
/// the ticketed ones sleep on, by where their reservations end.
#[repr(C)]
#[derive(Default)]
struct SpaceLine {
    waiters: AtomicU32,
    bells: [Doorbell; SPACE_BELLS as usize],
}

impl SrbCounters {
    /// Counters of an empty ring, no sender waiting.
    pub fn new() -> SrbCounters {
        SrbCounters::default()
    }
}

/// Bytes of [`SrbCounters`] in production (four 128-byte lines: `producer`,
/// `consumer`, and two for the space waiters and their bells).
pub const COUNTER_BYTES: usize = 512;
#[cfg(not(sccemu_loom))]
const _: () = assert!(size_of::<SrbCounters>() <= COUNTER_BYTES);

/// The ring's memory: payload bytes, and the control word at each 16-byte boundary.
/// In production both are the same bytes of the segment (the word overlays the first
/// four bytes of its header); in models the words are separate loom atomics.
pub trait RingMem {
    /// The payload memory.
    type Bytes: Payload;
    /// The ring's bytes, headers included.
    fn bytes(&self) -> &Self::Bytes;
    /// The control word of the header at ring offset `offset` (a multiple of 16).
    fn ctl(&self, offset: usize) -> &AtomicU32;
}

impl<M: RingMem> RingMem for &M {
    type Bytes = M::Bytes;
    fn bytes(&self) -> &Self::Bytes {
        (**self).bytes()
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        (**self).ctl(offset)
    }
}

/// A ring for loom models: loom cells for the bytes, loom atomics for the words.
#[cfg(sccemu_loom)]
pub struct LoomRing {
    bytes: crate::protocol::payload::LoomBytes,
    ctl: Vec<AtomicU32>,
}

#[cfg(sccemu_loom)]
impl LoomRing {
    /// A zeroed ring of `cap` bytes (a multiple of [`HEADER`]), every control word 0.
    pub fn new(cap: usize) -> LoomRing {
        LoomRing {
            bytes: crate::protocol::payload::LoomBytes::new(cap),
            ctl: (0..cap / HEADER as usize).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

#[cfg(sccemu_loom)]
impl RingMem for LoomRing {
    type Bytes = crate::protocol::payload::LoomBytes;
    fn bytes(&self) -> &Self::Bytes {
        &self.bytes
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        &self.ctl[offset / HEADER as usize]
    }
}

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

    /// Sender: whether the reservation is far from fitting: more than a quarter of the
    /// ring must still be published before it does (a hint, for whether waiting for it
    /// awake is worth it). Off by one either way, its comparisons would only move where
    /// a sender stops waiting awake; the loom model `bounds_are_exact` holds it to
    /// "more than".
    pub fn far_from_fitting(&self, r: &Reservation) -> bool {
        // Relaxed: a hint; `fits` decides.
        let consumer = self.counters.consumer.load(Ordering::Relaxed);
        let short = r.pos.wrapping_add(r.len).wrapping_sub(consumer).wrapping_sub(self.cap());
        // Past half the counter space: it fits already (the subtraction wrapped).
        short > self.cap() / BELLS_PER_LAP && short < 1 << 31
    }

    /// Sender: counts itself among the senders that sleep until space frees up, as
    /// `ticketed` if it sleeps on the space bell of its reservation
    /// ([`Srb::space_bell`]) rather than only on its own doorbell. It need not ring
    /// the receiver: a receiver publishes what it consumed before it waits (module
    /// docs).
    pub fn add_space_waiter(&self, ticketed: bool) {
        // Relaxed: the waiter's SeqCst fence, before it sleeps, orders this increment
        // before its last check, and the receiver's fence after publishing orders its
        // publication before its load of the count (module docs).
        self.counters.space.waiters.fetch_add(if ticketed { TICKETED } else { 1 }, Ordering::Relaxed);
    }

    /// Sender: undoes [`Srb::add_space_waiter`] once it stops waiting for space.
    pub fn remove_space_waiter(&self, ticketed: bool) {
        self.counters.space.waiters.fetch_sub(if ticketed { TICKETED } else { 1 }, Ordering::Relaxed);
    }

    /// Sender: the bell to sleep on until reservation `r` fits: the receiver rings it
    /// when its publication makes reservations ending near `r`'s fit (module docs).
    pub fn space_bell(&self, r: &Reservation) -> &'a Doorbell {
        let granule = self.cap() / BELLS_PER_LAP;
        &self.counters.space.bells
            [((r.pos.wrapping_add(r.len).wrapping_sub(1) / granule) % SPACE_BELLS) as usize]
    }

    /// Sender: writes the fragment into a reservation that [`Srb::fits`], publishing
    /// the control word last. The caller then rings the receiver's doorbell.
    pub fn publish(&self, r: Reservation, header: &FragHeader, payload: &[u8]) {
        debug_assert_eq!(entry_len(payload.len() as u32), r.len);
        let cap = self.cap() as usize;
        let bytes = self.mem.bytes();
        let at = r.pos as usize % cap;
        let (p1, n1, n2) = split((at + HEADER as usize) % cap, payload.len(), cap);
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

    /// Receiver: whether an entry is published at `pos`, the consumer position (a reason
    /// to look: read it with [`Srb::peek`]).
    pub fn has_entry(&self, pos: u32) -> bool {
        // Relaxed: it only decides whether to look; `peek` loads the word again with
        // Acquire before any byte is read. (A waiter's watch evaluates it after its
        // SeqCst fence, which is what pairs with the sender's ring.)
        self.mem.ctl(pos as usize % self.cap() as usize).load(Ordering::Relaxed) != 0
    }

    /// Receiver: the entry at `pos`, the consumer position, if one is published. The
    /// receiver keeps its position itself ([`Entry::next`] after each release): it is
    /// the only writer of `consumer`, which it stores for the senders' benefit.
    pub fn peek(&self, pos: u32) -> Result<Option<Entry>, CorruptError> {
        let at = pos as usize % self.cap() as usize;
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
        let mut head = [0u8; 12];
        self.mem.bytes().read(at + 4, &mut head);
        let header = FragHeader {
            src: word(&head, 0),
            tag: word(&head, 4),
            total: word(&head, 8),
            len,
            first: ctl & FIRST != 0,
            kind: FragKind::of_word(ctl),
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
        let start = (e.pos as usize + HEADER as usize + offset) % cap;
        let (p1, n1, n2) = split(start, dst.len(), cap);
        let (a, b) = dst.split_at_mut(n1);
        self.mem.bytes().read(p1, a);
        self.mem.bytes().read(0, &mut b[..n2]);
    }

    /// Receiver: zeroes the entry; [`Srb::free_consumed`] later frees its bytes for
    /// senders.
    pub fn release(&self, e: Entry) {
        let cap = self.cap() as usize;
        let at = e.pos as usize % cap;
        // Relaxed: ordered before the Release publication of `consumer` in
        // `free_consumed`, which every sender that reuses these bytes synchronises with.
        self.mem.ctl(at).store(0, Ordering::Relaxed);
        let (p1, n1, n2) = split(at + 4, e.len as usize - 4, cap);
        self.mem.bytes().zero(p1, n1);
        self.mem.bytes().zero(0, n2);
    }

    /// Receiver, after a batch of releases up to its position `pos`: publishes `pos` to
    /// `consumer` if half the ring is unpublished since `published` (updated), or if
    /// senders wait for space and either the receiver `caught_up` (it found no entry at
    /// `pos`, so it is about to wait) or a quarter of the ring is unpublished; it rings
    /// the space bells of the reservations that now fit. Returns whether senders wait
    /// that sleep on their own doorbells only: the caller then rings them.
    pub fn free_consumed(&self, pos: u32, published: &mut u32, caught_up: bool) -> bool {
        if pos == *published {
            return false;
        }
        let unpublished = pos.wrapping_sub(*published);
        if unpublished >= self.cap() / 2 {
            // Its bell ring fences (see `publish_consumer`): the publication and the load
            // below form a Dekker pair with a sleeping sender's increment and fence
            // (module docs): either we see the sender and ring it, or its check after its
            // fence sees what we published.
            self.publish_consumer(pos, published, caught_up);
        }
        // Without a publication above, Relaxed may miss a new waiter: nothing is owed to
        // it yet that the next check, or the flush before this receiver sleeps, would
        // not publish (module docs).
        let waiting = self.counters.space.waiters.load(Ordering::Relaxed);
        // While the receiver drains, a quarter at a time: each publication then rings
        // the bells of whole quarters, whose waiters all fit (module docs). A tuning
        // threshold, safe off by one, held to "a whole quarter" by the loom model
        // `bounds_are_exact`.
        let due = caught_up || unpublished >= self.cap() / BELLS_PER_LAP;
        if waiting != 0 && pos != *published && due {
            self.publish_consumer(pos, published, caught_up);
        }
        waiting % TICKETED != 0
    }

    /// Receiver leaving messaging for a while (a barrier, an epoch): publishes what it
    /// consumed up to `pos` now rather than lazily. Returns whether senders wait: the
    /// caller then rings them.
    pub fn flush_consumed(&self, pos: u32, published: &mut u32) -> bool {
        if pos == *published {
            // Nothing consumed since the last publication: nothing to give a sender.
            return false;
        }
        // Its bell ring fences, as in `free_consumed`: either we see a sleeping sender
        // and ring it, or its check after its fence sees what we published.
        self.publish_consumer(pos, published, true);
        self.counters.space.waiters.load(Ordering::Relaxed) % TICKETED != 0
    }

    /// Publishes `pos` and rings the space bells of the quarters of reservation ends it
    /// completes, and with `trailing` (the receiver caught up, or is leaving) the one
    /// it covers only in part.
    fn publish_consumer(&self, pos: u32, published: &mut u32, trailing: bool) {
        let from = *published;
        // Release: our reads and zeroing happen-before a sender's Acquire fetch_or that
        // sees the new value (module docs). An RMW rather than a store, although only we
        // write it: every access to `consumer` is then an RMW, totally ordered, which is
        // also what lets loom relate our advances to the senders' `fetch_or`s.
        self.counters.consumer.swap(pos, Ordering::Release);
        *published = pos;
        // Reservations ending in (from + cap, pos + cap] fit now. Ring the bells of the
        // quarters of positions whose last end that range reaches: all their waiters fit.
        // A quarter reached only in part waits for the next publication, unless this is
        // the last for a while (`trailing`): a receiver that caught up will wait for
        // such a waiter's entry. Each ring, after our publishing RMW, is the Dekker pair
        // of a ticketed sender's count on the bell and its fence before it checks `fits`
        // (module docs). Every call rings at least one bell (its callers pass `trailing`
        // or publish a whole quarter or more), so the first ring's SeqCst fence
        // (`ring_after_rmw`) also orders the publication before the callers' load of
        // the waiter count: no separate fence.
        let granule = self.cap() / BELLS_PER_LAP;
        let start = from.wrapping_add(self.cap());
        let reach = start % granule + pos.wrapping_sub(from);
        let complete = reach / granule;
        let rung = (complete + u32::from(trailing && reach % granule != 0)).min(BELLS_PER_LAP + 1);
        debug_assert!(rung > 0, "a publication that rings no bell has no fence");
        for i in 0..rung {
            self.counters.space.bells[((start / granule + i) % SPACE_BELLS) as usize].ring_after_rmw();
        }
    }

    /// Receiver: whether senders wait for space that this receiver consumed up to `pos`
    /// but has not published since `published`: a reason to stop waiting and drain.
    pub fn owes_space(&self, pos: u32, published: u32) -> bool {
        // Relaxed: a waiter's fence, before it sleeps, orders this load (module docs).
        pos != published && self.counters.space.waiters.load(Ordering::Relaxed) != 0
    }
}
