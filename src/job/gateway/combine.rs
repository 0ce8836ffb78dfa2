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
    let waiter = Waiter::new(WaitPolicy::Block, seg.job());
    // Where the element lies in the frame the stripes cut (`Locked::of` checked that
    // the frame starts at or before it).
    let in_frame = |l: &Locked<'_>| r.offset - l.frame;
    if cas {
        let held = locked.as_ref().map(|l| lock_span(l.locks, l.striping, in_frame(l), in_frame(l) + width, &waiter, l.bell));
        let _held = held.transpose().map_err(|_| Refused::Aborted)?;
        let words = words_around(seg, r, r.offset, width, 1).ok_or("a misaligned element")?;
        return Ok(bytemuck::bytes_of(&compare_and_swap_slot(words.slot(0), src[0], src[1])).to_vec());
    }
    let mut old = head.token.is_some().then(|| src.clone());
    match locked {
        Some(l) => {
            let frame = seg.bytes(Region { offset: l.frame, len: r.end() - l.frame });
            striped_combine(l.locks, l.striping, &frame, in_frame(&l), op, &src, old.as_deref_mut(), &waiter, l.bell)
                .map_err(|_| Refused::Aborted)?;
        }
        None => {
            let words = words_around(seg, r, r.offset, width, count).ok_or("a misaligned element")?;
            accumulate_words(words, op, &src, old.as_deref_mut());
        }
    }
    Ok(old.map_or_else(Vec::new, |old| bytemuck::cast_slice(&old).to_vec()))
}

#[cfg(test)]
mod tests {
    use shm_layout::Config;

    use super::*;
    use crate::protocol::atomic::op::ElemKind;
    use crate::protocol::atomic::pair::DoubleIndex;
    use crate::protocol::payload::Payload;

    /// A 4-rank job's segment as node 0 of 2 sees it (ranks 0 and 1 are its own).
    fn node() -> (Segment, NodeSpec) {
        let config = Config { heap_bytes: 1 << 20, ..Config::new(4) };
        (Segment::create(config).unwrap(), NodeSpec::block(4, 2, 0).unwrap())
    }

    /// A domain of 4 stripes of 64-byte granules at the start of the heap, over a part
    /// whose frame starts 64 KiB into it; and an accumulate header there.
    fn request(seg: &Segment, kind: Kind, elem: ElemKind, at: usize, count: u32) -> (Header, Domain) {
        let heap = seg.layout().heap.offset;
        let (code, _) = Op::Sum.code();
        let head = Header { elem: elem as u8, op: code as u8, count, rank: 1, locked: true, ..Header::new(kind, heap + at) };
        let domain = Domain { stripes: heap as u64, frame: (heap + 65536) as u64, granule: 64, count: 4 };
        (head, domain)
    }

    #[test]
    fn a_domain_is_checked_before_any_stripe_is_taken() {
        let (seg, spec) = node();
        let (head, good) = request(&seg, Kind::Accumulate, ElemKind::U64, 65536, 1);
        assert!(Locked::of(&seg, &spec, &head, good).is_ok());
        let bad = [
            Domain { count: 0, ..good },
            Domain { count: MAX_STRIPES as u32 + 1, ..good },
            Domain { granule: 24, ..good },
            Domain { granule: 0, ..good },
            // Before the heap, misaligned, and past the segment's end.
            Domain { stripes: 0, ..good },
            Domain { stripes: good.stripes + 8, ..good },
            Domain { stripes: u64::MAX - 64, ..good },
            // A frame that starts after the element.
            Domain { frame: head.at + 8, ..good },
        ];
        for d in bad {
            assert!(Locked::of(&seg, &spec, &head, d).is_err(), "{d:?}");
        }
        // The stripes' doorbell is the target's, which must run on this node.
        assert!(Locked::of(&seg, &spec, &Header { rank: 2, ..head }, good).is_err());
    }

    #[test]
    fn locked_combines_apply_under_the_stripes() {
        let (seg, spec) = node();
        let heap = seg.layout().heap;
        let region = |len: usize| -> Result<Region, String> { Ok(Region { offset: heap.offset + 65536 + 128, len }) };
        // Sums of 20 u64 across granules, answering the previous values.
        let (mut head, d) = request(&seg, Kind::Accumulate, ElemKind::U64, 65536 + 128, 20);
        head.token = Some(1);
        let ones: Vec<u8> = [1u64; 20].iter().flat_map(|v| v.to_le_bytes()).collect();
        for round in 0..3u64 {
            let locked = Locked::of(&seg, &spec, &head, d).unwrap();
            let old = combine::<u64>(&seg, &head, &ones, region, Some(locked)).ok().unwrap();
            assert_eq!(old, [round; 20].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        }
        // Stripes are free again: a compare-and-swap takes the one around its element.
        let (mut cas, d) = request(&seg, Kind::CompareAndSwap, ElemKind::U64, 65536 + 128, 1);
        cas.token = Some(2);
        let operands: Vec<u8> = [3u64, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
        let locked = Locked::of(&seg, &spec, &cas, d).unwrap();
        let old = combine::<u64>(&seg, &cas, &operands, region, Some(locked)).ok().unwrap();
        assert_eq!(old, 3u64.to_le_bytes());
        let mut now = [0u8; 8];
        seg.bytes(heap).read(65536 + 128, &mut now);
        assert_eq!(u64::from_le_bytes(now), 7);
        // A value-index pair (16 bytes) combines only under locks.
        let (mut pair, d) = request(&seg, Kind::Accumulate, ElemKind::DoubleIndex, 65536 + 512, 1);
        pair.op = Op::MaxLoc.code().0 as u8;
        let at = |len| -> Result<Region, String> { Ok(Region { offset: heap.offset + 65536 + 512, len }) };
        let operand = bytemuck::bytes_of(&DoubleIndex::new(2.5, 9)).to_vec();
        let locked = Locked::of(&seg, &spec, &pair, d).unwrap();
        assert!(combine::<DoubleIndex>(&seg, &pair, &operand, at, Some(locked)).is_ok());
        assert!(matches!(combine::<DoubleIndex>(&seg, &pair, &operand, at, None), Err(Refused::Bad(_))));
        let mut got = [0u8; 16];
        seg.bytes(heap).read(65536 + 512, &mut got);
        assert_eq!(bytemuck::pod_read_unaligned::<DoubleIndex>(&got), DoubleIndex::new(2.5, 9));
    }
}
