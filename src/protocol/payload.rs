//! Payload bytes: the memory that protocols copy messages into and out of.
//!
//! Protocols never touch payload memory directly; they go through [`Payload`]. In
//! production the implementation is a range of the shared mapping
//! (`segment::SharedBytes`); under loom it is `LoomBytes`, whose cells make loom report
//! any copy that is not ordered after the flag or counter that should guard it. A
//! protocol is only correct if its copies are race-free under that check.

/// A fixed-length byte range that several cores may copy into and out of.
///
/// Callers pass in-range offsets; implementations check them and panic otherwise,
/// since an out-of-range offset here is a bug in the protocol, not bad user input
/// (user input is checked, with typed errors, before it reaches a protocol).
pub trait Payload {
    /// Bytes in the range.
    fn len(&self) -> usize;

    /// Whether the range has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `src` to `offset..offset + src.len()`.
    fn write(&self, offset: usize, src: &[u8]);

    /// Copies `offset..offset + dst.len()` to `dst`.
    fn read(&self, offset: usize, dst: &mut [u8]);

    /// Sets `offset..offset + len` to zero.
    fn zero(&self, offset: usize, len: usize);
}

/// Payload bytes for loom models: every byte is a loom cell, so unsynchronised copies
/// are reported as data races.
#[cfg(sccemu_loom)]
pub struct LoomBytes(Vec<loom::cell::UnsafeCell<u8>>);

#[cfg(sccemu_loom)]
impl LoomBytes {
    /// `len` zero bytes.
    pub fn new(len: usize) -> LoomBytes {
        LoomBytes((0..len).map(|_| loom::cell::UnsafeCell::new(0)).collect())
    }
}

#[cfg(sccemu_loom)]
impl Payload for LoomBytes {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn write(&self, offset: usize, src: &[u8]) {
        for (cell, byte) in self.0[offset..offset + src.len()].iter().zip(src) {
            cell.with_mut(|p| {
                // SAFETY: loom checks that no other access to this cell is concurrent.
                unsafe { *p = *byte }
            });
        }
    }

    fn read(&self, offset: usize, dst: &mut [u8]) {
        for (cell, byte) in self.0[offset..offset + dst.len()].iter().zip(dst) {
            // SAFETY: loom checks that no write to this cell is concurrent.
            *byte = cell.with(|p| unsafe { *p });
        }
    }

    fn zero(&self, offset: usize, len: usize) {
        for cell in &self.0[offset..offset + len] {
            cell.with_mut(|p| {
                // SAFETY: loom checks that no other access to this cell is concurrent.
                unsafe { *p = 0 }
            });
        }
    }
}
