//! A process's view of itself as one core of the emulated chip.
//!
//! [`Core::attach`] reads the job's environment (set by `sccrun` or a [`crate::Job`]),
//! maps the segment, validates it, and registers this process in its control slot.
//! Dropping the core (or [`Core::finalize`]) marks the slot finalized: a rank that
//! exits with status 0 without that is reported as a failure, since its peers may be
//! waiting for it.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

use shm_layout::{Mesh, WaitPolicy};

use crate::protocol::abort::{AbortCause, JobAborted};
use crate::protocol::alloc::freelist::FreeList;
use crate::segment::mapping::{AttachError, Segment, slot_state};
use crate::sync::Ordering;
use crate::protocol::waiter::Waiter;

/// Environment variables through which a launcher describes a core to its process.
pub mod env {
    /// The inherited segment fd.
    pub const FD: &str = "SCCEMU_FD";
    pub const RANK: &str = "SCCEMU_RANK";
    pub const SIZE: &str = "SCCEMU_SIZE";
}

/// Where a core sits on the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshPosition {
    pub tile: u32,
    /// Column of the tile.
    pub x: u32,
    /// Row of the tile.
    pub y: u32,
    /// Which of the tile's cores this is.
    pub core_in_tile: u32,
}

impl MeshPosition {
    pub fn of(rank: u32, mesh: Mesh) -> MeshPosition {
        let tile = rank / mesh.cores_per_tile;
        MeshPosition {
            tile,
            x: tile % mesh.cols,
            y: tile / mesh.cols,
            core_in_tile: rank % mesh.cores_per_tile,
        }
    }

    /// Router hops between two tiles under XY routing.
    pub fn hops(&self, other: &MeshPosition) -> u32 {
        self.x.abs_diff(other.x) + self.y.abs_diff(other.y)
    }
}

/// One core of a running job.
pub struct Core {
    segment: Segment,
    rank: u32,
    size: u32,
    policy: WaitPolicy,
    /// The one CPU this process is pinned to, if it is.
    cpu: Option<u16>,
    /// This core's replica of the symmetric MPB allocator (see `mpb`).
    pub(crate) mpb_allocator: Mutex<FreeList>,
    /// How many world-collective heap calls this core has made (see `heap`).
    pub(crate) heap_calls: Mutex<u64>,
    /// Two-sided channels (placed at attach, before any other symmetric allocation).
    pub(crate) p2p: crate::p2p::endpoint::Engine,
}

fn env_u32(var: &'static str) -> Result<u32, AttachError> {
    let value = std::env::var(var).map_err(|_| AttachError::NotInJob(var))?;
    value.parse().map_err(|_| AttachError::BadEnv { var, value })
}

impl Core {
    /// Attaches to the job that started this process.
    pub fn attach() -> Result<Core, AttachError> {
        let fd = env_u32(env::FD)? as RawFd;
        let (rank, size) = (env_u32(env::RANK)?, env_u32(env::SIZE)?);
        nix::fcntl::fcntl(
            // SAFETY: only probes whether `fd` is open; the borrow ends with the call.
            unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) },
            nix::fcntl::FcntlArg::F_GETFD,
        )
        .map_err(|_| AttachError::BadEnv { var: env::FD, value: fd.to_string() })?;
        // SAFETY: the launcher passed this fd for this process alone, and it is open
        // (probed above); nothing else in the process owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Core::attach_fd(fd, rank, size)
    }

    /// Attaches to the segment behind `fd` as core `rank` of `size`.
    pub fn attach_fd(fd: OwnedFd, rank: u32, size: u32) -> Result<Core, AttachError> {
        let segment = Segment::attach(fd)?;
        let config = *segment.config();
        if size != config.cores || rank >= size {
            return Err(AttachError::Rank { rank, size, cores: config.cores });
        }
        let policy = WaitPolicy::from_u32(config.wait).unwrap_or(WaitPolicy::Block);
        let slot = segment.slot(rank);
        slot.pid.store(std::process::id(), Ordering::Relaxed);
        slot.state.store(slot_state::ATTACHED, Ordering::Release);
        let mut mpb = FreeList::new(config.mpb_bytes as usize, crate::segment::mpb::MPB_GRANULE);
        let p2p = crate::p2p::endpoint::Engine::new(crate::p2p::channel::Placement::setup(&config, &mut mpb));
        let mpb_allocator = Mutex::new(mpb);
        Ok(Core {
            segment,
            rank,
            size,
            policy,
            cpu: crate::core::pin::pinned_cpu(),
            mpb_allocator,
            heap_calls: Mutex::new(0),
            p2p,
        })
    }

    #[inline]
    pub fn rank(&self) -> u32 {
        self.rank
    }

    #[inline]
    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn mesh(&self) -> Mesh {
        self.segment.config().mesh
    }

    /// This core's tile and mesh coordinates.
    pub fn position(&self) -> MeshPosition {
        MeshPosition::of(self.rank, self.mesh())
    }

    pub fn tile(&self) -> u32 {
        self.position().tile
    }

    pub fn wait_policy(&self) -> WaitPolicy {
        self.policy
    }

    /// Monotonic time since the job was launched, comparable across cores.
    pub fn clock(&self) -> Duration {
        crate::segment::clock::since(self.segment.header().start_ns)
    }

    /// [`Core::clock`] in seconds, like `MPI_Wtime`.
    pub fn wtime(&self) -> f64 {
        self.clock().as_secs_f64()
    }

    pub(crate) fn segment(&self) -> &Segment {
        &self.segment
    }

    /// This core's CPU when that decides between spinning and yielding (see
    /// [`Waiter::handoff_cpu`]).
    pub(crate) fn handoff_cpu(&self) -> Option<u16> {
        self.waiter().handoff_cpu()
    }

    pub(crate) fn waiter(&self) -> Waiter<'_> {
        Waiter::new(self.policy, self.segment.job()).on_cpu(self.cpu)
    }

    /// `Err` naming the failed rank once the job is aborting.
    pub fn check_job(&self) -> Result<(), JobAborted> {
        self.segment.job().check()
    }

    /// Waits until every core of the job has entered the barrier.
    pub fn barrier(&self) -> Result<(), JobAborted> {
        let home = &self.segment.slot(0).bell;
        self.segment.sync_area().world_barrier.wait(self.size, &self.waiter(), home)
    }

    /// Aborts the whole job, like `MPI_Abort`: every core's blocked and later calls fail
    /// naming this rank, and this process exits with `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.segment.abort(Some(self.rank), AbortCause::UserAbort(code));
        std::process::exit(code)
    }

    /// Leaves the job cleanly (dropping the core does the same).
    pub fn finalize(self) {}
}

impl Drop for Core {
    fn drop(&mut self) {
        self.segment.slot(self.rank).state.store(slot_state::FINALIZED, Ordering::Release);
    }
}
