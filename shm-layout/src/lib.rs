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
#![forbid(unsafe_code)]

use core::fmt;
use core::str::FromStr;

/// `"SCCEMU\0\x01"`, little-endian: the first word of every segment.
pub const MAGIC: u64 = u64::from_le_bytes(*b"SCCEMU\0\x01");
/// Bumped whenever a header field or a region moves, or a protocol word in the segment
/// changes its format (2: the barrier's count and generation share one word; 3: each
/// control slot holds its core's physical core ID and what it is blocked on; 4: a line
/// per core for the argument fingerprints of checking mode, and one for the summaries
/// of the objects it dropped without freeing them; 5: the heap starts and ends on a page,
/// a window's size table has an entry of two words per core, and virtual-time mode adds
/// a region).
pub const LAYOUT_VERSION: u32 = 5;

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
/// The SCC's message-passing buffer: 8 KiB per core.
pub const DEFAULT_MPB_BYTES: u32 = 8 * 1024;
/// Default per-core receive ring in shared DRAM.
pub const DEFAULT_RING_BYTES: u32 = 64 * 1024;
/// Default shared heap (windows); the memfd is sparse, so untouched pages cost nothing.
pub const DEFAULT_HEAP_BYTES: u64 = 256 * 1024 * 1024;
/// Largest shared heap a config may ask for.
pub const MAX_HEAP_BYTES: u64 = 64 * 1024 * 1024 * 1024;

/// Shape of the on-chip mesh: `cols x rows` tiles with `cores_per_tile` cores each.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mesh {
    pub cols: u32,
    pub rows: u32,
    pub cores_per_tile: u32,
}

impl Mesh {
    /// The SCC: 6 x 4 tiles, 2 cores per tile.
    pub const SCC: Mesh = Mesh { cols: 6, rows: 4, cores_per_tile: 2 };

    /// How many cores the mesh holds.
    pub fn capacity(&self) -> u64 {
        u64::from(self.cols) * u64::from(self.rows) * u64::from(self.cores_per_tile)
    }

    /// The SCC's mesh for up to 48 cores; for larger jobs, the SCC's 6 columns and
    /// 2 cores per tile with as many rows as it takes.
    pub fn for_cores(cores: u32) -> Mesh {
        let per_row = Self::SCC.cols * Self::SCC.cores_per_tile;
        Mesh { rows: Self::SCC.rows.max(cores.div_ceil(per_row)), ..Self::SCC }
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.cols, self.rows, self.cores_per_tile)
    }
}

/// `"CxRxK"`, as `sccrun --mesh 6x4x2` takes it.
impl FromStr for Mesh {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ConfigError::BadMesh(s.to_owned());
        let mut parts = s.split(['x', 'X']).map(|p| p.trim().parse::<u32>().map_err(|_| bad()));
        let mesh = match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(c), Some(r), Some(k), None) => Mesh { cols: c?, rows: r?, cores_per_tile: k? },
            _ => return Err(bad()),
        };
        if mesh.capacity() == 0 {
            return Err(bad());
        }
        Ok(mesh)
    }
}

/// How blocked calls wait, agreed by every core of a job (see `sccemu::waiter`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitPolicy {
    /// Spin, then yield, for a short budget; then sleep on the futex.
    Adaptive = 0,
    /// Spin and yield, never sleep: for dedicated CPUs only.
    Spin = 1,
    /// Sleep on the futex after a very short spin: for oversubscribed jobs.
    Block = 2,
}

impl WaitPolicy {
    pub fn from_u32(v: u32) -> Option<WaitPolicy> {
        [Self::Adaptive, Self::Spin, Self::Block].into_iter().find(|p| *p as u32 == v)
    }
}

/// Two-sided channel protocol of a job (see `sccemu`'s messaging modules).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    /// RCKMPI style: the MPB split into one slot per sender, DRAM for large messages.
    PerPeer = 0,
    /// Post-K style: one shared receive buffer per core, reserved with fetch-add.
    Srb = 1,
}

impl ChannelKind {
    pub fn from_u32(v: u32) -> Option<ChannelKind> {
        [Self::PerPeer, Self::Srb].into_iter().find(|p| *p as u32 == v)
    }

    /// The name `sccrun --channel` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::PerPeer => "perpeer",
            Self::Srb => "srb",
        }
    }
}

impl fmt::Display for ChannelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `"perpeer"` or `"srb"`, as `sccrun --channel` takes it.
impl FromStr for ChannelKind {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::PerPeer, Self::Srb]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
            .ok_or(ConfigError::UnknownPolicy)
    }
}

/// A job's configuration, recorded in the header so that every core agrees on it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub cores: u32,
    pub mpb_bytes: u32,
    pub mesh: Mesh,
    pub ring_bytes: u32,
    /// A [`WaitPolicy`] as `u32`.
    pub wait: u32,
    /// A [`ChannelKind`] as `u32`.
    pub channel: u32,
    /// Nonzero in virtual-time mode (`sccrun --timing`): the layout then holds the
    /// [`Layout::timing`] region.
    pub timing: u32,
    pub heap_bytes: u64,
}

impl Config {
    /// The SCC's defaults for a job of `cores` cores.
    pub fn new(cores: u32) -> Config {
        Config {
            cores,
            mpb_bytes: DEFAULT_MPB_BYTES,
            mesh: Mesh::for_cores(cores),
            ring_bytes: DEFAULT_RING_BYTES,
            wait: WaitPolicy::Adaptive as u32,
            channel: ChannelKind::Srb as u32,
            timing: 0,
            heap_bytes: DEFAULT_HEAP_BYTES,
        }
    }

    /// Checks every field; [`layout`] calls this first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores == 0 || self.cores > MAX_CORES {
            return Err(ConfigError::Cores { cores: self.cores, max: MAX_CORES });
        }
        if u64::from(self.cores) > self.mesh.capacity() {
            return Err(ConfigError::MeshTooSmall { cores: self.cores, mesh: self.mesh });
        }
        if self.mpb_bytes < 512 || self.mpb_bytes > 1 << 20 || self.mpb_bytes % 64 != 0 {
            return Err(ConfigError::MpbBytes(self.mpb_bytes));
        }
        if self.ring_bytes < 1024 || self.ring_bytes > 1 << 30 || !self.ring_bytes.is_power_of_two() {
            return Err(ConfigError::RingBytes(self.ring_bytes));
        }
        if self.heap_bytes > MAX_HEAP_BYTES {
            return Err(ConfigError::HeapBytes(self.heap_bytes));
        }
        if WaitPolicy::from_u32(self.wait).is_none() || ChannelKind::from_u32(self.channel).is_none() {
            return Err(ConfigError::UnknownPolicy);
        }
        Ok(())
    }
}

/// Why a [`Config`] has no layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    Cores { cores: u32, max: u32 },
    MeshTooSmall { cores: u32, mesh: Mesh },
    BadMesh(String),
    MpbBytes(u32),
    RingBytes(u32),
    HeapBytes(u64),
    UnknownPolicy,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cores { cores, max } => write!(f, "core count {cores} is outside 1..={max}"),
            Self::MeshTooSmall { cores, mesh } => {
                write!(f, "{cores} cores do not fit on a {mesh} mesh ({} cores)", mesh.capacity())
            }
            Self::BadMesh(s) => write!(f, "mesh {s:?} is not COLSxROWSxCORES_PER_TILE with nonzero parts"),
            Self::MpbBytes(b) => write!(f, "MPB size {b} is not a multiple of 64 in 512..=1048576"),
            Self::RingBytes(b) => write!(f, "ring size {b} is not a power of two in 1024..=2^30"),
            Self::HeapBytes(b) => write!(f, "heap size {b} exceeds {MAX_HEAP_BYTES}"),
            Self::UnknownPolicy => write!(f, "unknown wait policy or channel kind"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Job state values of [`JobWords::state`].
pub mod job_state {
    pub const RUNNING: u32 = 0;
    pub const ABORTING: u32 = 1;
    /// The first failure is writing its rank and reason; readers see `RUNNING` until
    /// the state becomes `ABORTING`.
    pub const RECORDING: u32 = 2;
}

/// Why a job aborts ([`JobWords::reason`]); `detail` carries the code or signal.
pub mod abort_reason {
    pub const NONE: u32 = 0;
    /// A rank exited with a nonzero status (`detail`).
    pub const EXITED: u32 = 1;
    /// A rank was killed by a signal (`detail`).
    pub const SIGNALED: u32 = 2;
    /// A rank exited with status 0 without finalizing.
    pub const NO_FINALIZE: u32 = 3;
    /// A rank called abort with a code (`detail`).
    pub const USER_ABORT: u32 = 4;
    /// The launcher was interrupted by a signal (`detail`).
    pub const INTERRUPTED: u32 = 5;
    /// A rank found the shared state corrupted and stopped the job rather than trust it.
    pub const CORRUPTED: u32 = 6;
    /// Every live rank was blocked waiting for another, with no progress.
    pub const DEADLOCK: u32 = 7;
}

/// The header's mutable words, on a line of their own. `sccemu` views each field as an
/// atomic; nothing else writes them.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobWords {
    /// [`job_state`]: running, or aborting (never goes back).
    pub state: u32,
    /// The rank whose failure aborted the job (`u32::MAX` for none).
    pub failed_rank: u32,
    /// An [`abort_reason`].
    pub reason: u32,
    /// Exit code or signal number behind `reason`.
    pub detail: u32,
    /// Collective-allocation cursor: bytes of the shared heap handed out so far.
    pub alloc_cursor: u64,
}

/// The first bytes of every segment. The launcher writes it before any core starts and
/// only `job` changes afterwards.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub magic: u64,
    pub version: u32,
    pub header_bytes: u32,
    pub total_bytes: u64,
    /// `CLOCK_MONOTONIC` at launch, in nanoseconds: the zero of every core's clock.
    pub start_ns: u64,
    pub config: Config,
    pub job: JobWords,
}

impl Header {
    pub fn new(config: Config, layout: &Layout, start_ns: u64) -> Header {
        Header {
            magic: MAGIC,
            version: LAYOUT_VERSION,
            header_bytes: size_of::<Header>() as u32,
            total_bytes: layout.total as u64,
            start_ns,
            config,
            job: JobWords { failed_rank: u32::MAX, ..JobWords::default() },
        }
    }
}

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
    pub fn regions(&self) -> [(&'static str, Region); 11] {
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
        total: heap.end(),
    })
}

#[cfg(test)]
mod tests;
