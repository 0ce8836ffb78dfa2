//! MPI windows on sccemu windows of bytes.
//!
//! An MPI window is an `sccemu::Window<u8>` over the members of its communicator
//! (`sccemu::Comm::window`: any communicator, a sub-communicator of any size or order,
//! `MPI_COMM_SELF`), whose ranks are the communicator's, and whose index is a byte
//! offset into each target's part: a displacement times the target's `disp_unit`. So
//! every rank argument of a window call (targets, lock and flush ranks) is a rank of the
//! window's communicator, passed to sccemu as it is; the processes of a PSCW group are
//! translated to their ranks there (`winsync`). Each rank's part is memory it brings
//! (`Comm::window_over`) or that the window allocates:
//! - `MPI_Win_create`: the caller's buffer, in place: memory from `MPI_Alloc_mem` is
//!   in the shared heap already; any other is adopted (its pages remapped onto heap
//!   pages, `CoreContext::adopt`) until the window is freed;
//! - `MPI_Win_allocate`: parts the sccemu window allocates (DRAM, or the MPB with the
//!   info key `sccemu_placement=mpb`: from the MPB window pool, which `MPI_Init`
//!   reserves with every byte of the MPB that the two-sided channels leave);
//! - `MPI_Win_allocate_shared`: one heap block that the communicator's rank 0
//!   allocates, the parts contiguous in rank order, as MPI specifies;
//! - `MPI_Win_create_dynamic`: every part is the whole heap, and displacements are
//!   addresses translated through the target's table of attached memory (`dynamic`).
//!
//! Every part of every flavor is mapped by every process of a node, so
//! `MPI_Win_shared_query` gives a usable pointer for any window but a dynamic one, and
//! for any rank of the node. Across nodes (`sccemu::Comm::window` over messages) every
//! flavor works but a shared window over several nodes' ranks, which is refused up
//! front ([`refuse_across_nodes`]).
//!
//! Creation is collective and agrees first: every rank prepares its memory, then all
//! exchange whether that worked, their sizes and displacement units (one allgather);
//! if any rank failed, every rank returns an error (the failing one its own), undoes
//! what it prepared, and the job goes on. The accumulate strategy and the placement
//! come from the info (and the environment), as `win_hints` reads them.

use std::ffi::{c_int, c_void};

use sccemu::segment::collective_alloc::HeapRegion;
use sccemu::{Allgather, Window};

use crate::comm::{CommObj, coll_error};
use crate::dynamic::AttachTable;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::registry::{Registry, Serial};
use crate::state::mpi;

/// `MPI_WIN_NULL`: the window handles' base.
pub const WIN_NULL: c_int = 0x5000_0000;

/// How a window got its memory (`MPI_WIN_FLAVOR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `MPI_Win_create`.
    Create = 1,
    /// `MPI_Win_allocate`.
    Allocate = 2,
    /// `MPI_Win_create_dynamic`.
    Dynamic = 3,
    /// `MPI_Win_allocate_shared`.
    Shared = 4,
}

/// What one rank's part is, seen from every rank (by its rank in the window's
/// communicator, which is the sccemu window's rank too).
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Bytes of its part.
    pub size: usize,
    /// Its displacement unit.
    pub disp_unit: usize,
    /// The largest displacement inside the part (`size / disp_unit`): the fast paths
    /// check a displacement against it, so that multiplying it by the unit afterwards
    /// cannot overflow.
    pub max_disp: usize,
}

/// Memory a rank brought to a window, to give back when it is freed.
#[derive(Debug)]
pub enum Own {
    /// Nothing (the sccemu window frees its own allocation).
    Nothing,
    /// Adopted pages of the caller's buffer at this address.
    Adopted(usize),
    /// A heap block this rank allocated for the window.
    Block(HeapRegion),
}

/// The changing state of a window.
pub struct WinState {
    /// The sccemu window, until freed.
    pub win: Option<Window<'static, u8>>,
    /// What to give back at free.
    pub own: Own,
    /// A dynamic window's attached memory.
    pub attached: Option<AttachTable>,
    /// The groups of the last `MPI_Win_post` and `MPI_Win_start`, as sccemu groups
    /// (`crate::winsync`): PSCW loops pass the same group every epoch.
    pub epoch_groups: [Option<CachedGroup>; 2],
}

/// An `MPI_Group` handle, the count of group frees when it was read
/// (`crate::group::frees`), and the sccemu group it named then.
pub type CachedGroup = (c_int, u64, sccemu::Group);

/// One MPI window.
pub struct WinObj {
    /// The communicator it was created on.
    pub comm: &'static CommObj,
    /// How it got its memory.
    pub flavor: Flavor,
    /// Every rank's part, by rank in `comm`.
    pub targets: Vec<Target>,
    /// The rest, which calls change.
    pub state: Serial<WinState>,
    /// This rank's part size and displacement unit, where `MPI_Win_get_attr`'s
    /// `MPI_WIN_SIZE` and `MPI_WIN_DISP_UNIT` point (the object's address is stable).
    pub own_part: (isize, c_int),
    /// The address `MPI_Win_create` was given, if this is such a window.
    pub given_base: Option<usize>,
    /// `MPI_Win_set_name`'s name.
    pub name: std::sync::Mutex<String>,
    /// The hints in use, as `MPI_Win_get_info` reports them (made by `hints` in this module).
    pub hints: crate::info::Pairs,
}

static WINS: Registry<WinObj, WIN_NULL> = Registry::new();

/// The window `handle` names, if live: the fast paths' lookup (one atomic load).
#[inline(always)]
pub fn get(handle: c_int) -> Option<&'static WinObj> {
    WINS.get(handle)
}

/// The window `handle` names.
#[inline]
pub fn lookup(handle: c_int) -> MpiResult<&'static WinObj> {
    match WINS.get(handle) {
        Some(w) => Ok(w),
        None if handle == WIN_NULL => fail(class::WIN, "MPI_WIN_NULL is not a window"),
        None => fail(class::WIN, format!("{handle:#x} is not a window handle")),
    }
}

/// Checks that `win` names a live window.
pub fn check_handle(win: c_int) -> MpiResult<()> {
    lookup(win).map(drop)
}

/// A rank's arguments and prepared memory for a new window.
pub struct Prepared {
    /// Its part, for a window over memory it brings (`None`: the window allocates).
    pub part: Option<HeapRegion>,
    /// What to give back if creation fails, or at free.
    pub own: Own,
    /// Bytes and displacement unit.
    pub size: usize,
    /// Displacement unit.
    pub disp_unit: usize,
    /// The address `MPI_Win_create` was given (`MPI_WIN_BASE`); `None` for the other
    /// flavours, whose base is their part's.
    pub base: Option<usize>,
}

/// Gives back what [`Prepared::own`] holds.
pub fn give_back(own: &Own) -> MpiResult<()> {
    let ctx = mpi()?.core.context();
    match *own {
        Own::Nothing => Ok(()),
        Own::Adopted(addr) => crate::ffi::window::release(ctx, addr),
        Own::Block(block) => {
            ctx.heap_free_local(block).map_err(|e| MpiError::new(class::NO_MEM, e.to_string()))
        }
    }
}

/// Refuses, in a job that spans nodes, the windows that cannot cross them, before
/// anything is allocated, shared or sent: a shared one over ranks of several nodes (they
/// share no memory). The other flavors cross nodes (`docs/MULTINODE.md`).
/// Every rank decides this alike from the job's configuration and the communicator, so
/// each returns the error and none waits for another.
pub fn refuse_across_nodes(comm: &CommObj, flavor: Flavor) -> MpiResult<()> {
    let ctx = mpi()?.core.context();
    // This rank is a member: the members share its node if each is local.
    let one_node = || comm.coll().members().iter().all(|&r| ctx.is_local(r));
    let refused = match flavor {
        _ if !ctx.spans_nodes() => None,
        Flavor::Shared if !one_node() => {
            Some("shared MPI windows need ranks of one node (this one spans nodes)")
        }
        _ => None,
    };
    match refused {
        Some(why) => fail(class::UNSUPPORTED_OPERATION, why),
        None => Ok(()),
    }
}

/// Collective over `comm`: the memory of `MPI_Win_allocate_shared`, one heap block
/// that rank 0 allocates, each rank's part right after the previous rank's.
pub fn prepare_shared(
    comm: &CommObj,
    size: MpiResult<usize>,
    disp_unit: MpiResult<usize>,
) -> MpiResult<Prepared> {
    let local = size.and_then(|s| Ok((s, disp_unit?)));
    let mine = match &local {
        Ok((s, _)) => [1, *s as u64],
        Err(_) => [0, 0],
    };
    let mut all = vec![0u64; 2 * comm.size() as usize];
    comm.coll().allgather(&mine, &mut all, Allgather::Auto).map_err(coll_error)?;
    let (size, disp_unit) = local?;
    if let Some(rank) = all.chunks(2).position(|w| w[0] == 0) {
        return fail(class::ARG, format!("rank {rank} of the communicator passed bad arguments"));
    }
    let sizes: Vec<usize> = all.chunks(2).map(|w| w[1] as usize).collect();
    let total = sizes.iter().try_fold(0usize, |t, &s| t.checked_add(s));
    let ctx = mpi()?.core.context();
    // Rank 0's block, as (offset + 1, bytes); 0 if it could not allocate.
    let mut block = [0u64; 2];
    if comm.rank == 0 {
        if let Some(Ok(r)) = total.map(|t| ctx.heap_alloc_local(t.max(1))) {
            block = [r.offset as u64 + 1, r.len as u64];
        }
    }
    comm.coll().bcast(0, &mut block).map_err(coll_error)?;
    if block[0] == 0 {
        return fail(
            class::NO_MEM,
            format!("no shared heap for {} bytes of windows", total.unwrap_or(usize::MAX)),
        );
    }
    let region = HeapRegion { offset: block[0] as usize - 1, len: block[1] as usize };
    let before: usize = sizes[..comm.rank as usize].iter().sum();
    let part = HeapRegion { offset: region.offset + before, len: size };
    let own = if comm.rank == 0 { Own::Block(region) } else { Own::Nothing };
    Ok(Prepared { part: Some(part), own, size, disp_unit, base: None })
}

/// Collective: creates a window of `flavor` over `prepared` (each rank's own result),
/// first agreeing across `comm` that every rank prepared (module docs).
pub fn create(
    comm: &'static CommObj,
    flavor: Flavor,
    info: c_int,
    prepared: MpiResult<Prepared>,
) -> MpiResult<c_int> {
    // Argument errors found here still take part in the agreement.
    let prepared = prepared.and_then(|p| {
        let (strategy, placement, hints) = crate::win_hints::read(info)?;
        Ok((p, strategy, placement, hints))
    });
    let mine = match &prepared {
        Ok((p, ..)) => [1, p.size as u64, p.disp_unit as u64],
        Err(_) => [0, 0, 0],
    };
    let mut all = vec![0u64; 3 * comm.size() as usize];
    comm.coll().allgather(&mine, &mut all, Allgather::Auto).map_err(coll_error)?;
    let failed = all.chunks(3).position(|w| w[0] == 0);
    let (prepared, strategy, placement, hints) = match (prepared, failed) {
        (Err(e), _) => return Err(e),
        (Ok((p, ..)), Some(rank)) => {
            give_back(&p.own)?;
            return fail(class::ARG, format!("rank {rank} of the communicator could not create its part"));
        }
        (Ok(ready), None) => ready,
    };
    let made = {
        let coll = comm.coll();
        match prepared.part {
            Some(part) => coll.window_over::<u8>(part, strategy),
            None => coll.window_with::<u8>(prepared.size, placement, strategy),
        }
    };
    let win = match made {
        Ok(win) => win,
        Err(e) => {
            give_back(&prepared.own)?;
            return Err(window_error(e));
        }
    };
    let targets: Vec<Target> = all
        .chunks(3)
        .map(|w| {
            let (size, disp_unit) = (w[1] as usize, w[2] as usize);
            Target { size, disp_unit, max_disp: size / disp_unit.max(1) }
        })
        .collect();
    let attached = match flavor {
        Flavor::Dynamic => Some(AttachTable::create(comm).map_err(window_error)?),
        _ => None,
    };
    let state =
        Serial::new(WinState { win: Some(win), own: prepared.own, attached, epoch_groups: [None, None] });
    let own_part = match flavor {
        Flavor::Dynamic => (0, 1),
        _ => (targets[comm.rank as usize].size as isize, targets[comm.rank as usize].disp_unit as c_int),
    };
    let given_base = prepared.base;
    let name = std::sync::Mutex::new(String::new());
    let obj = WinObj { comm, flavor, targets, state, own_part, given_base, name, hints };
    WINS.insert(obj).ok_or_else(|| MpiError::new(class::INTERN, "too many windows"))
}

/// Collective: frees `handle`'s window (`MPI_Win_free`).
pub fn free(handle: c_int) -> MpiResult<()> {
    let obj = lookup(handle)?;
    let (win, own, attached) =
        obj.state.with(|s| (s.win.take(), std::mem::replace(&mut s.own, Own::Nothing), s.attached.take()));
    let win = win.ok_or_else(|| MpiError::new(class::WIN, "the window was freed"))?;
    win.free().map_err(window_error)?;
    if let Some(attached) = attached {
        attached.free()?;
    }
    give_back(&own)?;
    WINS.remove(handle);
    crate::errhandler::forget(handle);
    Ok(())
}

/// Runs `f` on the live sccemu window of `obj` (and a dynamic window's attachments).
#[inline]
pub fn with_win<R>(
    obj: &WinObj,
    f: impl FnOnce(&Window<'static, u8>, Option<&mut AttachTable>) -> MpiResult<R>,
) -> MpiResult<R> {
    obj.state.with(|s| match &s.win {
        Some(win) => f(win, s.attached.as_mut()),
        None => fail(class::WIN, "the window was freed"),
    })
}

/// `MPI_Win_shared_query`: `rank`'s size, displacement unit and base address here;
/// for `MPI_PROC_NULL`, those of the lowest rank whose part is not empty (size 0 and a
/// null base if every part is).
pub fn shared_query(obj: &WinObj, rank: c_int) -> MpiResult<(usize, usize, *mut c_void)> {
    if obj.flavor == Flavor::Dynamic {
        return fail(class::RMA_FLAVOR, "a dynamic window has no parts to query");
    }
    let (rank, t) = if rank == crate::p2p::PROC_NULL {
        match obj.targets.iter().enumerate().find(|(_, t)| t.size > 0) {
            Some((r, t)) => (r, *t),
            None => return Ok((0, obj.targets.first().map_or(1, |t| t.disp_unit), std::ptr::null_mut())),
        }
    } else {
        match usize::try_from(rank).ok().and_then(|r| Some((r, *obj.targets.get(r)?))) {
            Some(found) => found,
            None => return fail(class::RANK, format!("rank {rank} of a window of {}", obj.targets.len())),
        }
    };
    let base = with_win(obj, |w, _| w.part_ptr(rank as u32).map_err(rma_error))?;
    Ok((t.size, t.disp_unit, base.cast()))
}

/// The error of a refused window creation or free.
#[cold]
#[inline(never)]
pub fn window_error(e: sccemu::WindowError) -> MpiError {
    use sccemu::WindowError as E;
    let class = match &e {
        E::Alloc(_) | E::TooLarge { .. } | E::TooBigForMpb { .. } | E::NoMpbPool => class::NO_MEM,
        E::EpochOpen { .. } => class::RMA_SYNC,
        E::Mismatch { .. } => class::NOT_SAME,
        E::OutsideHeap { .. } => class::BASE,
        E::AcrossNodes { .. } => class::UNSUPPORTED_OPERATION,
        _ => class::OTHER,
    };
    MpiError::new(class, e.to_string())
}

/// The error of a refused put, get or atomic.
#[cold]
#[inline(never)]
pub fn rma_error(e: sccemu::RmaError) -> MpiError {
    use sccemu::RmaError as E;
    let class = match e {
        E::RankOutOfRange { .. } => class::RANK,
        E::OutOfBounds { .. } => class::RMA_RANGE,
        E::Misaligned { .. } => class::DISP,
        E::NoEpoch { .. } | E::NotPassive { .. } => class::RMA_SYNC,
        E::LengthMismatch { .. } => class::COUNT,
        E::Op(_) => class::OP,
        E::OnOtherNode { .. } => class::UNSUPPORTED_OPERATION,
        E::Aborted(_) => class::OTHER,
    };
    MpiError::new(class, e.to_string())
}

/// The error of a refused accumulate.
#[cold]
#[inline(never)]
pub fn acc_error(e: sccemu::AccError) -> MpiError {
    match e {
        sccemu::AccError::Rma(e) => rma_error(e),
        sccemu::AccError::Op(e) => MpiError::new(class::OP, e.to_string()),
        e @ sccemu::AccError::NotLockFree { .. } => {
            MpiError::new(class::UNSUPPORTED_OPERATION, e.to_string())
        }
        e => MpiError::new(class::OTHER, e.to_string()),
    }
}

/// The error of a refused synchronization.
#[cold]
#[inline(never)]
pub fn sync_error(e: sccemu::SyncError) -> MpiError {
    use sccemu::SyncError as E;
    let class = match &e {
        E::RankOutOfRange { .. } => class::RANK,
        E::Assert(_) => class::ASSERT,
        E::Aborted(_) => class::OTHER,
        _ => class::RMA_SYNC,
    };
    MpiError::new(class, e.to_string())
}

/// `MPI_Alloc_mem`: memory of the shared heap (a window over it needs no adoption).
pub fn alloc_mem(size: usize) -> MpiResult<*mut c_void> {
    let ctx = mpi()?.core.context();
    let region = ctx
        .heap_alloc_local(size.max(1))
        .map_err(|e| MpiError::new(class::NO_MEM, format!("{size} bytes: {e}")))?;
    let ptr = ctx.heap_bytes(region).addr(0);
    ALLOCATED.lock().unwrap_or_else(|e| e.into_inner()).push((ptr as usize, region));
    Ok(ptr.cast())
}

/// Blocks handed out by `MPI_Alloc_mem`, by address.
static ALLOCATED: std::sync::Mutex<Vec<(usize, HeapRegion)>> = std::sync::Mutex::new(Vec::new());

/// `MPI_Free_mem`.
pub fn free_mem(base: *mut c_void) -> MpiResult<()> {
    let mut allocated = ALLOCATED.lock().unwrap_or_else(|e| e.into_inner());
    let Some(i) = allocated.iter().position(|&(p, _)| p == base as usize) else {
        return fail(class::BASE, format!("{base:p} did not come from MPI_Alloc_mem"));
    };
    let (_, region) = allocated.swap_remove(i);
    drop(allocated);
    mpi()?.core.context().heap_free_local(region).map_err(|e| MpiError::new(class::OTHER, e.to_string()))
}
