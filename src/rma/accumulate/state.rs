//! A window's accumulate strategy state: created collectively with the window (its
//! block allocated as the window's collective steps allocate, `team`; across nodes,
//! each node's members' shares follow that node's control block, `remote::create`), and
//! consulted by every call that completes RMA (owner-computes requests must be applied
//! first) and by every ARMW (which must share the accumulates' atomicity domain). Kept
//! apart from the accumulate calls themselves, because those other paths reach it too.

use std::cell::{Cell, RefCell};

use shm_layout::Region;

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::stripes::{CachePadded, MAX_STRIPES, SpanGuard, Stripe, StripeLocks, Striping, lock_span};
use crate::protocol::payload::Payload;
use crate::rma::acc_view::stripes_at;
use crate::rma::create::Memory;
use crate::rma::error::{RmaError, WindowError};
use crate::rma::owner::{OwnerBlock, OwnerState, owner_striping};
use crate::rma::remote::wire::Domain;
use crate::rma::window::{Placement, Window};
use crate::segment::CoreContext;
use crate::segment::collective_alloc::HeapRegion;
use crate::segment::mapping::Segment;
use crate::segment::view::Plain;

use super::{ACC_ALIGN, AccStrategy};

/// A window's accumulate state (a field of [`Window`]); empty means `Atomic`. The flag
/// says whether there is a state (so whether ARMW takes locks), readable without a
/// borrow.
#[derive(Default)]
pub struct AccSlot<'c>(pub(super) RefCell<Option<AccState<'c>>>, pub(super) Cell<bool>);

pub(super) enum AccState<'c> {
    /// `stripings[t]`: how target `t`'s part is striped (computed once: an ARMW would
    /// otherwise spend a third of its time on the divisions of `Striping::new`);
    /// `shares[t]`: where target `t`'s stripe locks lie, absolute in its node's segment.
    /// `block` is the job's or the communicator's block of them, which the window
    /// returns; across nodes the stripes lie in each node's control block allocation
    /// (`remote::create`), and `block` is `None`.
    Caller { block: Option<HeapRegion>, shares: Vec<usize>, granularity: usize, stripings: Vec<Striping> },
    Owner { block: Option<HeapRegion>, state: OwnerState<'c>, stripings: Vec<Striping> },
}

/// Bytes of the stripe locks of `n` targets.
pub(crate) fn stripes_bytes(n: usize) -> usize {
    n * MAX_STRIPES * size_of::<CachePadded<Stripe>>()
}

/// Where stripe locks may start (`acc_view::stripes_at` checks it).
pub(crate) const STRIPES_ALIGN: usize = align_of::<CachePadded<Stripe>>();

impl<'c, T: Plain> Window<'c, T> {
    /// Collective over the job: allocates a window (like [`crate::Core::window`]) whose
    /// accumulates use `strategy`. Every core must pass the same strategy.
    pub fn create_with(
        ctx: &'c CoreContext,
        len: usize,
        placement: Placement,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::create_in(ctx, Memory::Allocate(placement, len), strategy)
    }

    /// Collective over the job: a window over `memory` whose accumulates use `strategy`.
    pub(crate) fn create_in(
        ctx: &'c CoreContext,
        memory: Memory,
        strategy: AccStrategy,
    ) -> Result<Window<'c, T>, WindowError> {
        Window::<T>::create_agreed(ctx, memory, strategy)?.with_strategy(strategy)
    }

    /// Collective over the window's members, right after its creation: sets up the
    /// accumulate `strategy`'s shared state (a block allocated collectively, each
    /// member's share initialised by its owner before the members' barrier).
    pub(crate) fn with_strategy(self, strategy: AccStrategy) -> Result<Window<'c, T>, WindowError> {
        let ctx = self.ctx;
        let (n, me) = (self.size() as usize, self.rank());
        let heap = ctx.segment().layout().heap;
        let state = match strategy {
            AccStrategy::Atomic => return Ok(self),
            AccStrategy::CallerComputes { granularity } => {
                let block = match self.alloc_heap(stripes_bytes(n)) {
                    Ok(block) => block,
                    Err(e) => {
                        // Every member got the same result: free the window collectively.
                        let _ = self.free();
                        return Err(e);
                    }
                };
                let share = stripes_bytes(1);
                let shares: Vec<usize> = (0..n).map(|t| heap.offset + block.offset + t * share).collect();
                ctx.segment().bytes(Region { offset: shares[me as usize], len: share }).zero(0, share);
                AccState::Caller { block: Some(block), shares, granularity, stripings: self.caller_stripings(granularity) }
            }
            AccStrategy::OwnerComputes => {
                let block = match self.alloc_heap(OwnerBlock::bytes(n)) {
                    Ok(block) => block,
                    Err(e) => {
                        let _ = self.free();
                        return Err(e);
                    }
                };
                let abs = Region { offset: heap.offset + block.offset, len: block.len };
                self.owner_state(Some(block), OwnerBlock::packed(abs, self.members().into()))?
            }
        };
        *self.acc.0.borrow_mut() = Some(state);
        self.acc.1.set(true);
        // Every member's share is initialised before anyone uses it.
        self.team_barrier()?;
        Ok(self)
    }
}

impl<'c, T: Plain> Window<'c, T> {
    /// How each target's part is striped under `CallerComputes` with `granularity`.
    fn caller_stripings(&self, granularity: usize) -> Vec<Striping> {
        (0..self.size()).map(|t| Striping::new(granularity, self.acc_frame(t).0.len, ACC_ALIGN)).collect()
    }

    /// Across nodes, at the window's creation: `CallerComputes` with `granularity`,
    /// whose stripe locks for target `t` lie at `shares[t]` of its node's segment
    /// (zeroed there by the node's leader before the members' barrier).
    pub(crate) fn set_caller_across(&mut self, granularity: usize, shares: Vec<usize>) {
        let stripings = self.caller_stripings(granularity);
        *self.acc.0.get_mut() = Some(AccState::Caller { block: None, shares, granularity, stripings });
        self.acc.1.set(true);
    }

    /// Across nodes, at the window's creation: `OwnerComputes`, whose shares lie where
    /// `owner` says (zeroed by each node's leader before the members' barrier).
    pub(crate) fn set_owner_across(&mut self, owner: OwnerBlock) -> Result<(), WindowError> {
        let state = self.owner_state(None, owner)?;
        *self.acc.0.get_mut() = Some(state);
        self.acc.1.set(true);
        Ok(())
    }

    /// `OwnerComputes` over `owner`'s shares: initialises this member's share and starts
    /// its agent on a mapping of its own.
    fn owner_state(&self, block: Option<HeapRegion>, owner: OwnerBlock) -> Result<AccState<'c>, WindowError> {
        let (seg, me) = (self.ctx.segment(), self.rank());
        owner.init(seg, me);
        let os = |_| WindowError::AgentStart;
        let agent_seg = Segment::attach(seg.fd().try_clone_to_owned().map_err(os)?).map_err(|_| WindowError::AgentStart)?;
        let state = OwnerState::start(seg, agent_seg, owner, me, self.acc_frame(me).0, self.ctx.waiter()).map_err(os)?;
        let stripings = (0..self.size()).map(|t| owner_striping(self.acc_frame(t).0.len)).collect();
        Ok(AccState::Owner { block, state, stripings })
    }

    /// Target `t`'s stripe locks under `CallerComputes` (whose `shares` are given).
    pub(super) fn caller_locks(&self, shares: &[usize], t: u32) -> &'c StripeLocks {
        let region = Region { offset: shares[t as usize], len: stripes_bytes(1) };
        stripes_at(self.ctx.segment().bytes(region), 0, MAX_STRIPES)
    }

    /// The atomicity domain of `target`'s part under a strategy with locks, as a
    /// request to another node carries it (`remote::wire`); `None` under `Atomic`.
    pub(crate) fn acc_domain(&self, target: u32) -> Option<Domain> {
        let (stripes, striping) = match &*self.acc.0.borrow() {
            None => return None,
            Some(AccState::Caller { shares, stripings, .. }) => (shares[target as usize], stripings[target as usize]),
            Some(AccState::Owner { state, stripings, .. }) => (state.stripes_offset(target), stripings[target as usize]),
        };
        let frame = self.acc_frame(target).0.offset as u64;
        Some(Domain { stripes: stripes as u64, frame, granule: striping.granule as u64, count: striping.stripes as u32 })
    }

    /// The accumulate strategy this window was created with.
    pub fn acc_strategy(&self) -> AccStrategy {
        match &*self.acc.0.borrow() {
            None => AccStrategy::Atomic,
            Some(AccState::Caller { granularity, .. }) => {
                AccStrategy::CallerComputes { granularity: *granularity }
            }
            Some(AccState::Owner { .. }) => AccStrategy::OwnerComputes,
        }
    }

    /// With `OwnerComputes`, `owner`'s request queue as absolute regions of the segment:
    /// its control words, its `seq` words and its slots. For the corruption tests only
    /// (see `CoreContext::segment_for_tests`).
    #[doc(hidden)]
    pub fn owner_queue_for_tests(&self, owner: u32) -> Option<[Region; 3]> {
        match &*self.acc.0.borrow() {
            Some(AccState::Owner { state, .. }) if owner < self.size() => Some(state.queue_regions(owner)),
            _ => None,
        }
    }

    /// Waits until this core's owner-computes requests are applied at their targets
    /// (called by every call that completes RMA). Free for the other strategies.
    #[inline]
    pub(crate) fn acc_quiesce(&self) -> Result<(), JobAborted> {
        // Without a strategy state (`Atomic`) nothing is pending: one load of a private
        // flag, not a borrow, on every unlock and flush.
        if !self.acc_locks() {
            return Ok(());
        }
        match &*self.acc.0.borrow() {
            Some(AccState::Owner { state, .. }) => state.quiesce(),
            _ => Ok(()),
        }
    }

    /// Whether ARMW on this window takes locks (any strategy but `Atomic`): a plain
    /// load of a private flag, so that the lock-free path stays as short as before.
    #[inline(always)]
    pub(crate) fn acc_locks(&self) -> bool {
        self.acc.1.get()
    }

    /// Enters the atomicity domain of an ARMW on bytes `at..at + width` of `target`'s
    /// part (module docs) under a strategy with locks ([`Window::acc_locks`]), until the
    /// guard drops: holds the stripes that guard those bytes. Rank and range are
    /// checked. Nothing to hold (`None`) under `Atomic`.
    #[inline(never)]
    pub(crate) fn locked_domain(
        &self,
        target: u32,
        at: usize,
        width: usize,
    ) -> Result<Option<SpanGuard<'c>>, RmaError> {
        // Stripes cut the part's frame (`Window::acc_frame`).
        let at = at + self.acc_frame(target).1;
        Ok(Some(match &*self.acc.0.borrow() {
            Some(AccState::Caller { shares, stripings, .. }) => {
                // The striping of `acc_dispatch`: the same locks guard the same bytes.
                let striping = stripings[target as usize];
                let locks = self.caller_locks(shares, target);
                lock_span(locks, striping, at, at + width, &self.ctx.waiter(), self.bell(target))?
            }
            Some(AccState::Owner { state, stripings, .. }) => {
                state.armw_domain(target, stripings[target as usize], at, at + width)?
            }
            None => return Ok(None),
        }))
    }

    /// The heap block of the accumulate state, if the strategy has one.
    pub(crate) fn acc_block(&self) -> Option<HeapRegion> {
        match &*self.acc.0.borrow() {
            Some(AccState::Caller { block, .. } | AccState::Owner { block, .. }) => *block,
            None => None,
        }
    }

    /// Ends the accumulate state: stops this core's agent (if any) and returns the
    /// block, which is still allocated.
    pub(crate) fn acc_take(&self) -> Option<HeapRegion> {
        self.acc.1.set(false);
        match self.acc.0.borrow_mut().take() {
            None => None,
            Some(AccState::Caller { block, .. }) => block,
            Some(AccState::Owner { block, state, .. }) => {
                drop(state);
                block
            }
        }
    }

    /// Collective over the job, after the barrier of a job-wide window's `free`: stops
    /// the agent and frees the block.
    pub(crate) fn acc_free(&self) -> Result<(), WindowError> {
        if let Some(block) = self.acc_take() {
            self.ctx.heap_free(block)?;
        }
        Ok(())
    }
}
