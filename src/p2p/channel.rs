//! Where the two-sided channels live in the segment, and what they cost.
//!
//! At attach every core makes the same symmetric allocations, before any other, so
//! they land at the same offsets everywhere without communication:
//! - `srb`: [`srb::COUNTER_BYTES`] of its MPB for its ring's counters; the ring itself
//!   is the core's `layout.rings` element (`config.ring_bytes`). Per core, independent
//!   of the job size.
//! - `perpeer`: half of the MPB, split into one slot per sender (at least 64 bytes
//!   each), and one heap area of `cores * cores` per-pair DRAM rings of [`Sizes::pair_dram`]
//!   bytes (the ring size, shrunk to a power of two that fits a quarter of the heap;
//!   none below 4 KiB). Per core: O(N).
//!
//! [`footprint`] computes the shared bytes each protocol uses per process and per job
//! from the real `shm_layout::layout`, for the memory table.


use shm_layout::{ChannelKind, Config, Region, layout};

use crate::protocol::alloc::freelist::FreeList;
use crate::segment::mpb::MpbRegion;
use crate::protocol::ring::perpeer::{self, PerPeer};
use crate::segment::mapping::{Segment, SharedBytes};
use crate::protocol::ring::srb::{self, Srb};
use crate::segment::ring::ShmRing;
pub use crate::protocol::ring::sizing::{ChannelUnavailable, MIN_PAIR_DRAM, MIN_SLOT, Sizes, reserved_heap_bytes, sizes};
use crate::segment::view::atomics_at as view;

/// This job's channels, placed at attach.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The sizes the config gives.
    pub sizes: Sizes,
    mpb: MpbRegion,
    heap: Option<MpbRegion>,
}

impl Placement {
    /// Makes the symmetric MPB allocation (the first of every core) and finds the
    /// per-pair DRAM at the start of the heap, where the segment reserved it
    /// ([`reserved_heap_bytes`]); see module docs.
    pub(crate) fn setup(config: &Config, mpb: &mut FreeList) -> Result<Placement, ChannelUnavailable> {
        let sizes = sizes(config)?;
        let mpb = mpb.alloc(sizes.mpb_share).map_err(|e| ChannelUnavailable::Allocation(format!("{e}")))?;
        let reserved = reserved_heap_bytes(config);
        let heap = (reserved > 0).then_some(MpbRegion { offset: 0, len: reserved });
        Ok(Placement { sizes, mpb, heap })
    }

    fn mpb_of<'s>(&self, seg: &'s Segment, rank: u32) -> SharedBytes<'s> {
        let region = seg.layout().mpbs.get(rank as usize).expect("rank checked by caller");
        seg.bytes(Region { offset: region.offset + self.mpb.offset, len: self.mpb.len })
    }

    /// The receive ring of core `owner`.
    pub(crate) fn srb<'s>(&self, seg: &'s Segment, owner: u32) -> Srb<'s, ShmRing<'s>> {
        let counters = view(self.mpb_of(seg, owner), 0);
        let region = seg.layout().rings.get(owner as usize).expect("rank checked by caller");
        Srb::new(counters, ShmRing::new(seg, region), owner, self.sizes.cores as u32)
    }

    /// The channel from `src` to `owner`.
    pub(crate) fn perpeer<'s>(&self, seg: &'s Segment, src: u32, owner: u32) -> PerPeer<'s, SharedBytes<'s>> {
        let slot = self.sizes.slot;
        let mpb = self.mpb_of(seg, owner);
        let ctl = view(mpb, src as usize * slot);
        let ack = view(self.mpb_of(seg, src), owner as usize * slot);
        let mpb_region = seg.layout().mpbs.get(owner as usize).expect("rank checked by caller");
        let bytes = seg.bytes(Region {
            offset: mpb_region.offset + self.mpb.offset + src as usize * slot + perpeer::CTL_BYTES,
            len: slot - perpeer::CTL_BYTES,
        });
        let dram = self.heap.map(|h| {
            let d = self.sizes.pair_dram;
            let pair = owner as usize * self.sizes.cores + src as usize;
            seg.bytes(Region { offset: seg.layout().heap.offset + h.offset + pair * d, len: d })
        });
        PerPeer::new(ctl, ack, bytes, dram, src, owner)
    }
}

/// Shared bytes a protocol uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The protocol.
    pub kind: ChannelKind,
    /// Cores in the job.
    pub cores: u32,
    /// Bytes one core owns for receiving: MPB share plus DRAM.
    pub per_process: u64,
    /// Bytes of the whole job: `per_process` times the cores.
    pub per_job: u64,
    /// Of which MPB bytes per process.
    pub mpb_per_process: u64,
    /// Whether the protocol fits this job with the default config (perpeer slots need
    /// `MIN_SLOT` bytes of MPB per sender).
    pub fits: bool,
}

/// The shared memory `kind` needs for a `cores`-core job with the default config, from
/// the real layout. Per-peer DRAM is counted at its nominal size (`ring_bytes` per
/// pair), as RCKMPI sizes it, even where a small heap would shrink it at run time.
pub fn footprint(kind: ChannelKind, cores: u32) -> Footprint {
    let config = Config { channel: kind as u32, ..Config::new(cores) };
    let l = layout(&config).expect("default configs are valid");
    let n = u64::from(cores);
    let (mpb, dram, fits) = match kind {
        ChannelKind::Srb => (srb::COUNTER_BYTES as u64, l.rings.stride as u64, true),
        ChannelKind::PerPeer => {
            let fits = sizes(&config).is_ok();
            let slot = (config.mpb_bytes as usize / 2 / cores as usize / MIN_SLOT * MIN_SLOT).max(MIN_SLOT);
            (slot as u64 * n, config.ring_bytes as u64 * n, fits)
        }
    };
    let per_process = mpb + dram;
    Footprint { kind, cores, per_process, per_job: per_process * n, mpb_per_process: mpb, fits }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ring::frag::{CorruptKind, FragHeader, FragKind};
    use crate::protocol::payload::Payload;

    fn segment(kind: ChannelKind) -> (Segment, Placement) {
        let config = Config { channel: kind as u32, heap_bytes: 1 << 22, ..Config::new(4) };
        let seg = Segment::create(config).unwrap();
        let mut mpb = FreeList::new(config.mpb_bytes as usize, crate::segment::mpb::MPB_GRANULE);
        let place = Placement::setup(&config, &mut mpb).unwrap();
        (seg, place)
    }

    #[test]
    fn srb_headers_are_validated() {
        let (seg, place) = segment(ChannelKind::Srb);
        let ring = seg.layout().rings.get(1).unwrap();
        let srb = place.srb(&seg, 1);
        assert_eq!(srb.peek(0).unwrap(), None);
        let ctl = seg.word(ring, 0);
        // Valid bit and a length past half the ring.
        ctl.store(1 << 31 | 60_000, crate::sync::Ordering::Relaxed);
        assert!(matches!(srb.peek(0), Err(e) if matches!(e.kind, CorruptKind::LengthPastRing { .. })));
        // No valid bit.
        ctl.store(5, crate::sync::Ordering::Relaxed);
        assert!(matches!(srb.peek(0), Err(e) if matches!(e.kind, CorruptKind::BadControlWord { .. })));
        // A source that is not a core.
        seg.bytes(ring).write(4, &99u32.to_le_bytes());
        ctl.store(1 << 31 | 1 << 30 | 8, crate::sync::Ordering::Relaxed);
        assert!(matches!(srb.peek(0), Err(e) if e.kind == CorruptKind::BadSource { src: 99 }));
        // A first fragment longer than its message.
        seg.bytes(ring).write(4, &[2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0]);
        assert!(
            matches!(srb.peek(0), Err(e) if e.kind == CorruptKind::FragmentPastMessage { len: 8, total: 4 })
        );
    }

    /// Entries of every small and some large sizes, wrapping the ring: once an entry is
    /// released, no 16-byte boundary it covered reads as a control word (where a later
    /// entry of another size starts), though its payload was all ones.
    #[test]
    fn released_entries_leave_no_control_word() {
        let (seg, place) = segment(ChannelKind::Srb);
        let (srb, region) = (place.srb(&seg, 1), seg.layout().rings.get(1).unwrap());
        let cap = region.len as u32;
        let mut published = 0;
        let header = |len| FragHeader { src: 0, tag: 7, len, total: len, first: true, kind: FragKind::Data };
        for len in (1..=100).chain([1000, 4000, 20_000]).cycle().take(400) {
            let r = srb.reserve(srb::entry_len(len));
            srb.publish(r, &header(len), &vec![0xff; len as usize]);
            let e = srb.peek(r.pos()).unwrap().expect("published");
            srb.release(e);
            for boundary in (0..srb::entry_len(len)).step_by(16) {
                let at = (r.pos() + boundary) % cap;
                assert_eq!(seg.word(region, at as usize).load(crate::sync::Ordering::Relaxed), 0, "{len} B at {boundary}");
            }
            srb.free_consumed(e.next(), &mut published, true);
        }
    }

    #[test]
    fn sizes_follow_the_config() {
        let per = sizes(&Config { channel: ChannelKind::PerPeer as u32, ..Config::new(48) }).unwrap();
        assert_eq!((per.mpb_share, per.slot, per.pair_dram), (4096, 64, 16384));
        let srb = sizes(&Config::new(1024)).unwrap();
        assert_eq!(srb.ring, 65536);
        assert_eq!(footprint(ChannelKind::Srb, 2).per_process, footprint(ChannelKind::Srb, 1024).per_process);
        assert!(!footprint(ChannelKind::PerPeer, 128).fits);
    }
}
