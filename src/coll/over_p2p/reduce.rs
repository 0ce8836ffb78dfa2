//! Reductions over messages (`over_p2p`'s module docs): reduce, allreduce and
//! reduce_scatter, combining with the library's own [`combine_into`].
//!
//! Every reduction first folds every member's vector into member 0, then moves the
//! result: to the root (reduce), down `bcast`'s tree (allreduce), or in slices to each
//! member (reduce_scatter). So every member gets the same bits, whatever the root, as
//! on one node.
//!
//! The fold keeps rank order, as the shared-memory path's does: a binomial tree over
//! absolute ranks in which member r, for mask = 1, 2, 4... below its lowest set bit,
//! receives the partial result of ranks `r + mask .. r + 2 mask` and combines it after
//! its own (ranks `r .. r + mask`), then sends to `r - lowest bit`. Every op the
//! library has is associative, so this equals the left fold in rank order (up to
//! floating-point rounding), except AXPY (`a + alpha b`), which is not: it is folded
//! in a line, member 0 combining every other member's vector in rank order.

use crate::coll::comm::CollError;
use crate::protocol::atomic::op::{Element, Op, combine_into};

use super::{DATA, Group};

fn bytes<T: bytemuck::Pod>(s: &[T]) -> &[u8] {
    bytemuck::cast_slice(s)
}

fn bytes_mut<T: bytemuck::Pod>(s: &mut [T]) -> &mut [u8] {
    bytemuck::cast_slice_mut(s)
}

impl Group<'_, '_> {
    /// Folds every member's `acc` (its own vector on entry) into member 0's, in rank
    /// order (module docs). Other members' `acc` is left partial.
    fn fold_to_first<T: Element>(&self, acc: &mut [T], op: Op) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        // Only even ranks receive (odd ones send at once), so only they need room.
        let mut incoming = vec![<T as bytemuck::Zeroable>::zeroed(); if me % 2 == 0 { acc.len() } else { 0 }];
        if matches!(op, Op::Axpy(_)) {
            if me != 0 {
                return self.send(DATA, 0, bytes(acc));
            }
            for rank in 1..n {
                self.recv(DATA, rank, bytes_mut(&mut incoming))?;
                combine_into(op, acc, &incoming);
            }
            return Ok(());
        }
        let mut mask = 1;
        while mask < n {
            if me & mask != 0 {
                return self.send(DATA, me - mask, bytes(acc));
            }
            if me + mask < n {
                self.recv(DATA, me + mask, bytes_mut(&mut incoming))?;
                combine_into(op, acc, &incoming);
            }
            mask <<= 1;
        }
        Ok(())
    }

    /// `recv` on `root` becomes the reduction of every member's `send`.
    pub(crate) fn reduce<T: Element>(&self, root: usize, send: &[T], recv: &mut [T], op: Op) -> Result<(), CollError> {
        let me = self.me();
        if me == 0 && root == 0 {
            recv.copy_from_slice(send);
            return self.fold_to_first(recv, op);
        }
        let mut acc = send.to_vec();
        self.fold_to_first(&mut acc, op)?;
        match me {
            0 => self.send(DATA, root, bytes(&acc)),
            _ if me == root => self.recv(DATA, 0, bytes_mut(recv)),
            _ => Ok(()),
        }
    }

    /// Every member's `recv` becomes the reduction of every member's `send`.
    pub(crate) fn allreduce<T: Element>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<(), CollError> {
        recv.copy_from_slice(send);
        self.fold_to_first(recv, op)?;
        self.bcast(0, bytes_mut(recv))
    }

    /// Member `rank`'s `recv` becomes its `counts[rank]` elements of the reduction of
    /// every member's `send` (after those of lower ranks).
    pub(crate) fn reduce_scatter<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Op,
    ) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        let mut acc = send.to_vec();
        self.fold_to_first(&mut acc, op)?;
        if me != 0 {
            return self.recv(DATA, 0, bytes_mut(recv));
        }
        let mut at = 0;
        for (rank, &count) in counts.iter().enumerate().take(n) {
            let slice = &acc[at..at + count];
            if rank == 0 { recv.copy_from_slice(slice) } else { self.send(DATA, rank, bytes(slice))? }
            at += count;
        }
        Ok(())
    }
}
