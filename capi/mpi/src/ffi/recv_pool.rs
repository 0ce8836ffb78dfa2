//! Boxes for point-to-point requests in flight (`Op::Recv`, `Op::Send`), kept per
//! thread for the next one: `MPI_Irecv` (and an `MPI_Isend` that does not complete at
//! its start) takes one instead of allocating, and the request's wait, or the test in
//! place that completes it (`Op::retire`), gives its box back instead of freeing it
//! (callgrind, halo step: `malloc` and `free` cost about 150 instructions per request).
//!
//! Invariants: a box in a pool holds a finished request (no sccemu request, no
//! staging buffer), whose drop does nothing; a thread keeps at most [`KEPT`] of each
//! kind. A box travels with its request: the thread that completes a request keeps its
//! box. Per thread, so that neither taking nor giving back takes a lock.

use std::cell::RefCell;
use std::thread::LocalKey;

use super::pending::{PendingRecv, PendingSend};
use crate::comm::CommObj;

/// Boxes of each kind a thread keeps at most (a receive's is 208 bytes, a send's
/// about sccemu's request, 120): more requests in flight than this at once allocate as they did.
const KEPT: usize = 64;

// Boxes, not requests: what is kept is the allocation, handed out as it is.
#[allow(clippy::vec_box)]
type Spare<T> = RefCell<Vec<Box<T>>>;

thread_local! {
    static RECVS: Spare<PendingRecv> = const { RefCell::new(Vec::new()) };
    static SENDS: Spare<PendingSend> = const { RefCell::new(Vec::new()) };
}

/// `value` in a box: one this thread kept, if any.
#[inline(always)]
fn boxed_in<T>(spare: &'static LocalKey<Spare<T>>, value: T) -> Box<T> {
    // `try_`: the thread's storage is gone while the thread exits; allocate then.
    let kept = spare.try_with(|s| s.try_borrow_mut().ok()?.pop()).ok().flatten();
    match kept {
        Some(mut b) => {
            *b = value;
            b
        }
        None => Box::new(value),
    }
}

/// Keeps `b`, whose request completed and holds nothing, for this thread's next one.
#[inline(always)]
fn keep_in<T>(spare: &'static LocalKey<Spare<T>>, b: Box<T>) {
    // If the storage is gone (the thread exits), the closure, and `b` with it, drops.
    let _ = spare.try_with(move |s| {
        if let Ok(mut s) = s.try_borrow_mut()
            && s.len() < KEPT
        {
            s.push(b);
        }
    });
}

/// `recv` in a box: one this thread kept, if any.
pub(super) fn boxed(recv: PendingRecv) -> Box<PendingRecv> {
    boxed_in(&RECVS, recv)
}

/// A receive straight into the user's buffer (`direct`, no staging), in a box: one
/// this thread kept, if any, whose fields are set one by one, so that neither the
/// whole receive is copied nor the kept one dropped (it holds nothing: module docs).
#[inline(always)]
pub(super) fn boxed_direct(
    request: sccemu::Request<'static>,
    comm: &'static CommObj,
    direct: (usize, usize),
) -> Box<PendingRecv> {
    let kept = RECVS.try_with(|s| s.try_borrow_mut().ok()?.pop()).ok().flatten();
    match kept {
        Some(mut b) => {
            debug_assert!(b.request.is_none() && b.staging.is_none());
            b.request = Some(request);
            b.comm = comm;
            b.direct = Some(direct);
            b
        }
        None => Box::new(PendingRecv { request: Some(request), staging: None, comm, direct: Some(direct) }),
    }
}

/// Keeps `b`, whose receive completed, for this thread's next receive (or frees it).
#[inline]
pub(super) fn give_back(mut b: Box<PendingRecv>) {
    // The request first: it may borrow the staging buffer.
    b.request = None;
    b.staging = None;
    keep_in(&RECVS, b);
}

/// `send` in a box: one this thread kept, if any.
pub(super) fn boxed_send(send: PendingSend) -> Box<PendingSend> {
    boxed_in(&SENDS, send)
}

/// Keeps `b`, whose send completed, for this thread's next send that needs one.
pub(super) fn give_back_send(mut b: Box<PendingSend>) {
    b.request = None;
    keep_in(&SENDS, b);
}
