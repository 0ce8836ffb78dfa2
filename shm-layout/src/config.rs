//! A job's configuration and its parts (mesh, wait policy, channel kind), with their
//! textual forms for `sccrun` and their validation: the only input of the layout, so
//! everything that may be wrong with a job's shape is refused here, before any memory
//! exists.

use core::fmt;
use core::str::FromStr;

use crate::{
    DEFAULT_HEAP_BYTES, DEFAULT_MPB_BYTES, DEFAULT_RING_BYTES, MAX_CORES, MAX_HEAP_BYTES, MAX_JOB_CORES,
};

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
    /// [`Layout::timing`](crate::Layout::timing) region.
    pub timing: u32,
    /// The first rank this segment's node runs, when the job spans several nodes
    /// (`sccemu::job::node`): the segment is laid out for all [`Config::cores`], but
    /// only ranks `node_first..node_first + node_cores` attach to it.
    pub node_first: u32,
    /// How many ranks this segment's node runs; 0 (the default) for the whole job on
    /// one node.
    pub node_cores: u32,
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
            node_first: 0,
            node_cores: 0,
            heap_bytes: DEFAULT_HEAP_BYTES,
        }
    }

    /// Checks every field; [`layout`](crate::layout) calls this first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let max = if self.node_cores == 0 { MAX_CORES } else { MAX_JOB_CORES };
        if self.cores == 0 || self.cores > max {
            return Err(ConfigError::Cores { cores: self.cores, max });
        }
        if self.node_cores > MAX_CORES {
            return Err(ConfigError::Cores { cores: self.node_cores, max: MAX_CORES });
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
        if self.node_cores != 0
            && u64::from(self.node_first) + u64::from(self.node_cores) > u64::from(self.cores)
        {
            return Err(ConfigError::NodeBlock {
                first: self.node_first,
                count: self.node_cores,
                cores: self.cores,
            });
        }
        Ok(())
    }

    /// Whether the job spans several nodes, this segment running only some of its ranks.
    pub fn spans_nodes(&self) -> bool {
        self.node_cores != 0 && self.node_cores != self.cores
    }

    /// Whether this segment's node runs `rank` (every rank, on one node).
    pub fn is_local(&self, rank: u32) -> bool {
        match self.node_cores {
            0 => rank < self.cores,
            count => rank.wrapping_sub(self.node_first) < count,
        }
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
    NodeBlock { first: u32, count: u32, cores: u32 },
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
            Self::NodeBlock { first, count, cores } => {
                write!(f, "node block of {count} ranks from rank {first} does not fit a job of {cores}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}
