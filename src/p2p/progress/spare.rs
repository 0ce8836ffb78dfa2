//! Buffers of finished queued sends, kept for the next ones.
//!
//! A non-blocking send copies what cannot leave at once into a buffer of its own. The
//! buffers of finished ones are kept (the [`SPARE_BUFFERS`] largest) and reused: an
//! exchange that repeats large isends would otherwise allocate, fault in and unmap
//! them every time (glibc maps large allocations; a 2-core halo of 4 x 256 KiB took
//! thousands of page faults per 20 exchanges).

/// How many buffers a core keeps: one per neighbour of a 3-D stencil's exchange.
const SPARE_BUFFERS: usize = 8;

/// The kept buffers, sorted by capacity.
#[derive(Default)]
pub(crate) struct Spare(Vec<Vec<u8>>);

impl Spare {
    /// A buffer holding a copy of `bytes`: the largest kept one, so that a repeated
    /// exchange finds its buffers again.
    pub(crate) fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut buffer = self.0.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(bytes);
        buffer
    }

    /// Keeps `buffer`, dropping the smallest past [`SPARE_BUFFERS`].
    pub(crate) fn keep(&mut self, buffer: Vec<u8>) {
        let at = self.0.partition_point(|b| b.capacity() <= buffer.capacity());
        self.0.insert(at, buffer);
        if self.0.len() > SPARE_BUFFERS {
            self.0.remove(0);
        }
    }
}
