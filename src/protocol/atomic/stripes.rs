//! Address-striped locks for the `CallerComputes` accumulate strategy.
//!
//! A target's part is cut into granules of `granularity` bytes (a multiple of the
//! element size, so no element straddles two); granule `g` is guarded by stripe lock
//! `g % stripes`, where `stripes = min(MAX_STRIPES, granules in the part)`. A
//! granularity that covers the whole part gives one stripe: a lock per window part,
//! the paper's caller-computes. The caller locks a granule's stripe, combines that
//! granule in place ([`CombineTarget`]: one vectorized pass over the mapping in
//! production, copy out/combine/copy back over loom cells), unlocks, and moves on to
//! the next granule. A call never holds two stripes at once, so there is no lock-order
//! deadlock, and every element is updated under its stripe: accumulates are atomic per
//! element (what MPI requires), and one origin's updates land in issue order.
//!
//! Each stripe is a fair ticket mutex (`next`, `serving`) on a line of its own:
//! - lock: `t = next.fetch_add(1)` (Relaxed: the ticket only orders waiters among
//!   themselves), then wait until `serving == t` (Acquire: pairs with the Release
//!   of the previous holder's unlock, so its writes to the granule are visible);
//! - unlock: `serving += 1` (Release), then, if a later ticket was taken, ring the
//!   target's doorbell for waiters that went to sleep (a Dekker pair: the SeqCst fence
//!   after the increment, and the one the waiter issues between its ticket and its last
//!   check before it sleeps; so a sleeper is either seen or sees the new `serving`. The
//!   waiter's own Dekker pair with the ring makes the wake-up reliable).
//!
//! ARMW joins the same atomicity domain ([`lock_span`]): a fetch-and-op,
//! compare-and-swap, swap, atomic load or store on an element takes every stripe that
//! guards the element's bytes (at most two: an atomic is at most 8 bytes wide and a
//! granule at least 4), in ascending stripe order, runs its CPU atomic and releases
//! them. A combine holds one stripe at a time and every multi-stripe holder takes its
//! stripes in ascending order, so no cycle of waiters can form. Without the locks a
//! CPU atomic racing a combine's plain read-modify-write would lose one of the two
//! updates. Making the combine itself use CPU atomics instead would keep ARMW
//! lock-free, but it would cost the bulk accumulates that this strategy exists for.
//! Measured on this machine (2 shared CPUs, `examples/armw_cost.rs`, one origin, best
//! of 7): an element-wise atomic combine (the `Atomic` strategy's) of 64 KiB of f64 Sum
//! runs at 1.2-1.9 GB/s against 28-46 GB/s for the vectorized in-place combine, about
//! 25 times slower; the locks take an uncontended fetch_add or compare_and_swap from
//! 4-5 ns to 25-45 ns (three locked instructions instead of one). The locks win.
//!
//! The owner-computes agent combines under its owner's stripes in the same way (see
//! `rma::owner`), so that ARMW is atomic with its accumulates too.
//!
//! Invariant: at most one core is between lock and unlock of a stripe; a core blocked
//! in lock returns the job's abort error if the job aborts.

pub use crossbeam_utils::CachePadded;

use std::ops::Range;

use crate::protocol::abort::JobAborted;
use crate::protocol::atomic::op::{Element, Op};
use crate::protocol::payload::Payload;
use crate::protocol::waiter::{Doorbell, Waiter};
use crate::sync::{AtomicU32, Ordering, fence_after_rmw};

/// Most stripes per target part.
pub const MAX_STRIPES: usize = 64;

/// One stripe's ticket mutex.
#[repr(C)]
#[derive(Default)]
pub struct Stripe {
    next: AtomicU32,
    serving: AtomicU32,
}

/// A target's stripe locks, each on its own line.
pub type StripeLocks = [CachePadded<Stripe>];

impl Stripe {
    /// An unlocked stripe.
    pub fn new() -> Stripe {
        Stripe::default()
    }

    /// Takes the lock (FIFO among contenders).
    pub fn lock(&self, waiter: &Waiter<'_>, bell: &Doorbell) -> Result<(), JobAborted> {
        // Relaxed: the ticket is an ordering among waiters only (module docs). No fence
        // after it: the one the waiter issues before it sleeps orders the ticket before
        // the check that decides the sleep, against the unlocker's `serving` increment
        // before its load of `next` (Dekker pair); earlier checks never sleep.
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        // Acquire: pairs with the Release in `unlock` (module docs).
        waiter.wait_until(bell, || (self.serving.load(Ordering::Acquire) == ticket).then_some(()))
    }

    /// Passes the lock to the next ticket; rings `bell` only if a later ticket was taken.
    pub fn unlock(&self, bell: &Doorbell) {
        // Release: the granule's writes happen before the next holder's Acquire.
        let served = self.serving.fetch_add(1, Ordering::Release).wrapping_add(1);
        // SeqCst fence (Dekker pair with `lock`): if no later ticket is visible, its
        // holder's check of `serving` will see ours, so nobody needs waking and the
        // doorbell (shared with whatever else sleeps on the target's) stays quiet.
        fence_after_rmw();
        if self.next.load(Ordering::Relaxed) != served {
            bell.ring();
        }
    }
}

/// How a target part is striped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Striping {
    /// Bytes per granule (a multiple of the element size, at least one element).
    pub granule: usize,
    /// Stripe locks in use for this part (1..=MAX_STRIPES).
    pub stripes: usize,
}

impl Striping {
    /// The striping of a part of `part_bytes` for a requested `granularity`, with
    /// elements of `elem` bytes.
    pub fn new(granularity: usize, part_bytes: usize, elem: usize) -> Striping {
        // A granularity past the part is a whole-part lock (capped: no overflow).
        let granule = granularity.clamp(elem, part_bytes.max(elem)).div_ceil(elem) * elem;
        let granules = part_bytes.div_ceil(granule).max(1);
        Striping { granule, stripes: granules.min(MAX_STRIPES) }
    }

    /// The granule pieces `(start, end)` of the byte range `start..end`, in order.
    pub fn pieces(&self, start: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut at = start;
        std::iter::from_fn(move || {
            (at < end).then(|| {
                let stop = ((at / self.granule + 1) * self.granule).min(end);
                let piece = (at, stop);
                at = stop;
                piece
            })
        })
    }

    /// The stripe that guards byte `byte` of the part: granules take stripes round-robin.
    pub fn stripe_of(&self, byte: usize) -> usize {
        (byte / self.granule) % self.stripes
    }

    /// The distinct stripes that guard bytes `start..end`, in ascending order, as two
    /// ranges to be taken one after the other. The granules of a span take consecutive
    /// stripes (modulo `stripes`): all of them once the span covers `stripes` granules,
    /// otherwise a run that may wrap past the last stripe, whose wrapped part (the
    /// lower indices) comes first.
    pub fn span(&self, start: usize, end: usize) -> (Range<usize>, Range<usize>) {
        if end <= start {
            return (0..0, 0..0);
        }
        let granules = (end - 1) / self.granule - start / self.granule + 1;
        if granules >= self.stripes {
            return (0..self.stripes, 0..0);
        }
        let first = self.stripe_of(start);
        let last = first + granules;
        if last <= self.stripes { (first..last, 0..0) } else { (0..last - self.stripes, first..self.stripes) }
    }
}

/// Memory an exclusive applier (a stripe holder, the owner's agent) combines into: by
/// default in L1-sized chunks copied out and back ([`combine_in_place`], loom's
/// cells); the shared mapping overrides it with a single in-place pass (`acc_view`).
pub trait CombineTarget: Payload + Sized {
    /// `self[at..] = self[at..] op src`; previous values go to `old` when given. The
    /// caller holds whatever makes this exclusive and checked bounds and alignment.
    fn combine<T: Element>(&self, at: usize, op: Op, src: &[T], old: Option<&mut [T]>, buf: &mut Vec<T>) {
        combine_in_place(self, at, op, src, old, buf);
    }
}

#[cfg(sccemu_loom)]
impl CombineTarget for crate::protocol::payload::LoomBytes {}

/// Combines `src` into the elements at byte `at` of `part`, granule by granule, each
/// under its stripe lock; previous values go to `old` when given. The caller has
/// checked bounds, lengths and the op.
#[allow(clippy::too_many_arguments)]
pub fn striped_combine<T: Element, P: CombineTarget>(
    locks: &StripeLocks,
    striping: Striping,
    part: &P,
    at: usize,
    op: Op,
    src: &[T],
    mut old: Option<&mut [T]>,
    waiter: &Waiter<'_>,
    bell: &Doorbell,
) -> Result<(), JobAborted> {
    let elem = size_of::<T>();
    let end = at + std::mem::size_of_val(src);
    let mut buf = Vec::new();
    for_each_granule_locked(locks, striping, at, end, waiter, bell, |p0, p1| {
        let (i0, i1) = ((p0 - at) / elem, (p1 - at) / elem);
        part.combine(p0, op, &src[i0..i1], old.as_deref_mut().map(|o| &mut o[i0..i1]), &mut buf);
    })
}

/// Calls `apply(p0, p1)` for each granule piece `p0..p1` of the byte range `at..end`, in
/// order, holding that piece's stripe (one at a time).
pub fn for_each_granule_locked(
    locks: &StripeLocks,
    striping: Striping,
    at: usize,
    end: usize,
    waiter: &Waiter<'_>,
    bell: &Doorbell,
    mut apply: impl FnMut(usize, usize),
) -> Result<(), JobAborted> {
    for (p0, p1) in striping.pieces(at, end) {
        let stripe = &locks[striping.stripe_of(p0)];
        stripe.lock(waiter, bell)?;
        apply(p0, p1);
        stripe.unlock(bell);
    }
    Ok(())
}

/// Every stripe that guards a span of bytes, held until dropped ([`lock_span`]).
#[must_use = "the stripes are released when the guard drops"]
pub struct SpanGuard<'a> {
    locks: &'a StripeLocks,
    /// The stripes held, as two ranges ([`Striping::span`]).
    held: (Range<usize>, Range<usize>),
    bell: &'a Doorbell,
}

impl Drop for SpanGuard<'_> {
    fn drop(&mut self) {
        let (low, high) = self.held.clone();
        for s in low.chain(high) {
            self.locks[s].unlock(self.bell);
        }
    }
}

/// Takes every stripe that guards bytes `start..end`, in ascending order (module docs:
/// so that it never deadlocks with a combine or another span), until the guard drops.
/// An ARMW runs its CPU atomic while holding it, in its element's atomicity domain.
pub fn lock_span<'a>(
    locks: &'a StripeLocks,
    striping: Striping,
    start: usize,
    end: usize,
    waiter: &Waiter<'_>,
    bell: &'a Doorbell,
) -> Result<SpanGuard<'a>, JobAborted> {
    let (low, high) = striping.span(start, end);
    let order = low.clone().chain(high.clone());
    for (taken, s) in order.clone().enumerate() {
        if let Err(e) = locks[s].lock(waiter, bell) {
            // The job is aborting; still hand back what we hold.
            order.take(taken).for_each(|s| locks[s].unlock(bell));
            return Err(e);
        }
    }
    Ok(SpanGuard { locks, held: (low, high), bell })
}

/// Elements combined per copy-out/combine/copy-back step (stays in L1).
const CHUNK: usize = 2048;

/// Combines `src` into the elements at byte `at` of `part` in L1-sized chunks: copy
/// out, combine (vectorized, `op::combine_into`), copy back; previous values go to
/// `old` when given. The caller holds whatever makes this exclusive (a stripe lock, or
/// being the owner's only applier). `buf` is scratch space, reused between calls.
pub fn combine_in_place<T: Element, P: Payload>(
    part: &P,
    at: usize,
    op: Op,
    src: &[T],
    mut old: Option<&mut [T]>,
    buf: &mut Vec<T>,
) {
    let elem = size_of::<T>();
    for (k, chunk) in src.chunks(CHUNK).enumerate() {
        let first = k * CHUNK;
        let at = at + first * elem;
        buf.clear();
        buf.resize(chunk.len(), T::zeroed());
        if op != Op::Replace || old.is_some() {
            part.read(at, bytemuck::cast_slice_mut(buf.as_mut_slice()));
        }
        if let Some(old) = old.as_deref_mut() {
            old[first..first + chunk.len()].copy_from_slice(buf);
        }
        if op != Op::NoOp {
            crate::protocol::atomic::op::combine_into(op, buf, chunk);
            part.write(at, bytemuck::cast_slice(buf.as_slice()));
        }
    }
}

#[cfg(all(test, not(sccemu_loom)))]
mod tests {
    use super::*;

    #[test]
    fn pieces_follow_granules() {
        let s = Striping::new(16, 100, 8);
        assert_eq!(s, Striping { granule: 16, stripes: 7 });
        let p: Vec<_> = s.pieces(8, 40).collect();
        assert_eq!(p, [(8, 16), (16, 32), (32, 40)]);
        assert_eq!(Striping::new(1 << 20, 100, 8).stripes, 1, "whole-part lock");
        assert_eq!(Striping::new(3, 100, 4).granule, 4, "at least one element");
        assert_eq!(Striping::new(8, 1 << 20, 8).stripes, MAX_STRIPES);
    }

    #[test]
    fn spans_list_each_guarding_stripe_once_in_ascending_order() {
        let all = |s: &Striping, a, b| {
            let (x, y) = s.span(a, b);
            x.chain(y).collect::<Vec<_>>()
        };
        let s = Striping::new(4, 64, 4); // 16 granules, 16 stripes
        assert_eq!(all(&s, 8, 16), [2, 3], "an 8-byte atomic over two 4-byte granules");
        assert_eq!(all(&s, 8, 12), [2]);
        assert_eq!(all(&s, 8, 8), Vec::<usize>::new());
        let s = Striping::new(4, 4 * 200, 4); // 200 granules, 64 stripes
        assert_eq!(all(&s, 63 * 4, 65 * 4), [0, 63], "a span wrapping past the last stripe");
        assert_eq!(all(&s, 0, 200 * 4), (0..64).collect::<Vec<_>>());
        let whole = Striping::new(usize::MAX, 64, 8);
        assert_eq!(all(&whole, 56, 64), [0]);
        for start in (0..190 * 4).step_by(4) {
            for len in [4, 8, 12, 256, 400] {
                let got = all(&s, start, start + len);
                let mut want: Vec<usize> =
                    s.pieces(start, start + len).map(|(p, _)| s.stripe_of(p)).collect();
                want.sort_unstable();
                want.dedup();
                assert_eq!(got, want, "{start}+{len}");
            }
        }
    }
}
