//! RCCE's power management, as a model: per-tile frequency dividers and per-domain
//! voltages in shared DRAM.
//!
//! The chip's clock is 1600 MHz; a tile runs at 1600 / divider MHz with a divider in
//! 2..=16 (3, 533 MHz, by default). Frequency domains are single tiles; voltage (power)
//! domains are 2x2 tiles, numbered row-major from the mesh's corner (0..=5 on the
//! SCC). A domain's voltage is the lowest level of [`LEVELS`] whose frequency cap
//! covers its fastest tile; raising a tile's frequency raises its domain's voltage.
//! Only a domain's master (its lowest-ranked UE) changes anything; the same calls from
//! other UEs succeed and change nothing. `RCCE_iset_power` starts a change of the whole
//! domain's divider and of its voltage to the lowest level that allows it; one request
//! may be in flight per domain until `RCCE_wait_power` completes it.
//! `RCCE_set_frequency_divider` changes the domain's divider at its current voltage,
//! and refuses a frequency that voltage cannot carry. The chip starts at 533 MHz and
//! 1.1 V. In real-time mode a change takes no time; with virtual time the dividers
//! scale each core's compute.
//!
//! Orderings are Relaxed: these words describe the model, and nothing else is
//! published through them.
//!
//! Across nodes each node models its own chip's power state (in its own shared block,
//! `nodes`): a domain's members are the domain's UEs on the caller's node, its master
//! the lowest-ranked of them, and a change is seen by that node's UEs only.

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
/// The voltage level at start-up (1.1 V).
pub const DEFAULT_LEVEL: u32 = 4;
/// Voltage levels (volts) and the highest frequency (MHz) each allows: RCCE 1.0.13's
/// published table for the SCC, model inputs to calibrate for another chip.
pub const LEVELS: [(f64, u32); 7] =
    [(0.7, 460), (0.8, 598), (0.9, 644), (1.0, 748), (1.1, 875), (1.2, 1024), (1.3, 1198)];

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
        level_word(state, domain).store(DEFAULT_LEVEL, Ordering::Relaxed);
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

    /// The UEs in the caller's domain, ascending; across nodes, those of this node
    /// (each node models its own power state).
    pub fn domain_members(&self) -> Vec<u32> {
        let mine = self.power_domain();
        (0..self.size)
            .filter(|&r| self.core.position_of(r).is_some_and(|p| domain_of(p, self.cols()) == mine))
            .filter(|&r| self.is_local(r))
            .collect()
    }

    /// A tile's divider now.
    pub fn divider(&self, tile: u32) -> u32 {
        divider_word(&self.power_state(), tile).load(Ordering::Relaxed)
    }

    /// Sets every tile of `domain` to `divider`, and its voltage to `level`.
    fn set_domain(&self, domain: u32, divider: u32, level: u32) {
        let state = self.power_state();
        let cols = self.cols();
        for tile in 0..tiles(&self.core) {
            let p = MeshPosition { tile, x: tile % cols, y: tile / cols, core_in_tile: 0 };
            if domain_of(p, cols) == domain {
                divider_word(&state, tile).store(divider, Ordering::Relaxed);
                crate::vtime::set_divider(tile, divider);
            }
        }
        level_word(&state, domain).store(level, Ordering::Relaxed);
    }

    /// Whether this UE is its domain's master.
    pub fn is_power_master(&self) -> bool {
        self.domain_members().first() == Some(&self.rank)
    }

    /// `RCCE_iset_power` from the domain's master: starts setting the domain to
    /// `divider` (clamped) at the voltage it needs.
    pub fn iset_power(&self, divider: i32) -> Result<PowerChange, Error> {
        let domain = self.power_domain();
        let state = self.power_state();
        if pending_word(&state, domain).swap(1, Ordering::Relaxed) != 0 {
            return Err(Error::MultipleRpcRequests);
        }
        let divider = clamp_divider(divider);
        let level = level_for(divider) as u32;
        self.set_domain(domain, divider, level);
        Ok(PowerChange { domain, divider, level })
    }

    /// `RCCE_wait_power` from the domain's master: completes the change in flight.
    pub fn wait_power(&self) -> Result<(), Error> {
        match pending_word(&self.power_state(), self.power_domain()).swap(0, Ordering::Relaxed) {
            1 => Ok(()),
            _ => Err(Error::NoActiveRpcRequest),
        }
    }

    /// `RCCE_set_frequency_divider` from the domain's master: the domain to `divider`
    /// (clamped) at its current voltage; returns the divider.
    pub fn set_frequency_divider(&self, divider: i32) -> Result<u32, Error> {
        let domain = self.power_domain();
        let state = self.power_state();
        if pending_word(&state, domain).load(Ordering::Relaxed) != 0 {
            return Err(Error::MultipleRpcRequests);
        }
        let divider = clamp_divider(divider);
        let level = level_word(&state, domain).load(Ordering::Relaxed);
        if LEVELS[level as usize].1 < BASE_MHZ / divider {
            return Err(Error::Fdivider);
        }
        self.set_domain(domain, divider, level);
        Ok(divider)
    }

    /// The voltage level of the caller's domain.
    pub fn voltage_level(&self) -> u32 {
        level_word(&self.power_state(), self.power_domain()).load(Ordering::Relaxed)
    }

    /// `print_dividers`: one line per tile that holds a UE (of this node, across nodes).
    pub fn print_dividers(&self) {
        let cols = self.cols();
        let mut tiles: Vec<u32> = (0..self.size)
            .filter(|&r| self.is_local(r))
            .filter_map(|r| self.core.position_of(r))
            .map(|p| tile_of(p, cols))
            .collect();
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
