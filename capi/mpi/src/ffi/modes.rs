//! The buffered send mode (`MPI_Buffer_attach`, `MPI_Buffer_detach`, `MPI_Bsend`,
//! `MPI_Ibsend`) and the nonblocking ready send (`MPI_Irsend`).
//!
//! Buffered mode: a buffered send returns at once, whether a receive is posted or not,
//! and fails with `MPI_ERR_BUFFER` if the attached buffer lacks room for the message
//! (its packed bytes plus `MPI_BSEND_OVERHEAD`). sccemu's own nonblocking send already
//! copies whatever cannot leave at once, so the bytes do not need the user's buffer;
//! what the buffer gives is its capacity, which is accounted exactly: a message holds
//! its share from the call until its last fragment has left, tested at every later
//! buffered send and at detach. `MPI_Buffer_detach` waits for every message still
//! holding space, then hands the buffer back; `MPI_Finalize` waits for them as well.
//! The attached buffer is the process's, shared by its threads (one lock).
//!
//! A ready send is a standard send here (the receive is posted, so it is as good), as
//! `MPI_Rsend` is.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use crate::datatype;
use crate::error::{MpiResult, class, fail};
use crate::ffi::p2p::{Message, isend, message};
use crate::ffi::{Scope, WORLD, c, entry};
use crate::p2p::{self, request_error, send_error};
use crate::request::{self, Op, Status};
use crate::state::mpi;

/// `MPI_BSEND_OVERHEAD`: what a buffered message takes in the attached buffer besides
/// its packed bytes.
pub const BSEND_OVERHEAD: usize = 96;

/// The attached buffer: where and how large, and the messages holding space in it.
struct Attached {
    base: usize,
    size: usize,
    /// Sends not yet left, with the space each holds.
    in_flight: Vec<(sccemu::Request<'static>, usize)>,
}

impl Attached {
    /// Gives back the space of the messages that left; the space still held.
    fn reclaim(&mut self) -> MpiResult<usize> {
        let mut failed = None;
        self.in_flight.retain_mut(|(request, _)| match request.test() {
            Ok(None) => true,
            Ok(Some(_)) => false,
            Err(e) => {
                failed.get_or_insert(e);
                false
            }
        });
        match failed {
            Some(e) => Err(request_error(e)),
            None => Ok(self.in_flight.iter().map(|&(_, held)| held).sum()),
        }
    }

    /// Waits until every message has left.
    fn drain(&mut self) -> MpiResult<()> {
        let mut first = Ok(());
        for (request, _) in self.in_flight.drain(..) {
            if let Err(e) = p2p::await_send(request) {
                first = first.and(Err(e));
            }
        }
        first
    }
}

static ATTACHED: Mutex<Option<Attached>> = Mutex::new(None);

fn attached() -> MutexGuard<'static, Option<Attached>> {
    ATTACHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits for the buffered messages still in flight (`MPI_Finalize`); the buffer stays
/// attached.
pub fn drain() -> MpiResult<()> {
    attached().as_mut().map_or(Ok(()), Attached::drain)
}

/// `MPI_Buffer_attach`.
///
/// # Safety
/// `buffer` holds `size` bytes, left to the library until detached.
#[unsafe(export_name = "PMPI_Buffer_attach")]
pub unsafe extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    entry("MPI_Buffer_attach", WORLD, || {
        let Ok(size) = usize::try_from(size) else {
            return fail(class::ARG, format!("buffer size {size} is negative"));
        };
        if buffer.is_null() && size > 0 {
            return fail(class::BUFFER, "the buffer is a null pointer");
        }
        let mut a = attached();
        if let Some(old) = a.as_ref() {
            return fail(class::BUFFER, format!("a buffer of {} bytes is attached already", old.size));
        }
        *a = Some(Attached { base: buffer as usize, size, in_flight: Vec::new() });
        Ok(())
    })
}

/// `MPI_Buffer_detach`: waits until every buffered message has left, then gives the
/// buffer back (a null address and size 0 if none was attached).
///
/// # Safety
/// `buffer_addr` points to a pointer; `size` points to an int.
#[unsafe(export_name = "PMPI_Buffer_detach")]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    entry("MPI_Buffer_detach", WORLD, || {
        let (addr_out, size_out) = (buffer_addr.cast::<*mut c_void>(), size);
        if addr_out.is_null() || size_out.is_null() {
            return fail(class::ARG, "buffer_addr or size is a null pointer");
        }
        // Taken out first: a buffered send meanwhile finds no buffer, as MPI says.
        let taken = attached().take();
        let (base, bytes) = match taken {
            Some(mut a) => {
                a.drain()?;
                (a.base, a.size)
            }
            None => (0, 0),
        };
        c!(out(addr_out, base as *mut c_void, "buffer_addr"))?;
        c!(out(size_out, bytes as c_int, "size"))
    })
}

/// A buffered send: room checked, then sccemu's nonblocking send, its space held
/// until it has left.
fn bsend(m: &Message<'_>, dest: c_int, tag: c_int) -> MpiResult<()> {
    let wire = m.comm().wire_tag(tag)?;
    if dest == p2p::PROC_NULL {
        return Ok(());
    }
    let to = m.comm().world_rank(dest)?;
    let data = m.bytes()?;
    let need = data.len() + BSEND_OVERHEAD;
    let mut guard = attached();
    let Some(a) = guard.as_mut() else {
        return fail(class::BUFFER, "no buffer is attached for buffered sends (MPI_Buffer_attach)");
    };
    let held = a.reclaim()?;
    if held + need > a.size {
        return fail(
            class::BUFFER,
            format!(
                "the attached buffer has {} of its {} bytes free; this message needs {need} ({} bytes \
                 and MPI_BSEND_OVERHEAD)",
                a.size - held,
                a.size,
                data.len()
            ),
        );
    }
    let request = mpi()?.core.isend(to, wire, &data).map_err(send_error)?;
    if !request.is_complete() {
        a.in_flight.push((request, need));
    }
    Ok(())
}

/// The nonblocking buffered send: its request is complete once the message is
/// buffered, which is at once.
pub(super) fn ibsend(m: &Message<'_>, dest: c_int, tag: c_int) -> MpiResult<Op> {
    bsend(m, dest, tag)?;
    Ok(Op::Done(Status::EMPTY))
}

/// `MPI_Bsend`.
///
/// # Safety
/// `buf` holds `count` elements of `datatype`.
#[unsafe(export_name = "PMPI_Bsend")]
pub unsafe extern "C" fn MPI_Bsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Bsend", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        bsend(&message(buf, count, &map, comm)?, dest, tag)
    })
}

/// `MPI_Ibsend`: the buffered send, whose request is complete once the message is
/// buffered, which is at once.
///
/// # Safety
/// As [`MPI_Bsend`]; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Ibsend")]
pub unsafe extern "C" fn MPI_Ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Ibsend", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let op = ibsend(&message(buf, count, &map, comm)?, dest, tag)?;
        c!(out(request, request::insert_op(op), "request"))
    })
}

/// `MPI_Irsend`: a standard nonblocking send (as `MPI_Rsend` is a standard send).
///
/// # Safety
/// `buf` holds `count` elements of `datatype`; `request` points to an `MPI_Request`.
#[unsafe(export_name = "PMPI_Irsend")]
pub unsafe extern "C" fn MPI_Irsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    entry("MPI_Irsend", Scope::Comm(comm), || {
        let map = datatype::committed(datatype)?;
        let op = isend(&message(buf, count, &map, comm)?, dest, tag)?;
        c!(out(request, request::insert_op(op), "request"))
    })
}
