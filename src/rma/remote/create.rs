//! Creating and freeing a window whose members span nodes.
//!
//! A window spans a team: every rank of the job (`Core::window`) or a communicator's
//! members (`Comm::window`, `Comm::window_over`). In order, every member:
//! 1. allgathers its part's size, its node (the node's first rank) and, over memory it
//!    brings, that memory's heap offset in its node;
//! 2. if it is its node's first member (the node's *leader*), allocates from its own
//!    segment's heap the control block, followed under a strategy with locks by its
//!    node's members' shares of the strategy's block in team order (their stripe locks
//!    under `CallerComputes`; queues, stripes and staging under `OwnerComputes`), and,
//!    unless the members bring their memory, one region for its node's parts, packed in
//!    team order, and zeroes the block; the others allocate nothing (a job-wide window
//!    in MPBs has its parts at one offset of every core's MPB, from every core's
//!    replica of the symmetric MPB allocator);
//! 3. allgathers the leaders' offsets (or their allocation error): every member now
//!    knows where each rank's part and control block lie in that rank's node;
//! 4. zeroes its own part (if allocated), starts its owner-computes agent (if any), and
//!    passes the team's barrier, an allgather of whether its agent started (if one did
//!    not, every member fails the creation), so nobody touches a part before its owner
//!    zeroed it (the leader's zeroes of the block reach its node's members through the
//!    messages of step 3).
//!
//! An error found at any step is found alike by every member (each reads the same
//! allgathered table), and the leaders return what they allocated.
//!
//! Free: every member completes its one-way requests, then the members allgather
//! whether they still have an epoch open (the allgather is also the barrier after
//! which nobody accesses the window); unless one has, each leader returns its node's
//! memory (under `OwnerComputes`, after every member stopped its agent and the members
//! met once more). A window across nodes dropped without free is returned node by node
//! once every member dropped it (`orphan`); each creation, past step 1, first returns
//! those whose count is full.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

use shm_layout::Region;

use crate::protocol::alloc::freelist::Range;
use crate::protocol::alloc::heap::{HEAP_GRANULE, decode_result, encode_result};
use crate::rma::epoch::Epochs;
use crate::rma::error::WindowError;
use crate::rma::lock::LockViews;
use crate::rma::remote::{Remote, RemoteLink};
use crate::rma::team::Team;
use crate::rma::accumulate::{AccStrategy, STRIPES_ALIGN, stripes_bytes};
use crate::rma::create::Memory;
use crate::rma::owner::OwnerBlock;
use crate::rma::window::{Data, Placement, Window};
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::protocol::payload::Payload;
use crate::segment::view::Plain;

/// Size-table value of a part whose bytes overflow.
const TOO_LARGE: u64 = u64::MAX;
/// Size-table value of memory that is not in the heap.
const OUTSIDE_HEAP: u64 = u64::MAX - 1;

fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
}

fn to_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl<'c, T: Plain> Window<'c, T> {
    /// Collective over the team `members` (world ranks, by team rank; this core is
    /// team rank `me`), whose ranks span nodes: a window over `memory` (allocated and
    /// zeroed, or this member's own heap range), reached across nodes through `link`
    /// (module docs), whose accumulates use `strategy`; untimed, as a window's creation
    /// on one node is.
    pub(crate) fn create_across(
        ctx: &'c CoreContext,
        (members, me): (Vec<u32>, u32),
        (memory, strategy): (Memory, AccStrategy),
        link: Box<dyn RemoteLink + 'c>,
    ) -> Result<Window<'c, T>, WindowError> {
        if size_of::<T>() == 0 {
            return Err(WindowError::ZeroSizedElement);
        }
        let heap = ctx.segment().layout().heap;
        let (n, me) = (members.len(), me as usize);
        let (bytes, over) = match memory {
            Memory::Allocate(_, len) => (len.checked_mul(size_of::<T>()).map_or(TOO_LARGE, |b| b as u64), 0),
            Memory::Over(r) if r.offset.checked_add(r.len).is_some_and(|end| end <= heap.len) => {
                (r.len as u64, r.offset as u64)
            }
            Memory::Over(_) => (OUTSIDE_HEAP, 0),
        };
        let node = u64::from(ctx.segment().config().node_first);
        let table: Vec<u64> = words(&link.allgather(&to_bytes(&[bytes, node, over]))?).collect();
        // Every member has finished its drops: the dropped windows whose count is full
        // go back before this one takes memory (`orphan`).
        ctx.reclaim_on_node(None);
        let column = |i: usize| -> Vec<u64> { table.chunks(3).map(|entry| entry[i]).collect() };
        let (sizes, nodes, overs) = (column(0), column(1), column(2));
        if let Some(rank) = sizes.iter().position(|&s| s == TOO_LARGE) {
            return Err(WindowError::TooLarge { rank: rank as u32 });
        }
        if let Some(rank) = sizes.iter().position(|&s| s == OUTSIDE_HEAP) {
            return Err(WindowError::OutsideHeap { rank: rank as u32 });
        }
        // In MPBs: each part at the same offset of its core's MPB, which every core's
        // replica of the symmetric allocator gives alike (every rank of the job is a
        // member: `window_across`).
        let mpb = match memory {
            Memory::Allocate(Placement::Mpb, _) => Some(Self::mpb_parts(ctx, &sizes)?),
            _ => None,
        };
        // Each node's leader: its first member.
        let leaders: Vec<usize> = nodes.iter().map(|&k| nodes.iter().position(|&m| m == k).expect("itself")).collect();
        let leader = leaders[me];
        // Allocated parts: each one's offset in its node's data region, packed.
        let mut offsets = vec![0usize; n];
        let mut node_total = vec![0usize; n];
        if let Memory::Allocate(Placement::Dram, _) = memory {
            for r in 0..n {
                let l = leaders[r];
                offsets[r] = node_total[l];
                let end = (sizes[r] as usize).checked_next_multiple_of(HEAP_GRANULE).and_then(|s| node_total[l].checked_add(s));
                node_total[l] = end.ok_or(WindowError::TooLarge { rank: r as u32 })?;
            }
        }
        let ctl = Self::layout(ctx, n);
        // A strategy's shares (stripe locks; an owner's queue, stripes and staging)
        // follow each node's control block, one per member of the node, in team order.
        let (share, shares_at) = match strategy {
            AccStrategy::CallerComputes { .. } => (stripes_bytes(1), ctl.total.next_multiple_of(STRIPES_ALIGN)),
            AccStrategy::OwnerComputes => (OwnerBlock::STRIDE, ctl.total.next_multiple_of(STRIPES_ALIGN)),
            AccStrategy::Atomic => (0, ctl.total),
        };
        // Per member, its place among its node's members; per leader, their number.
        let (mut node_index, mut on_node) = (vec![0usize; n], vec![0usize; n]);
        for r in 0..n {
            node_index[r] = on_node[leaders[r]];
            on_node[leaders[r]] += 1;
        }
        let meta_bytes = |l: usize| shares_at + share * on_node[l];
        let mine = if me == leader { Self::node_memory(ctx, meta_bytes(me), node_total[me]) } else { [0, 0] };
        let got: Vec<u64> = words(&link.allgather(&to_bytes(&mine))?).collect();
        let empty = Range { offset: 0, len: 0 };
        let result = |l: usize, i: usize, bytes: usize| match (i, bytes) {
            (1, 0) => Ok(empty),
            _ => decode_result(got[2 * l + i], bytes),
        };
        let failed = (0..n).filter(|&r| r == leaders[r]).find_map(|l| {
            result(l, 0, meta_bytes(l)).and(result(l, 1, node_total[l])).err()
        });
        let (meta, data) = (result(leader, 0, meta_bytes(leader)), result(leader, 1, node_total[leader]));
        if let Some(e) = failed {
            if me == leader {
                for r in [meta, data].into_iter().flatten().filter(|r| r.len > 0) {
                    ctx.heap_free_local(r)?;
                }
            }
            if let Some(r) = mpb.filter(|r| r.len > 0) {
                ctx.mpb_free(r)?;
            }
            return Err(WindowError::Alloc(e));
        }
        let (meta, data) = (meta.expect("checked"), data.expect("checked"));
        let at = |r: usize, i: usize| heap.offset + result(leaders[r], i, 1).map_or(0, |g| g.offset);
        let mpbs = &ctx.segment().layout().mpbs;
        let part = |r: usize| match (memory, mpb) {
            (_, Some(region)) => {
                let mpb = mpbs.get(members[r] as usize).expect("a core of the job");
                Region { offset: mpb.offset + region.offset, len: sizes[r] as usize }
            }
            (Memory::Allocate(..), None) => Region { offset: at(r, 1) + offsets[r], len: sizes[r] as usize },
            (Memory::Over(_), None) => Region { offset: heap.offset + overs[r] as usize, len: sizes[r] as usize },
        };
        let parts = (0..n).map(part).collect();
        let remote_meta: Vec<usize> = (0..n).map(|r| at(r, 0)).collect();
        let shares: Vec<usize> = (0..n).map(|r| remote_meta[r] + shares_at + node_index[r] * share).collect();
        let local: Vec<bool> = leaders.iter().map(|&l| l == leader).collect();
        let node_leaders = (0..n).filter(|&r| leaders[r] == r).map(|r| r as u32).collect();
        let team = Team::new(members, me as u32, None);
        let meta_abs = Region { offset: heap.offset + meta.offset, len: meta.len };
        let mut win = Window {
            ctx,
            lock_views: LockViews::new(ctx, &team, meta_abs, &ctl),
            team,
            placement: if mpb.is_some() { Placement::Mpb } else { Placement::Dram },
            meta,
            meta_abs,
            ctl,
            data: match mpb {
                Some(region) if region.len > 0 => Data::Mpb(region),
                _ if me == leader && data.len > 0 => Data::Heap(data),
                _ => Data::None,
            },
            parts,
            epochs: RefCell::new(Epochs::new(n)),
            pending_stores: Cell::new(false),
            table_entry: None,
            acc: Default::default(),
            released: Cell::new(false),
            remote: Some(Remote::new(link, local.clone(), remote_meta, node_leaders, me == leader)),
            // Across nodes: never the common case.
            quick: false,
            _elem: PhantomData,
        };
        if let Memory::Allocate(..) = memory {
            win.part_bytes(me as u32).zero(0, sizes[me] as usize);
        }
        let started = match strategy {
            AccStrategy::Atomic => Ok(()),
            AccStrategy::CallerComputes { granularity } => {
                win.set_caller_across(granularity, shares);
                Ok(())
            }
            AccStrategy::OwnerComputes => {
                let members = win.team.members().into();
                win.set_owner_across(OwnerBlock { shares: shares.into(), here: local.into(), members })
            }
        };
        // The members' barrier, which also tells everyone whether every agent started
        // (one that did not fails the creation everywhere, and nobody waits for it).
        let votes = win.remote.as_ref().expect("across").link.allgather(&[u8::from(started.is_ok())])?;
        match votes.iter().all(|&v| v == 1) {
            true => Ok(win),
            false => Err(started.err().unwrap_or(WindowError::AgentStart)),
        }
    }

    /// The MPB region of a job-wide window in MPBs whose parts have `sizes` bytes: one
    /// symmetric allocation of the largest (none if every part is empty).
    fn mpb_parts(ctx: &CoreContext, sizes: &[u64]) -> Result<Range, WindowError> {
        let mpb_bytes = ctx.mpb_bytes();
        if let Some((r, &s)) = sizes.iter().enumerate().find(|(_, s)| **s as usize > mpb_bytes) {
            return Err(WindowError::TooBigForMpb { rank: r as u32, bytes: s as usize, mpb_bytes });
        }
        match sizes.iter().copied().max().unwrap_or(0) as usize {
            0 => Ok(Range { offset: 0, len: 0 }),
            max => Ok(ctx.mpb_alloc(max)?),
        }
    }

    /// A leader's allocations (encoded results): the control block, zeroed, and its
    /// node's data region (none if empty).
    fn node_memory(ctx: &CoreContext, ctl_bytes: usize, data_bytes: usize) -> [u64; 2] {
        let meta = ctx.heap_alloc_local(ctl_bytes);
        if let Ok(r) = meta {
            ctx.heap_bytes(r).zero(0, r.len);
        }
        let data = match meta {
            Ok(_) if data_bytes > 0 => ctx.heap_alloc_local(data_bytes),
            _ => Ok(Range { offset: 0, len: 0 }),
        };
        [encode_result(&meta), encode_result(&data)]
    }

    /// [`Window::free`] of a window across nodes (module docs).
    pub(crate) fn free_across(&self) -> Result<(), WindowError> {
        let remote = self.remote.as_ref().expect("a window across nodes");
        self.remote_sync_all()?;
        let open = self.epochs.borrow().passive_or_pscw_open();
        let votes = remote.link.allgather(&[u8::from(open)])?;
        if let Some(rank) = votes.iter().position(|&v| v != 0) {
            return Err(WindowError::EpochOpen { rank: rank as u32 });
        }
        self.released.set(true);
        // An owner-computes agent reads its share of the node's memory until it stops:
        // every member's stops, and the members meet, before any leader returns it.
        if self.acc_strategy() == AccStrategy::OwnerComputes {
            self.acc_take();
            self.remote_barrier()?;
        }
        if let Data::Mpb(r) = self.data {
            self.ctx.mpb_free(r)?;
        }
        if remote.leads {
            for region in self.node_heap() {
                self.ctx.heap_free_local(region)?;
            }
        }
        Ok(())
    }

    /// What a node's leader allocated of its node's heap: the node's parts (unless the
    /// members brought their own), then the control block (with the strategy's shares).
    pub(super) fn node_heap(&self) -> Vec<HeapRegion> {
        let data = match self.data {
            Data::Heap(r) => Some(r),
            _ => None,
        };
        data.into_iter().chain([self.meta]).collect()
    }
}
