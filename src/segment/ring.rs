//! A ring in the segment as the ring protocol sees its memory (`protocol::ring::srb`'s
//! `RingMem`): the segment's bytes of the ring's region, whose control words overlay
//! the entries' headers. The receive rings of the two-sided channels and the request
//! channels of jobs across nodes are such rings.

use shm_layout::Region;

use crate::protocol::ring::srb::RingMem;
use crate::segment::mapping::{Segment, SharedBytes};
use crate::sync::AtomicU32;

/// The memory of the ring in `region` of a segment (module docs).
pub(crate) struct ShmRing<'s> {
    seg: &'s Segment,
    region: Region,
    bytes: SharedBytes<'s>,
}

impl<'s> ShmRing<'s> {
    pub(crate) fn new(seg: &'s Segment, region: Region) -> ShmRing<'s> {
        ShmRing { seg, region, bytes: seg.bytes(region) }
    }
}

impl<'s> RingMem for ShmRing<'s> {
    type Bytes = SharedBytes<'s>;
    fn bytes(&self) -> &SharedBytes<'s> {
        &self.bytes
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        self.seg.word(self.region, offset)
    }
}
