//! Data movement and ARMW on windows: put, get (contiguous, strided, indexed), the
//! request-based rput/rget, and the atomic operations on single elements.
//!
//! Every call validates everything first (rank, epoch, bounds, alignment, buffer
//! length) and returns a typed [`RmaError`] having done nothing; then it copies or
//! runs one atomic, and it is complete when it returns (at the target too: the
//! memory is the target's). Displacements and lengths are in elements of the window's
//! type `T`. ARMW takes an element type `A` of its own (u32, u64, i32, i64, f32, f64):
//! the element at `index` (byte `index * size_of::<T>()`) must be `A`-aligned.
//!
//! Every ARMW (the fetch-and-op family, swap, compare-and-swap, atomic load and store)
//! is one CPU atomic, run inside its element's atomicity domain (`accumulate`): bare
//! under the `Atomic` strategy, under the element's stripe locks otherwise, so that it
//! is atomic with the window's accumulates whatever their strategy.

use crate::protocol::atomic::armw::{AtomicElem, AtomicInt, RmwOp, Word};

use crate::protocol::payload::Payload;
use crate::segment::view::{Plain, atomic_u32_at, atomic_u64_at, bytes_of, bytes_of_mut};
use crate::rma::window::Window;
use crate::rma::error::RmaError;
use crate::timing::Category;

/// A strided layout at the target, like an `MPI_Type_vector`: `count` blocks of
/// `block_len` elements, the starts of consecutive blocks `stride` elements apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Vector {
    /// How many blocks.
    pub count: usize,
    /// Elements in each block.
    pub block_len: usize,
    /// Elements from the start of one block to the start of the next.
    pub stride: usize,
}

impl Vector {
    /// Elements moved.
    pub fn elements(&self) -> usize {
        self.count.saturating_mul(self.block_len)
    }

    /// Blocks that move something: empty blocks move nothing and are not checked, so
    /// that a huge `count` of them costs nothing either.
    pub(crate) fn nonempty_blocks(&self) -> usize {
        if self.block_len == 0 { 0 } else { self.count }
    }

    fn blocks(&self, start: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.nonempty_blocks())
            .map(move |i| (start.saturating_add(i.saturating_mul(self.stride)), self.block_len))
    }
}

/// A request-based operation's handle (`MPI_Request` of `MPI_Rput`/`MPI_Rget`). On
/// shared memory the transfer is done when the call returns, so the request is born
/// complete; `wait` and `test` exist for code written against the MPI pattern.
#[derive(Debug)]
#[must_use = "a request should be waited on"]
pub struct Request {
    _done: (),
}

impl Request {
    /// Whether the operation is complete: always, since it completed at the call.
    pub fn test(&self) -> bool {
        true
    }

    /// Completes the operation: it already has, so this returns at once.
    pub fn wait(self) -> Result<(), RmaError> {
        Ok(())
    }
}

/// Elements an indexed transfer moves (saturated).
fn block_elements(blocks: &[(usize, usize)]) -> usize {
    blocks.iter().fold(0, |total, &(_, len)| total.saturating_add(len))
}

impl<T: Plain> Window<'_, T> {
    /// Checks every block of a transfer of `elements` (saturated) elements, returning
    /// their byte offsets.
    fn check_blocks(
        &self,
        target: u32,
        blocks: impl Iterator<Item = (usize, usize)>,
        elements: usize,
        origin_len: usize,
    ) -> Result<Vec<(usize, usize)>, RmaError> {
        self.check_access(target)?;
        // Before the loop: it then runs at most once per origin element, however many
        // blocks the layout claims.
        if elements != origin_len {
            return Err(RmaError::LengthMismatch { expected: elements, found: origin_len });
        }
        let mut out = Vec::new();
        for (index, len) in blocks {
            out.push((self.check_range(target, index, len)?, len * size_of::<T>()));
        }
        self.issued();
        Ok(out)
    }

    /// Copies `src` to elements `index..` of `target`'s part (`MPI_Put`).
    #[inline]
    pub fn put(&self, target: u32, index: usize, src: &[T]) -> Result<(), RmaError> {
        self.copy_call((Category::Put, "put"), target, size_of_val(src), #[inline(always)] || {
            self.check_access(target)?;
            let at = self.check_range(target, index, src.len())?;
            self.issued();
            if self.remote_to(target).is_some() {
                return self.remote_write(target, at, bytes_of(src));
            }
            self.part_bytes(target).write(at, bytes_of(src));
            self.pending_stores.set(true);
            Ok(())
        })
    }

    /// Copies elements `index..` of `target`'s part into `dst` (`MPI_Get`).
    #[inline]
    pub fn get(&self, target: u32, index: usize, dst: &mut [T]) -> Result<(), RmaError> {
        self.copy_call((Category::Get, "get"), target, size_of_val(dst), #[inline(always)] || {
            self.check_access(target)?;
            let at = self.check_range(target, index, dst.len())?;
            self.issued();
            if self.remote_to(target).is_some() {
                self.remote_read(target, at, bytes_of_mut(dst))?;
                // An empty get sends nothing.
                if !dst.is_empty() {
                    crate::rma::remote::timed::round_trip(0, size_of_val(dst));
                }
                return Ok(());
            }
            self.part_bytes(target).read(at, bytes_of_mut(dst));
            Ok(())
        })
    }

    /// Scatters contiguous `src` into a strided layout starting at `index`.
    pub fn put_strided(&self, target: u32, index: usize, layout: Vector, src: &[T]) -> Result<(), RmaError> {
        let blocks = self.check_blocks(target, layout.blocks(index), layout.elements(), src.len())?;
        self.scatter(target, &blocks, bytes_of(src))
    }

    /// Gathers a strided layout starting at `index` into contiguous `dst`.
    pub fn get_strided(
        &self,
        target: u32,
        index: usize,
        layout: Vector,
        dst: &mut [T],
    ) -> Result<(), RmaError> {
        let blocks = self.check_blocks(target, layout.blocks(index), layout.elements(), dst.len())?;
        self.gather(target, &blocks, bytes_of_mut(dst))
    }

    /// Scatters contiguous `src` into the blocks `(index, len)` of `target`'s part,
    /// in order (an indexed datatype).
    pub fn put_blocks(&self, target: u32, blocks: &[(usize, usize)], src: &[T]) -> Result<(), RmaError> {
        let blocks = self.check_blocks(target, blocks.iter().copied(), block_elements(blocks), src.len())?;
        self.scatter(target, &blocks, bytes_of(src))
    }

    /// Gathers the blocks `(index, len)` of `target`'s part into contiguous `dst`.
    pub fn get_blocks(&self, target: u32, blocks: &[(usize, usize)], dst: &mut [T]) -> Result<(), RmaError> {
        let blocks = self.check_blocks(target, blocks.iter().copied(), block_elements(blocks), dst.len())?;
        self.gather(target, &blocks, bytes_of_mut(dst))
    }

    fn scatter(&self, target: u32, blocks: &[(usize, usize)], src: &[u8]) -> Result<(), RmaError> {
        self.copy_call((Category::Put, "put"), target, src.len(), #[inline(always)] || {
            self.pending_stores.set(true);
            let remote = self.remote_to(target).is_some();
            let part = self.part_bytes(target);
            let mut from = 0;
            for &(at, len) in blocks {
                match remote {
                    true => self.remote_write(target, at, &src[from..from + len])?,
                    false => part.write(at, &src[from..from + len]),
                }
                from += len;
            }
            Ok(())
        })
    }

    fn gather(&self, target: u32, blocks: &[(usize, usize)], dst: &mut [u8]) -> Result<(), RmaError> {
        self.copy_call((Category::Get, "get"), target, dst.len(), #[inline(always)] || {
            let remote = self.remote_to(target).is_some();
            let part = self.part_bytes(target);
            let mut to = 0;
            for &(at, len) in blocks {
                match remote {
                    true => self.remote_read(target, at, &mut dst[to..to + len])?,
                    false => part.read(at, &mut dst[to..to + len]),
                }
                to += len;
            }
            if remote && !dst.is_empty() {
                // The blocks' requests go out together: one round trip.
                crate::rma::remote::timed::round_trip(0, dst.len());
            }
            Ok(())
        })
    }

    fn check_passive(&self, target: u32) -> Result<(), RmaError> {
        self.check_rank(target)?;
        if !self.epochs.borrow().passive(target) {
            return Err(RmaError::NotPassive { rank: target });
        }
        Ok(())
    }

    /// Request-based put (`MPI_Rput`): only inside a lock or lock_all epoch.
    pub fn rput(&self, target: u32, index: usize, src: &[T]) -> Result<Request, RmaError> {
        self.check_passive(target)?;
        self.put(target, index, src)?;
        Ok(Request { _done: () })
    }

    /// Request-based get (`MPI_Rget`): only inside a lock or lock_all epoch.
    pub fn rget(&self, target: u32, index: usize, dst: &mut [T]) -> Result<Request, RmaError> {
        self.check_passive(target)?;
        self.get(target, index, dst)?;
        Ok(Request { _done: () })
    }

    /// The atomic word of an `A` at element `index` of `target`'s part, and its byte
    /// offset in the part. Always inlined: left to LLVM, the C library's fast paths
    /// called it, 20 instructions more for a fetch-and-op than the Rust one.
    #[inline(always)]
    fn word<A: AtomicElem>(&self, target: u32, index: usize) -> Result<(Word<'_>, usize), RmaError> {
        self.check_access(target)?;
        let part_len = self.len_of(target)?;
        let byte_offset = index.checked_mul(size_of::<T>());
        let part_bytes = part_len * size_of::<T>();
        let Some(byte_offset) =
            byte_offset.filter(|b| b.checked_add(A::WIDTH).is_some_and(|e| e <= part_bytes))
        else {
            return Err(RmaError::OutOfBounds { rank: target, index, len: 1, part_len });
        };
        let bytes = self.part_bytes(target);
        let word = match A::WIDTH {
            4 => atomic_u32_at(bytes, byte_offset).map(Word::W32),
            _ => atomic_u64_at(bytes, byte_offset).map(Word::W64),
        };
        let word = word.ok_or(RmaError::Misaligned { rank: target, byte_offset, width: A::WIDTH })?;
        self.issued();
        Ok((word, byte_offset))
    }

    /// Runs `armw` on the word of an `A` at element `index` of `target`'s part, inside
    /// the element's atomicity domain (see `accumulate`): atomic with every accumulate,
    /// get_accumulate and fetch_and_op on the element, whatever the window's strategy.
    ///
    /// Under `Atomic` this costs one load of a private flag more than the bare atomic:
    /// the locked path is a separate function, so that no guard is built on the
    /// lock-free one (its stores, before the locked instruction that must wait for them,
    /// took the bare 4 ns fetch_add to 18 ns).
    #[inline(always)]
    fn armw<A: AtomicElem, R>(&self, target: u32, index: usize, armw: impl FnOnce(Word<'_>) -> R) -> Result<R, RmaError> {
        self.update_call("armw", target, A::WIDTH, #[inline(always)] || {
            let (word, at) = self.word::<A>(target, index)?;
            if !self.acc_locks() {
                return Ok(armw(word));
            }
            self.locked_armw(target, at, A::WIDTH, word, armw)
        })
    }

    /// [`Window::armw`] under a strategy with locks: holds the element's stripes around it.
    #[inline(never)]
    fn locked_armw<'w, R>(
        &'w self,
        target: u32,
        at: usize,
        width: usize,
        word: Word<'w>,
        armw: impl FnOnce(Word<'w>) -> R,
    ) -> Result<R, RmaError> {
        let _held = self.locked_domain(target, at, width)?;
        Ok(armw(word))
    }

    #[inline]
    pub(super) fn rmw<A: AtomicElem>(&self, target: u32, index: usize, op: RmwOp, v: A) -> Result<A, RmaError> {
        if self.remote.is_some() {
            return self.armw_across(target, index, Some(op), v, true);
        }
        self.armw::<A, _>(target, index, |w| A::from_bits(w.fetch_op(op, A::KIND, v.to_bits())))
    }

    /// An ARMW on a window across nodes: on another node's target, a request to its
    /// gateway (`remote`); on this node's, the one-node path.
    #[cold]
    fn armw_across<A: AtomicElem>(
        &self,
        target: u32,
        index: usize,
        op: Option<RmwOp>,
        v: A,
        fetch: bool,
    ) -> Result<A, RmaError> {
        if self.remote_to(target).is_some() {
            return self.remote_armw(target, index, op, v, fetch);
        }
        match op {
            Some(op) => self.armw::<A, _>(target, index, |w| A::from_bits(w.fetch_op(op, A::KIND, v.to_bits()))),
            None => self.armw::<A, _>(target, index, |w| A::from_bits(w.load())),
        }
    }

    /// Atomically adds `v` (`MPI_Fetch_and_op` with `MPI_SUM`); returns the old value.
    /// Native for integers (wrapping), a compare-and-swap loop for floats.
    #[inline]
    pub fn fetch_add<A: AtomicElem>(&self, target: u32, index: usize, v: A) -> Result<A, RmaError> {
        self.rmw(target, index, RmwOp::Add, v)
    }

    /// Atomic bitwise or (`MPI_BOR`); returns the old value.
    pub fn fetch_or<A: AtomicInt>(&self, target: u32, index: usize, v: A) -> Result<A, RmaError> {
        self.rmw(target, index, RmwOp::Or, v)
    }

    /// Atomic bitwise and (`MPI_BAND`); returns the old value.
    pub fn fetch_and<A: AtomicInt>(&self, target: u32, index: usize, v: A) -> Result<A, RmaError> {
        self.rmw(target, index, RmwOp::And, v)
    }

    /// Atomic bitwise xor (`MPI_BXOR`); returns the old value.
    pub fn fetch_xor<A: AtomicInt>(&self, target: u32, index: usize, v: A) -> Result<A, RmaError> {
        self.rmw(target, index, RmwOp::Xor, v)
    }

    /// Atomic exchange (`MPI_REPLACE`); returns the old value.
    pub fn swap<A: AtomicElem>(&self, target: u32, index: usize, v: A) -> Result<A, RmaError> {
        self.rmw(target, index, RmwOp::Swap, v)
    }

    /// Stores `new` if the element (compared bitwise) is `current`
    /// (`MPI_Compare_and_swap`); returns the old value either way.
    #[inline]
    pub fn compare_and_swap<A: AtomicElem>(
        &self,
        target: u32,
        index: usize,
        current: A,
        new: A,
    ) -> Result<A, RmaError> {
        if self.remote_to(target).is_some() {
            return self.remote_word_cas(target, index, current, new);
        }
        self.armw::<A, _>(target, index, |w| A::from_bits(w.compare_and_swap(current.to_bits(), new.to_bits())))
    }

    /// Atomic read (`MPI_Fetch_and_op` with `MPI_NO_OP`), with Acquire ordering.
    pub fn load<A: AtomicElem>(&self, target: u32, index: usize) -> Result<A, RmaError> {
        if self.remote.is_some() {
            return self.armw_across(target, index, None, A::from_bits(0), true);
        }
        self.armw::<A, _>(target, index, |w| A::from_bits(w.load()))
    }

    /// Atomic write (`MPI_Accumulate` with `MPI_REPLACE`), with Release ordering.
    pub fn store<A: AtomicElem>(&self, target: u32, index: usize, v: A) -> Result<(), RmaError> {
        if self.remote_to(target).is_some() {
            return self.remote_armw(target, index, Some(RmwOp::Swap), v, false).map(drop);
        }
        self.armw::<A, _>(target, index, |w| w.store(v.to_bits()))?;
        self.pending_stores.set(true);
        Ok(())
    }

    /// [`Window::load`], named to stand out beside `get`.
    pub fn atomic_load<A: AtomicElem>(&self, target: u32, index: usize) -> Result<A, RmaError> {
        self.load(target, index)
    }

    /// [`Window::store`], named to stand out beside `put`.
    pub fn atomic_store<A: AtomicElem>(&self, target: u32, index: usize, v: A) -> Result<(), RmaError> {
        self.store(target, index, v)
    }
}
