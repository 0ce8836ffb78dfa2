//! The protocols of `MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`, `MPI_Iallreduce`,
//! `MPI_Igather` and `MPI_Iallgather`, on the engine of [`super::machine`]:
//!
//! - barrier: dissemination, ceil(log2 n) rounds; in round `k` rank `r` sends an empty
//!   message to `r + 2^k` and waits for one from `r - 2^k` (mod n) before the next
//!   round (phase `k`). Once the last round's message is in, every rank has entered.
//! - broadcast: binomial tree over ranks relative to the root; a rank receives from its
//!   parent (its relative rank less its lowest set bit) and then sends to its children
//!   (phase `PHASE_TREE`).
//! - reduce: every rank sends its packed input to the root (phase `PHASE_GATHER`),
//!   which folds all inputs in rank order, `x0 op x1 op ... op x(n-1)`, left to right:
//!   the combination the blocking reductions make (`crate::ordered`), so the results
//!   are the same bit for bit, and non-commutative user ops get the rank-ordered
//!   result. O(n) at the root, fine at SCC scale.
//! - allreduce: a reduce to rank 0, then a broadcast of its result from rank 0 (the
//!   tree's receive is posted at the start: its phase differs from the gather's).
//! - gather and allgather: as reduce and allreduce, the root concatenating the inputs
//!   in rank order instead of folding them.
//!
//! Every receive expects its exact length: the members' counts must agree.

use crate::comm::CommObj;
use crate::error::MpiResult;
use crate::ffi::pending::UserBuffer;
use crate::ordered::Combine;
use crate::request::Pending;

use super::machine::{Incoming, PHASE_GATHER, PHASE_TREE, Protocol, Wire, fold_in_order, start};

/// Dissemination barrier: the current round and its awaited message.
struct Barrier {
    round: u32,
    rounds: u32,
    incoming: Option<Incoming>,
}

impl Barrier {
    fn start(w: &mut Wire) -> MpiResult<Barrier> {
        let n = w.size();
        let rounds = u32::BITS - (n - 1).leading_zeros();
        let mut b = Barrier { round: 0, rounds, incoming: None };
        b.post_round(w)?;
        Ok(b)
    }

    fn post_round(&mut self, w: &mut Wire) -> MpiResult<()> {
        if self.round == self.rounds {
            return Ok(());
        }
        let (n, dist) = (w.size(), 1u32 << self.round);
        self.incoming = Some(w.post((w.rank + n - dist % n) % n, self.round, 0)?);
        w.send((w.rank + dist) % n, self.round, &[])
    }
}

impl Protocol for Barrier {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        while self.round < self.rounds {
            if let Some(i) = &mut self.incoming
                && !i.arrived()?
            {
                return Ok(false);
            }
            self.round += 1;
            self.post_round(w)?;
        }
        Ok(true)
    }
}

/// Binomial broadcast tree: the data, once here, and the parent's message until then.
pub(super) struct Tree {
    root: u32,
    pub(super) data: Option<Vec<u8>>,
    parent: Option<Incoming>,
    forwarded: bool,
}

impl Tree {
    /// Posts the receive from the parent (off the root); the root's `data` may come
    /// later ([`Tree::advance`] waits for it).
    pub(super) fn start(w: &Wire, root: u32, len: usize, data: Option<Vec<u8>>) -> MpiResult<Tree> {
        let n = w.size();
        let rel = (w.rank + n - root) % n;
        let parent = if rel == 0 {
            None
        } else {
            let parent_rel = rel - (1 << rel.trailing_zeros());
            Some(w.post((parent_rel + root) % n, PHASE_TREE, len)?)
        };
        Ok(Tree { root, data, parent, forwarded: false })
    }

    /// The data once here and forwarded to the children.
    pub(super) fn advance(&mut self, w: &mut Wire) -> MpiResult<Option<&[u8]>> {
        if self.data.is_none() {
            let Some(p) = &mut self.parent else { return Ok(None) };
            if !p.arrived()? {
                return Ok(None);
            }
            self.data = self.parent.take().map(|p| p.buf);
        }
        let data = self.data.as_deref().unwrap_or_default();
        if !self.forwarded {
            self.forwarded = true;
            let n = w.size();
            let rel = (w.rank + n - self.root) % n;
            // Children are rel + m for every power of two m below rel's lowest set bit
            // (below n for the root).
            let limit = if rel == 0 { n.next_power_of_two() } else { 1 << rel.trailing_zeros() };
            let mut m = 1;
            while m < limit {
                if rel + m < n {
                    w.send((rel + m + self.root) % n, PHASE_TREE, data)?;
                }
                m <<= 1;
            }
        }
        Ok(Some(data))
    }
}

/// Every rank's input moving to the root, and the root's fold of them (or, without an
/// op, their concatenation in rank order).
pub(super) struct Fold {
    root: u32,
    mine: Vec<u8>,
    /// At the root, the other ranks' inputs by rank.
    parts: Vec<Option<Incoming>>,
    combine: Option<Box<dyn Combine + Send>>,
    pub(super) result: Option<Vec<u8>>,
}

impl Fold {
    pub(super) fn start(
        w: &mut Wire,
        root: u32,
        mine: Vec<u8>,
        combine: Option<Box<dyn Combine + Send>>,
    ) -> MpiResult<Fold> {
        let mut parts = Vec::new();
        if w.rank == root {
            for r in 0..w.size() {
                parts.push(if r == root { None } else { Some(w.post(r, PHASE_GATHER, mine.len())?) });
            }
        } else {
            w.send(root, PHASE_GATHER, &mine)?;
        }
        Ok(Fold { root, mine, parts, combine, result: None })
    }

    /// Whether this rank's part is done; the root's result is then in `result`.
    pub(super) fn advance(&mut self, w: &Wire) -> MpiResult<bool> {
        if w.rank != self.root || self.result.is_some() {
            return Ok(true);
        }
        for p in self.parts.iter_mut().flatten() {
            if !p.arrived()? {
                return Ok(false);
            }
        }
        let inputs = self.parts.iter().map(|p| match p {
            Some(p) => &p.buf[..],
            None => &self.mine[..],
        });
        self.result = Some(match &self.combine {
            Some(combine) => fold_in_order(inputs, combine.as_ref())?,
            None => inputs.flatten().copied().collect(),
        });
        Ok(true)
    }
}

/// A broadcast: the tree, and where a non-root's result goes.
struct Bcast {
    tree: Tree,
    target: Option<UserBuffer>,
}

impl Protocol for Bcast {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        let Some(data) = self.tree.advance(w)? else { return Ok(false) };
        if let Some(target) = &self.target {
            target.unpack(data)?;
        }
        Ok(true)
    }
}

/// A reduce or gather (`tree: None`), or an allreduce or allgather: to rank 0, then its
/// broadcast.
struct Collect {
    fold: Fold,
    tree: Option<Tree>,
    /// Where this rank's result goes (the root's alone for a reduce or gather).
    target: Option<UserBuffer>,
}

impl Protocol for Collect {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        if !self.fold.advance(w)? {
            return Ok(false);
        }
        let result = match &mut self.tree {
            None => self.fold.result.take(),
            Some(tree) => {
                if let Some(r) = self.fold.result.take() {
                    tree.data = Some(r);
                }
                let Some(data) = tree.advance(w)? else { return Ok(false) };
                Some(data.to_vec())
            }
        };
        if let (Some(target), Some(data)) = (&self.target, result) {
            target.unpack(&data)?;
        }
        Ok(true)
    }
}

/// Starts `MPI_Ibarrier` on `c`.
pub fn barrier(c: &CommObj) -> MpiResult<Box<dyn Pending>> {
    start(c, Barrier::start)
}

/// Starts `MPI_Ibcast` on `c` of `len` bytes: the root gives its packed `data`, the
/// others the `target` to unpack into.
pub fn bcast(
    c: &CommObj,
    root: u32,
    len: usize,
    data: Option<Vec<u8>>,
    target: Option<UserBuffer>,
) -> MpiResult<Box<dyn Pending>> {
    start(c, |w| Ok(Bcast { tree: Tree::start(w, root, len, data)?, target }))
}

/// Starts, on `c` with this rank's packed input `mine`, `MPI_Ireduce` (`root: Some`,
/// `combine: Some`), `MPI_Iallreduce` (`None`, `Some`), `MPI_Igather` (`Some`, `None`)
/// or `MPI_Iallgather` (`None`, `None`); the result goes to `target` (the root's
/// alone for a reduce or gather).
pub fn collect(
    c: &CommObj,
    root: Option<u32>,
    mine: Vec<u8>,
    combine: Option<Box<dyn Combine + Send>>,
    target: Option<UserBuffer>,
) -> MpiResult<Box<dyn Pending>> {
    let len = if combine.is_some() { mine.len() } else { mine.len() * c.size() as usize };
    start(c, |w| {
        Ok(match root {
            Some(root) => Collect { fold: Fold::start(w, root, mine, combine)?, tree: None, target },
            None => {
                let tree = Tree::start(w, 0, len, None)?;
                Collect { fold: Fold::start(w, 0, mine, combine)?, tree: Some(tree), target }
            }
        })
    })
}
