//! A core's virtual clock, and how operations move it.
//!
//! In virtual-time mode each process (core) has one [`Clock`], in picoseconds of
//! emulated time. Three things move it, and each is accounted for separately:
//! - **compute**: when an operation begins ([`Clock::begin`]), the calling thread's CPU
//!   time since its previous operation ended, times the chip's host-to-target factor
//!   and the tile's frequency (or not at all, as the chip's compute source says);
//! - **communication**: the modelled cost of what the operation moves
//!   ([`Op::charge`], costs from `chip`);
//! - **waiting**: observing a shared word another core wrote moves the clock to at
//!   least the writer's time stamp ([`Op::observe`]); the jump is the wait, the read
//!   itself communication. CPU time spent waiting on the host never counts.
//!
//! Stamps: every shared word another core can observe and wait for carries, in a
//! stamp word beside it, the virtual time of the write it sees. Writers store the
//! stamp *before* the protocol's own Release (publishing) store, readers load it
//! *after* the protocol's Acquire load that saw the write, so the protocol's
//! happens-before edge orders the stamp too and the stamp words need only Relaxed
//! (writers use `fetch_max`, so that the stamp of a word written by several cores only
//! grows).
//!
//! The clock is a process global, with its own mapping of the segment (so it outlives
//! any `Core`), published to the core's control slot after every operation, which is
//! where `sccrun` reads each core's times at the end of the job.

use std::cell::Cell;
use std::sync::Mutex;

use shm_layout::TimingBlock;

use crate::segment::mapping::Segment;
use crate::sync::{AtomicU64, Ordering};
use crate::timing::chip::{Chip, ComputeSource};
use crate::timing::meter::Meter;
use crate::timing::trace::{Category, Trace};

/// A virtual time, in picoseconds.
pub type Ps = u64;

/// One core's virtual clock (module docs).
pub struct Clock {
    chip: Chip,
    seg: Segment,
    rank: u32,
    tile: [u32; 2],
    tile_index: usize,
    /// Every rank's tile (ranks play the cores the launcher placed them on).
    tiles: Vec<[u32; 2]>,
    /// How compute is measured (`meter`).
    meter: Meter,
    now: AtomicU64,
    compute: AtomicU64,
    comm: AtomicU64,
    wait: AtomicU64,
    trace: Option<Mutex<Trace>>,
}

thread_local! {
    /// Operations open on the calling thread: one inside another (a flag write inside a
    /// send) is part of it, and only the outermost counts compute before it.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

impl Clock {
    /// The clock of core `rank` (physical core ID `core_id`) of the job mapped by
    /// `seg`, which has a timing region.
    pub(crate) fn new(chip: Chip, seg: Segment, rank: u32, trace: bool) -> Clock {
        let (meter, fallback) = Meter::new(chip.compute.source);
        if let Some(why) = fallback.filter(|_| rank == 0) {
            eprintln!("sccemu: virtual time: {why}");
        }
        // Relaxed: the launcher wrote the core IDs before starting any rank.
        let core_id = |r: u32| seg.slot(r).core_id.load(Ordering::Relaxed);
        let tiles: Vec<[u32; 2]> = (0..seg.config().cores).map(|r| chip.tile_of(core_id(r))).collect();
        let tile = tiles[rank as usize];
        let tile_index = (tile[0] + chip.mesh.cols * tile[1]) as usize;
        Clock {
            chip,
            seg,
            rank,
            tile,
            tile_index,
            tiles,
            meter,
            now: AtomicU64::new(0),
            compute: AtomicU64::new(0),
            comm: AtomicU64::new(0),
            wait: AtomicU64::new(0),
            trace: trace.then(|| Mutex::new(Trace::default())),
        }
    }

    /// Where compute time comes from (the chip's source, or CPU time where its
    /// instruction counter could not be opened).
    pub fn compute_source(&self) -> ComputeSource {
        self.meter.source()
    }

    /// This core's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The chip.
    pub fn chip(&self) -> &Chip {
        &self.chip
    }

    /// This core's tile `[x, y]`.
    pub fn tile(&self) -> [u32; 2] {
        self.tile
    }

    /// Virtual now.
    pub fn now(&self) -> Ps {
        self.now.load(Ordering::Relaxed)
    }

    /// (compute, communication, waiting) so far.
    pub fn breakdown(&self) -> (Ps, Ps, Ps) {
        (self.compute.load(Ordering::Relaxed), self.comm.load(Ordering::Relaxed), self.wait.load(Ordering::Relaxed))
    }

    fn tile_word(&self, tile: usize) -> &AtomicU64 {
        let layout = self.seg.layout();
        crate::segment::view::atomic_u64_at(self.seg.bytes(layout.timing), layout.timing_tile(tile) - layout.timing.offset)
            .expect("tile words are aligned")
    }

    /// The frequency divider of this core's tile now.
    pub fn divider(&self) -> u32 {
        // Relaxed: a model parameter, not a synchronisation.
        match self.tile_word(self.tile_index).load(Ordering::Relaxed) {
            0 => self.chip.clocks.divider,
            d => d as u32,
        }
    }

    /// Sets the frequency divider of tile `tile` (RCCE's power API).
    pub fn set_divider(&self, tile: usize, divider: u32) {
        let tiles = (self.chip.mesh.cols * self.chip.mesh.rows) as usize;
        if tile < tiles.min((self.seg.config().mesh.cols * self.seg.config().mesh.rows) as usize) {
            self.tile_word(tile).store(u64::from(divider), Ordering::Relaxed);
        }
    }

    /// The stamp word of byte `offset` of core `rank`'s MPB (flags and MPB lines).
    pub fn mpb_stamp(&self, rank: u32, offset: usize) -> Option<&AtomicU64> {
        let config = self.seg.config();
        if rank >= config.cores || offset >= config.mpb_bytes as usize {
            return None;
        }
        self.block_word(rank, TimingBlock::new(config).mpb_stamps + 8 * offset)
    }

    /// The stamp word of the fragment at position `pos` of rank `owner`'s receive ring.
    pub fn ring_stamp(&self, owner: u32, pos: u32) -> Option<&AtomicU64> {
        ring_stamp(&self.seg, owner, pos)
    }

    /// The stamp word of the fragment in `src`'s per-peer slot to rank `owner`.
    pub fn pair_stamp(&self, owner: u32, src: u32) -> Option<&AtomicU64> {
        pair_stamp(&self.seg, owner, src)
    }

    /// The stamp word of core `rank`'s arrival at the job-wide barrier of `parity`.
    pub fn barrier_stamp(&self, rank: u32, parity: u32) -> Option<&AtomicU64> {
        barrier_stamp(&self.seg, rank, parity)
    }

    fn block_word(&self, rank: u32, at: usize) -> Option<&AtomicU64> {
        block_word(&self.seg, rank, at)
    }

    /// The tile of rank `rank` (this core's for a rank out of range).
    fn tile_of_rank(&self, rank: u32) -> [u32; 2] {
        self.tiles.get(rank as usize).copied().unwrap_or(self.tile)
    }

    /// One MPB line between this core and rank `owner`'s MPB.
    pub fn mpb_line_ps(&self, owner: u32) -> Ps {
        self.chip.mpb_line_ps(self.tile, self.tile_of_rank(owner), self.divider())
    }

    /// One DRAM line between this core and memory near rank `owner` (its part of a
    /// window, its receive ring): through the controller nearest to `owner`.
    pub fn dram_line_ps(&self, owner: u32) -> Ps {
        let controller = self.chip.controller_of(self.tile_of_rank(owner));
        self.chip.dram_line_ps(self.tile, controller, self.divider())
    }

    /// One line of a private buffer of `buffer_bytes` (see `chip::CacheCosts`).
    pub fn private_line_ps(&self, buffer_bytes: usize) -> Ps {
        self.chip.private_line_ps(self.tile, buffer_bytes, self.divider())
    }

    /// A test-and-set register access on rank `owner`'s tile.
    pub fn test_and_set_ps(&self, owner: u32) -> Ps {
        let hops = Chip::hops(self.tile, self.tile_of_rank(owner));
        self.chip.core_ps(u64::from(self.chip.ops.test_and_set_core_cycles), self.divider())
            + self.chip.mesh_ps(2 * hops * u64::from(self.chip.mpb.hop_mesh_cycles))
    }

    /// The software of one library call.
    pub fn call_ps(&self) -> Ps {
        self.chip.core_ps(u64::from(self.chip.ops.call_core_cycles), self.divider())
    }

    /// Lines of `bytes` bytes.
    pub fn lines(&self, bytes: usize) -> u64 {
        self.chip.lines(bytes)
    }

    /// Starts an operation on the calling thread: the outermost charges the compute
    /// since the thread's last one (module docs). End it with [`Op`]'s drop.
    pub fn begin(&self, category: Category, name: &'static str) -> Op<'_> {
        let depth = DEPTH.get();
        DEPTH.set(depth + 1);
        if depth == 0 {
            let ps = self.meter.since_last(&self.chip, self.divider());
            if ps > 0 {
                let start = self.now.fetch_add(ps, Ordering::Relaxed);
                self.compute.fetch_add(ps, Ordering::Relaxed);
                self.record(Category::Compute, "compute", start, ps, None);
            }
        }
        Op { clock: self, category, name, start: self.now(), flow: None }
    }

    /// Adds `ps` of communication.
    fn charge(&self, ps: Ps) {
        self.now.fetch_add(ps, Ordering::Relaxed);
        self.comm.fetch_add(ps, Ordering::Relaxed);
    }

    /// Moves the clock to at least `t`; the jump is waiting.
    fn reach(&self, t: Ps) {
        let before = self.now.fetch_max(t, Ordering::Relaxed);
        if t > before {
            self.wait.fetch_add(t - before, Ordering::Relaxed);
        }
    }

    fn record(&self, category: Category, name: &'static str, start: Ps, dur: Ps, flow: Option<(u64, bool)>) {
        if let Some(trace) = &self.trace {
            trace.lock().unwrap_or_else(|e| e.into_inner()).push(category, name, start, dur, flow);
        }
    }

    /// Sets how much of this core's operations the trace records from now on
    /// (`trace`'s module docs); false when no trace is kept.
    pub fn set_trace_level(&self, level: u32) -> bool {
        let Some(trace) = &self.trace else { return false };
        trace.lock().unwrap_or_else(|e| e.into_inner()).set_level(level, self.now());
        true
    }

    /// Publishes the times to this core's control slot (for `sccrun`'s report).
    fn publish(&self) {
        let slot = self.seg.slot(self.rank);
        let (compute, comm, wait) = self.breakdown();
        for (word, value) in slot.vtime.iter().zip([self.now(), compute, comm, wait]) {
            // Relaxed: read by the launcher after the process ended.
            word.store(value, Ordering::Relaxed);
        }
    }

    /// The trace's events so far, as Chrome trace-event JSON objects (one a line).
    pub fn trace_lines(&self) -> Option<String> {
        self.trace.as_ref().map(|t| t.lock().unwrap_or_else(|e| e.into_inner()).json_lines(self.rank))
    }
}

/// An operation in progress on a [`Clock`] (see [`Clock::begin`]).
pub struct Op<'c> {
    clock: &'c Clock,
    category: Category,
    name: &'static str,
    start: Ps,
    flow: Option<(u64, bool)>,
}

impl Op<'_> {
    /// The clock.
    pub fn clock(&self) -> &Clock {
        self.clock
    }

    /// Adds `ps` of communication cost.
    pub fn charge(&self, ps: Ps) {
        self.clock.charge(ps);
    }

    /// Observes `stamp` (a shared word's write time, module docs) by a read that takes
    /// `latency`: the read ends `latency` after both the write and now; the wait for
    /// the write is the jump (waiting), the read is communication.
    pub fn observe(&self, stamp: Ps, latency: Ps) {
        self.clock.reach(stamp);
        self.clock.charge(latency);
    }

    /// Observes the stamp in `word` by a read that takes `latency`.
    pub fn observe_word(&self, word: Option<&AtomicU64>, latency: Ps) {
        // Relaxed: ordered by the protocol's Acquire (module docs).
        self.observe(word.map_or(0, |w| w.load(Ordering::Relaxed)), latency);
    }

    /// Stamps `word` with now (the write it accompanies must follow, with Release).
    pub fn stamp(&self, word: Option<&AtomicU64>) {
        if let Some(w) = word {
            // Relaxed: published by the protocol's Release store that follows.
            w.fetch_max(self.clock.now(), Ordering::Relaxed);
        }
    }

    /// Marks the operation as the start (`true`) or end of message `id` (a flow arrow
    /// in the trace).
    pub fn flow(&mut self, id: u64, starts: bool) {
        self.flow = Some((id, starts));
    }
}

impl Drop for Op<'_> {
    fn drop(&mut self) {
        let c = self.clock;
        let end = c.now();
        c.record(self.category, self.name, self.start, end - self.start.min(end), self.flow);
        let depth = DEPTH.get().saturating_sub(1);
        DEPTH.set(depth);
        if depth == 0 {
            c.publish();
            c.meter.mark();
        }
    }
}

/// The stamp word of the fragment at position `pos` of rank `owner`'s receive ring in
/// `seg` (which has a timing region): [`Clock::ring_stamp`], for a gateway, which has
/// no clock of its own.
pub(crate) fn ring_stamp(seg: &Segment, owner: u32, pos: u32) -> Option<&AtomicU64> {
    let config = seg.config();
    let granule = (pos as usize / 16) % (config.ring_bytes as usize / 16);
    (owner < config.cores).then(|| block_word(seg, owner, TimingBlock::new(config).ring_stamps + 8 * granule))?
}

/// [`Clock::pair_stamp`] in `seg`, for a gateway.
pub(crate) fn pair_stamp(seg: &Segment, owner: u32, src: u32) -> Option<&AtomicU64> {
    let config = seg.config();
    let at = TimingBlock::new(config).pair_stamps + 8 * src as usize;
    (owner < config.cores && src < config.cores).then(|| block_word(seg, owner, at))?
}

/// [`Clock::mpb_stamp`] in `seg`, for a gateway.
pub(crate) fn mpb_stamp(seg: &Segment, rank: u32, offset: usize) -> Option<&AtomicU64> {
    let config = seg.config();
    let at = TimingBlock::new(config).mpb_stamps + 8 * offset;
    (rank < config.cores && offset < config.mpb_bytes as usize).then(|| block_word(seg, rank, at))?
}

/// [`Clock::barrier_stamp`] in `seg`, for a gateway.
pub(crate) fn barrier_stamp(seg: &Segment, rank: u32, parity: u32) -> Option<&AtomicU64> {
    let config = seg.config();
    let at = TimingBlock::new(config).barrier_stamps + 8 * (parity % 2) as usize;
    (rank < config.cores).then(|| block_word(seg, rank, at)).flatten()
}

fn block_word(seg: &Segment, rank: u32, at: usize) -> Option<&AtomicU64> {
    let layout = seg.layout();
    let offset = layout.timing_block(seg.config(), rank as usize) + at - layout.timing.offset;
    crate::segment::view::atomic_u64_at(seg.bytes(layout.timing), offset)
}
