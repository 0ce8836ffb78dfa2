//! Keeping a process's pages still while the library's own threads write them.
//!
//! Adopting memory (`adopt`) copies pages and maps heap pages over them; a write to
//! those pages between the copy and the switch is lost. The program's threads are kept
//! off them by `adopt`'s `# Safety` contract; the library's own threads (an
//! owner-computes agent, the asynchronous progress thread) cannot be, since malloc may
//! give their allocations pages that a program's buffer shares (threads share arenas),
//! and the progress thread assembles the messages it drains in heap buffers. So:
//! - a mover holds [`PAGES_MOVING`] for writing while pages move ([`pages_moving`]);
//! - a library thread holds it for reading ([`pages_stay`]) while it may write memory
//!   of the process. An agent lets go while it waits for requests.
//! - An agent's setup (std's and glibc's thread start, which free the spawn's boxes
//!   and set up the allocator's cache, then its own) writes the heap unguarded, so its
//!   window's creation returns only once the agent says it is set up (`rma::owner`),
//!   and its exit happens inside the join of its window's free or drop.
//! - The progress thread does all its work inside one long wait, so it holds the lock
//!   for reading across the whole wait, sleeps included, and registers as a
//!   [`StillSleeper`]. A mover first raises every registered sleeper's `asked` count
//!   and rings its doorbell; the sleeper's wait condition sees the count, it lets go,
//!   yields, and takes the lock again (std's lock lets no new reader in while a writer
//!   waits, so it then sleeps in the lock until the pages have moved). The mover
//!   lowers the counts once it holds the lock. Its start and exit are covered as an
//!   agent's: `start` returns once it is set up (`core::async_progress`), and `stop`
//!   joins it.
//!
//! Invariant: no library thread writes process memory while pages move, and a mover
//! never waits for a sleeper that nothing will wake. Lock order: `SLEEPERS`, then
//! `PAGES_MOVING`.
//!
//! Not covered: the program's own threads. Under `MPI_THREAD_MULTIPLE` a thread blocked
//! in a receive drives the core's work, which may write its receive buffer or free
//! memory on a page that another thread's `MPI_Win_create` moves. `adopt`'s `# Safety`
//! contract puts that on the caller, and the MPI library's window creation says so. The
//! counts are Relaxed: the doorbell's ring (a SeqCst fence, then its load of the
//! doorbell's word) pairs with the sleeper's fence before its condition
//! (`protocol::waiter`), as for any flag a sleeper waits on.

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::segment::context::CoreContext;
use crate::sync::{AtomicU32, Ordering};

/// Held for writing while pages move, for reading while a library thread writes the
/// process's memory (module docs).
static PAGES_MOVING: RwLock<()> = RwLock::new(());

/// The registered sleepers: each one's count of movers asking, and its core, whose
/// doorbell wakes it.
static SLEEPERS: Mutex<Vec<(Arc<AtomicU32>, Arc<CoreContext>)>> = Mutex::new(Vec::new());

/// Keeps adopted pages from moving while the calling library thread writes memory of
/// the process; it must let go before it waits for anything that a mover could wait
/// for, unless it is a [`StillSleeper`].
pub(crate) fn pages_stay() -> RwLockReadGuard<'static, ()> {
    PAGES_MOVING.read().unwrap_or_else(|e| e.into_inner())
}

/// Waits until no library thread writes the process's memory, and keeps them off it
/// until the guard drops (module docs).
pub(crate) fn pages_moving() -> RwLockWriteGuard<'static, ()> {
    // Held until the write lock is ours, so that a sleeper registered meanwhile is
    // asked too, and no count is lowered that was not raised.
    let sleepers = SLEEPERS.lock().unwrap_or_else(|e| e.into_inner());
    for (asked, ctx) in sleepers.iter() {
        asked.fetch_add(1, Ordering::Relaxed);
        ctx.segment().slot(ctx.rank()).bell.ring();
    }
    let moving = PAGES_MOVING.write().unwrap_or_else(|e| e.into_inner());
    for (asked, _) in sleepers.iter() {
        asked.fetch_sub(1, Ordering::Relaxed);
    }
    moving
}

/// A library thread that holds [`pages_stay`] across a wait on its core's doorbell,
/// and lets go when [`StillSleeper::asked`] (module docs). Registered until dropped.
pub(crate) struct StillSleeper {
    asked: Arc<AtomicU32>,
}

impl StillSleeper {
    /// Registers a sleeper that waits on `ctx`'s own doorbell.
    pub(crate) fn register(ctx: Arc<CoreContext>) -> StillSleeper {
        let asked = Arc::new(AtomicU32::new(0));
        SLEEPERS.lock().unwrap_or_else(|e| e.into_inner()).push((asked.clone(), ctx));
        StillSleeper { asked }
    }

    /// Whether a mover waits for this sleeper to let go: part of its wait condition.
    pub(crate) fn asked(&self) -> bool {
        self.asked.load(Ordering::Relaxed) != 0
    }
}

impl Drop for StillSleeper {
    fn drop(&mut self) {
        // The registry's vector and counts are heap memory too: changed while pages
        // stay, taken in the mover's order (registry, then the pages).
        let mut sleepers = SLEEPERS.lock().unwrap_or_else(|e| e.into_inner());
        let _stay = pages_stay();
        sleepers.retain(|(asked, _)| !Arc::ptr_eq(asked, &self.asked));
    }
}
