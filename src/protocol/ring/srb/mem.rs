//! The ring's memory behind one interface: in production the segment's bytes, whose
//! control words overlay the headers; in loom models, loom cells and separate loom
//! atomics, so that the models check the same `Srb` code.

use crate::protocol::payload::Payload;
use crate::sync::AtomicU32;

#[cfg(sccemu_loom)]
use super::HEADER;

/// The ring's memory: payload bytes, and the control word at each 16-byte boundary.
/// In production both are the same bytes of the segment (the word overlays the first
/// four bytes of its header); in models the words are separate loom atomics.
pub trait RingMem {
    /// The payload memory.
    type Bytes: Payload;
    /// The ring's bytes, headers included.
    fn bytes(&self) -> &Self::Bytes;
    /// The control word of the header at ring offset `offset` (a multiple of 16).
    fn ctl(&self, offset: usize) -> &AtomicU32;
}

impl<M: RingMem> RingMem for &M {
    type Bytes = M::Bytes;
    fn bytes(&self) -> &Self::Bytes {
        (**self).bytes()
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        (**self).ctl(offset)
    }
}

/// A ring for loom models: loom cells for the bytes, loom atomics for the words.
#[cfg(sccemu_loom)]
pub struct LoomRing {
    bytes: crate::protocol::payload::LoomBytes,
    ctl: Vec<AtomicU32>,
}

#[cfg(sccemu_loom)]
impl LoomRing {
    /// A zeroed ring of `cap` bytes (a multiple of [`HEADER`]), every control word 0.
    pub fn new(cap: usize) -> LoomRing {
        LoomRing {
            bytes: crate::protocol::payload::LoomBytes::new(cap),
            ctl: (0..cap / HEADER as usize).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

#[cfg(sccemu_loom)]
impl RingMem for LoomRing {
    type Bytes = crate::protocol::payload::LoomBytes;
    fn bytes(&self) -> &Self::Bytes {
        &self.bytes
    }
    fn ctl(&self, offset: usize) -> &AtomicU32 {
        &self.ctl[offset / HEADER as usize]
    }
}
