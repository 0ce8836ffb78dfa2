//! Adopting private memory into the segment: `MPI_Win_create` over a buffer of the
//! program's own (`malloc`, the stack, a static array).
//!
//! Other processes cannot reach a core's private memory, so a window over it needs the
//! memory to become shared without moving: its pages are copied into heap pages
//! allocated for them, and the heap pages are mapped over the same addresses
//! (`MAP_FIXED | MAP_SHARED` of the job's memfd). From then on the program's loads and
//! stores and every other core's puts reach the same bytes, and no pointer the
//! program holds has changed. Releasing copies the pages back into fresh private
//! memory at the same addresses and returns the heap pages.
//!
//! Whole pages move, so the bytes around the buffer on its first and last page move
//! with it; nothing else may be writing to those pages while they move (the `# Safety`
//! contract of [`CoreContext::adopt`]). Adoptions are counted: adopting a range that
//! lies inside one already adopted gives the same heap bytes again, and the pages go
//! back at the last release. A range that overlaps an adoption without lying inside it
//! is refused: its pages cannot map two places of the heap at once.
//!
//! Invariant: every adopted page range maps `block`'s pages, in order, until its count
//! drops to zero.

use std::num::NonZeroUsize;

use nix::sys::mman::{MapFlags, ProtFlags, mmap, mmap_anonymous};
use shm_layout::{PAGE, Region};

use crate::protocol::alloc::freelist::AllocError;
use crate::protocol::payload::Payload;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::context::CoreContext;

/// One adopted page range of this process.
#[derive(Debug)]
pub(crate) struct Adoption {
    /// First address of the pages.
    start: usize,
    /// Bytes of the pages (whole pages).
    len: usize,
    /// The heap block the pages map.
    block: HeapRegion,
    /// Adoptions of ranges inside it not yet released.
    count: usize,
}

/// Why memory could not be adopted or released.
#[derive(Debug)]
pub enum AdoptError {
    /// No heap for the pages.
    Alloc(AllocError),
    /// An empty range (nothing to share).
    Empty,
    /// The range overlaps pages adopted for another range without lying inside them.
    Overlap {
        /// The first address of the pages adopted earlier.
        adopted: usize,
    },
    /// Mapping the pages failed (the memory may not be ordinary private memory).
    Map(nix::Error),
    /// Release of an address that no adoption covers.
    NotAdopted,
}

impl std::fmt::Display for AdoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Alloc(e) => write!(f, "no shared heap for the pages: {e}"),
            Self::Empty => write!(f, "an empty range has no pages to share"),
            Self::Overlap { adopted } => {
                write!(f, "the memory shares a page with other shared memory (adopted at {adopted:#x})")
            }
            Self::Map(e) => write!(f, "cannot map the shared pages over the memory: {e}"),
            Self::NotAdopted => write!(f, "this memory was not adopted"),
        }
    }
}

impl std::error::Error for AdoptError {}

impl From<AllocError> for AdoptError {
    fn from(e: AllocError) -> Self {
        AdoptError::Alloc(e)
    }
}

impl CoreContext {
    /// The heap range that the `len` bytes at `addr` are, if they lie in this
    /// process's mapping of the heap (memory from [`CoreContext::heap_alloc_local`],
    /// such as `MPI_Alloc_mem`'s).
    pub fn heap_range_at(&self, addr: *const u8, len: usize) -> Option<HeapRegion> {
        let heap = self.segment().layout().heap;
        let base = self.segment().bytes(heap).addr(0) as usize;
        let offset = (addr as usize).checked_sub(base)?;
        (offset.checked_add(len)? <= heap.len).then_some(HeapRegion { offset, len })
    }

    /// Makes the `len` bytes at `addr` shared memory without moving them (module docs),
    /// and returns the heap range they now are. Adopting a range inside one adopted
    /// before returns its heap bytes and counts one more adoption.
    ///
    /// # Safety
    /// `addr..addr + len` is readable and writable memory of this process, private and
    /// anonymous (heap, stack, static data), and no other thread accesses the pages
    /// that hold it (whole pages, including bytes before and after the range) while
    /// this call runs.
    pub unsafe fn adopt(&self, addr: *mut u8, len: usize) -> Result<HeapRegion, AdoptError> {
        if len == 0 {
            return Err(AdoptError::Empty);
        }
        let first = addr as usize;
        let end = first.checked_add(len).ok_or(AdoptError::Empty)?;
        let (start, stop) = (first & !(PAGE - 1), end.next_multiple_of(PAGE));
        let mut adoptions = self.adoptions.lock().unwrap_or_else(|e| e.into_inner());
        for a in adoptions.iter_mut() {
            if first >= a.start && end <= a.start + a.len {
                a.count += 1;
                return Ok(HeapRegion { offset: a.block.offset + (first - a.start), len });
            }
            if start < a.start + a.len && a.start < stop {
                return Err(AdoptError::Overlap { adopted: a.start });
            }
        }
        let pages = stop - start;
        let block = self.heap_alloc_local(pages)?;
        let heap = self.segment().layout().heap;
        let shared = self.segment().bytes(Region { offset: heap.offset + block.offset, len: pages });
        // SAFETY: the pages are readable memory of this process (this function's
        // contract), and nothing writes them during the call.
        shared.write(0, unsafe { std::slice::from_raw_parts(start as *const u8, pages) });
        let at = NonZeroUsize::new(start).ok_or(AdoptError::Empty)?;
        let size = NonZeroUsize::new(pages).expect("a non-empty range has pages");
        let file_offset = (heap.offset + block.offset) as i64;
        let flags = MapFlags::MAP_SHARED | MapFlags::MAP_FIXED;
        // SAFETY: MAP_FIXED replaces exactly the pages of this process that hold the
        // caller's range, which the contract makes ours to replace; they are mapped
        // again, at once, with the same contents (copied above) and the same access.
        // The heap offset is page-aligned (the heap and its blocks are), and the block
        // is this core's until released.
        let mapped = unsafe { mmap(Some(at), size, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE, flags, self.segment().fd(), file_offset) };
        if let Err(e) = mapped {
            let _ = self.heap_free_local(block);
            return Err(AdoptError::Map(e));
        }
        adoptions.push(Adoption { start, len: pages, block, count: 1 });
        Ok(HeapRegion { offset: block.offset + (first - start), len })
    }

    /// Releases one adoption of the range that holds `addr`; the last release of an
    /// adopted page range copies the pages back into private memory at the same
    /// addresses and returns the heap pages.
    ///
    /// # Safety
    /// No window (of any core) uses the heap bytes of this adoption any more, and no
    /// other thread of this process accesses its pages while this call runs.
    pub unsafe fn release_adopted(&self, addr: *const u8) -> Result<(), AdoptError> {
        let mut adoptions = self.adoptions.lock().unwrap_or_else(|e| e.into_inner());
        let a = addr as usize;
        let i = adoptions.iter().position(|x| a >= x.start && a < x.start + x.len).ok_or(AdoptError::NotAdopted)?;
        adoptions[i].count -= 1;
        if adoptions[i].count > 0 {
            return Ok(());
        }
        let Adoption { start, len, block, .. } = adoptions.remove(i);
        let heap = self.segment().layout().heap;
        let shared = self.segment().bytes(Region { offset: heap.offset + block.offset, len });
        let mut copy = vec![0u8; len];
        shared.read(0, &mut copy);
        let at = NonZeroUsize::new(start).expect("adopted pages are mapped");
        let size = NonZeroUsize::new(len).expect("adopted pages are not empty");
        let flags = MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS | MapFlags::MAP_FIXED;
        // SAFETY: the pages are this adoption's (found in the table), which nobody uses
        // any more (the contract); they get fresh private memory, filled at once below
        // with their contents.
        unsafe { mmap_anonymous(Some(at), size, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE, flags) }
            .map_err(AdoptError::Map)?;
        // SAFETY: the pages were just mapped writable, and are `len` bytes from `start`.
        unsafe { std::ptr::copy_nonoverlapping(copy.as_ptr(), start as *mut u8, len) };
        self.heap_free_local(block)?;
        Ok(())
    }
}
