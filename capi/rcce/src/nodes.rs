//! RCCE in a job that spans several nodes (`sccrun --nodes K`).
//!
//! Each node has its own segment, and a node sees only its own UEs' MPBs and its own
//! heap. So, when the job spans nodes:
//! - *Shared state* (test-and-set registers, the power model) is the node's: its first
//!   UE allocates it from its own segment's heap ([`node_shared`]), sets it up, and
//!   publishes where it lies in line 0 of its own RCCE MPB (reserved by RCCE); the
//!   job's barrier carries that to the node's other UEs, and an allgather tells every
//!   UE where each node's lies ([`shared_offsets`]). `RCCE_shmalloc` memory, shared by
//!   every UE, cannot cross nodes and is refused.
//! - *MPB copies* to or from a UE on another node go through sccemu's remote MPB
//!   requests ([`Rcce::mpb_write`], [`Rcce::mpb_read`]): one-way puts and round-trip
//!   gets, applied in the order sent.
//! - *Flag writes* are all atomic updates of the flag's byte ([`Rcce::flag_update`]),
//!   local or not: a byte flag is replaced, a single bit is set with a bitwise or and
//!   cleared with a bitwise and, then the owner's doorbell rings. A remote owner's node
//!   applies the update with the same CPU atomics as a local writer, after the puts
//!   that came before it, so no update is lost to a plain read-modify-write and the
//!   flag publishes the data put before it. Local flag reads load the flag's aligned
//!   word (the width the updates use); remote reads are round trips. Waits stay on the
//!   UE's own flags and doorbell.
//! - *Test-and-set registers* live in their UE's node; a UE on another node takes one
//!   through that node's gateway (`registers`, `Core::lock_word`).

use sccemu::protocol::payload::Payload;
use sccemu::segment::collective_alloc::HeapRegion;
use sccemu::segment::view::{atomic_u32_at, atomic_u64_at};
use sccemu::sync::Ordering;
use sccemu::{Allgather, Core, Op};

use crate::codes::{Error, LINE};
use crate::state::{Rcce, SharedLayout};

/// The lowest rank on this core's node.
pub fn node_first(core: &Core) -> u32 {
    (0..core.size()).find(|&r| core.context().is_local(r)).expect("this core is on its node")
}

/// Across nodes: the node's shared block, allocated by the node's first UE (module
/// docs). Collective (it passes the job's barrier). `mpb_offset` is RCCE's MPB.
pub fn node_shared(
    core: &Core,
    mpb_offset: usize,
    layout: SharedLayout,
) -> Result<HeapRegion, (Error, String)> {
    let first = node_first(core);
    let word = || {
        let line = core.mpb_range(first, mpb_offset, LINE).expect("the node's first UE is local");
        atomic_u64_at(line, 0).expect("MPB lines are aligned")
    };
    if core.rank() == first {
        let got = core.heap_alloc_local(layout.total);
        if let Ok(region) = got {
            core.heap_bytes(region).zero(0, layout.total);
            crate::power::init_shared(
                &core.heap_bytes(region).slice(layout.power, crate::power::STATE_BYTES),
                core,
            );
        }
        // Relaxed: the barrier below publishes it, and the block's set-up before it.
        word().store(got.map_or(0, |r| r.offset as u64 + 1), Ordering::Relaxed);
    }
    core.barrier().map_err(|e| (Error::NumUes, e.to_string()))?;
    match word().load(Ordering::Relaxed) {
        0 => Err((Error::Malloc, format!("no shared DRAM on this node for RCCE's {} bytes", layout.total))),
        at => Ok(HeapRegion { offset: at as usize - 1, len: layout.total }),
    }
}

/// Across nodes: where each UE's node keeps its shared block in its heap, from every
/// UE's `mine` (collective).
pub fn shared_offsets(core: &Core, mine: usize) -> Result<Vec<usize>, (Error, String)> {
    let failed = |e: sccemu::CollError| (Error::NumUes, e.to_string());
    let mut all = vec![0u64; core.size() as usize];
    core.world().map_err(failed)?.allgather(&[mine as u64], &mut all, Allgather::Auto).map_err(failed)?;
    Ok(all.into_iter().map(|at| at as usize).collect())
}

impl Rcce {
    /// Whether UE `id` runs on this UE's node.
    pub fn is_local(&self, id: u32) -> bool {
        self.core.context().is_local(id)
    }

    /// Ends this UE on a failed remote request (the job is aborting).
    fn remote_failed(&self, e: impl std::fmt::Display) -> ! {
        crate::fatal(self, &e.to_string())
    }

    /// Copies `data` into UE `id`'s RCCE MPB at `offset`, on any node.
    pub fn mpb_write(&self, id: u32, offset: usize, data: &[u8]) {
        if self.is_local(id) {
            self.mpb(id).write(offset, data);
        } else {
            let put = self.core.mpb_put(id, self.mpb_offset + offset, data);
            put.unwrap_or_else(|e| self.remote_failed(e));
        }
    }

    /// Copies from UE `id`'s RCCE MPB at `offset` into `buf`, on any node.
    pub fn mpb_read(&self, id: u32, offset: usize, buf: &mut [u8]) {
        if self.is_local(id) {
            self.mpb(id).read(offset, buf);
        } else {
            let got = self.core.mpb_get(id, self.mpb_offset + offset, buf);
            got.unwrap_or_else(|e| self.remote_failed(e));
        }
    }

    /// Combines `value` into byte `byte` of UE `id`'s RCCE MPB with `op`, atomically,
    /// then rings `id`'s doorbell: a flag write when the job spans nodes (module docs).
    pub fn flag_update(&self, id: u32, byte: usize, value: u8, op: Op) {
        let done = self.core.mpb_update::<u8>(id, self.mpb_offset + byte, value, op, true);
        done.unwrap_or_else(|e| self.remote_failed(e));
    }

    /// Byte `byte` of UE `id`'s RCCE MPB, read with Acquire, on any node, as the flag
    /// updates of [`Rcce::flag_update`] write it: through its aligned word locally.
    pub fn flag_byte(&self, id: u32, byte: usize) -> u8 {
        if self.is_local(id) {
            let word = atomic_u32_at(self.mpb(id), byte & !3).expect("MPB words are aligned");
            // Acquire: pairs with the updates' AcqRel (see `flags`).
            word.load(Ordering::Acquire).to_ne_bytes()[byte % 4]
        } else {
            let mut b = [0u8];
            self.mpb_read(id, byte, &mut b);
            b[0]
        }
    }
}
