//! The v-collectives' entry points: counts and displacements checked and turned into
//! [`VBuf`]s, then `crate::vcoll`.
//!
//! On an intercommunicator `MPI_Gatherv`, `MPI_Scatterv`, `MPI_Allgatherv`,
//! `MPI_Alltoallv` and `MPI_Reduce_scatter` go to `ffi::intercoll`; `MPI_Alltoallw`
//! refuses one (`comm::lookup_intra`).
//!
//! An argument error found here still joins the call's first collective step
//! (`vcoll::abstain`), so that the other members return an error instead of waiting.
//! Arguments significant at the root only are not looked at elsewhere. Displacements
//! must be non-negative (`MPI_ERR_ARG`), counts too (`MPI_ERR_COUNT`); a buffer spans
//! the blocks with data, so an empty block's displacement is never used.

use std::ffi::{c_int, c_void};

use crate::coll::root_of;
use crate::comm;
use crate::datatype::{self, TypeMap, TypeRef};
use crate::error::{MpiError, MpiResult, class};
use crate::ffi::buffer::Buffer;
use crate::ffi::coll::{buffer, count, in_place};
use crate::ffi::intercoll::{self as inter, Counts, Side};
use crate::ffi::userop::with_combiner;
use crate::ffi::{Scope, c, entry};
use crate::vcoll::{self, VBuf};

/// The value of `$r`, or, on error, the error after joining the call's agreement.
macro_rules! or_abstain {
    ($c:expr, $r:expr) => {
        match $r {
            Ok(v) => v,
            Err(e) => return Err(vcoll::abstain($c, e)),
        }
    };
}

/// Per-rank counts and displacements of `n` ranks.
///
/// # Safety
/// `counts` and `displs` are null or hold `n` ints each.
pub(super) unsafe fn layout(
    counts: *const c_int,
    displs: *const c_int,
    n: u32,
) -> MpiResult<(Vec<usize>, Vec<usize>)> {
    let n = c_int::try_from(n).map_err(|_| MpiError::new(class::COUNT, "too many ranks"))?;
    let counts = c!(array(counts, n, "counts"))?;
    let displs = c!(array(displs, n, "displacements"))?;
    let counts = counts.iter().map(|&k| count(k)).collect::<MpiResult<Vec<_>>>()?;
    let displs = displs
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| MpiError::new(class::ARG, format!("displacement {d} is negative")))
        })
        .collect::<MpiResult<Vec<_>>>()?;
    Ok((counts, displs))
}

/// A v-buffer at `p` spanning every non-empty block.
pub(super) fn vbuf<'a, 'm>(
    p: *const c_void,
    (counts, displs): &'a (Vec<usize>, Vec<usize>),
    map: &'m TypeMap,
) -> MpiResult<VBuf<'a, 'm>> {
    let mut span = 0usize;
    for (&k, &d) in counts.iter().zip(displs).filter(|(k, _)| **k > 0) {
        let end = k.checked_add(d).ok_or_else(|| MpiError::new(class::COUNT, "count overflow"))?;
        span = span.max(end);
    }
    Ok(VBuf { buf: buffer(p, span, map)?, counts, displs })
}

/// The committed type of a buffer argument, `None` if `MPI_IN_PLACE`.
pub(super) fn map_of(p: *const c_void, datatype: c_int) -> MpiResult<Option<TypeRef>> {
    if in_place(p) { Ok(None) } else { datatype::committed(datatype).map(Some) }
}

/// `count` elements of `map` at `p` (`None` without a map: in place).
pub(super) fn plain<'m>(
    p: *const c_void,
    n: c_int,
    map: Option<&'m TypeRef>,
) -> MpiResult<Option<Buffer<'m>>> {
    map.map(|m| buffer(p, count(n)?, m)).transpose()
}

/// `MPI_Gatherv`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype` (or is `MPI_IN_PLACE` at the
/// root); at the root `recvcounts` and `displs` hold `size` ints and `recvbuf` has
/// room for every block they describe.
#[unsafe(export_name = "PMPI_Gatherv")]
pub unsafe extern "C" fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Gatherv", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let send = Side { p: sendbuf, counts: Counts::Each(sendcount), datatype: sendtype };
            let recv = Side { p: recvbuf, counts: Counts::Per(recvcounts, displs), datatype: recvtype };
            // SAFETY: this call's contract.
            return unsafe { inter::gather(c, send, recv, root) };
        }
        let root = root_of(c, root)?;
        let at_root = c.rank == root;
        let smap = or_abstain!(c, map_of(sendbuf, sendtype));
        let send = or_abstain!(c, plain(sendbuf, sendcount, smap.as_ref()));
        if !at_root {
            return vcoll::gatherv(c, send.as_ref(), None, root);
        }
        let rmap = or_abstain!(c, datatype::committed(recvtype));
        // SAFETY: at the root, this call's contract.
        let lay = or_abstain!(c, unsafe { layout(recvcounts, displs, c.size()) });
        let recv = or_abstain!(c, vbuf(recvbuf, &lay, &rmap));
        vcoll::gatherv(c, send.as_ref(), Some(&recv), root)
    })
}

/// `MPI_Scatterv`.
///
/// # Safety
/// At the root `sendcounts` and `displs` hold `size` ints and `sendbuf` every block
/// they describe; `recvbuf` has room for `recvcount` elements of `recvtype` (or is
/// `MPI_IN_PLACE` at the root).
#[unsafe(export_name = "PMPI_Scatterv")]
pub unsafe extern "C" fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Scatterv", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let send = Side { p: sendbuf, counts: Counts::Per(sendcounts, displs), datatype: sendtype };
            let recv = Side { p: recvbuf, counts: Counts::Each(recvcount), datatype: recvtype };
            // SAFETY: this call's contract.
            return unsafe { inter::scatter(c, send, recv, root) };
        }
        let root = root_of(c, root)?;
        let rmap = or_abstain!(c, map_of(recvbuf, recvtype));
        let recv = or_abstain!(c, plain(recvbuf, recvcount, rmap.as_ref()));
        if c.rank != root {
            return vcoll::scatterv(c, None, recv.as_ref(), root);
        }
        let smap = or_abstain!(c, datatype::committed(sendtype));
        // SAFETY: at the root, this call's contract.
        let lay = or_abstain!(c, unsafe { layout(sendcounts, displs, c.size()) });
        let send = or_abstain!(c, vbuf(sendbuf, &lay, &smap));
        vcoll::scatterv(c, Some(&send), recv.as_ref(), root)
    })
}

/// `MPI_Allgatherv`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype` (or is `MPI_IN_PLACE`);
/// `recvcounts` and `displs` hold `size` ints, and `recvbuf` has room for every block
/// they describe.
#[unsafe(export_name = "PMPI_Allgatherv")]
pub unsafe extern "C" fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Allgatherv", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let send = Side { p: sendbuf, counts: Counts::Each(sendcount), datatype: sendtype };
            let recv = Side { p: recvbuf, counts: Counts::Per(recvcounts, displs), datatype: recvtype };
            // SAFETY: this call's contract.
            return unsafe { inter::allgatherv(c, send, recv) };
        }
        let smap = or_abstain!(c, map_of(sendbuf, sendtype));
        let send = or_abstain!(c, plain(sendbuf, sendcount, smap.as_ref()));
        let rmap = or_abstain!(c, datatype::committed(recvtype));
        // SAFETY: this call's contract.
        let lay = or_abstain!(c, unsafe { layout(recvcounts, displs, c.size()) });
        let recv = or_abstain!(c, vbuf(recvbuf, &lay, &rmap));
        vcoll::allgatherv(c, send.as_ref(), &recv)
    })
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// The four count and displacement arrays hold `size` ints each; `sendbuf` holds
/// every block its counts describe (or is `MPI_IN_PLACE`), and `recvbuf` has room for
/// every block its counts describe.
#[unsafe(export_name = "PMPI_Alltoallv")]
pub unsafe extern "C" fn MPI_Alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Alltoallv", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let send = Side { p: sendbuf, counts: Counts::Per(sendcounts, sdispls), datatype: sendtype };
            let recv = Side { p: recvbuf, counts: Counts::Per(recvcounts, rdispls), datatype: recvtype };
            // SAFETY: this call's contract.
            return unsafe { inter::alltoall(c, send, recv) };
        }
        let n = c.size();
        let smap = or_abstain!(c, map_of(sendbuf, sendtype));
        // In place, the send counts, displacements and type are ignored.
        let slay = match smap {
            // SAFETY: this call's contract.
            Some(_) => or_abstain!(c, unsafe { layout(sendcounts, sdispls, n) }),
            None => Default::default(),
        };
        let send = match &smap {
            Some(m) => Some(or_abstain!(c, vbuf(sendbuf, &slay, m))),
            None => None,
        };
        let rmap = or_abstain!(c, datatype::committed(recvtype));
        // SAFETY: this call's contract.
        let rlay = or_abstain!(c, unsafe { layout(recvcounts, rdispls, n) });
        let recv = or_abstain!(c, vbuf(recvbuf, &rlay, &rmap));
        vcoll::alltoallv(c, send.as_ref(), &recv)
    })
}

/// `MPI_Reduce_scatter`: member `i` receives `recvcounts[i]` elements, its block of
/// the elementwise reduction of every member's input (`sum(recvcounts)` elements),
/// folded in rank order whatever the op (`vcoll::reduce_scatter`). In place, the input
/// is in `recvbuf` and the result lands at its start.
///
/// # Safety
/// `recvcounts` holds `size` ints; `sendbuf` holds their sum of elements of `datatype`
/// (or is `MPI_IN_PLACE`, the input then being in `recvbuf`); `recvbuf` has room for
/// this member's count (for the sum, in place).
#[unsafe(export_name = "PMPI_Reduce_scatter")]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: c_int,
    op_handle: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Reduce_scatter", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            let counts = Counts::Per(recvcounts, std::ptr::null());
            // SAFETY: this call's contract.
            return unsafe { inter::reduce_scatter(c, (sendbuf, recvbuf), counts, datatype, op_handle) };
        }
        let map = or_abstain!(c, datatype::committed(datatype));
        let counts = or_abstain!(c, c!(array(recvcounts, c.size() as c_int, "recvcounts")));
        let counts = or_abstain!(c, counts.iter().map(|&k| count(k)).collect::<MpiResult<Vec<_>>>());
        let recv = or_abstain!(c, buffer(recvbuf, counts[c.rank as usize], &map));
        let from = if in_place(sendbuf) { recvbuf.cast_const() } else { sendbuf };
        // Packed (copied) before any result lands: in place, it overlaps `recv`.
        let input = buffer(from, counts.iter().sum(), &map).and_then(|b| Ok(b.bytes()?.into_owned()));
        let blocks: Vec<usize> = counts.iter().map(|&k| k * map.size).collect();
        let mut joined = false;
        let done = with_combiner(op_handle, &map, datatype, |comb| {
            joined = true;
            vcoll::reduce_scatter(c, input, &blocks, &recv, comb)
        });
        // A bad op, or one the datatype does not take, fails before the agreement.
        match done {
            Err(e) if !joined => Err(vcoll::abstain(c, e)),
            done => done,
        }
    })
}

/// One side of `MPI_Alltoallw` or `MPI_Neighbor_alltoallw`: per block a count, a
/// displacement in bytes from `base` and a type.
pub(super) struct WSide {
    base: *const c_void,
    counts: Vec<usize>,
    displs: Vec<isize>,
    /// Per block its type; `None` for an empty block, whose type is not looked at.
    pub(super) maps: Vec<Option<TypeRef>>,
}

impl WSide {
    /// The side's arrays of `n` blocks, with `int` displacements, which must not be
    /// negative (as the v-calls' must not).
    ///
    /// # Safety
    /// `counts`, `displs` and `types` hold `n` ints each.
    pub(super) unsafe fn new(
        base: *const c_void,
        counts: *const c_int,
        displs: *const c_int,
        types: *const c_int,
        n: u32,
    ) -> MpiResult<WSide> {
        // SAFETY: this function's contract.
        let (counts, displs) = unsafe { layout(counts, displs, n) }?;
        let displs = displs.into_iter().map(|d| d as isize).collect();
        // SAFETY: this function's contract.
        let maps = unsafe { maps(&counts, types, n) }?;
        Ok(WSide { base, counts, displs, maps })
    }

    /// The side's arrays of `n` blocks, with `MPI_Aint` displacements, which may be
    /// negative (a byte offset, or an address from `MPI_BOTTOM`).
    ///
    /// # Safety
    /// `counts` and `types` hold `n` ints, `displs` `n` `MPI_Aint`s.
    pub(super) unsafe fn with_aint(
        base: *const c_void,
        counts: *const c_int,
        displs: *const isize,
        types: *const c_int,
        n: u32,
    ) -> MpiResult<WSide> {
        let len = c_int::try_from(n).map_err(|_| MpiError::new(class::COUNT, "too many blocks"))?;
        let counts =
            c!(array(counts, len, "counts"))?.iter().map(|&k| count(k)).collect::<MpiResult<Vec<_>>>()?;
        let displs = c!(array(displs, len, "displacements"))?.to_vec();
        // SAFETY: this function's contract.
        let maps = unsafe { maps(&counts, types, n) }?;
        Ok(WSide { base, counts, displs, maps })
    }

    /// Block `i`.
    pub(super) fn block(&self, i: usize) -> MpiResult<Buffer<'_>> {
        match &self.maps[i] {
            None => Ok(Buffer::empty()),
            Some(map) => {
                buffer(self.base.cast::<u8>().wrapping_offset(self.displs[i]).cast(), self.counts[i], map)
            }
        }
    }
}

/// The committed type of each non-empty block (the types of empty blocks are not
/// looked at).
///
/// # Safety
/// `types` holds `n` ints.
unsafe fn maps(counts: &[usize], types: *const c_int, n: u32) -> MpiResult<Vec<Option<TypeRef>>> {
    let types = c!(array(types, n as c_int, "datatypes"))?;
    counts
        .iter()
        .zip(types)
        .map(|(&k, &t)| if k == 0 { Ok(None) } else { datatype::committed(t).map(Some) })
        .collect()
}

/// `MPI_Alltoallw`: `MPI_Alltoallv` with a datatype per block on each side and
/// displacements in bytes.
///
/// # Safety
/// The six count, displacement and type arrays hold `size` ints each (the remote
/// group's size on an intercommunicator); `sendbuf` holds every block its arrays
/// describe (or is `MPI_IN_PLACE`), and `recvbuf` has room for every block its arrays
/// describe.
#[unsafe(export_name = "PMPI_Alltoallw")]
pub unsafe extern "C" fn MPI_Alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Alltoallw", Scope::Comm(comm), || {
        let c = comm::lookup(comm)?;
        if c.is_inter() {
            // SAFETY: this call's contract (on an intercommunicator the arrays hold the
            // remote group's size).
            return unsafe {
                inter::alltoallw(
                    c,
                    (sendbuf, sendcounts, sdispls, sendtypes),
                    (recvbuf, recvcounts, rdispls, recvtypes),
                )
            };
        }
        let n = c.size();
        // SAFETY: this call's contract.
        let recv = or_abstain!(c, unsafe { WSide::new(recvbuf, recvcounts, rdispls, recvtypes, n) });
        // In place, the send arrays are ignored.
        let send = match in_place(sendbuf) {
            true => None,
            // SAFETY: this call's contract.
            false => Some(or_abstain!(c, unsafe { WSide::new(sendbuf, sendcounts, sdispls, sendtypes, n) })),
        };
        let from = send.as_ref().unwrap_or(&recv);
        vcoll::exchange(c, |j| from.block(j), |i| recv.block(i))
    })
}
