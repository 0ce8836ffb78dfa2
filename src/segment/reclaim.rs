//! Reclaiming windows that were dropped without `free`.
//!
//! A window's memory (its control block, its data in the heap or the MPBs, its
//! accumulate block, its window-table entry) is allocated collectively, and may only be
//! reused once every core is done with it, which the drop on one core cannot know. So a
//! dropped window becomes an *orphan*: its regions go to this core's orphan list
//! (process-local, `CoreContext::orphan`).
//!
//! Protocol: every job-wide collective heap allocation ([`CoreContext::heap_alloc`],
//! which window creation and `Comm::world` make) also compares the cores' orphan
//! lists, riding on the barrier the allocation passes anyway: it runs the agreement of
//! `protocol::agree` on the segment's orphan slots, with the allocation's call number
//! as sequence number, each core's fingerprint being how many orphans it holds and a
//! hash of their identities (control-block offsets) in increasing order.
//! - If every core holds the same non-empty set, every core has dropped every window
//!   in it, so no core can touch their memory again: rank 0 returns the heap regions to
//!   the shared heap and unlists the windows, and every core returns the MPB regions to
//!   its own replica of the symmetric MPB allocator. Every core does so at the same
//!   point of the collective sequence, with the same set, so the replicas stay alike.
//!   The lists are emptied.
//! - Otherwise the lists are kept and compared again at the next allocation: cores may
//!   drop a window at different points of their programs. A window that some core
//!   never drops is never reclaimed; whatever is still on a core's list when the core
//!   leaves the job is reported in one line on stderr (count and bytes).
//!
//! Invariants: a region is returned at most once (an identity is on a list at most
//! once, and the list is emptied when returned); a window's memory is returned only
//! after every core dropped it; identities are unique among unreclaimed windows, since
//! a control block is not reused before its window is reclaimed.
//!
//! A window across nodes is not an orphan of this kind: each node's memory is its own
//! (`rma::remote::orphan`). Its members count themselves out on every node, and the
//! node's leader keeps it as a `NodeOrphan` until that node's count is full.
//!
//! Communicators need no agreement: their memory is the heap's alone, and the last
//! member to drop one returns it (see `coll::comm`). Windows over a communicator are
//! never orphans for the same reason: their memory (heap, and the MPB window pool's) is
//! returned by the last member to release them (see `rma::team`).

use crate::protocol::agree::{Fingerprint, MEMBER_BYTES, hash_words};
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::context::CoreContext;
use crate::segment::mapping::SharedBytes;
use crate::segment::mpb::MpbRegion;
use crate::segment::view::atomic_u32_at;
use crate::sync::Ordering;
use shm_layout::Region;

// `agree` finds core r's slots at r * MEMBER_BYTES: the layout's per-core stride.
const _: () = assert!(shm_layout::ORPHAN_BYTES == MEMBER_BYTES && MEMBER_BYTES % shm_layout::LINE == 0);

/// A window dropped without `free`: what it holds, until every core dropped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Orphan {
    /// The window's identity, the same on every core: its control block's heap offset.
    pub id: u64,
    /// Its regions of the shared heap (rank 0 returns them).
    pub heap: Vec<HeapRegion>,
    /// Its regions of the MPBs (every core returns them to its replica).
    pub mpb: Vec<MpbRegion>,
    /// Its window-table entry (rank 0's only).
    pub table_entry: Option<usize>,
}

impl Orphan {
    /// Bytes it holds: its heap regions, and its MPB regions in every core's MPB.
    fn bytes(&self, cores: u32) -> usize {
        let heap: usize = self.heap.iter().map(|r| r.len).sum();
        let mpb: usize = self.mpb.iter().map(|r| r.len).sum();
        heap + mpb * cores as usize
    }
}

/// A window across nodes that this core leads on its node, dropped without `free`: its
/// node's memory, returned once every member counted itself out there.
#[derive(Debug)]
pub(crate) struct NodeOrphan {
    /// Where the node's count of members out lies (an absolute offset in the segment).
    pub left: usize,
    /// The window's members, on every node.
    pub members: u32,
    /// Its regions of this node's heap.
    pub heap: Vec<HeapRegion>,
}

impl CoreContext {
    /// Returns the memory of the windows across nodes on this core's list whose count is
    /// full (`rma::remote::orphan`), and the memory of `orphan` too if it is.
    pub(crate) fn reclaim_on_node(&self, orphan: Option<NodeOrphan>) {
        let mut orphans = self.node_orphans.lock().unwrap_or_else(|e| e.into_inner());
        orphans.extend(orphan);
        orphans.retain(|o| {
            let word = Region { offset: o.left, len: 4 };
            let left = atomic_u32_at(self.segment().bytes(word), 0).expect("aligned in a control block");
            // Acquire: the last member's count (an AcqRel RMW, here or by its node's
            // gateway) continues the release sequence of every earlier one, so every
            // member's accesses happen before the memory is handed back.
            if left.load(Ordering::Acquire) < o.members {
                return true;
            }
            for &region in &o.heap {
                // Fails only if the job is aborting, when nothing needs the memory.
                let _ = self.heap_free_local(region);
            }
            false
        });
    }

    /// Records a window dropped without `free` on this core (module docs).
    pub(crate) fn orphan(&self, orphan: Orphan) {
        self.orphans.lock().unwrap_or_else(|e| e.into_inner()).push(orphan);
    }

    /// Windows this core dropped without `free` that are not reclaimed yet, and the
    /// bytes they hold (heap, and MPB in every core): they are reclaimed at the next
    /// job-wide collective allocation after every core dropped them. Windows across nodes
    /// count on the core that leads them on its node, until returned (module docs).
    pub fn orphaned(&self) -> (usize, usize) {
        let orphans = self.orphans.lock().unwrap_or_else(|e| e.into_inner());
        let across = self.node_orphans.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = orphans.iter().map(|o| o.bytes(self.size())).sum::<usize>()
            + across.iter().flat_map(|o| &o.heap).map(|r| r.len).sum::<usize>();
        (orphans.len() + across.len(), bytes)
    }

    /// Takes this core's orphan list out (so that a window another thread drops meanwhile
    /// waits for the next comparison) with its fingerprint: how many, and their
    /// identities.
    pub(crate) fn take_orphans(&self) -> (Fingerprint, Vec<Orphan>) {
        let orphans = std::mem::take(&mut *self.orphans.lock().unwrap_or_else(|e| e.into_inner()));
        let mut ids: Vec<u64> = orphans.iter().map(|o| o.id).collect();
        ids.sort_unstable();
        let fingerprint =
            Fingerprint::new("orphans").field("orphans", ids.len() as u64).field("identities", hash_words(ids));
        (fingerprint, orphans)
    }

    /// Puts back orphans taken out by [`CoreContext::take_orphans`] that the cores did not
    /// agree on, ahead of any dropped since.
    pub(crate) fn keep_orphans(&self, mut taken: Vec<Orphan>) {
        let mut orphans = self.orphans.lock().unwrap_or_else(|e| e.into_inner());
        taken.append(&mut orphans);
        *orphans = taken;
    }

    /// The segment's orphan slots, for `agree`.
    pub(crate) fn orphan_slots(&self) -> SharedBytes<'_> {
        self.segment().bytes(self.segment().layout().orphans.region())
    }

    /// After every core's list was found equal: returns the memory of every orphan taken
    /// out for the comparison (module docs).
    pub(crate) fn reclaim(&self, orphans: Vec<Orphan>) {
        for orphan in orphans {
            for &region in &orphan.mpb {
                // Every core, in its own replica (allocated there, so it cannot fail).
                let _ = self.mpb_free(region);
            }
            if self.rank() != 0 {
                continue;
            }
            if let Some(entry) = orphan.table_entry {
                crate::segment::wintable::unregister(self.segment(), entry);
            }
            for &region in &orphan.heap {
                // Fails only if the job is aborting, when nothing needs the memory.
                let _ = self.heap_free_local(region);
            }
        }
    }

    /// The one-line report of what this core leaves unreclaimed, if anything.
    pub(crate) fn orphan_report(&self) -> Option<String> {
        let (count, bytes) = self.orphaned();
        (count > 0).then(|| {
            format!(
                "sccemu: rank {}: {count} window(s) dropped without free ({bytes} bytes) were not reclaimed: \
                 that waits for a collective allocation after every core dropped them",
                self.rank()
            )
        })
    }
}
