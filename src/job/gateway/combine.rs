//! A remote accumulate or compare-and-swap, as the gateway applies it: as an origin on
//! this node would under the window's strategy.
//! - Under `Atomic` (no domain in the request) element by element with the CPU atomics
//!   of `acc_atomic`, so a remote update racing a local one loses nothing.
//! - Under a strategy with locks the request carries the target part's atomicity domain
//!   (`wire::Domain`): where its stripe locks lie and how the part is striped. The
//!   gateway combines granule by granule holding each granule's stripe, or runs a
//!   compare-and-swap holding the stripes around its element, exactly as the target
//!   node's origins (`CallerComputes`) or the owner's agent (`OwnerComputes`) do, so
//!   their plain combines and this one exclude each other. Elements wider than a CPU
//!   atomic (value-index pairs) are combined only this way.
//!
//! The gateway may wait for a stripe here, on the target's doorbell: only while a local
//! combine or ARMW holds it, and those never wait for anything while they hold one. A
//! job abort ends the wait, and the request is dropped (nothing crosses after it).
//! Nothing in the domain is trusted: the stripes must lie in memory a request may
//! reach, aligned, and the frame must start at or before the element.

use shm_layout::{Region, WaitPolicy};

use crate::job::node::NodeSpec;
use crate::protocol::atomic::acc_atomic::{accumulate_words, compare_and_swap_slot};
use crate::protocol::atomic::op::{Element, Op};
use crate::protocol::atomic::stripes::{
    CachePadded, MAX_STRIPES, Stripe, StripeLocks, Striping, lock_span, striped_combine,
};
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::rma::acc_view::{stripes_at, words_around};
use crate::rma::accumulate::{ACC_ALIGN, STRIPES_ALIGN};
use crate::rma::remote::wire::{Domain, Header, Kind};
use crate::segment::mapping::Segment;

use super::serve::reachable;

/// The atomicity domain of a request under a strategy with locks: the target part's
/// stripes, checked to lie in memory a request may reach.
pub(super) struct Locked<'s> {
    locks: &'s StripeLocks,
    striping: Striping,
    /// Where the part's frame starts (absolute): the stripes cut it.
    frame: usize,
    /// The target's doorbell, on which the stripes' waiters sleep.
    bell: &'s Doorbell,
}

impl<'s> Locked<'s> {
    pub(super) fn of(seg: &'s Segment, spec: &NodeSpec, head: &Header, d: Domain) -> Result<Locked<'s>, &'static str> {
        let count = d.count as usize;
        let granule = usize::try_from(d.granule).map_err(|_| "a bad striping")?;
        if !(1..=MAX_STRIPES).contains(&count) || granule == 0 || granule % ACC_ALIGN != 0 {
            return Err("a bad striping");
        }
        let stripes = reachable(seg, spec, d.stripes, count * size_of::<CachePadded<Stripe>>());
        let stripes = stripes.filter(|r| r.offset % STRIPES_ALIGN == 0).ok_or("stripes it cannot reach")?;
        let frame = usize::try_from(d.frame).ok().filter(|&f| f as u64 <= head.at).ok_or("a frame past its element")?;
        if !spec.is_local(head.rank) {
            return Err("a doorbell of another node");
        }
        let locks = stripes_at(seg.bytes(stripes), 0, count);
        Ok(Locked { locks, striping: Striping { granule, stripes: count }, frame, bell: &seg.slot(head.rank).bell })
    }
}

/// Why a combine was not applied.
pub(super) enum Refused {
    /// The request is malformed (the job aborts).
    Bad(&'static str),
    /// The job aborted while the gateway waited for a stripe.
    Aborted,
}

impl From<&'static str> for Refused {
    fn from(why: &'static str) -> Refused {
        Refused::Bad(why)
    }
}

/// An accumulate or compare-and-swap of `E`s, holding `locked`'s stripes if given (as
/// an origin on this node does under the window's strategy); the answer's bytes (the
/// previous values if asked).
pub(super) fn combine<E: Element>(
    seg: &Segment,
    head: &Header,
    payload: &[u8],
    region: impl Fn(usize) -> Result<Region, String>,
    locked: Option<Locked<'_>>,
) -> Result<Vec<u8>, Refused> {
    let width = size_of::<E>();
    let count = head.count as usize;
    let cas = head.kind == Kind::CompareAndSwap;
    let operands = if cas { 2 } else { count };
    // Only combines under locks take elements wider than a CPU atomic.
    let widest = if locked.is_some() && !cas { 2 * size_of::<u64>() } else { size_of::<u64>() };
    if width > widest || (cas && count != 1) || payload.len() != operands * width {
        return Err("operands of the wrong size".into());
    }
    let r = region(count * width).map_err(|_| "memory outside the heap")?;
    if r.offset % width != 0 {
        return Err("a misaligned element".into());
    }
    let src: Vec<E> = bytemuck::pod_collect_to_vec(payload);
    let op = match cas {
        true => Op::NoOp,
        false => Op::from_code(u32::from(head.op), f64::from_bits(head.x)).ok_or("an unknown op")?,
    };
    E::check(op).map_err(|_| "an op the element does not take")?;
    let mut old = head.token.is_some().then(|| src.clone());
    match locked {
        Some(l) => {
            let frame = seg.bytes(reachable_from(l.frame, r).ok_or("a frame past its element")?);
            let (at, waiter) = (r.offset - l.frame, Waiter::new(WaitPolicy::Block, seg.job()));
            if cas {
                let _held = lock_span(l.locks, l.striping, at, at + width, &waiter, l.bell).map_err(|_| Refused::Aborted)?;
                let words = words_around(seg, r, r.offset, width, 1).ok_or("a misaligned element")?;
                return Ok(bytemuck::bytes_of(&compare_and_swap_slot(words.slot(0), src[0], src[1])).to_vec());
            }
            striped_combine(l.locks, l.striping, &frame, at, op, &src, old.as_deref_mut(), &waiter, l.bell)
                .map_err(|_| Refused::Aborted)?;
        }
        None => {
            let words = words_around(seg, r, r.offset, width, count).ok_or("a misaligned element")?;
            if cas {
                return Ok(bytemuck::bytes_of(&compare_and_swap_slot(words.slot(0), src[0], src[1])).to_vec());
            }
            accumulate_words(words, op, &src, old.as_deref_mut());
        }
    }
    Ok(old.map_or_else(Vec::new, |old| bytemuck::cast_slice(&old).to_vec()))
}

/// The region from `frame` to the end of `r` (which the request may reach), if `frame`
/// lies at or before `r`.
fn reachable_from(frame: usize, r: Region) -> Option<Region> {
    Some(Region { offset: frame, len: r.end().checked_sub(frame)? })
}
