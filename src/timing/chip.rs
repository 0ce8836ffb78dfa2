//! The chip description: the mesh, the clocks, and what each memory operation costs.
//!
//! [`Chip::default`] is Intel's SCC as sccemu models it; [`Chip::from_toml`] reads a
//! user's description (`sccrun --timing scc=chip.toml`), any field left out keeping
//! the SCC's value. Every number is an input to calibrate, not a truth: the sources of
//! the defaults are in the comments below and in `docs/VIRTUAL_TIME.md`, which also
//! says how each was checked against RCCE's published figures.
//!
//! Costs are in picoseconds. A cost in core cycles is paid at the issuing core's clock,
//! which is its tile's: `1600 MHz / divider` (the SCC's frequency dividers, changed by
//! RCCE's power API); mesh and memory cycles at their own clocks. Distances are router
//! hops under XY routing.

use serde::{Deserialize, Serialize};

/// A chip (module docs); the default is the SCC.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Chip {
    /// The mesh of tiles.
    pub mesh: MeshSpec,
    /// Clock frequencies.
    pub clocks: Clocks,
    /// Message-passing buffer accesses.
    pub mpb: MpbCosts,
    /// Off-chip memory accesses through the memory controllers.
    pub dram: DramCosts,
    /// Private (cached) memory, what a core copies from and to.
    pub cache: CacheCosts,
    /// Other operations.
    pub ops: OpCosts,
    /// How compute time is measured and scaled.
    pub compute: Compute,
    /// The link between nodes, when a job spans several (`job::node`).
    pub link: LinkCosts,
}

/// The mesh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeshSpec {
    /// Tiles per row (SCC: 6).
    pub cols: u32,
    /// Rows of tiles (SCC: 4).
    pub rows: u32,
    /// Cores per tile (SCC: 2).
    pub cores_per_tile: u32,
}

/// Clocks, in MHz.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Clocks {
    /// The reference clock that tiles divide (SCC: 1600 MHz).
    pub base_mhz: f64,
    /// Every tile's divider at start (SCC default 3: 533 MHz cores).
    pub divider: u32,
    /// The mesh (SCC default configuration: 800 MHz).
    pub mesh_mhz: f64,
    /// The DRAM (SCC default configuration: 800 MHz).
    pub dram_mhz: f64,
}

/// MPB access.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MpbCosts {
    /// Bytes of a line (SCC: 32).
    pub line_bytes: u32,
    /// Core cycles of one line access, whatever the distance (literature: about 45).
    pub access_core_cycles: u32,
    /// Mesh cycles per hop, each way (literature: about 4).
    pub hop_mesh_cycles: u32,
}

/// DRAM access: from a core to the memory controller serving the memory, and back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DramCosts {
    /// Core cycles of one line access (literature: about 40).
    pub access_core_cycles: u32,
    /// Memory cycles of one line access (literature: about 46).
    pub memory_cycles: u32,
    /// The memory controllers' router positions `[x, y]` (SCC: four, on the edges).
    pub controllers: Vec<[u32; 2]>,
}

/// Private memory: a core's own cached memory (message buffers, its DRAM part).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheCosts {
    /// Bytes of the L1 data cache (SCC: 16 KiB). A copy from or to a private buffer
    /// smaller than this is charged `hit_core_cycles` a line; a larger one a DRAM
    /// access a line (through the core's nearest controller) plus `miss_core_cycles`.
    pub l1_bytes: u32,
    /// Core cycles per line of a private buffer that fits the L1 (calibrated).
    pub hit_core_cycles: u32,
    /// Core cycles per line, besides the DRAM access, of a buffer that does not
    /// (calibrated).
    pub miss_core_cycles: u32,
}

/// Other operations, in core cycles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpCosts {
    /// A test-and-set register access at a tile, besides the mesh hops (like an MPB
    /// access).
    pub test_and_set_core_cycles: u32,
    /// The software of one library call (calibrated against RCCE's small-message
    /// latency).
    pub call_core_cycles: u32,
}

/// The network between nodes: every fragment that crosses it arrives `latency_ns`
/// after it left, plus its message's bytes so far at `gigabytes_per_s` (a message's
/// fragments follow each other down the link).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkCosts {
    /// One-way latency, in nanoseconds.
    pub latency_ns: f64,
    /// Bandwidth, in GB/s (10^9 bytes a second).
    pub gigabytes_per_s: f64,
}

/// Where compute time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComputeSource {
    /// The thread's CPU time between library calls, times `host_to_target`.
    CpuTime,
    /// Retired instructions (a perf counter) times `cpi` core cycles: deterministic;
    /// falls back to `cpu-time` where the counter is not available.
    Instructions,
    /// Not charged: communication alone (exactly reproducible).
    None,
}

/// How compute is measured and scaled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Compute {
    /// The source.
    pub source: ComputeSource,
    /// Target seconds per host CPU second, at the start-up divider (see the docs for
    /// how the default was obtained).
    pub host_to_target: f64,
    /// Core cycles per retired instruction (`instructions`).
    pub cpi: f64,
}

impl Default for MeshSpec {
    // The SCC EAS: 24 tiles on a 6x4 mesh, two P54C cores a tile.
    fn default() -> MeshSpec {
        MeshSpec { cols: 6, rows: 4, cores_per_tile: 2 }
    }
}

impl Default for Clocks {
    // RCCE's default chip setting "533/800/800": cores at 1600/3 MHz, mesh and DRAM at
    // 800 MHz.
    fn default() -> Clocks {
        Clocks { base_mhz: 1600.0, divider: 3, mesh_mhz: 800.0, dram_mhz: 800.0 }
    }
}

impl Default for MpbCosts {
    // SCC literature: an MPB line read costs about 45 core cycles plus 4 mesh cycles
    // per hop each way; 32-byte lines (SCC EAS).
    fn default() -> MpbCosts {
        MpbCosts { line_bytes: 32, access_core_cycles: 45, hop_mesh_cycles: 4 }
    }
}

impl Default for DramCosts {
    // SCC literature: about 40 core cycles, plus the mesh hops, plus 46 memory cycles.
    // Four controllers, at the routers of tiles (0,0), (5,0), (0,2) and (5,2) (EAS).
    fn default() -> DramCosts {
        DramCosts { access_core_cycles: 40, memory_cycles: 46, controllers: vec![[0, 0], [5, 0], [0, 2], [5, 2]] }
    }
}

impl Default for CacheCosts {
    // The P54C's 16 KiB L1 data cache (EAS); the per-line costs of copying through it
    // and past it are calibrated so that RCCE's ping-pong peaks near 57 MB/s at 2 KB
    // and gives about 20 MB/s from 16 KB up (docs).
    fn default() -> CacheCosts {
        CacheCosts { l1_bytes: 16 * 1024, hit_core_cycles: 90, miss_core_cycles: 300 }
    }
}

impl Default for OpCosts {
    // A test-and-set register sits on the tile like the MPB; the call overhead is
    // calibrated so that RCCE's 32-byte ping-pong takes about 2.9 µs one way (docs).
    fn default() -> OpCosts {
        OpCosts { test_and_set_core_cycles: 45, call_core_cycles: 1200 }
    }
}

impl Default for Compute {
    // The default factor: a 533 MHz in-order P54C against a host core of about
    // 3 GHz that retires about twice the instructions a cycle: 3000 / 533 x 2 ≈ 11,
    // rounded to 10 (docs); an input to calibrate for each host.
    fn default() -> Compute {
        Compute { source: ComputeSource::CpuTime, host_to_target: 10.0, cpi: 1.5 }
    }
}

impl Default for LinkCosts {
    // An estimate, not a measurement: the SCC had no such link. One-way latency of
    // about a microsecond and 12.5 GB/s are the order of a 100 Gb/s cluster network
    // (InfiniBand EDR's data rate); an input to calibrate, like every cost here.
    fn default() -> LinkCosts {
        LinkCosts { latency_ns: 1000.0, gigabytes_per_s: 12.5 }
    }
}

/// Why a chip description was refused.
#[derive(Debug)]
pub enum ChipError {
    /// The TOML does not parse as a chip.
    Parse(String),
    /// A value is out of range.
    Invalid(String),
}

impl std::fmt::Display for ChipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Parse(e) => write!(f, "chip description: {e}"),
            Self::Invalid(e) => write!(f, "chip description: {e}"),
        }
    }
}

impl std::error::Error for ChipError {}

impl Chip {
    /// A chip from its TOML description (fields left out keep the SCC's values).
    pub fn from_toml(text: &str) -> Result<Chip, ChipError> {
        let chip: Chip = toml::from_str(text).map_err(|e| ChipError::Parse(e.to_string()))?;
        chip.validate()?;
        Ok(chip)
    }

    /// The description as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a chip serializes")
    }

    fn validate(&self) -> Result<(), ChipError> {
        let bad = |what: &str| Err(ChipError::Invalid(what.to_owned()));
        if self.mesh.cols == 0 || self.mesh.rows == 0 || self.mesh.cores_per_tile == 0 {
            return bad("the mesh needs at least one tile and one core a tile");
        }
        let clocks = [self.clocks.base_mhz, self.clocks.mesh_mhz, self.clocks.dram_mhz];
        if clocks.iter().any(|c| !c.is_finite() || *c <= 0.0) || self.clocks.divider == 0 {
            return bad("clocks must be positive and the divider at least 1");
        }
        if self.mpb.line_bytes == 0 || self.dram.controllers.is_empty() {
            return bad("lines need bytes and the chip a memory controller");
        }
        if !(self.compute.host_to_target.is_finite() && self.compute.host_to_target >= 0.0 && self.compute.cpi >= 0.0) {
            return bad("compute factors must be non-negative");
        }
        if !(self.link.latency_ns.is_finite() && self.link.latency_ns >= 0.0 && self.link.gigabytes_per_s > 0.0) {
            return bad("the link's latency must be non-negative and its bandwidth positive");
        }
        Ok(())
    }

    /// Picoseconds of `cycles` core cycles at `divider`.
    pub fn core_ps(&self, cycles: u64, divider: u32) -> u64 {
        (cycles as f64 * f64::from(divider) * 1e6 / self.clocks.base_mhz).round() as u64
    }

    /// Picoseconds from a fragment leaving one node to its arrival at another, when its
    /// message's bytes up to its end are `bytes` ([`LinkCosts`]).
    pub fn link_ps(&self, bytes: u64) -> u64 {
        (self.link.latency_ns * 1e3 + bytes as f64 * 1e3 / self.link.gigabytes_per_s).round() as u64
    }

    /// Picoseconds of `cycles` mesh cycles.
    pub fn mesh_ps(&self, cycles: u64) -> u64 {
        (cycles as f64 * 1e6 / self.clocks.mesh_mhz).round() as u64
    }

    /// Picoseconds of `cycles` memory cycles.
    pub fn dram_ps(&self, cycles: u64) -> u64 {
        (cycles as f64 * 1e6 / self.clocks.dram_mhz).round() as u64
    }

    /// The tile `[x, y]` of `core` (its physical core ID, `2 * (x + cols * y) + z`).
    pub fn tile_of(&self, core: u32) -> [u32; 2] {
        let tile = core / self.mesh.cores_per_tile;
        [tile % self.mesh.cols, tile / self.mesh.cols % self.mesh.rows]
    }

    /// Router hops between two tiles under XY routing.
    pub fn hops(a: [u32; 2], b: [u32; 2]) -> u64 {
        u64::from(a[0].abs_diff(b[0]) + a[1].abs_diff(b[1]))
    }

    /// The memory controller nearest to `tile` (the lower index on a tie).
    pub fn controller_of(&self, tile: [u32; 2]) -> [u32; 2] {
        *self.dram.controllers.iter().min_by_key(|c| Chip::hops(tile, **c)).expect("validated: one at least")
    }

    /// One MPB line moved between a core on tile `from` and an MPB on tile `to`.
    pub fn mpb_line_ps(&self, from: [u32; 2], to: [u32; 2], divider: u32) -> u64 {
        let hops = Chip::hops(from, to);
        self.core_ps(u64::from(self.mpb.access_core_cycles), divider)
            + self.mesh_ps(2 * hops * u64::from(self.mpb.hop_mesh_cycles))
    }

    /// One DRAM line moved between a core on tile `from` and memory served by the
    /// controller at `controller`.
    pub fn dram_line_ps(&self, from: [u32; 2], controller: [u32; 2], divider: u32) -> u64 {
        let hops = Chip::hops(from, controller);
        self.core_ps(u64::from(self.dram.access_core_cycles), divider)
            + self.mesh_ps(2 * hops * u64::from(self.mpb.hop_mesh_cycles))
            + self.dram_ps(u64::from(self.dram.memory_cycles))
    }

    /// One line of a private buffer of `buffer_bytes` read or written by a core on
    /// tile `tile` (see [`CacheCosts`]).
    pub fn private_line_ps(&self, tile: [u32; 2], buffer_bytes: usize, divider: u32) -> u64 {
        if buffer_bytes < self.cache.l1_bytes as usize {
            self.core_ps(u64::from(self.cache.hit_core_cycles), divider)
        } else {
            self.dram_line_ps(tile, self.controller_of(tile), divider)
                + self.core_ps(u64::from(self.cache.miss_core_cycles), divider)
        }
    }

    /// Lines of `bytes` bytes.
    pub fn lines(&self, bytes: usize) -> u64 {
        bytes.div_ceil(self.mpb.line_bytes as usize) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_scc_and_toml_overrides_fields() {
        let scc = Chip::default();
        assert_eq!(scc.core_ps(533, 3), 999_375, "533 cycles at 1600/3 MHz");
        assert_eq!(scc.mesh_ps(4), 5000);
        // Core 0 on tile (0,0), core 47 on tile (5,3): 8 hops, 2 x 4 mesh cycles each.
        assert_eq!(Chip::hops(scc.tile_of(0), scc.tile_of(47)), 8);
        assert_eq!(scc.mpb_line_ps([0, 0], [5, 3], 3), scc.core_ps(45, 3) + scc.mesh_ps(64));
        assert_eq!(scc.controller_of([4, 3]), [5, 2]);
        let mine = Chip::from_toml("[clocks]\nmesh_mhz = 400.0\n[mesh]\ncols = 8").unwrap();
        assert_eq!((mine.clocks.mesh_mhz, mine.mesh.cols, mine.mesh.rows), (400.0, 8, 4));
        assert_eq!(Chip::from_toml(&scc.to_toml()).unwrap(), scc);
        assert!(Chip::from_toml("[mesh]\ncolumns = 3").is_err(), "unknown fields are refused");
        assert!(Chip::from_toml("[clocks]\ndivider = 0").is_err());
    }
}
