//! Direct block exchange, on the engine of [`super::machine`]: the protocol of
//! `MPI_Iscatter`, `MPI_Ialltoall`, `MPI_Ireduce_scatter_block` and the v-forms
//! `MPI_Igatherv`, `MPI_Iscatterv`, `MPI_Iallgatherv` and `MPI_Ialltoallv`.
//!
//! Each of these calls is, at every rank, a set of blocks to send (at most one to each
//! rank) and a set of blocks to receive (at most one from each rank), which the call's
//! arguments give at its start ([`Exchange`]):
//!
//! - scatter(v): the root sends block `r` to each rank `r`; each other rank receives
//!   one block from the root.
//! - gatherv: each rank sends its block to the root, which receives one from each.
//! - allgatherv: each rank sends its block to every other, and receives one from each.
//! - alltoall(v) and reduce-scatter-block: each rank sends its block `r` to rank `r`,
//!   and receives one from each.
//!
//! Protocol: at the start, every receive is posted (phase `PHASE_SPREAD`, source and
//! exact tag named), then every block is sent, to ranks `me + 1, me + 2, ...` (mod n)
//! in turn, so that the ranks do not all send to rank 0 first. The rank's block to
//! itself never travels: it is kept, packed, with the rest of its outgoing data. Once
//! every expected block is in, the blocks are delivered in rank order (`Delivery`):
//! each unpacked into its span of the user's receive buffer, or, for
//! reduce-scatter-block, folded `b0 op b1 op ... op b(n-1)` left to right, the
//! blocking reductions' combination (`crate::ordered`), so results agree bit for bit
//! and a non-commutative op gets the rank-ordered result.
//!
//! On an intercommunicator (`Exchange::remote`: the v-forms there, `super::inter_v`)
//! the ranks are the remote group's: blocks go to and come from its members, and no
//! block is this rank's own.
//!
//! Invariants: one message per (source, destination) pair per operation, so a pair's
//! block is told by its source alone; the equal-block calls receive exact lengths (a
//! member whose count differs gets `MPI_ERR_TRUNCATE`), the v-forms at most the
//! receive block's length (a longer message fails its receive with `MPI_ERR_TRUNCATE`
//! when it arrives, and nothing is delivered; a rank's own block too long for its span
//! is found at delivery, where, as in the blocking v-calls, every other block still
//! lands before the error is reported). All the data to send is packed when the call
//! starts, so in place (`MPI_IN_PLACE`), what is sent is the receive buffer as it was
//! then; the results land only once every block is in.

use std::ops::Range;

use crate::comm::CommObj;
use crate::error::{MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::pending::UserBuffer;
use crate::ordered::Combine;
use crate::request::Pending;

use super::machine::{Incoming, PHASE_SPREAD, Protocol, Wire, fold_in_order, start};

/// What becomes of the blocks once every one is here (this rank's own included).
pub enum Delivery {
    /// Nothing is kept here (a gather's non-root, a scatter's root in place).
    Nothing,
    /// Block `r` is unpacked into elements `spans[r]` (first element, count) of
    /// `target`; `None`: block `r` is not delivered (this rank's own, in place).
    Place {
        /// The receive buffer, spanning every block.
        target: UserBuffer,
        /// Per source rank, where its block goes.
        spans: Vec<Option<(usize, usize)>>,
    },
    /// Block `r` is unpacked into `targets[r]`, a buffer of its own (`None`: an empty
    /// block, nothing to land): an intercommunicator's `MPI_Ialltoallw`.
    Each(Vec<Option<UserBuffer>>),
    /// Every rank's block (all of one length) folded in rank order into `target`.
    Fold {
        /// The receive buffer.
        target: UserBuffer,
        /// The op.
        combine: Box<dyn Combine + Send>,
    },
}

/// One rank's part of a direct exchange, as its call's arguments give it.
pub struct Exchange {
    /// This rank's outgoing data, packed.
    pub data: Vec<u8>,
    /// Per destination rank, its bytes of `data` (`None`: nothing goes to it). This
    /// rank's own range is its block to itself, kept here.
    pub to: Vec<Option<Range<usize>>>,
    /// Per source rank, the bytes expected from it (`None`: nothing comes); this
    /// rank's own entry is not looked at.
    pub from: Vec<Option<usize>>,
    /// Whether every block received must be exactly its expected length (else at most).
    pub exact: bool,
    /// What becomes of the blocks.
    pub delivery: Delivery,
    /// Whether the ranks of `to` and `from` are an intercommunicator's remote group's.
    pub remote: bool,
}

impl Exchange {
    /// Nothing to send or receive among `n` ranks, yet, and nothing to deliver: the
    /// calls fill in their blocks. `exact`: whether blocks must be exactly their
    /// expected length (else at most).
    pub fn new(n: usize, exact: bool) -> Exchange {
        Exchange {
            data: Vec::new(),
            to: vec![None; n],
            from: vec![None; n],
            exact,
            delivery: Delivery::Nothing,
            remote: false,
        }
    }

    /// Makes `data` the outgoing data, as equal blocks in rank order: block `r` goes to
    /// rank `r`.
    pub fn equal_blocks(&mut self, data: Vec<u8>) {
        let (n, per) = (self.to.len(), data.len() / self.to.len().max(1));
        self.to = (0..n).map(|r| Some(r * per..(r + 1) * per)).collect();
        self.data = data;
    }

    /// Appends `block` to the outgoing data as rank `to`'s.
    pub fn push(&mut self, to: usize, block: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(block);
        self.to[to] = Some(start..self.data.len());
    }
}

/// The exchange in flight: the blocks on their way here, and this rank's own.
struct Spread {
    /// This rank.
    me: usize,
    /// Per source rank, its posted receive (`None`: this rank, or nothing expected).
    incoming: Vec<Option<Incoming>>,
    /// This rank's own block, if it keeps one.
    own: Option<Vec<u8>>,
    delivery: Delivery,
}

impl Spread {
    fn start(w: &mut Wire, x: Exchange) -> MpiResult<Spread> {
        if x.remote {
            return Spread::start_remote(w, x);
        }
        let (me, n) = (w.rank, w.size());
        let mut incoming = Vec::with_capacity(n as usize);
        for (r, len) in (0..n).zip(&x.from) {
            incoming.push(match len {
                Some(len) if r != me && x.exact => Some(w.post(r, PHASE_SPREAD, *len)?),
                Some(len) if r != me => Some(w.post_most(r, PHASE_SPREAD, *len)?),
                _ => None,
            });
        }
        for to in (1..n).map(|k| (me + k) % n) {
            if let Some(range) = &x.to[to as usize] {
                w.send(to, PHASE_SPREAD, &x.data[range.clone()])?;
            }
        }
        let own = x.to[me as usize].clone().map(|range| x.data[range].to_vec());
        Ok(Spread { me: me as usize, incoming, own, delivery: x.delivery })
    }

    /// [`Spread::start`] across an intercommunicator: every block travels.
    fn start_remote(w: &mut Wire, x: Exchange) -> MpiResult<Spread> {
        let rn = w.remote_size();
        let mut incoming = Vec::with_capacity(rn as usize);
        for (r, len) in (0..rn).zip(&x.from) {
            incoming.push(match len {
                Some(len) if x.exact => Some(w.post_remote(r, PHASE_SPREAD, *len)?),
                Some(len) => Some(w.post_remote_most(r, PHASE_SPREAD, *len)?),
                None => None,
            });
        }
        // Starting at a rank of its own, as above, so the senders spread out.
        let me = w.rank;
        for to in (0..rn).map(|k| (me + k) % rn) {
            if let Some(range) = &x.to[to as usize] {
                w.send_remote(to, PHASE_SPREAD, &x.data[range.clone()])?;
            }
        }
        Ok(Spread { me: usize::MAX, incoming, own: None, delivery: x.delivery })
    }

    /// Block `r`: this rank's own, or the one that came from `r` (empty if none).
    fn block(&self, r: usize) -> &[u8] {
        match &self.incoming[r] {
            _ if r == self.me => self.own.as_deref().unwrap_or_default(),
            Some(i) => &i.buf,
            None => &[],
        }
    }
}

/// Unpacks `data` from rank `from` into elements `first..first + count` of `target`:
/// `MPI_ERR_TRUNCATE` if it does not fit. An empty block's first element is never
/// looked at.
fn place(target: &Buffer<'_>, (first, count): (usize, usize), data: &[u8], from: usize) -> MpiResult<()> {
    let block = if count == 0 { Buffer::empty() } else { target.sub(first, count)? };
    let room = block.data_len()?;
    if data.len() > room {
        return fail(
            class::TRUNCATE,
            format!("{} bytes from rank {from} into a block of {room}", data.len()),
        );
    }
    block.unpack(data)
}

impl Protocol for Spread {
    fn advance(&mut self, _: &mut Wire) -> MpiResult<bool> {
        for i in self.incoming.iter_mut().flatten() {
            if !i.arrived()? {
                return Ok(false);
            }
        }
        let n = self.incoming.len();
        match &self.delivery {
            Delivery::Nothing => Ok(true),
            Delivery::Place { target, spans } => {
                let whole = target.buffer()?;
                let mut first = Ok(());
                for (r, span) in spans.iter().enumerate() {
                    if let Some(span) = *span {
                        first = first.and(place(&whole, span, self.block(r), r));
                    }
                }
                first.map(|()| true)
            }
            Delivery::Each(targets) => {
                for (r, target) in targets.iter().enumerate() {
                    if let Some(t) = target {
                        t.unpack(self.block(r))?;
                    }
                }
                Ok(true)
            }
            Delivery::Fold { target, combine } => {
                target.unpack(&fold_in_order((0..n).map(|r| self.block(r)), combine.as_ref())?)?;
                Ok(true)
            }
        }
    }
}

/// Starts the direct exchange `x` on `c` (module docs).
pub fn exchange(c: &CommObj, x: Exchange) -> MpiResult<Box<dyn Pending>> {
    start(c, |w| Spread::start(w, x))
}
