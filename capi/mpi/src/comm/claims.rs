//! What `MPI_Comm_idup` (`crate::ffi::icoll::idup`) needs of the communicators, which
//! agrees its id over messages while the program runs on (the parent module's docs):
//! claims of candidate ids, handles reserved at the call and filled at completion, and
//! the mark of a blocking creation's agreement in progress ([`Agreeing`]), during which
//! no claim is made.
//!
//! Invariants: a claimed id is marked in use in this process's bitmap from the claim
//! on, so every later reading of the bitmap avoids it, until given back
//! ([`release_context`]) or owned by the communicator registered under it
//! ([`adopt_reserved`]); a reserved handle names nothing until filled.

use std::ffi::c_int;

use sccemu::Comm;
use sccemu::sync::{AtomicU32, Ordering};

use super::{COMMS, CONTEXTS, contexts, obj};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::state::mpi;
use crate::topology::Topology;

/// Blocking creations at this process between their read of the bitmap and their
/// registration ([`Agreeing`]).
static AGREEING: AtomicU32 = AtomicU32::new(0);

/// Held by a blocking communicator creation from before it reads this process's
/// bitmap until after it registers its id: meanwhile `MPI_Comm_idup` does not claim
/// (its progress waits), since the creation may be about to take the very id the
/// claim would find free (its waits drive requests, `p2p::await_send`). Dropping it
/// rings this core's doorbell, for a thread whose idup waited meanwhile.
pub struct Agreeing(());

impl Agreeing {
    /// Opens an agreement at this process.
    pub fn open() -> Agreeing {
        AGREEING.fetch_add(1, Ordering::SeqCst);
        Agreeing(())
    }

    /// Whether a blocking creation's agreement is open at this process.
    pub fn any() -> bool {
        AGREEING.load(Ordering::SeqCst) > 0
    }
}

impl Drop for Agreeing {
    fn drop(&mut self) {
        AGREEING.fetch_sub(1, Ordering::SeqCst);
        if let Ok(m) = mpi() {
            m.core.context().ring(m.core.rank());
        }
    }
}

/// Claims id `context` for a communicator being agreed (`MPI_Comm_idup`): whether it
/// was free here, and is now marked in use.
pub fn claim_context(context: u32) -> bool {
    let mut bits = contexts();
    let (word, bit) = (context as usize / 64, 1u64 << (context % 64));
    if context as usize >= CONTEXTS || bits[word] & bit != 0 {
        return false;
    }
    bits[word] |= bit;
    true
}

/// Gives back an id that [`claim_context`] took and no communicator uses.
pub fn release_context(context: u32) {
    contexts()[context as usize / 64] &= !(1u64 << (context % 64));
}

/// A communicator handle for [`adopt_reserved`] to fill: looked up, it names nothing
/// until then.
pub fn reserve() -> MpiResult<c_int> {
    COMMS.reserve().ok_or_else(|| MpiError::new(class::INTERN, "too many communicators"))
}

/// Gives back a handle of [`reserve`] that will never be filled.
pub fn unreserve(handle: c_int) {
    COMMS.unreserve(handle);
}

/// Fills the reserved `handle` with the communicator `comm` (an intercommunicator if
/// `remote`, its remote group), id `context` (claimed), `topology`.
pub fn adopt_reserved(
    handle: c_int,
    context: u32,
    comm: Comm<'static>,
    remote: Option<Vec<u32>>,
    topology: Topology,
) -> MpiResult<()> {
    let mut o = obj(context, comm, remote);
    o.topology = topology;
    if !COMMS.fill(handle, o) {
        return fail(class::INTERN, format!("{handle:#x} is not a reserved communicator handle"));
    }
    contexts()[context as usize / 64] |= 1 << (context % 64);
    Ok(())
}
