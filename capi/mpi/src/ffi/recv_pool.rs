//! Boxes for receives in flight (`Op::Recv`), kept per thread for the next receive:
//! `MPI_Irecv` takes one instead of allocating, and a receive's wait gives its box back
//! instead of freeing it (callgrind, halo step: `malloc` and `free` cost about 150
//! instructions per receive).
//!
//! Invariants: a box in the pool holds a finished receive (no sccemu request, no
//! staging buffer), whose drop does nothing; a thread keeps at most [`KEPT`]. A box
//! travels with its receive: the thread that completes a receive keeps its box. Per
//! thread, so that neither taking nor giving back takes a lock.

use std::cell::RefCell;

use super::pending::PendingRecv;

/// Boxes a thread keeps at most (208 bytes each): more receives in flight than this
/// at once allocate as they did.
const KEPT: usize = 64;

thread_local! {
    // Boxes, not receives: what is kept is the allocation, handed out as it is.
    #[allow(clippy::vec_box)]
    static SPARE: RefCell<Vec<Box<PendingRecv>>> = const { RefCell::new(Vec::new()) };
}

/// `recv` in a box: one this thread kept, if any.
pub(super) fn boxed(recv: PendingRecv) -> Box<PendingRecv> {
    // `try_`: the thread's storage is gone while the thread exits; allocate then.
    let kept = SPARE.try_with(|s| s.try_borrow_mut().ok()?.pop()).ok().flatten();
    match kept {
        Some(mut b) => {
            *b = recv;
            b
        }
        None => Box::new(recv),
    }
}

/// Keeps `b`, whose receive completed, for this thread's next receive (or frees it).
pub(super) fn give_back(mut b: Box<PendingRecv>) {
    // The request first: it may borrow the staging buffer.
    b.request = None;
    b.staging = None;
    // If the storage is gone (the thread exits), the closure, and `b` with it, drops.
    let _ = SPARE.try_with(move |s| {
        if let Ok(mut s) = s.try_borrow_mut()
            && s.len() < KEPT
        {
            s.push(b);
        }
    });
}
