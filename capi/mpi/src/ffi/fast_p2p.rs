//! Fast paths of `MPI_Send` and `MPI_Recv` for contiguous predefined data, as
//! [`super::fast`] does for the one-sided calls: the cheap checks inline (constant
//! datatype table, lock-free communicator lookup, tag and rank ranges), `None` for
//! anything else so that the general path checks and reports it, and otherwise the
//! very calls the general path makes (`Core::send`, `crate::p2p::recv`), whose results
//! are returned as they are.

use std::ffi::{c_int, c_void};

use sccemu::{Source, TagMatch};

use crate::comm::{self, CommObj, SYNC_BIT, TAG_UB};
use crate::datatype;
use crate::error::MpiResult;
use crate::ffi::p2p::{MpiStatus, write_status};
use crate::p2p::{self, ANY_SOURCE, send_error};
use crate::state;

/// The communicator and the byte count of `count` elements of contiguous predefined
/// type `dt`.
#[inline(always)]
fn message(comm: c_int, count: c_int, dt: c_int) -> Option<(&'static CommObj, usize)> {
    let c = comm::get(comm)?;
    // A C int count times at most 16 bytes cannot overflow a usize.
    Some((c, usize::try_from(count).ok()? * datatype::contiguous_size(dt)?))
}

/// `MPI_Send`'s fast path (standard mode).
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the entry point's contract).
#[inline(always)]
pub unsafe fn send(
    buf: *const c_void,
    count: c_int,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> Option<MpiResult<()>> {
    let (c, bytes) = message(comm, count, dt)?;
    if !(0..=TAG_UB).contains(&tag) {
        return None;
    }
    let to = *c.members.get(usize::try_from(dest).ok()?)?;
    let data: &[u8] = match bytes {
        0 => &[],
        _ if buf.is_null() => return None,
        // SAFETY: `buf` holds `bytes` bytes (this function's contract; non-null), read
        // only during the call.
        _ => unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), bytes) },
    };
    let core = state::mpi().ok()?.core;
    Some(core.send(to, c.wire_tag_of_valid(tag), data).map_err(send_error))
}

/// `MPI_Recv`'s fast path.
///
/// # Safety
/// `buf` has room for `count` elements of `dt`; `status` is an `MPI_Status` or
/// `MPI_STATUS_IGNORE` (the entry point's contract).
#[inline(always)]
pub unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut MpiStatus,
) -> Option<MpiResult<()>> {
    let (c, bytes) = message(comm, count, dt)?;
    // What `CommObj::tag_match` gives, for the tags it accepts.
    let matching = match tag {
        -1 => c.tag_match(-1).ok()?,
        0..=TAG_UB => TagMatch::Masked { tag: c.wire_tag_of_valid(tag), mask: !SYNC_BIT },
        _ => return None,
    };
    let src = match source {
        ANY_SOURCE => Source::Any,
        r => Source::Rank(*c.members.get(usize::try_from(r).ok()?)?),
    };
    let into: &mut [u8] = match bytes {
        0 => &mut [],
        _ if buf.is_null() => return None,
        // SAFETY: `buf` has room for `bytes` bytes that nothing else accesses during the
        // call (this function's contract; non-null).
        _ => unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), bytes) },
    };
    // SAFETY: `status` is an `MPI_Status` or ignored (this function's contract).
    Some(p2p::recv(c, src, matching, into).and_then(|s| unsafe { write_status(status, s, 0) }))
}
