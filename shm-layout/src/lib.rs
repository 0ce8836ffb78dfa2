//! The layout of an sccemu job's shared segment, as data.
//!
//! A job is one segment (a sealed memfd) that every core maps. This crate says where
//! everything in it lives. It holds the job's [`Config`], the versioned `#[repr(C)]`
//! [`Header`] that opens the segment, and one pure function, [`layout`], that turns a
//! config into the offset and size of every region. It does no I/O and makes no OS call;
//! the runtime (`sccemu`) places its atomic views at the offsets given here and nowhere
//! else.
//!
//! Invariants, checked by the tests (including a proptest over random configs):
//! - regions never overlap and appear in the order of [`Layout::regions`];
//! - every region, and every per-core element of a strided region, starts on a
//!   [`LINE`] (128-byte) boundary, so one core's hot words never share a cache line,
//!   nor an adjacent-line prefetch pair, with another core's;
//! - [`Layout::total`] is the end of the last region.
//!
//! The job's settings are `config`; the segment's header and the job-wide words in it
//! are `header`; this file holds the sizes and the layout itself.

#![forbid(unsafe_code)]

mod config;
mod header;

pub use config::{ChannelKind, Config, ConfigError, Mesh, WaitPolicy};
pub use header::{Header, JobWords, LAYOUT_VERSION, MAGIC, abort_reason, job_state};

/// Bytes of a page: the heap starts and ends on one, so that a core can map its own
/// pages onto heap pages (adopting private memory into the segment).
pub const PAGE: usize = 4096;
/// Alignment of every region: a 64-byte cache line and its adjacent-line prefetch partner.
pub const LINE: usize = 128;
/// Bytes of one core's control slot (doorbell; pid, state, core ID and wait mark; see
/// `sccemu::segment`).
pub const SLOT_BYTES: usize = 2 * LINE;
/// Bytes of the job-wide synchronisation area (the world barrier).
pub const SYNC_BYTES: usize = 2 * LINE;
/// Bytes of one core's checking-mode slot: the fingerprints of its arguments to
/// job-wide collective calls, two of them (used by call parity; see `sccemu::protocol::agree`).
pub const CHECK_BYTES: usize = LINE;
/// Bytes of one core's orphan slot: summaries of the windows it dropped without
/// freeing them, compared across cores before they are reclaimed (two of them, by
/// call parity; see `sccemu::segment::reclaim`).
pub const ORPHAN_BYTES: usize = LINE;
/// Bytes of the shared heap allocator's state: a lock line, then its free list.
pub const ALLOCATOR_BYTES: usize = 16 * 1024;
/// Entries in the window table; each describes one live collective window.
pub const WINDOW_TABLE_ENTRIES: usize = 64;
/// Bytes of one window-table entry.
pub const WINDOW_ENTRY_BYTES: usize = LINE;
/// The largest job. At 4096 cores the segment is 548 MiB of address space (sparse:
/// untouched pages cost nothing) and a job starts, meets and ends in seconds on two CPUs;
/// past it, each process's own start-up (exec, the dynamic loader) dominates.
pub const MAX_CORES: u32 = 4096;
/// The largest job over several nodes (`Config::node_cores`), each node running at most
/// [`MAX_CORES`] of its ranks. Every node's segment is laid out for the whole job:
/// at 8192 cores, 1.1 GiB of address space, sparse.
pub const MAX_JOB_CORES: u32 = 16384;
/// The SCC's message-passing buffer: 8 KiB per core.
pub const DEFAULT_MPB_BYTES: u32 = 8 * 1024;
/// Default per-core receive ring in shared DRAM.
pub const DEFAULT_RING_BYTES: u32 = 64 * 1024;
/// Bytes of a node's request channel when the job spans nodes: the counters of a ring
/// ([`REQUEST_COUNTER_BYTES`]), then the ring ([`REQUEST_RING_BYTES`]). A job on one
/// node has none.
pub const REQUEST_CHANNEL_BYTES: usize = REQUEST_COUNTER_BYTES + REQUEST_RING_BYTES;
/// Bytes of the request channel's ring counters (`sccemu`'s SRB counters).
pub const REQUEST_COUNTER_BYTES: usize = 5 * LINE;
/// Bytes of the request channel's ring (a power of two).
pub const REQUEST_RING_BYTES: usize = 64 * 1024;
/// Default shared heap (windows); the memfd is sparse, so untouched pages cost nothing.
pub const DEFAULT_HEAP_BYTES: u64 = 256 * 1024 * 1024;
/// Largest shared heap a config may ask for.
pub const MAX_HEAP_BYTES: u64 = 64 * 1024 * 1024 * 1024;

/// A contiguous byte range of the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub offset: usize,
    pub len: usize,
}

impl Region {
    pub fn end(&self) -> usize {
        self.offset + self.len
    }
}

/// `count` equal elements, `stride` bytes apart, each `elem_len` bytes long: one per core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerCore {
    pub offset: usize,
    pub stride: usize,
    pub elem_len: usize,
    pub count: usize,
}

impl PerCore {
    /// The element of core `rank`, or `None` past the last core.
    pub fn get(&self, rank: usize) -> Option<Region> {
        (rank < self.count).then(|| Region { offset: self.offset + rank * self.stride, len: self.elem_len })
    }

    pub fn region(&self) -> Region {
        Region { offset: self.offset, len: self.stride * self.count }
    }
}

/// Where every region of a segment lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub header: Region,
    /// The world barrier and other job-wide synchronisation words.
    pub sync: Region,
    /// The shared heap allocator (lock and free list; see `sccemu::heap`).
    pub allocator: Region,
    /// Per-core control slots: doorbell, pid, state.
    pub slots: PerCore,
    /// Per-core checking-mode slots: argument fingerprints of job-wide collectives.
    pub checks: PerCore,
    /// Per-core orphan slots: summaries of dropped, unfreed windows.
    pub orphans: PerCore,
    /// Per-core message-passing buffers.
    pub mpbs: PerCore,
    /// Per-core receive rings in shared DRAM.
    pub rings: PerCore,
    pub window_table: Region,
    /// Virtual-time state (empty unless [`Config::timing`]): a word per tile (its
    /// clock, see `sccemu::timing`), then per core a [`TimingBlock`].
    pub timing: Region,
    /// The shared heap that windows and DRAM channels come from.
    pub heap: Region,
    /// The node's request channel (empty unless the job spans nodes): the window and
    /// MPB requests its ranks send to other nodes, which its gateway drains (see
    /// `sccemu::rma::remote::channel`). After the heap, so that whether a segment has
    /// one moves nothing else.
    pub requests: Region,
    pub total: usize,
}

/// Where things are in one core's block of the [`Layout::timing`] region: the
/// virtual-time stamps of the shared words that core owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimingBlock {
    /// A stamp (`u64`) per byte of the core's MPB, from the block's start.
    pub mpb_stamps: usize,
    /// A stamp per 16-byte granule of the core's receive ring (the fragment that
    /// starts there).
    pub ring_stamps: usize,
    /// A stamp per sender (the fragment in its per-peer slot to this core).
    pub pair_stamps: usize,
    /// Stamps of the core's arrivals at job-wide barriers, one per barrier parity.
    pub barrier_stamps: usize,
    /// Bytes of the block.
    pub bytes: usize,
}

impl TimingBlock {
    /// The block of a core of `config`'s job.
    pub const fn new(config: &Config) -> TimingBlock {
        let ring_stamps = config.mpb_bytes as usize * 8;
        let pair_stamps = ring_stamps + line_up(config.ring_bytes as usize / 16 * 8);
        let barrier_stamps = pair_stamps + line_up(config.cores as usize * 8);
        TimingBlock { mpb_stamps: 0, ring_stamps, pair_stamps, barrier_stamps, bytes: barrier_stamps + LINE }
    }
}

impl Layout {
    /// The offset of tile `tile`'s word in the timing region, and of core `rank`'s
    /// [`TimingBlock`] (both from the segment's start), for a job of `cores` cores on
    /// `tiles` tiles.
    pub fn timing_tile(&self, tile: usize) -> usize {
        self.timing.offset + 8 * tile
    }

    /// See [`Layout::timing_tile`].
    pub fn timing_block(&self, config: &Config, rank: usize) -> usize {
        let tiles = (config.mesh.cols * config.mesh.rows) as usize;
        self.timing.offset + line_up(8 * tiles) + rank * TimingBlock::new(config).bytes
    }
}

impl Layout {
    /// Every region in segment order, with its name.
    pub fn regions(&self) -> [(&'static str, Region); 12] {
        [
            ("header", self.header),
            ("sync", self.sync),
            ("allocator", self.allocator),
            ("slots", self.slots.region()),
            ("checks", self.checks.region()),
            ("orphans", self.orphans.region()),
            ("mpbs", self.mpbs.region()),
            ("rings", self.rings.region()),
            ("window_table", self.window_table),
            ("timing", self.timing),
            ("heap", self.heap),
            ("requests", self.requests),
        ]
    }
}

const fn line_up(n: usize) -> usize {
    n.div_ceil(LINE) * LINE
}

/// Lays out a segment for `config`. Pure: the same config always gives the same layout.
pub fn layout(config: &Config) -> Result<Layout, ConfigError> {
    config.validate()?;
    let cores = config.cores as usize;
    let mut cursor = 0usize;
    let mut region = |len: usize| {
        let r = Region { offset: cursor, len };
        cursor += line_up(len);
        r
    };
    let header = region(size_of::<Header>());
    let sync = region(SYNC_BYTES);
    let allocator = region(ALLOCATOR_BYTES);
    let mut per_core = |elem_len: usize| {
        let stride = line_up(elem_len);
        let whole = region(stride * cores);
        PerCore { offset: whole.offset, stride, elem_len, count: cores }
    };
    let slots = per_core(SLOT_BYTES);
    let checks = per_core(CHECK_BYTES);
    let orphans = per_core(ORPHAN_BYTES);
    let mpbs = per_core(config.mpb_bytes as usize);
    let rings = per_core(config.ring_bytes as usize);
    let window_table = region(WINDOW_TABLE_ENTRIES * WINDOW_ENTRY_BYTES);
    let timing_bytes = match config.timing {
        0 => 0,
        _ => {
            let tiles = (config.mesh.cols * config.mesh.rows) as usize;
            line_up(8 * tiles) + cores * TimingBlock::new(config).bytes
        }
    };
    let timing = region(timing_bytes);
    // Whole pages, from a page boundary (see `PAGE`).
    let heap = Region {
        offset: cursor.next_multiple_of(PAGE),
        len: (config.heap_bytes as usize).next_multiple_of(PAGE),
    };
    // Last, so that everything before lies at the same offsets in every segment of a job
    // (windows and MPBs are addressed by offset across nodes).
    let requests =
        Region { offset: heap.end(), len: if config.spans_nodes() { REQUEST_CHANNEL_BYTES } else { 0 } };
    Ok(Layout {
        header,
        sync,
        allocator,
        slots,
        checks,
        orphans,
        mpbs,
        rings,
        window_table,
        timing,
        heap,
        requests,
        total: requests.end(),
    })
}

#[cfg(test)]
mod tests;
