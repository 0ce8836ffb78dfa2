//! RCCE's power management, as a model: per-tile frequency dividers and per-domain
//! voltages in shared DRAM.
//!
//! The chip's clock is 1600 MHz; a tile runs at 1600 / divider MHz with a divider in
//! 2..=16 (3, 533 MHz, by default). Frequency domains are single tiles; voltage (power)
//! domains are 2x2 tiles, numbered row-major from the mesh's corner (0..=5 on the
//! SCC). A domain's voltage is the lowest level of [`LEVELS`] whose frequency cap
//! covers its fastest tile; raising a tile's frequency raises its domain's voltage.
//! `RCCE_iset_power` starts a change for the caller's whole domain and only its
//! master (its lowest-ranked UE) may issue one; one request may be in flight per
//! domain until `RCCE_wait_power` completes it. In real-time mode a change takes no
//! time; with virtual time the dividers scale each core's compute.
//!
//! Orderings are Relaxed: these words describe the model, and nothing else is
//! published through them.

use sccemu::segment::SharedBytes;
use sccemu::segment::view::atomic_u32_at;
use sccemu::sync::{AtomicU32, Ordering};
use sccemu::{Core, MeshPosition};

use crate::codes::{Error, POWER_DEFAULT};
use crate::state::Rcce;

/// Bytes of the shared power state: a divider per tile, then a voltage level and a
/// pending flag per domain (room for 1024 tiles and 256 domains).
pub const STATE_BYTES: usize = 4 * 1024 + 8 * 256;
/// The chip's reference clock, divided per tile.
pub const BASE_MHZ: u32 = 1600;
/// The divider at start-up: 533 MHz.
pub const DEFAULT_DIVIDER: u32 = 3;
/// Voltage levels (volts) and the highest frequency (MHz) each allows. Model inputs,
/// set so that the default 533 MHz needs 0.8 V and 800 MHz the top levels; calibrate
/// against the chip's own tables before relying on them.
pub const LEVELS: [(f64, u32); 7] =
    [(0.7, 460), (0.8, 598), (0.9, 660), (1.0, 700), (1.1, 800), (1.2, 800), (1.3, 800)];

/// The lowest voltage level whose cap covers `divider`.
pub fn level_for(divider: u32) -> usize {
    let mhz = BASE_MHZ / divider;
    LEVELS.iter().position(|&(_, cap)| cap >= mhz).unwrap_or(LEVELS.len() - 1)
}

/// `divider` clamped to 2..=16, with [`POWER_DEFAULT`] meaning the default.
pub fn clamp_divider(divider: i32) -> u32 {
    if divider == POWER_DEFAULT { DEFAULT_DIVIDER } else { divider.clamp(2, 16) as u32 }
}

fn tiles(core: &Core) -> u32 {
    let mesh = core.mesh();
    mesh.cols * mesh.rows
}

fn tile_of(p: MeshPosition, cols: u32) -> u32 {
    p.x + cols * p.y
}

/// The 2x2-tile voltage domain of a position.
pub fn domain_of(p: MeshPosition, cols: u32) -> u32 {
    p.x / 2 + cols.div_ceil(2) * (p.y / 2)
}

fn word<'a>(state: &SharedBytes<'a>, at: usize) -> &'a AtomicU32 {
    atomic_u32_at(*state, at).expect("power words are aligned")
}

fn divider_word<'a>(state: &'a SharedBytes<'a>, tile: u32) -> &'a AtomicU32 {
    word(state, 4 * tile as usize)
}

fn level_word<'a>(state: &'a SharedBytes<'a>, domain: u32) -> &'a AtomicU32 {
    word(state, 4096 + 8 * domain as usize)
}

fn pending_word<'a>(state: &'a SharedBytes<'a>, domain: u32) -> &'a AtomicU32 {
    word(state, 4096 + 8 * domain as usize + 4)
}

/// Rank 0 writes the start-up state before the first barrier.
pub fn init_shared(state: &SharedBytes<'_>, core: &Core) {
    for tile in 0..tiles(core).min(1024) {
        divider_word(state, tile).store(DEFAULT_DIVIDER, Ordering::Relaxed);
    }
    for domain in 0..256 {
        level_word(state, domain).store(level_for(DEFAULT_DIVIDER) as u32, Ordering::Relaxed);
    }
}

/// What `RCCE_iset_power` started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerChange {
    /// The domain changed.
    pub domain: u32,
    /// The divider of every tile in it.
    pub divider: u32,
    /// Its new voltage level (index into [`LEVELS`]).
    pub level: u32,
}

impl Rcce {
    fn power_state(&self) -> SharedBytes<'_> {
        self.shared_bytes().slice(self.layout.power, STATE_BYTES)
    }

    fn cols(&self) -> u32 {
        self.core.mesh().cols
    }

    /// `RCCE_power_domain`: the caller's voltage domain.
    pub fn power_domain(&self) -> u32 {
        domain_of(self.core.position(), self.cols())
    }

    /// The UEs in the caller's domain, ascending.
    pub fn domain_members(&self) -> Vec<u32> {
        let mine = self.power_domain();
        (0..self.size)
            .filter(|&r| self.core.position_of(r).is_some_and(|p| domain_of(p, self.cols()) == mine))
            .collect()
    }

    /// A tile's divider now.
    pub fn divider(&self, tile: u32) -> u32 {
        divider_word(&self.power_state(), tile).load(Ordering::Relaxed)
    }

    /// Sets every tile of `domain` to `divider` and the domain's voltage to match.
    fn set_domain(&self, domain: u32, divider: u32) -> u32 {
        let state = self.power_state();
        let cols = self.cols();
        for tile in 0..tiles(&self.core) {
            let p = MeshPosition { tile, x: tile % cols, y: tile / cols, core_in_tile: 0 };
            if domain_of(p, cols) == domain {
                divider_word(&state, tile).store(divider, Ordering::Relaxed);
            }
        }
        let level = level_for(divider) as u32;
        level_word(&state, domain).store(level, Ordering::Relaxed);
        level
    }

    /// `RCCE_iset_power`: starts setting the caller's domain to `divider` (clamped).
    pub fn iset_power(&self, divider: i32) -> Result<PowerChange, Error> {
        let members = self.domain_members();
        if members.first() != Some(&self.rank) {
            return Err(Error::RpcNotAllocated);
        }
        let domain = self.power_domain();
        let state = self.power_state();
        if pending_word(&state, domain).swap(1, Ordering::Relaxed) != 0 {
            return Err(Error::MultipleRpcRequests);
        }
        let divider = clamp_divider(divider);
        let level = self.set_domain(domain, divider);
        Ok(PowerChange { domain, divider, level })
    }

    /// `RCCE_wait_power`: completes the change in flight for `domain`.
    pub fn wait_power(&self, domain: u32) -> Result<(), Error> {
        match pending_word(&self.power_state(), domain).swap(0, Ordering::Relaxed) {
            1 => Ok(()),
            _ => Err(Error::NoActiveRpcRequest),
        }
    }

    /// `RCCE_set_frequency_divider`: sets the caller's tile to `divider` (clamped),
    /// raising its domain's voltage if the new frequency needs it; returns the divider.
    pub fn set_frequency_divider(&self, divider: i32) -> u32 {
        let divider = clamp_divider(divider);
        let state = self.power_state();
        let tile = tile_of(self.core.position(), self.cols());
        divider_word(&state, tile).store(divider, Ordering::Relaxed);
        let domain = self.power_domain();
        let needed = level_for(divider) as u32;
        level_word(&state, domain).fetch_max(needed, Ordering::Relaxed);
        divider
    }

    /// `print_dividers`: one line per tile that holds a UE.
    pub fn print_dividers(&self) {
        let cols = self.cols();
        let mut tiles: Vec<u32> =
            (0..self.size).filter_map(|r| self.core.position_of(r)).map(|p| tile_of(p, cols)).collect();
        tiles.sort_unstable();
        tiles.dedup();
        for tile in tiles {
            let d = self.divider(tile);
            println!("tile {tile} (x={}, y={}): divider {d}, {} MHz", tile % cols, tile / cols, BASE_MHZ / d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dividers_clamp_and_pick_voltages() {
        assert_eq!(
            [clamp_divider(1), clamp_divider(17), clamp_divider(8), clamp_divider(POWER_DEFAULT)],
            [2, 16, 8, 3]
        );
        assert_eq!(LEVELS[level_for(3)].0, 0.8);
        assert_eq!(LEVELS[level_for(2)].0, 1.1);
        assert_eq!(level_for(16), 0);
    }

    #[test]
    fn domains_are_two_by_two_tiles() {
        let at = |x, y| MeshPosition { tile: 0, x, y, core_in_tile: 0 };
        assert_eq!([domain_of(at(0, 0), 6), domain_of(at(1, 1), 6), domain_of(at(2, 0), 6)], [0, 0, 1]);
        assert_eq!(domain_of(at(5, 3), 6), 5);
    }
}
