//! The job's shared segment: creation, mapping, validation and typed views.
//!
//! The launcher creates one memfd (no name in /dev/shm, so nothing can be left behind),
//! sizes it from `shm_layout::layout`, seals it against resizing, maps it, and writes
//! the [`Header`] before any core starts. Cores inherit the fd and [`Segment::attach`]
//! to it, refusing a segment whose magic, version, size or seals are wrong.
//!
//! The mapping is a `memmap2::MmapRaw`: nothing ever holds a `&[u8]` or `&mut [u8]` over
//! memory that other processes write. Protocol state is viewed as `#[repr(C)]` structs
//! of atomics placed at the offsets the layout gives (the memfd starts zeroed, and all
//! those structs are valid as zero bytes); payload bytes are reached only through
//! [`SharedBytes`], which copies with raw pointers. This module and `SharedBytes` are
//! where the crate's unsafe code lives.

use std::fmt;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};

use crossbeam_utils::CachePadded;
use memmap2::{MmapOptions, MmapRaw};
use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use shm_layout::{Config, ConfigError, Header, LAYOUT_VERSION, Layout, MAGIC, Region, layout};

use crate::protocol::abort::{AbortCause, JobControl};
use crate::protocol::barrier::BarrierState;
use crate::protocol::alloc::heap::HeapAllocator;
use crate::protocol::payload::Payload;
use crate::sync::{AtomicU32, Ordering};
use crate::protocol::waiter::Doorbell;

/// Seals every segment carries: its size can never change under a mapping.
const SEALS: SealFlag = SealFlag::F_SEAL_SHRINK.union(SealFlag::F_SEAL_GROW).union(SealFlag::F_SEAL_SEAL);

/// One core's control slot (`shm_layout::SLOT_BYTES`): its doorbell on a line of its
/// own, then its pid, attach state, physical core ID and wait mark.
#[repr(C)]
pub struct CoreSlot {
    /// Rung after changing memory this core owns; waits on that memory sleep here.
    pub bell: CachePadded<Doorbell>,
    /// The process's pid, written at attach (0 before).
    pub pid: AtomicU32,
    /// One of [`slot_state`].
    pub state: AtomicU32,
    /// The chip's core this rank plays (`2 * (x + cols * y) + z` on the mesh; the rank
    /// by default). The launcher writes it before the rank starts.
    pub core_id: AtomicU32,
    /// What the core is blocked on, for the deadlock report.
    pub wait: crate::segment::wait_mark::MarkWords,
    /// In virtual-time mode, the core's virtual time, compute, communication and
    /// waiting (picoseconds), as of its last operation (see `timing::clock`).
    pub vtime: [crate::sync::AtomicU64; 4],
    /// The barrier bell of the communicators this core leads: their barriers' waiters
    /// sleep here, not on `bell`, which every message to this core rings (see
    /// `coll::comm`). Aborts ring it too.
    pub barrier_bell: Doorbell,
}

/// Values of [`CoreSlot::state`].
pub mod slot_state {
    /// The core has not attached yet (a fresh segment is all zero).
    pub const NOT_ATTACHED: u32 = 0;
    /// Attached and running; exiting with status 0 in this state is a failure.
    pub const ATTACHED: u32 = 1;
    /// Left cleanly: its context was dropped.
    pub const FINALIZED: u32 = 2;
}

/// The segment's job-wide synchronisation region (`shm_layout::SYNC_BYTES`).
#[repr(C)]
pub struct SyncArea {
    /// The world barrier, of every core of the job.
    pub world_barrier: BarrierState,
}

const _: () = {
    assert!(size_of::<CoreSlot>() <= shm_layout::SLOT_BYTES);
    assert!(size_of::<SyncArea>() <= shm_layout::SYNC_BYTES);
    assert!(align_of::<CoreSlot>() <= shm_layout::LINE && align_of::<SyncArea>() <= shm_layout::LINE);
};

/// Why a segment could not be created.
#[derive(Debug)]
pub enum CreateError {
    /// The configuration has no valid layout.
    Config(ConfigError),
    /// Creating, sizing, sealing or mapping the memfd failed.
    Os(std::io::Error),
}

/// Why a core could not attach to a segment.
#[derive(Debug)]
pub enum AttachError {
    /// The environment does not describe a job (not started by sccrun or a `Job`).
    NotInJob(&'static str),
    /// An environment variable is present but unreadable.
    BadEnv {
        /// Name of the variable.
        var: &'static str,
        /// Its value as found.
        value: String,
    },
    /// The fd could not be inspected or mapped.
    Os(std::io::Error),
    /// The segment is smaller than a header, or its size disagrees with its header.
    Size {
        /// Bytes of the segment as found.
        found: u64,
        /// Bytes it should have.
        expected: u64,
    },
    /// The header's magic is not `shm_layout::MAGIC`: not an sccemu segment.
    BadMagic(u64),
    /// The segment's layout version is not the one this library speaks.
    Version {
        /// Version in the header.
        found: u32,
        /// `shm_layout::LAYOUT_VERSION` of this library.
        expected: u32,
    },
    /// The segment may still be resized: it is not sealed.
    NotSealed,
    /// The header's configuration has no valid layout.
    Config(ConfigError),
    /// The rank or size from the environment disagrees with the segment's config.
    Rank {
        /// Rank from the environment.
        rank: u32,
        /// Size from the environment.
        size: u32,
        /// Cores in the segment's config.
        cores: u32,
    },
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(e) => write!(f, "bad job configuration: {e}"),
            Self::Os(e) => write!(f, "cannot create the shared segment: {e}"),
        }
    }
}

impl fmt::Display for AttachError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInJob(var) => {
                write!(f, "not started as a core of a job ({var} is not set); run under sccrun")
            }
            Self::BadEnv { var, value } => write!(f, "environment variable {var}={value:?} is malformed"),
            Self::Os(e) => write!(f, "cannot map the shared segment: {e}"),
            Self::Size { found, expected } => write!(f, "segment holds {found} bytes, expected {expected}"),
            Self::BadMagic(m) => write!(f, "not an sccemu segment (magic {m:#018x})"),
            Self::Version { found, expected } => {
                write!(f, "segment layout version {found}, this library speaks version {expected}")
            }
            Self::NotSealed => write!(f, "segment is not sealed against resizing"),
            Self::Config(e) => write!(f, "segment has a bad configuration: {e}"),
            Self::Rank { rank, size, cores } => {
                write!(f, "rank {rank} of {size} does not fit a segment for {cores} cores")
            }
        }
    }
}

impl std::error::Error for CreateError {}
impl std::error::Error for AttachError {}

/// A mapped segment.
pub struct Segment {
    map: MmapRaw,
    file: File,
    header: Header,
    layout: Layout,
}

impl Segment {
    /// Creates, sizes, seals and maps a new segment, and writes its header.
    /// The fd is close-on-exec; the launcher hands it to each core explicitly.
    pub fn create(config: Config) -> Result<Segment, CreateError> {
        let layout = layout(&config).map_err(CreateError::Config)?;
        let os = |e: nix::Error| CreateError::Os(e.into());
        let fd = memfd_create(c"sccemu", MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING).map_err(os)?;
        let file = File::from(fd);
        file.set_len(layout.total as u64).map_err(CreateError::Os)?;
        fcntl(&file, FcntlArg::F_ADD_SEALS(SEALS)).map_err(os)?;
        let map = MmapOptions::new().len(layout.total).map_raw(&file).map_err(CreateError::Os)?;
        let header = Header::new(config, &layout, crate::segment::clock::monotonic_ns());
        // SAFETY: the mapping is at least one header long (layout.header comes first),
        // page-aligned, and no core has mapped it yet, so nothing reads it concurrently.
        unsafe { map.as_mut_ptr().cast::<Header>().write(header) };
        let segment = Segment { map, file, header, layout };
        for rank in 0..config.cores {
            segment.slot(rank).core_id.store(rank, Ordering::Relaxed);
        }
        segment.heap_allocator().init(layout.heap.len, crate::protocol::ring::sizing::reserved_heap_bytes(&config));
        Ok(segment)
    }

    /// Maps the segment behind `fd` and checks that it is a segment this library can use.
    pub fn attach(fd: OwnedFd) -> Result<Segment, AttachError> {
        let file = File::from(fd);
        let found = file.metadata().map_err(AttachError::Os)?.len();
        let header_len = size_of::<Header>() as u64;
        if found < header_len {
            return Err(AttachError::Size { found, expected: header_len });
        }
        let seals = fcntl(file.as_fd(), FcntlArg::F_GET_SEALS).map_err(|e| AttachError::Os(e.into()))?;
        if !SealFlag::from_bits_truncate(seals).contains(SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW) {
            return Err(AttachError::NotSealed);
        }
        let map = MmapOptions::new().len(found as usize).map_raw(&file).map_err(AttachError::Os)?;
        // SAFETY: the mapping holds at least a header (checked above) and is sealed
        // against shrinking; the launcher wrote the header before starting any core and
        // only its atomic `job` words change afterwards, which this copy does not use.
        let header = unsafe { map.as_ptr().cast::<Header>().read() };
        if header.magic != MAGIC {
            return Err(AttachError::BadMagic(header.magic));
        }
        if header.version != LAYOUT_VERSION {
            return Err(AttachError::Version { found: header.version, expected: LAYOUT_VERSION });
        }
        let layout = layout(&header.config).map_err(AttachError::Config)?;
        if header.total_bytes != layout.total as u64 || found != layout.total as u64 {
            return Err(AttachError::Size { found, expected: layout.total as u64 });
        }
        Ok(Segment { map, file, header, layout })
    }

    /// The header as written at creation (its `job` words change later: read them
    /// through [`Segment::job`]).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The job's configuration.
    pub fn config(&self) -> &Config {
        &self.header.config
    }

    /// Where every region of the segment lies.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The segment's memfd, for handing to cores.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// # Safety
    /// `offset` must be within the segment and aligned for `T`, and the bytes there
    /// must only ever be accessed as a `T` made of atomics (or through `SharedBytes`).
    #[inline]
    unsafe fn view<T>(&self, offset: usize) -> &T {
        debug_assert!(offset + size_of::<T>() <= self.layout.total);
        debug_assert_eq!(offset % align_of::<T>(), 0);
        // SAFETY: per this function's contract; the mapping lives as long as `self`, and
        // all-zero bytes (a fresh memfd) are a valid T for the atomic structs used here.
        unsafe { &*self.map.as_ptr().add(offset).cast::<T>() }
    }

    /// The job's abort state, shared by every core.
    pub fn job(&self) -> &JobControl {
        let offset = self.layout.header.offset + core::mem::offset_of!(Header, job);
        // SAFETY: JobControl matches shm_layout::JobWords (asserted in `abort`), which the
        // header places at this line-aligned offset; its words are only used atomically.
        unsafe { self.view(offset) }
    }

    /// The job-wide synchronisation region.
    pub fn sync_area(&self) -> &SyncArea {
        // SAFETY: the sync region is line-aligned, SYNC_BYTES long (asserted to fit
        // SyncArea above) and holds nothing else.
        unsafe { self.view(self.layout.sync.offset) }
    }

    /// The shared heap's allocator.
    pub fn heap_allocator(&self) -> &HeapAllocator {
        // SAFETY: the allocator region is line-aligned and ALLOCATOR_BYTES long (asserted
        // to fit HeapAllocator in `heap`), used only as a HeapAllocator.
        unsafe { self.view(self.layout.allocator.offset) }
    }

    /// Core `rank`'s control slot. Panics if `rank` is not a core of this job (callers
    /// validate ranks first).
    #[inline]
    pub fn slot(&self, rank: u32) -> &CoreSlot {
        let region = self.layout.slots.get(rank as usize).expect("rank checked by caller");
        // SAFETY: each slot is a line-aligned SLOT_BYTES region (asserted to fit CoreSlot)
        // used only as a CoreSlot.
        unsafe { self.view(region.offset) }
    }

    /// Rings every core's doorbell (after an abort, or anything all cores may wait for).
    pub fn ring_all(&self) {
        for rank in 0..self.config().cores {
            self.slot(rank).bell.ring();
        }
    }

    /// Records the job's first failure and wakes every core. Returns false if an earlier
    /// failure was already recorded.
    pub fn abort(&self, rank: Option<u32>, cause: AbortCause) -> bool {
        let first = self.job().begin_abort(rank, cause);
        if first {
            self.ring_all();
            for rank in 0..self.config().cores {
                self.slot(rank).barrier_bell.ring();
            }
        }
        first
    }

    /// The bytes of a region the layout gave (an MPB, a ring, part of the heap).
    #[inline]
    pub fn bytes(&self, region: Region) -> SharedBytes<'_> {
        assert!(region.end() <= self.layout.total, "region {region:?} past the segment");
        // SAFETY: in bounds (asserted); the pointer lives as long as the borrow of self.
        let ptr = unsafe { self.map.as_mut_ptr().add(region.offset) };
        SharedBytes { ptr, len: region.len, _segment: std::marker::PhantomData }
    }

    /// The 32-bit word at `offset` of `region`, viewed as an atomic (flags, counters).
    /// Panics unless the word is in the region and 4-byte aligned (callers check).
    #[inline]
    pub fn word(&self, region: Region, offset: usize) -> &AtomicU32 {
        assert!(offset % 4 == 0 && offset + 4 <= region.len, "word {offset} outside {region:?}");
        // SAFETY: in bounds and aligned (asserted; regions are line-aligned); words handed
        // out here are only accessed atomically or as bytes by `SharedBytes`, never through
        // a Rust reference to non-atomic data.
        unsafe { self.view(region.offset + offset) }
    }
}

/// A byte range of the mapping that several processes copy into and out of.
///
/// Copies are raw-pointer copies. The protocol that hands a range from one core to
/// another (a flag, a counter) orders them; if a user races two copies anyway, the
/// bytes may be torn, but every bit pattern is a valid `u8`, so nothing undefined can
/// follow, and no `&[u8]` over the range ever exists.
#[derive(Clone, Copy)]
pub struct SharedBytes<'a> {
    ptr: *mut u8,
    len: usize,
    _segment: std::marker::PhantomData<&'a Segment>,
}

// SAFETY: SharedBytes is a pointer into a shared mapping that outlives it; copies through
// it are valid from any thread (see the type's docs).
unsafe impl Send for SharedBytes<'_> {}
// SAFETY: as for Send: `&SharedBytes` only allows copies.
unsafe impl Sync for SharedBytes<'_> {}

impl<'a> SharedBytes<'a> {
    #[inline]
    fn check(&self, offset: usize, len: usize) {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.len),
            "{offset}+{len} past {}",
            self.len
        );
    }

    /// Copies `len` bytes at `from` to `dst` at `to`, without a private bounce buffer:
    /// a remote put from one shared range into another.
    pub fn copy_to(&self, from: usize, dst: &SharedBytes<'_>, to: usize, len: usize) {
        self.check(from, len);
        dst.check(to, len);
        // SAFETY: both ranges are in bounds (checked); `copy` tolerates overlap; see the
        // type's docs for concurrent access.
        unsafe { std::ptr::copy(self.ptr.add(from), dst.ptr.add(to), len) }
    }

    /// The `len` bytes at `offset`. Panics past the end (callers check first).
    pub fn slice(&self, offset: usize, len: usize) -> SharedBytes<'a> {
        self.check(offset, len);
        // SAFETY: in bounds (checked).
        SharedBytes { ptr: unsafe { self.ptr.add(offset) }, len, _segment: std::marker::PhantomData }
    }

    /// Raw address of `offset`, for views of typed elements (windows).
    #[inline]
    pub fn addr(&self, offset: usize) -> *mut u8 {
        self.check(offset, 0);
        // SAFETY: offset is within the range (checked).
        unsafe { self.ptr.add(offset) }
    }
}

/// Largest single `memcpy` between private and shared memory. glibc copies from about a
/// megabyte on with non-temporal stores, which bypass the cache the peer reads from
/// next; in pieces, a 1 MiB put took 8.9 µs instead of 12.0 and a 1 MiB get 15.7
/// instead of 19.0 (the `rma` suite, 2 cores).
const COPY_PIECE: usize = 256 * 1024;

/// `copy_nonoverlapping` in pieces of at most [`COPY_PIECE`] bytes. Copies of 8 to 16
/// bytes (an RMA word or two) are two 8-byte moves inline, overlapping when shorter,
/// rather than a call to `memcpy` (about 20 instructions of an 8 B put or get, through
/// the MPI library and natively; callgrind, `capi/mpi/examples/rma_cost`).
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping(src, dst, len)`.
#[inline]
unsafe fn copy_in_pieces(src: *const u8, dst: *mut u8, len: usize) {
    if (8..=16).contains(&len) {
        // SAFETY: `len >= 8`, so the 8 bytes at 0 and at `len - 8` lie inside both
        // ranges, which the caller vouches for and which do not overlap each other.
        unsafe {
            let (head, tail) = (src.cast::<u64>().read_unaligned(), src.add(len - 8).cast::<u64>().read_unaligned());
            dst.cast::<u64>().write_unaligned(head);
            dst.add(len - 8).cast::<u64>().write_unaligned(tail);
        }
        return;
    }
    let mut done = 0;
    while done < len {
        let n = COPY_PIECE.min(len - done);
        // SAFETY: a sub-range of the caller's valid, non-overlapping ranges.
        unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), n) };
        done += n;
    }
}

impl Payload for SharedBytes<'_> {
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn write(&self, offset: usize, src: &[u8]) {
        self.check(offset, src.len());
        // SAFETY: in bounds (checked); `src` is process-private memory, so the ranges
        // cannot overlap; see the type's docs for concurrent access.
        unsafe { copy_in_pieces(src.as_ptr(), self.ptr.add(offset), src.len()) }
    }

    #[inline]
    fn read(&self, offset: usize, dst: &mut [u8]) {
        self.check(offset, dst.len());
        // SAFETY: as for `write`.
        unsafe { copy_in_pieces(self.ptr.add(offset), dst.as_mut_ptr(), dst.len()) }
    }

    #[inline]
    fn zero(&self, offset: usize, len: usize) {
        self.check(offset, len);
        // SAFETY: in bounds (checked); see the type's docs for concurrent access.
        unsafe { std::ptr::write_bytes(self.ptr.add(offset), 0, len) }
    }
}
