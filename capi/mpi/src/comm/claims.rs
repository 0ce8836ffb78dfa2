//! What `MPI_Comm_idup` (`crate::ffi::icoll::idup`) needs of the communicators, which
//! agrees its id over messages while the program runs on (the parent module's docs):
//! candidates from the top of the id range ([`high_free`]), claims of them, and
//! handles reserved at the call and filled at completion.
//!
//! Invariants: a claimed id is marked in use in this process's bitmap from the claim
//! on, so every later reading of the bitmap avoids it, until given back
//! ([`release_context`]) or owned by the communicator registered under it
//! ([`adopt_reserved`]); a reserved handle names nothing until filled.

use std::ffi::c_int;

use sccemu::Comm;

use super::{COMMS, CONTEXTS, ContextBits, INTERCOMM_CONTEXT, contexts, obj};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::topology::Topology;

/// How many of the highest free ids idup chooses among ([`high_free`]).
const HIGH_CHOICES: usize = 64;

/// One of the `HIGH_CHOICES` highest ids clear in `bits` (the OR of the members'
/// bitmaps), the `pick`-th (modulo how many there are): idup's candidate. Why high:
/// blocking creations take the *lowest* free id (`super::lowest_free`), so the two
/// meet only when nearly every id is in use; a blocking creation may drive requests in
/// its waits (`p2p::await_send`) between its read of the bitmap and its registration,
/// and a claim made there is not in the bitmap it read. Why a choice: two idups in
/// flight at once whose claims each win at some member would otherwise pick the same
/// id again in every round; idup varies `pick` with its parent's id and its round.
pub fn high_free(bits: &ContextBits, pick: u64) -> MpiResult<u32> {
    // The ids from `INTERCOMM_CONTEXT` up are reserved (set at `MPI_Init`).
    let free: Vec<u32> = (0..INTERCOMM_CONTEXT)
        .rev()
        .filter(|&id| bits[id as usize / 64] & 1 << (id % 64) == 0)
        .take(HIGH_CHOICES)
        .collect();
    if free.is_empty() {
        return fail(class::INTERN, format!("all {INTERCOMM_CONTEXT} communicator context ids are in use"));
    }
    Ok(free[(pick % free.len() as u64) as usize])
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

#[cfg(test)]
mod tests {
    use super::super::{CONTEXT_WORDS, INTERCOMM_CONTEXT};
    use super::{HIGH_CHOICES, high_free};

    #[test]
    fn candidates_are_free_ids_from_the_top_below_the_reserved_ones() {
        let mut bits = [0u64; CONTEXT_WORDS];
        for id in INTERCOMM_CONTEXT as usize..CONTEXT_WORDS * 64 {
            bits[id / 64] |= 1 << (id % 64);
        }
        assert_eq!(high_free(&bits, 0).unwrap(), INTERCOMM_CONTEXT - 1);
        assert_eq!(high_free(&bits, 2).unwrap(), INTERCOMM_CONTEXT - 3);
        assert_eq!(high_free(&bits, HIGH_CHOICES as u64).unwrap(), INTERCOMM_CONTEXT - 1);
        // Taken: the next ones down, across a word's boundary too.
        for id in 4000..INTERCOMM_CONTEXT as usize {
            bits[id / 64] |= 1 << (id % 64);
        }
        assert_eq!(high_free(&bits, 0).unwrap(), 3999);
        // Fewer free than the choices: the pick wraps around them.
        bits = [u64::MAX; CONTEXT_WORDS];
        bits[0] = !0b1010;
        assert_eq!(high_free(&bits, 0).unwrap(), 3);
        assert_eq!(high_free(&bits, 1).unwrap(), 1);
        assert_eq!(high_free(&bits, 2).unwrap(), 3);
        bits[0] = u64::MAX;
        assert!(high_free(&bits, 0).is_err());
    }
}
