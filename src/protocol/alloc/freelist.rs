//! First-fit free list over a byte range, in fixed granules.
//!
//! Pure bookkeeping, no I/O: the MPB's per-core symmetric allocator and the shared
//! heap allocator both keep their free ranges in one of these. Invariants: ranges are
//! sorted by offset, granule-aligned, non-empty, and never touch (freeing merges).

use std::fmt;

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::Disagreement;

/// A byte range `offset..offset + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    /// First byte, from the start of the allocator's memory.
    pub offset: usize,
    /// Bytes in the range.
    pub len: usize,
}

impl Range {
    fn end(&self) -> usize {
        self.offset + self.len
    }
}

/// Why an allocation (MPB or shared heap) or a free failed. Nothing was allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// No free range of `requested` bytes (`free` bytes are free in all).
    Exhausted {
        /// Bytes asked for.
        requested: usize,
        /// Bytes free in all, across every range.
        free: usize,
    },
    /// Allocations must be at least one byte.
    ZeroSize,
    /// The range is not allocated (never was, or was freed already).
    NotAllocated(Range),
    /// The shared heap's free list is full: too fragmented to record another hole.
    TooFragmented,
    /// The job aborted during a collective allocation.
    Aborted(JobAborted),
    /// The job spans several nodes, and the shared heap (windows, communicators) does
    /// not cross nodes yet: every core gets this, at once.
    AcrossNodes,
    /// Checking mode: the cores passed different sizes to this collective allocation
    /// (or are not in the same collective call); every core gets this error, nothing
    /// was allocated, and the job goes on. Without checking mode such a program is
    /// erroneous.
    Mismatch {
        /// What differs: `"call"` or `"bytes"`.
        what: &'static str,
        /// The ranks whose value differs from the one most cores passed (on a tie, the
        /// lowest such rank's value).
        ranks: Vec<u32>,
    },
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exhausted { requested, free } => {
                write!(f, "no {requested}-byte range left ({free} bytes free in all)")
            }
            Self::ZeroSize => write!(f, "cannot allocate 0 bytes"),
            Self::NotAllocated(r) => write!(f, "{r:?} is not a live allocation"),
            Self::TooFragmented => {
                write!(f, "the shared heap is too fragmented to record another free range")
            }
            Self::Aborted(e) => e.fmt(f),
            Self::AcrossNodes => {
                write!(f, "the shared heap (windows, communicators) does not cross nodes yet")
            }
            Self::Mismatch { what, ranks } => {
                write!(
                    f,
                    "checking mode: ranks {ranks:?} disagree with the others on the allocation's {what}"
                )
            }
        }
    }
}

impl std::error::Error for AllocError {}

impl From<JobAborted> for AllocError {
    fn from(e: JobAborted) -> Self {
        AllocError::Aborted(e)
    }
}

impl From<Disagreement> for AllocError {
    fn from(d: Disagreement) -> Self {
        AllocError::Mismatch { what: d.what, ranks: d.ranks }
    }
}

/// The free ranges of one allocator, sorted by offset (invariants in the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeList {
    granule: usize,
    free: Vec<Range>,
}

impl FreeList {
    /// Everything in `0..capacity` (rounded down to a granule) is free.
    pub fn new(capacity: usize, granule: usize) -> FreeList {
        let len = capacity / granule * granule;
        FreeList { granule, free: if len > 0 { vec![Range { offset: 0, len }] } else { Vec::new() } }
    }

    /// A list whose free ranges were stored elsewhere (already satisfying the invariants).
    pub fn from_ranges(granule: usize, free: Vec<Range>) -> FreeList {
        FreeList { granule, free }
    }

    /// The free ranges, sorted by offset.
    pub fn ranges(&self) -> &[Range] {
        &self.free
    }

    fn rounded(&self, bytes: usize) -> usize {
        bytes.div_ceil(self.granule) * self.granule
    }

    /// First fit. The returned range has `len == bytes`; a whole number of granules is
    /// taken from the list.
    pub fn alloc(&mut self, bytes: usize) -> Result<Range, AllocError> {
        if bytes == 0 {
            return Err(AllocError::ZeroSize);
        }
        let len = self.rounded(bytes);
        let Some(i) = self.free.iter().position(|r| r.len >= len) else {
            let free = self.free.iter().map(|r| r.len).sum();
            return Err(AllocError::Exhausted { requested: bytes, free });
        };
        let range = Range { offset: self.free[i].offset, len: bytes };
        self.free[i].offset += len;
        self.free[i].len -= len;
        if self.free[i].len == 0 {
            self.free.remove(i);
        }
        Ok(range)
    }

    /// Returns a range from [`FreeList::alloc`], merging it with its free neighbours.
    /// A range that overlaps free space is refused: it was never allocated or is freed
    /// twice.
    pub fn free(&mut self, range: Range) -> Result<(), AllocError> {
        let mut whole = Range { offset: range.offset, len: self.rounded(range.len) };
        let at = self.free.partition_point(|r| r.offset < whole.offset);
        let overlaps_prev = at > 0 && self.free[at - 1].end() > whole.offset;
        let overlaps_next = at < self.free.len() && whole.end() > self.free[at].offset;
        if range.len == 0 || whole.offset % self.granule != 0 || overlaps_prev || overlaps_next {
            return Err(AllocError::NotAllocated(range));
        }
        if at < self.free.len() && whole.end() == self.free[at].offset {
            whole.len += self.free.remove(at).len;
        }
        if at > 0 && self.free[at - 1].end() == whole.offset {
            self.free[at - 1].len += whole.len;
        } else {
            self.free.insert(at, whole);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_and_merging() {
        let mut a = FreeList::new(8192, 64);
        let x = a.alloc(100).unwrap();
        let y = a.alloc(64).unwrap();
        let z = a.alloc(1).unwrap();
        assert_eq!((x.offset, y.offset, z.offset), (0, 128, 192));
        a.free(y).unwrap();
        assert_eq!(a.alloc(10).unwrap().offset, 128, "reuses the hole");
        a.free(x).unwrap();
        a.free(z).unwrap();
        assert_eq!(a.free(z), Err(AllocError::NotAllocated(z)), "double free");
        assert_eq!(a.alloc(8192 - 256).unwrap().offset, 192, "z merged with the tail");
        assert!(matches!(a.alloc(200), Err(AllocError::Exhausted { requested: 200, free: 192 })));
        assert_eq!(a.alloc(0), Err(AllocError::ZeroSize));
    }

    #[test]
    fn freeing_everything_restores_one_range() {
        let mut a = FreeList::new(4096, 64);
        let all: Vec<_> = (0..64).map(|_| a.alloc(64).unwrap()).collect();
        for r in all.iter().rev().step_by(2).chain(all.iter().step_by(2)) {
            a.free(*r).unwrap();
        }
        assert_eq!(a.ranges(), [Range { offset: 0, len: 4096 }]);
    }
}
