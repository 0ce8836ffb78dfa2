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
//! Small buffers (at most [`SMALL`] bytes of capacity) are kept apart, last in first
//! out, up to [`SMALL_BUFFERS`] of them: a small message takes one and gives it back
//! without a search, at a cost that matters when the message itself is a few bytes.
//!
//! Invariant: the large buffers are sorted by capacity, hold more than [`SMALL`]
//! bytes each, and there are at most [`SPARE_BUFFERS`]; the small ones hold at most
//! [`SMALL`] bytes and more than none. Their contents mean nothing (every hand-out
//! starts empty).

/// How many large buffers a pool keeps: one per neighbour of a 3-D stencil's exchange.
const SPARE_BUFFERS: usize = 8;

/// The largest capacity kept among the small buffers.
const SMALL: usize = 256;

/// How many small buffers a pool keeps: one per core of the chip, for a receiver that
/// holds a small message of each (16 KiB at most).
const SMALL_BUFFERS: usize = 64;

/// The kept buffers (module docs).
#[derive(Default)]
pub(crate) struct Spare {
    small: Vec<Vec<u8>>,
    /// Sorted by capacity.
    large: Vec<Vec<u8>>,
}

impl Spare {
    /// A buffer holding a copy of `bytes`: a small kept one for small bytes, else the
    /// largest kept one, so that a repeated exchange finds its buffers again.
    pub(crate) fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let small = (bytes.len() <= SMALL).then(|| self.small.pop()).flatten();
        let mut buffer = small.or_else(|| self.large.pop()).unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(bytes);
        buffer
    }

    /// An empty buffer for about `want` bytes: a small kept one if they fit one, else
    /// the smallest large one that holds them, else the largest kept one, else a new
    /// one without room. (`want` may come from shared memory: it chooses among
    /// buffers, it never sizes an allocation.)
    pub(crate) fn take(&mut self, want: usize) -> Vec<u8> {
        let small = (want <= SMALL).then(|| self.small.pop()).flatten();
        let mut buffer = small.or_else(|| self.take_large(want)).or_else(|| self.small.pop()).unwrap_or_default();
        buffer.clear();
        buffer
    }

    fn take_large(&mut self, want: usize) -> Option<Vec<u8>> {
        let fits = self.large.partition_point(|b| b.capacity() < want);
        let at = if fits < self.large.len() { fits } else { self.large.len().checked_sub(1)? };
        Some(self.large.remove(at))
    }

    /// Keeps `buffer`, dropping the smallest large one past [`SPARE_BUFFERS`], or a
    /// small one past [`SMALL_BUFFERS`].
    pub(crate) fn keep(&mut self, buffer: Vec<u8>) {
        match buffer.capacity() {
            0 => {}
            c if c <= SMALL => {
                if self.small.len() < SMALL_BUFFERS {
                    self.small.push(buffer);
                }
            }
            c => {
                let at = self.large.partition_point(|b| b.capacity() <= c);
                self.large.insert(at, buffer);
                if self.large.len() > SPARE_BUFFERS {
                    self.large.remove(0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SMALL, SMALL_BUFFERS, SPARE_BUFFERS, Spare};

    #[test]
    fn take_hands_out_the_smallest_that_fits_else_the_largest() {
        let mut spare = Spare::default();
        for cap in [1024, 65536, 4096] {
            spare.keep(Vec::with_capacity(cap));
        }
        assert!(spare.take(3000).capacity() >= 4096 && spare.large.len() == 2);
        assert!(spare.take(1 << 20).capacity() >= 65536);
        let fresh = spare.take(10);
        assert!(fresh.capacity() >= 1024 && fresh.is_empty());
        assert_eq!(spare.take(100).capacity(), 0, "an empty pool allocates nothing");
    }

    #[test]
    fn small_buffers_go_to_small_messages_first() {
        let mut spare = Spare::default();
        spare.keep(Vec::with_capacity(4096));
        spare.keep(Vec::with_capacity(SMALL));
        assert!(spare.take(16).capacity() <= SMALL, "a small one for a small message");
        assert!(spare.take(16).capacity() >= 4096, "then a large one rather than none");
        spare.keep(Vec::with_capacity(64));
        assert!(spare.take(1 << 20).capacity() >= 64, "a small one rather than none");
        let copy = spare.copy_of(b"abc");
        assert_eq!(copy, b"abc");
    }

    #[test]
    fn keeps_the_largest_few_and_some_small_ones() {
        let mut spare = Spare::default();
        for cap in 1..=20usize {
            spare.keep(Vec::with_capacity(SMALL + cap * 100));
        }
        for _ in 0..2 * SMALL_BUFFERS {
            spare.keep(Vec::with_capacity(32));
        }
        spare.keep(Vec::new());
        let kept: Vec<usize> = spare.large.iter().map(Vec::capacity).collect();
        assert_eq!(kept.len(), SPARE_BUFFERS);
        assert!(kept.windows(2).all(|w| w[0] <= w[1]) && kept[0] >= SMALL + 1300);
        assert_eq!(spare.small.len(), SMALL_BUFFERS);
        assert!(spare.small.iter().all(|b| (1..=SMALL).contains(&b.capacity())));
    }
}
