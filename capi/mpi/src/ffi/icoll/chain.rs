//! The prefix chain, on the engine of [`super::machine`]: the protocol of `MPI_Iscan`
//! and `MPI_Iexscan`.
//!
//! Rank `r`'s inclusive prefix is `p(r) = x0 op x1 op ... op xr`. The chain passes the
//! prefixes up the ranks: rank 0 sends `p(0) = x0` to rank 1 when the call starts; rank
//! `r > 0` waits for `p(r-1)` from rank `r - 1` (phase `PHASE_CHAIN`, exactly the
//! input's length), computes `p(r) = p(r-1) op xr` and sends it to rank `r + 1` (the
//! last rank sends nothing). `MPI_Iscan`'s result at rank `r` is `p(r)`,
//! `MPI_Iexscan`'s is `p(r-1)` (rank 0's receive buffer is left untouched, as the
//! blocking `MPI_Exscan` leaves it).
//!
//! Invariants: each rank receives at most one message and sends at most one per
//! operation; `p(r)` is folded left to right, one combine per rank, exactly the
//! sequence of combines the blocking `MPI_Scan` makes (`crate::ordered`), so the
//! results agree bit for bit and a non-commutative op gets the rank-ordered result.
//! The price is n - 1 hops of latency, fine at SCC scale; in exchange each rank
//! combines once and holds one input. The input is packed when the call starts, so
//! with `MPI_IN_PLACE` the receive buffer is read then and written at completion.

use crate::comm::CommObj;
use crate::error::MpiResult;
use crate::ffi::pending::UserBuffer;
use crate::ordered::Combine;
use crate::request::Pending;

use super::machine::{Incoming, PHASE_CHAIN, Protocol, Wire, start};

/// One rank's link of the chain.
struct Chain {
    mine: Vec<u8>,
    /// The left neighbour's prefix, off rank 0.
    left: Option<Incoming>,
    combine: Box<dyn Combine + Send>,
    exclusive: bool,
    target: Option<UserBuffer>,
}

impl Chain {
    /// Posts the receive from the left neighbour; rank 0 sends its input on at once.
    fn start(
        w: &mut Wire,
        mine: Vec<u8>,
        link: (Box<dyn Combine + Send>, bool),
        target: Option<UserBuffer>,
    ) -> MpiResult<Chain> {
        let left = if w.rank == 0 { None } else { Some(w.post(w.rank - 1, PHASE_CHAIN, mine.len())?) };
        let (combine, exclusive) = link;
        let mut chain = Chain { mine, left, combine, exclusive, target };
        if w.rank == 0 {
            chain.link(w, None)?;
        }
        Ok(chain)
    }

    /// With the left prefix (`None` at rank 0): passes this rank's prefix on and
    /// delivers the result.
    fn link(&mut self, w: &mut Wire, left: Option<Vec<u8>>) -> MpiResult<()> {
        let mut prefix = std::mem::take(&mut self.mine);
        if let Some(l) = &left {
            self.combine.combine(l, &mut prefix)?;
        }
        if w.rank + 1 < w.size() {
            w.send(w.rank + 1, PHASE_CHAIN, &prefix)?;
        }
        let result = if self.exclusive { left } else { Some(prefix) };
        match (&self.target, result) {
            (Some(target), Some(data)) => target.unpack(&data),
            _ => Ok(()),
        }
    }
}

impl Protocol for Chain {
    fn advance(&mut self, w: &mut Wire) -> MpiResult<bool> {
        let Some(left) = &mut self.left else { return Ok(true) };
        if !left.arrived()? {
            return Ok(false);
        }
        let left = self.left.take().map(|i| i.buf);
        self.link(w, left)?;
        Ok(true)
    }
}

/// Starts `MPI_Iscan` (`exclusive: false`) or `MPI_Iexscan` (`true`) on `c` with this
/// rank's packed input `mine`; the result goes to `target` (`None` at an exscan's
/// rank 0).
pub fn scan(
    c: &CommObj,
    mine: Vec<u8>,
    combine: Box<dyn Combine + Send>,
    exclusive: bool,
    target: Option<UserBuffer>,
) -> MpiResult<Box<dyn Pending>> {
    start(c, |w| Chain::start(w, mine, (combine, exclusive), target))
}
