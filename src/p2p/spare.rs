//! Message buffers kept for reuse, one pool per side of a core.
//!
//! A non-blocking send copies what cannot leave at once into a buffer of its own, and
//! a received message that no receive holds yet is assembled in one. Both are freed as
//! soon as the message is through, and an exchange repeats them at the same sizes. Left
//! to the allocator, every large one would be mapped, faulted in and unmapped again
//! (glibc maps large allocations, and trims its heap when they are freed at its top): a
//! 2-core halo of 4 x 256 KiB took thousands of page faults per 20 exchanges. So the
//! [`SPARE_BUFFERS`] largest are kept and handed out again.
//!
//! Invariant: the kept buffers are sorted by capacity, and there are at most
//! [`SPARE_BUFFERS`]; their contents mean nothing (every hand-out starts empty).

/// How many buffers a pool keeps: one per neighbour of a 3-D stencil's exchange.
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

    /// An empty buffer for about `want` bytes: the smallest kept one that holds them,
    /// else the largest kept one, else a new one without room. (`want` may come from
    /// shared memory: it chooses among buffers, it never sizes an allocation.)
    pub(crate) fn take(&mut self, want: usize) -> Vec<u8> {
        let fits = self.0.partition_point(|b| b.capacity() < want);
        let at = if fits < self.0.len() { Some(fits) } else { self.0.len().checked_sub(1) };
        let Some(at) = at else { return Vec::new() };
        let mut buffer = self.0.remove(at);
        buffer.clear();
        buffer
    }

    /// Keeps `buffer`, dropping the smallest past [`SPARE_BUFFERS`].
    pub(crate) fn keep(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() == 0 {
            return;
        }
        let at = self.0.partition_point(|b| b.capacity() <= buffer.capacity());
        self.0.insert(at, buffer);
        if self.0.len() > SPARE_BUFFERS {
            self.0.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Spare;

    #[test]
    fn take_hands_out_the_smallest_that_fits_else_the_largest() {
        let mut spare = Spare::default();
        for cap in [64, 4096, 1024] {
            spare.keep(Vec::with_capacity(cap));
        }
        assert!(spare.take(1000).capacity() >= 1024 && spare.0.len() == 2);
        assert!(spare.take(1 << 20).capacity() >= 4096);
        let fresh = spare.take(10);
        assert!(fresh.capacity() >= 64 && fresh.is_empty());
        assert_eq!(spare.take(100).capacity(), 0, "an empty pool allocates nothing");
    }

    #[test]
    fn keeps_the_largest_few() {
        let mut spare = Spare::default();
        for cap in 1..=20usize {
            spare.keep(Vec::with_capacity(cap * 100));
        }
        spare.keep(Vec::new());
        let kept: Vec<usize> = spare.0.iter().map(Vec::capacity).collect();
        assert_eq!(kept.len(), super::SPARE_BUFFERS);
        assert!(kept.windows(2).all(|w| w[0] <= w[1]) && kept[0] >= 1300);
    }
}
