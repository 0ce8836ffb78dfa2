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
//! contract of [`CoreContext::adopt`]). The calling thread itself may be: a buffer on
//! its stack shares pages with the frames of this very call, and the bounce buffer of
//! a release, were it `malloc`'s, could lie in the pages being released. So the last
//! copy and the switch of mappings run as one block of instructions that writes no
//! memory between them (`copy_then_syscall`: `rep movsb` then the `mmap` or
//! `mremap` system call, no call and no push in between), and a release copies into
//! pages of its own (anonymous, then moved into place by `mremap`). Adoptions are counted: adopting a range that
//! lies inside one already adopted gives the same heap bytes again, and the pages go
//! back at the last release. A range that overlaps an adoption without lying inside it
//! is refused: its pages cannot map two places of the heap at once.
//!
//! The library's own threads must keep off the pages while they move (`pages_still`).
//!
//! Invariant: every adopted page range maps `block`'s pages, in order, until its count
//! drops to zero.

use std::num::NonZeroUsize;
use std::os::fd::AsRawFd;

use nix::libc;
use nix::sys::mman::{MapFlags, ProtFlags, mmap_anonymous, munmap};
use shm_layout::{PAGE, Region};

use crate::protocol::alloc::freelist::AllocError;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::context::CoreContext;
use crate::segment::pages_still::pages_moving;

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
        let _moving = pages_moving();
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
        let file_offset = heap.offset + block.offset;
        let args = [start, pages, PROT_RW, (libc::MAP_SHARED | libc::MAP_FIXED) as usize, self.segment().fd().as_raw_fd() as usize, file_offset];
        // SAFETY: the source is the caller's pages, readable and ours alone (this
        // function's contract); the destination is the block's pages in our mapping
        // of the heap, `pages` long. MAP_FIXED then replaces exactly those pages of
        // the caller with the block, which now holds their contents, with the same
        // access; the heap offset is page-aligned (the heap and its blocks are), and
        // the block is this core's until released.
        let mapped = unsafe { copy_then_syscall(start as *const u8, shared.addr(0), pages, libc::SYS_mmap, args) };
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
        let _moving = pages_moving();
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
        let size = NonZeroUsize::new(len).expect("adopted pages are not empty");
        let flags = MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS;
        // SAFETY: fresh pages wherever the kernel puts them; nothing else is moved.
        let staging = unsafe { mmap_anonymous(None, size, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE, flags) }
            .map_err(AdoptError::Map)?;
        let args = [staging.as_ptr() as usize, len, len, (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED) as usize, start, 0];
        // SAFETY: the source is the block's pages in our mapping of the heap, the
        // destination the staging pages just mapped, both `len` long. `mremap` then
        // moves the staging pages, now holding the adopted pages' contents, over the
        // adopted pages, which nobody uses any more (the contract).
        let moved = unsafe { copy_then_syscall(shared.addr(0), staging.as_ptr().cast(), len, libc::SYS_mremap, args) };
        if let Err(e) = moved {
            // SAFETY: the staging pages are ours and were not moved.
            let _ = unsafe { munmap(staging, len) };
            return Err(AdoptError::Map(e));
        }
        self.heap_free_local(block)?;
        Ok(())
    }
}

/// `PROT_READ | PROT_WRITE`, as a system call argument.
const PROT_RW: usize = (libc::PROT_READ | libc::PROT_WRITE) as usize;

/// Copies `len` bytes from `src` to `dst`, then makes system call `nr` with `args`,
/// writing no other memory in between: not even the stack, which may lie in the pages
/// the call remaps (module docs).
///
/// # Safety
/// `src` is readable and `dst` writable for `len` bytes, they do not overlap, and the
/// system call is safe to make with `args`.
#[cfg(target_arch = "x86_64")]
unsafe fn copy_then_syscall(src: *const u8, dst: *mut u8, len: usize, nr: i64, args: [usize; 6]) -> nix::Result<usize> {
    let ret: isize;
    // SAFETY: `rep movsb` copies `len` bytes from `src` to `dst` (the contract); the
    // system call follows at once with its arguments in the ABI's registers. No stack
    // memory is touched (`nostack`), and the kernel clobbers rcx and r11.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            "mov rdi, {a0}",
            "mov rsi, {a1}",
            "syscall",
            a0 = in(reg) args[0],
            a1 = in(reg) args[1],
            inout("rsi") src => _,
            inout("rdi") dst => _,
            inout("rcx") len => _,
            inlateout("rax") nr as isize => ret,
            in("rdx") args[2],
            in("r10") args[3],
            in("r8") args[4],
            in("r9") args[5],
            lateout("r11") _,
            options(nostack),
        );
    }
    if (-4095..0).contains(&ret) { Err(nix::Error::from_raw(-ret as i32)) } else { Ok(ret as usize) }
}

/// Elsewhere, the copy and the call are separate (a stack buffer may then lose the
/// writes of the call's own frames between them).
///
/// # Safety
/// As on x86-64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn copy_then_syscall(src: *const u8, dst: *mut u8, len: usize, nr: i64, args: [usize; 6]) -> nix::Result<usize> {
    // SAFETY: the contract.
    let ret = unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len);
        libc::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5])
    };
    if ret < 0 { Err(nix::Error::last()) } else { Ok(ret as usize) }
}
