//! The collectives that move bytes, over messages (`over_p2p`'s module docs): the
//! argument agreement, barrier, bcast, gather, scatter, alltoall and allgather.
//!
//! - Agreement: every member allgathers a 16-byte header (block bytes, then whether
//!   its own arguments were valid), then judges every header as `collectives`'s first
//!   round does, so every member returns the error it would on one node.
//! - Barrier: dissemination, ceil(log2 n) rounds; in round k each member sends an empty
//!   message to `me + 2^k` and receives one from `me - 2^k`: after round k it has heard,
//!   through chains, from the 2^(k+1) - 1 members before it, so nobody leaves before
//!   everyone has arrived.
//! - Bcast: binomial tree over ranks relative to the root; each member receives once
//!   from its parent, then sends to its children, largest subtree first.
//! - Gather and scatter: the root receives from (sends to) each member in rank order.
//! - Alltoall: pairwise exchange, n - 1 steps; in step k each member sends its block
//!   for `me + k` and receives the block of `me - k`.
//! - Allgather: Bruck's dissemination (any n, ceil(log2 n) steps) for every algorithm
//!   but [`Allgather::Ring`] (n - 1 steps to the right neighbour). The others name
//!   shared-memory strategies: over messages the dissemination is what they all mean.
//!
//! Within one step a member talks to distinct peers, and steps run in the same order on
//! every member, so each member's receives from a peer follow that peer's sends.

use crate::coll::allgather::Allgather;
use crate::coll::comm::CollError;

use super::{AGREE, DATA, Group};

/// A member's agreement header: block bytes, then argument validity.
const HEADER: usize = 16;

impl Group<'_, '_> {
    /// Agrees on a call's block bytes and on each member's validity (module docs).
    pub(crate) fn agree(&self, block_bytes: usize, local: Result<(), CollError>) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        let mut headers = vec![0u8; n * HEADER];
        let mine = &mut headers[me * HEADER..][..HEADER];
        mine[..8].copy_from_slice(&(block_bytes as u64).to_le_bytes());
        mine[8] = local.is_err() as u8;
        self.bruck(AGREE, &mut headers, HEADER)?;
        local?;
        let ok = |header: &[u8]| {
            let theirs = u64::from_le_bytes(header[..8].try_into().expect("8 bytes")) as usize;
            header[8] == 0 && theirs == block_bytes
        };
        match headers.chunks_exact(HEADER).position(|h| !ok(h)) {
            Some(rank) => Err(CollError::Disagreement { rank: rank as u32 }),
            None => Ok(()),
        }
    }

    /// The dissemination barrier (module docs).
    pub(crate) fn barrier(&self) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        let mut dist = 1;
        while dist < n {
            self.exchange(DATA, ((me + dist) % n, &[]), ((me + n - dist) % n, &mut []))?;
            dist *= 2;
        }
        Ok(())
    }

    /// `data` of `root` to every member, down a binomial tree.
    pub(crate) fn bcast(&self, root: usize, data: &mut [u8]) -> Result<(), CollError> {
        let n = self.n();
        let relative = (self.me() + n - root) % n;
        let absolute = |r: usize| (r + root) % n;
        // The lowest set bit of the relative rank links it to its parent; the root's
        // children hang below the highest power of two under n.
        let mut mask = 1;
        while mask < n {
            if relative & mask != 0 {
                self.recv(DATA, absolute(relative - mask), data)?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if relative + mask < n {
                self.send(DATA, absolute(relative + mask), data)?;
            }
            mask >>= 1;
        }
        Ok(())
    }

    /// Every member's `send` into `recv` at its rank's block, on `root`.
    pub(crate) fn gather(&self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me, block) = (self.n(), self.me(), send.len());
        if me != root {
            return self.send(DATA, root, send);
        }
        for rank in 0..n {
            let into = &mut recv[rank * block..][..block];
            if rank == me { into.copy_from_slice(send) } else { self.recv(DATA, rank, into)? }
        }
        Ok(())
    }

    /// Block `rank` of `root`'s `send` into member `rank`'s `recv`.
    pub(crate) fn scatter(&self, root: usize, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me, block) = (self.n(), self.me(), recv.len());
        if me != root {
            return self.recv(DATA, root, recv);
        }
        for rank in 0..n {
            let from = &send[rank * block..][..block];
            if rank == me { recv.copy_from_slice(from) } else { self.send(DATA, rank, from)? }
        }
        Ok(())
    }

    /// Block `j` of `send` to member `j`, whose block `me` of `recv` it becomes.
    pub(crate) fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        let block = send.len() / n;
        recv[me * block..][..block].copy_from_slice(&send[me * block..][..block]);
        for k in 1..n {
            let (to, from) = ((me + k) % n, (me + n - k) % n);
            self.exchange(DATA, (to, &send[to * block..][..block]), (from, &mut recv[from * block..][..block]))?;
        }
        Ok(())
    }

    /// `out` (n blocks of `block` bytes, this member's own already at its rank) gets
    /// every member's block, by `algorithm` (module docs).
    pub(crate) fn allgather(&self, out: &mut [u8], block: usize, algorithm: Allgather) -> Result<(), CollError> {
        match algorithm {
            Allgather::Ring => self.ring(out, block),
            _ => self.bruck(DATA, out, block),
        }
    }

    /// Bruck's dissemination in place: rotated so that this member's block comes
    /// first, then at distance d = 1, 2, 4... each member sends its first
    /// min(d, n - d) blocks to `me - d` and appends as many from `me + d` (which are
    /// the blocks of `me + d` onwards), then rotated back.
    fn bruck(&self, phase: u32, out: &mut [u8], block: usize) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        out.rotate_left(me * block);
        let mut dist = 1;
        while dist < n {
            let count = dist.min(n - dist) * block;
            let (have, fill) = out.split_at_mut(dist * block);
            self.exchange(phase, ((me + n - dist) % n, &have[..count]), ((me + dist) % n, &mut fill[..count]))?;
            dist *= 2;
        }
        out.rotate_right(me * block);
        Ok(())
    }

    /// The ring: in step k each member passes block `me - k` to its right neighbour
    /// and takes block `me - k - 1` from its left one.
    fn ring(&self, out: &mut [u8], block: usize) -> Result<(), CollError> {
        let (n, me) = (self.n(), self.me());
        for k in 0..n - 1 {
            let (pass, take) = ((me + n - k) % n, (me + 2 * n - k - 1) % n);
            let (pass_block, take_block) = two_blocks(out, block, pass, take);
            self.exchange(DATA, ((me + 1) % n, pass_block), ((me + n - 1) % n, take_block))?;
        }
        Ok(())
    }
}

/// Blocks `a` (to read) and `b` (to write) of `out`, which differ.
fn two_blocks(out: &mut [u8], block: usize, a: usize, b: usize) -> (&[u8], &mut [u8]) {
    if a < b {
        let (low, high) = out.split_at_mut(b * block);
        (&low[a * block..][..block], &mut high[..block])
    } else {
        let (low, high) = out.split_at_mut(a * block);
        (&high[..block], &mut low[b * block..][..block])
    }
}
