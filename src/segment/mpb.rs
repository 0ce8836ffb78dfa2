//! Message-passing buffers (the RCCE model): remote put/get, symmetric allocation, flags.
//!
//! Every core owns `mpb_bytes` (8 KiB by default, the SCC's) of on-"chip" buffer that
//! any core can write or read. Allocation is collective and symmetric, like
//! `RCCE_malloc`: every core makes the same calls in the same order and each runs the
//! same deterministic allocator locally, so an allocation has the same offset in every
//! core's MPB without any communication. Flags are 32-bit words in such allocations,
//! handed off by the protocol in [`crate::protocol::flag`].

use std::fmt;

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::Fingerprint;
use crate::segment::context::CoreContext;
use crate::segment::mapping::SharedBytes;
use crate::protocol::flag;
use crate::protocol::alloc::freelist::{AllocError, Range};
use crate::protocol::payload::Payload;
use crate::sync::AtomicU32;

/// Allocation granule: one x86 cache line, so distinct allocations never share one.
pub const MPB_GRANULE: usize = 64;

/// A symmetric MPB allocation: the same `offset..offset + len` in every core's MPB.
pub type MpbRegion = Range;

/// A flag: one word at the same offset of every core's MPB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flag {
    offset: usize,
}

impl Flag {
    /// Where the flag's word lies in every core's MPB.
    pub(crate) fn offset(self) -> usize {
        self.offset
    }
}

/// Why an MPB put or get was refused. Nothing was copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpbError {
    /// The target is not a core of the job.
    RankOutOfRange {
        /// The target rank.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// The bytes `offset..offset + len` run past the end of the MPB.
    OutOfBounds {
        /// First byte, from the start of the MPB.
        offset: usize,
        /// Bytes to copy.
        len: usize,
        /// Bytes of one MPB.
        mpb_bytes: usize,
    },
    /// The target runs on another node, which the context's own calls do not reach
    /// (`Core`'s calls of the same names do, `core::remote_mpb`).
    OnOtherNode {
        /// The target rank.
        rank: u32,
    },
    /// An atomic update of `width` bytes at `offset`, which is not a multiple of it, or
    /// of a width or op that has no lock-free update.
    Misaligned {
        /// First byte, from the start of the MPB.
        offset: usize,
        /// Bytes of the element.
        width: usize,
    },
    /// The job aborted (some core died) while the call reached another node.
    Aborted(JobAborted),
}

/// Why a flag operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagError {
    /// The target is not a core of the job.
    RankOutOfRange {
        /// The target rank.
        rank: u32,
        /// Cores in the job.
        size: u32,
    },
    /// The target runs on another node: the context's own calls do not reach it, and
    /// nobody waits on another node's copy of a flag (`Core`'s writes and reads do
    /// reach it, `core::remote_mpb`).
    OnOtherNode {
        /// The target rank.
        rank: u32,
    },
    /// The job aborted (some core died) while the call waited.
    Aborted(JobAborted),
}

impl fmt::Display for MpbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not a core of this {size}-core job")
            }
            Self::OutOfBounds { offset, len, mpb_bytes } => {
                write!(f, "{len} bytes at offset {offset} run past the {mpb_bytes}-byte MPB")
            }
            Self::OnOtherNode { rank } => write!(f, "rank {rank} runs on another node: its MPB is reached through Core"),
            Self::Misaligned { offset, width } => {
                write!(f, "no atomic update of {width} bytes at MPB offset {offset}")
            }
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RankOutOfRange { rank, size } => {
                write!(f, "rank {rank} is not a core of this {size}-core job")
            }
            Self::OnOtherNode { rank } => {
                write!(f, "rank {rank} runs on another node: its flags are written and read through Core, never waited on")
            }
            Self::Aborted(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MpbError {}
impl std::error::Error for FlagError {}

impl From<JobAborted> for MpbError {
    fn from(e: JobAborted) -> Self {
        MpbError::Aborted(e)
    }
}

impl From<JobAborted> for FlagError {
    fn from(e: JobAborted) -> Self {
        FlagError::Aborted(e)
    }
}

impl CoreContext {
    fn check_rank(&self, rank: u32) -> Result<(), MpbError> {
        if rank >= self.size() {
            return Err(MpbError::RankOutOfRange { rank, size: self.size() });
        }
        if !self.is_local(rank) {
            return Err(MpbError::OnOtherNode { rank });
        }
        Ok(())
    }

    fn mpb_of(
        &self,
        rank: u32,
        offset: usize,
        len: usize,
    ) -> Result<SharedBytes<'_>, MpbError> {
        self.check_rank(rank)?;
        let region = self.segment().layout().mpbs.get(rank as usize).expect("rank checked");
        if offset.checked_add(len).is_none_or(|end| end > region.len) {
            return Err(MpbError::OutOfBounds { offset, len, mpb_bytes: region.len });
        }
        Ok(self.segment().bytes(region))
    }

    /// `len` bytes at `offset` of core `rank`'s MPB, for C interfaces that address the
    /// MPB through pointers (the RCCE library).
    pub fn mpb_range(&self, rank: u32, offset: usize, len: usize) -> Result<SharedBytes<'_>, MpbError> {
        let mpb = self.mpb_of(rank, offset, len)?;
        Ok(mpb.slice(offset, len))
    }

    /// Bytes of every core's MPB.
    pub fn mpb_bytes(&self) -> usize {
        self.segment().config().mpb_bytes as usize
    }

    /// Copies `src` into core `rank`'s MPB at `offset`.
    pub fn mpb_put(&self, rank: u32, offset: usize, src: &[u8]) -> Result<(), MpbError> {
        self.mpb_of(rank, offset, src.len())?.write(offset, src);
        Ok(())
    }

    /// Copies from core `rank`'s MPB at `offset` into `dst`.
    pub fn mpb_get(&self, rank: u32, offset: usize, dst: &mut [u8]) -> Result<(), MpbError> {
        self.mpb_of(rank, offset, dst.len())?.read(offset, dst);
        Ok(())
    }

    /// Collective: allocates `bytes` at the same offset of every core's MPB. In checking
    /// mode, cores that ask for different sizes all get [`AllocError::Mismatch`], naming
    /// the ranks that differ, and nothing is allocated.
    pub fn mpb_alloc(&self, bytes: usize) -> Result<MpbRegion, AllocError> {
        self.agree_world(&Fingerprint::new("mpb_alloc").field("bytes", bytes as u64))??;
        self.mpb_alloc_replica(bytes)
    }

    /// This core's step of a symmetric allocation: its replica of the allocator.
    fn mpb_alloc_replica(&self, bytes: usize) -> Result<MpbRegion, AllocError> {
        self.mpb_allocator.lock().unwrap_or_else(|e| e.into_inner()).alloc(bytes)
    }

    /// Collective: returns a region from [`CoreContext::mpb_alloc`].
    pub fn mpb_free(&self, region: MpbRegion) -> Result<(), AllocError> {
        self.mpb_allocator.lock().unwrap_or_else(|e| e.into_inner()).free(region)
    }

    /// Collective: allocates a flag, 0 on every core when this returns. Includes a
    /// barrier, so that no core can write a flag another core has not zeroed yet. In
    /// checking mode, a core in another call makes every core return
    /// [`AllocError::Mismatch`], and no flag is allocated.
    pub fn flag_alloc(&self) -> Result<Flag, AllocError> {
        self.agree_world(&Fingerprint::new("flag_alloc"))??;
        let flag = Flag { offset: self.mpb_alloc_replica(MPB_GRANULE)?.offset };
        // Relaxed: the barrier's Release/Acquire orders it before any remote write.
        self.flag_word(self.rank(), flag).store(0, crate::sync::Ordering::Relaxed);
        self.barrier()?;
        Ok(flag)
    }

    /// Collective: releases a flag.
    pub fn flag_free(&self, flag: Flag) -> Result<(), AllocError> {
        self.mpb_free(MpbRegion { offset: flag.offset, len: MPB_GRANULE })
    }

    fn flag_word(&self, rank: u32, flag: Flag) -> &AtomicU32 {
        let region = self.segment().layout().mpbs.get(rank as usize).expect("rank checked");
        self.segment().word(region, flag.offset)
    }

    fn check_flag_rank(&self, rank: u32) -> Result<(), FlagError> {
        self.check_rank(rank).map_err(|e| match e {
            MpbError::OnOtherNode { rank } => FlagError::OnOtherNode { rank },
            MpbError::Aborted(e) => FlagError::Aborted(e),
            _ => FlagError::RankOutOfRange { rank, size: self.size() },
        })
    }

    /// Sets core `rank`'s copy of `flag` to `value` (Release: the writer's earlier MPB
    /// puts are visible to whoever sees the value) and wakes its waiters.
    pub fn flag_write(&self, flag: Flag, rank: u32, value: u32) -> Result<(), FlagError> {
        self.check_flag_rank(rank)?;
        flag::write(self.flag_word(rank, flag), value, &self.segment().slot(rank).bell);
        Ok(())
    }

    /// Reads core `rank`'s copy of `flag`.
    pub fn flag_read(&self, flag: Flag, rank: u32) -> Result<u32, FlagError> {
        self.check_flag_rank(rank)?;
        Ok(flag::read(self.flag_word(rank, flag)))
    }

    /// Waits until this core's copy of `flag` holds `value`.
    pub fn flag_wait(&self, flag: Flag, value: u32) -> Result<(), FlagError> {
        self.flag_wait_at(flag, self.rank(), value)
    }

    /// Waits until this core's copy of `flag`, used as a step counter that writers only
    /// increase, has reached `value` (a writer may already be further ahead).
    pub fn flag_wait_at_least(&self, flag: Flag, value: u32) -> Result<(), FlagError> {
        let bell = &self.segment().slot(self.rank()).bell;
        Ok(flag::wait_at_least(self.flag_word(self.rank(), flag), value, &self.waiter(), bell)?)
    }

    /// Waits until core `rank`'s copy of `flag` holds `value`.
    pub fn flag_wait_at(&self, flag: Flag, rank: u32, value: u32) -> Result<(), FlagError> {
        self.check_flag_rank(rank)?;
        let bell = &self.segment().slot(rank).bell;
        Ok(flag::wait_until(self.flag_word(rank, flag), value, &self.waiter(), bell)?)
    }
}
