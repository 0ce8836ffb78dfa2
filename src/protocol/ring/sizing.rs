//! How big a job's two-sided channels are: pure arithmetic on the configuration.
//!
//! `srb` takes [`srb::COUNTER_BYTES`] of each MPB and a `ring_bytes` ring per core.
//! `perpeer` takes half of each MPB, split into one slot per sender of at least
//! [`MIN_SLOT`] bytes, and `cores * cores` per-pair DRAM rings of [`Sizes::pair_dram`]
//! bytes at the start of the heap (the ring size, shrunk to a power of two that fits a
//! quarter of the heap; none below [`MIN_PAIR_DRAM`]). The segment reserves that heap
//! prefix when it is created ([`reserved_heap_bytes`]); `p2p::channel` places the rest.

use std::fmt;

use shm_layout::{ChannelKind, Config};

use crate::protocol::ring::srb;

/// Smallest per-sender MPB slot: counters, a header and 32 bytes inline.
pub const MIN_SLOT: usize = 64;
/// Smallest per-pair DRAM ring worth having.
pub const MIN_PAIR_DRAM: usize = 4096;

/// Why a job has no two-sided channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelUnavailable {
    /// Per-peer slots of at least `MIN_SLOT` bytes do not fit the MPB share.
    MpbTooSmall {
        /// Cores in the job: one slot per possible sender.
        cores: u32,
        /// Bytes of each MPB the channels may take (half of it).
        share: usize,
    },
    /// The symmetric allocation at attach failed; the allocator's error, as text.
    Allocation(String),
}

impl fmt::Display for ChannelUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MpbTooSmall { cores, share } => write!(
                f,
                "perpeer channels need {MIN_SLOT} bytes of MPB per sender; {cores} senders do not fit {share} bytes (use --channel srb)"
            ),
            Self::Allocation(e) => write!(f, "cannot place the channels: {e}"),
        }
    }
}

impl std::error::Error for ChannelUnavailable {}

/// The channel sizes a config gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The protocol.
    pub kind: ChannelKind,
    /// Cores in the job.
    pub cores: usize,
    /// SRB: the receive ring.
    pub ring: usize,
    /// Bytes the channel takes of every core's MPB (SRB: its counters).
    pub mpb_share: usize,
    /// perpeer: each sender's slot in that share (a multiple of `MIN_SLOT`).
    pub slot: usize,
    /// perpeer: each pair's DRAM ring (0: none, everything goes through the MPB).
    pub pair_dram: usize,
}

/// Sizes for `config`; pure.
pub fn sizes(config: &Config) -> Result<Sizes, ChannelUnavailable> {
    let kind = ChannelKind::from_u32(config.channel).unwrap_or(ChannelKind::Srb);
    let cores = config.cores as usize;
    let mpb = config.mpb_bytes as usize;
    let mut s = Sizes { kind, cores, ring: config.ring_bytes as usize, mpb_share: 0, slot: 0, pair_dram: 0 };
    match kind {
        ChannelKind::Srb => s.mpb_share = srb::COUNTER_BYTES,
        ChannelKind::PerPeer => {
            s.mpb_share = mpb / 2 / MIN_SLOT * MIN_SLOT;
            s.slot = s.mpb_share / cores / MIN_SLOT * MIN_SLOT;
            if s.slot < MIN_SLOT {
                return Err(ChannelUnavailable::MpbTooSmall { cores: config.cores, share: s.mpb_share });
            }
            let budget = (config.heap_bytes / 4 / (cores * cores) as u64) as usize;
            let fit = if budget == 0 { 0 } else { 1 << budget.ilog2() };
            s.pair_dram = s.ring.min(fit);
            if s.pair_dram < MIN_PAIR_DRAM {
                s.pair_dram = 0;
            }
        }
    }
    Ok(s)
}

/// Bytes at the start of the shared heap that the per-pair DRAM rings take; the segment
/// reserves them before any core can allocate.
pub fn reserved_heap_bytes(config: &Config) -> usize {
    sizes(config).map_or(0, |s| s.pair_dram * s.cores * s.cores)
}
