//! [`CoreContext`]: what every mechanism needs of the core it runs on.
//!
//! One per attached process: the mapped segment, this core's rank and the job's size,
//! its wait policy and CPU (which make its [`Waiter`]), and its replicas of the
//! symmetric allocators. Mechanisms in `p2p`, `rma` and `coll` take a `&CoreContext`
//! (or narrower: a view, a region, a waiter), never the `Core` facade, so that the
//! facade can sit above them all.
//!
//! Attaching registers the process in its control slot; dropping the context marks the
//! slot finalized: a rank that exits with status 0 without that is reported as a
//! failure, since its peers may be waiting for it.
//!
//! Background work: a layer above (the two-sided engine) registers a [`Background`]
//! once, at attach. Every wait through the context's waiter then drives it (the
//! context is the waiter's [`Progress`]), so that barriers, fences, epochs, locks,
//! flags and collectives keep the core's pending sends and receives moving: MPI's
//! progress rule. The layers below never name the layer that registers it.
//!
//! Checking mode ([`CHECK_VAR`], read once at attach; [`CoreContext::checking`]): every
//! job-wide collective call first compares its arguments across the cores through the
//! segment's checking slots and the world barrier ([`CoreContext::agree_world`], the
//! protocol of `protocol::agree`).

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use shm_layout::{Mesh, WaitPolicy};

use crate::protocol::abort::JobAborted;
use crate::protocol::agree::{Disagreement, Fingerprint, MEMBER_BYTES, agree};
use crate::protocol::alloc::freelist::FreeList;
use crate::protocol::waiter::{Armed, Progress, Waiter};
use crate::segment::mapping::{AttachError, Segment, slot_state};
use crate::segment::mpb::MPB_GRANULE;
use crate::segment::wait_mark::{MarkGuard, WaitMark};
use crate::sync::Ordering;

/// The environment variable that turns on checking mode (`sccrun --check`,
/// `Job::check`): on when set to anything but `0`.
pub const CHECK_VAR: &str = "SCCEMU_CHECK";

// `agree` finds member r's slots at r * MEMBER_BYTES: the layout's per-core stride.
const _: () = assert!(shm_layout::CHECK_BYTES == MEMBER_BYTES && MEMBER_BYTES % shm_layout::LINE == 0);

/// Whether the environment asks for checking mode.
fn checking_from_env() -> bool {
    std::env::var_os(CHECK_VAR).is_some_and(|v| v != "0")
}

/// Where a core sits on the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshPosition {
    /// Index of the core's tile, row-major.
    pub tile: u32,
    /// Column of the tile.
    pub x: u32,
    /// Row of the tile.
    pub y: u32,
    /// Which of the tile's cores this is.
    pub core_in_tile: u32,
}

impl MeshPosition {
    /// The position of core `rank` on `mesh` (tiles filled in rank order).
    pub fn of(rank: u32, mesh: Mesh) -> MeshPosition {
        let tile = rank / mesh.cores_per_tile;
        MeshPosition { tile, x: tile % mesh.cols, y: tile / mesh.cols, core_in_tile: rank % mesh.cores_per_tile }
    }

    /// Router hops between two tiles under XY routing.
    pub fn hops(&self, other: &MeshPosition) -> u32 {
        self.x.abs_diff(other.x) + self.y.abs_diff(other.y)
    }
}

/// Work that a layer above carries on in the background of this core's waits (module
/// docs): [`Progress`], given the context.
pub trait Background: Send + Sync {
    /// [`Progress::poll`].
    fn poll(&self, ctx: &CoreContext) -> bool;
    /// [`Progress::arm`].
    fn arm<'a>(&'a self, ctx: &'a CoreContext) -> Armed<'a>;
    /// The work itself, for the layer that registered it to find it again from the
    /// context alone (`coll` sends its messages through the `p2p` engine this way).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// One attached core's context.
pub struct CoreContext {
    segment: Segment,
    rank: u32,
    size: u32,
    policy: WaitPolicy,
    /// The one CPU this process is pinned to, if it is.
    cpu: Option<u16>,
    /// This core's replica of the symmetric MPB allocator (see `mpb`).
    pub(crate) mpb_allocator: Mutex<FreeList>,
    /// The job's MPB window pool, once reserved (see `mpb_pool`).
    pub(crate) mpb_pool: OnceLock<crate::segment::mpb_pool::MpbPool>,
    /// How many world-collective heap calls this core has made (see `collective_alloc`).
    pub(crate) heap_calls: Mutex<u64>,
    /// The background work every wait drives, once registered.
    background: OnceLock<Arc<dyn Background>>,
    /// Checking mode, from the environment at attach.
    checking: bool,
    /// How many job-wide argument checks this core has made (their sequence numbers).
    world_checks: Mutex<u64>,
    /// Windows dropped without `free`, until reclaimed (see `reclaim`).
    pub(crate) orphans: Mutex<Vec<crate::segment::reclaim::Orphan>>,
    /// Windows across nodes this core leads on its node, dropped, not yet returned.
    pub(crate) node_orphans: Mutex<Vec<crate::segment::reclaim::NodeOrphan>>,
    /// Private memory mapped onto heap pages (see `adopt`).
    pub(crate) adoptions: Mutex<Vec<crate::segment::adopt::Adoption>>,
    /// Job-wide barriers this core has entered (every core enters the same ones, so
    /// their parity is the same everywhere: virtual time keys its stamps by it).
    world_barriers: crate::sync::AtomicU64,
}

impl CoreContext {
    /// Maps the segment behind `fd` and registers this process as core `rank` of `size`;
    /// `cpu` is the CPU it is pinned to, if any.
    pub fn attach(fd: OwnedFd, rank: u32, size: u32, cpu: Option<u16>) -> Result<CoreContext, AttachError> {
        let segment = Segment::attach(fd)?;
        let config = *segment.config();
        if size != config.cores || rank >= size || !config.is_local(rank) {
            return Err(AttachError::Rank { rank, size, cores: config.cores });
        }
        let policy = WaitPolicy::from_u32(config.wait).unwrap_or(WaitPolicy::Block);
        let slot = segment.slot(rank);
        slot.pid.store(std::process::id(), Ordering::Relaxed);
        slot.state.store(slot_state::ATTACHED, Ordering::Release);
        let mpb_allocator = Mutex::new(FreeList::new(config.mpb_bytes as usize, MPB_GRANULE));
        Ok(CoreContext {
            segment,
            rank,
            size,
            policy,
            cpu,
            mpb_allocator,
            mpb_pool: OnceLock::new(),
            heap_calls: Mutex::new(0),
            background: OnceLock::new(),
            checking: checking_from_env(),
            world_checks: Mutex::new(0),
            orphans: Mutex::new(Vec::new()),
            node_orphans: Mutex::new(Vec::new()),
            adoptions: Mutex::new(Vec::new()),
            world_barriers: crate::sync::AtomicU64::new(0),
        })
    }

    /// This core's rank, `0..size`.
    #[inline]
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of cores in the job.
    #[inline]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Whether `rank` runs on this core's node (every rank does unless the job spans
    /// several nodes: see `job::node`). Memory of a rank on another node is not in this
    /// segment, only a stand-in that the node's gateway serves.
    #[inline]
    pub fn is_local(&self, rank: u32) -> bool {
        self.segment.config().is_local(rank)
    }

    /// Whether the job spans several nodes.
    pub fn spans_nodes(&self) -> bool {
        self.segment.config().spans_nodes()
    }

    /// The job's mesh of tiles.
    pub fn mesh(&self) -> Mesh {
        self.segment.config().mesh
    }

    /// The chip's core that `rank` plays (its rank, unless the launcher placed it; RCCE's
    /// host files do). `None` if `rank` is not a core of the job.
    pub fn core_id(&self, rank: u32) -> Option<u32> {
        (rank < self.size).then(|| self.segment.slot(rank).core_id.load(Ordering::Relaxed))
    }

    /// Where `rank` sits on the mesh, from its core ID. `None` if it is not a core of the
    /// job.
    pub fn position_of(&self, rank: u32) -> Option<MeshPosition> {
        Some(MeshPosition::of(self.core_id(rank)?, self.mesh()))
    }

    /// This core's tile and mesh coordinates.
    pub fn position(&self) -> MeshPosition {
        self.position_of(self.rank).expect("own rank is in the job")
    }

    /// This core's tile.
    pub fn tile(&self) -> u32 {
        self.position().tile
    }

    /// How this core waits (spin, yield, futex).
    pub fn wait_policy(&self) -> WaitPolicy {
        self.policy
    }

    /// Monotonic time since the job was launched, comparable across cores.
    pub fn clock(&self) -> Duration {
        crate::segment::clock::since(self.segment.header().start_ns)
    }

    /// [`CoreContext::clock`] in seconds, like `MPI_Wtime`.
    pub fn wtime(&self) -> f64 {
        self.clock().as_secs_f64()
    }

    pub(crate) fn segment(&self) -> &Segment {
        &self.segment
    }

    /// The mapped segment, for the corruption tests only (`tests/corruption.rs`): they
    /// overwrite protocol words behind the protocols' backs, from a running job, to
    /// check that the damage is detected rather than trusted. Nothing else outside the
    /// crate should touch the segment directly, hence hidden.
    #[doc(hidden)]
    pub fn segment_for_tests(&self) -> &Segment {
        &self.segment
    }

    /// This core's CPU when that decides between spinning and yielding (see
    /// [`Waiter::handoff_cpu`]).
    pub(crate) fn handoff_cpu(&self) -> Option<u16> {
        self.waiter().handoff_cpu()
    }

    /// This core's waiter, driving the registered background work while it waits.
    pub(crate) fn waiter(&self) -> Waiter<'_> {
        match self.background.get() {
            Some(_) => self.plain_waiter().with_progress(self),
            None => self.plain_waiter(),
        }
    }

    /// A waiter that drives the background work and sleeps whenever it is idle,
    /// whatever the job's policy: for the asynchronous progress thread
    /// (`core::async_progress`), which must not take a CPU from the cores.
    pub(crate) fn background_waiter(&self) -> Waiter<'_> {
        Waiter::new(WaitPolicy::Block, self.segment.job()).with_progress(self)
    }

    /// This core's waiter without the background work: for that work's own waits.
    pub(crate) fn plain_waiter(&self) -> Waiter<'_> {
        Waiter::new(self.policy, self.segment.job()).on_cpu(self.cpu)
    }

    /// The registered background work, if it is a `T`.
    pub(crate) fn background_as<T: 'static>(&self) -> Option<&T> {
        self.background.get()?.as_any().downcast_ref::<T>()
    }

    /// Registers the work that every later wait of this core drives (once; a second
    /// registration is refused and returned).
    pub(crate) fn set_background(&self, work: Arc<dyn Background>) -> Result<(), Arc<dyn Background>> {
        self.background.set(work)
    }

    /// Wakes whoever waits on core `rank`'s doorbell ([`CoreContext::wait_on`]); call it
    /// after storing the change they wait for. Ignores ranks outside the job.
    pub fn ring(&self, rank: u32) {
        if rank < self.size {
            self.segment.slot(rank).bell.ring();
        }
    }

    /// Waits through this core's waiter (spin, yield, futex sleep) until `ready` returns
    /// `Some`, sleeping on core `rank`'s doorbell: whoever makes `ready` true must then
    /// [`ring`](CoreContext::ring) `rank`. Fails when the job aborts. Panics if `rank` is
    /// not a core of the job.
    pub fn wait_on<T>(&self, rank: u32, ready: impl FnMut() -> Option<T>) -> Result<T, JobAborted> {
        self.waiter().wait_until(&self.segment.slot(rank).bell, ready)
    }

    /// Marks this core blocked on `mark` for the launcher's deadlock report, until the
    /// guard drops.
    pub fn mark_wait(&self, mark: WaitMark) -> MarkGuard<'_> {
        self.segment.slot(self.rank).wait.mark(mark)
    }

    /// `Err` naming the failed rank once the job is aborting.
    pub fn check_job(&self) -> Result<(), JobAborted> {
        self.segment.job().check()
    }

    /// Waits until every core of the job has entered the barrier. Never compares
    /// arguments, even in checking mode: the mechanisms whose entry points compared
    /// theirs already use it; `Core::barrier` is the compared one.
    pub fn barrier(&self) -> Result<(), JobAborted> {
        // Relaxed: a private count of this core's own calls.
        self.world_barriers.fetch_add(1, Ordering::Relaxed);
        // Waiters sleep on core 0's barrier bell, which messages to core 0 do not ring
        // (`CoreSlot::barrier_bell`); across nodes on its doorbell, the one the node's
        // gateway rings when it arrives last and sleeps on otherwise (`job::gateway`).
        let config = self.segment.config();
        let slot = self.segment.slot(0);
        let home = if config.spans_nodes() { &*slot.bell } else { &slot.barrier_bell };
        self.segment.sync_area().world_barrier.wait(world_barrier_parties(config), &self.waiter(), home)
    }

    /// How many job-wide barriers this core has entered.
    pub fn barriers_entered(&self) -> u64 {
        self.world_barriers.load(Ordering::Relaxed)
    }

    /// Whether checking mode is on: collectives and collective allocations compare
    /// their arguments across the cores and refuse, on every core, a call whose
    /// arguments disagree. Set by `sccrun --check`, `Job::check(true)` or
    /// `SCCEMU_CHECK=1`, read once at attach.
    pub fn checking(&self) -> bool {
        self.checking
    }

    /// In checking mode, compares `fingerprint` across every core of the job (the
    /// protocol of `protocol::agree`, on the segment's checking slots and the world
    /// barrier); `Ok(Ok(()))` at once otherwise. Every core must call it at the same
    /// point: job-wide collective calls do, first thing.
    pub fn agree_world(&self, fingerprint: &Fingerprint) -> Result<Result<(), Disagreement>, JobAborted> {
        // Checking compares slots of every core in the segment: one node's only, across
        // nodes, so it is off there (`sccrun` refuses `--check` with `--nodes`).
        if !self.checking || self.spans_nodes() {
            return Ok(Ok(()));
        }
        let seq = {
            let mut checks = self.world_checks.lock().unwrap_or_else(|e| e.into_inner());
            *checks += 1;
            *checks
        };
        let slots = self.segment.bytes(self.segment.layout().checks.region());
        agree(&slots, self.size, self.rank, seq, fingerprint, || self.barrier())
    }
}

impl CoreContext {
    /// Marks this core finalized, as dropping it does, for interfaces whose finalize
    /// cannot consume the core (C libraries keep it in a static). The core stays
    /// usable, but its launcher no longer counts it as live.
    pub fn leave(&self) {
        let slot = self.segment.slot(self.rank);
        slot.state.store(slot_state::FINALIZED, Ordering::Release);
        // Cores that owe this one an answer may sleep on its doorbell until it leaves
        // (`p2p::engine`'s settle); the ring's fence orders the store above before its
        // load of the doorbell's word.
        slot.bell.ring();
    }
}

impl Progress for CoreContext {
    fn poll(&self) -> bool {
        self.background.get().is_some_and(|b| b.poll(self))
    }

    fn arm(&self) -> Armed<'_> {
        self.background.get().map_or(Armed::Idle, |b| b.arm(self))
    }
}

impl Drop for CoreContext {
    fn drop(&mut self) {
        // One line for what this core leaves unreclaimed; not when the job is aborting,
        // since then the failure is the news.
        if let Some(report) = self.orphan_report().filter(|_| self.check_job().is_ok()) {
            eprintln!("{report}");
        }
        self.leave();
    }
}

/// Who takes part in the segment's world barrier: every core, or across nodes this
/// node's cores and its gateway, which arrives last once every node's cores have
/// (`job::gateway`).
pub(crate) fn world_barrier_parties(config: &shm_layout::Config) -> u32 {
    if config.spans_nodes() { config.node_cores + 1 } else { config.cores }
}
