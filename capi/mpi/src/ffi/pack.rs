//! `MPI_Pack`, `MPI_Unpack` and `MPI_Pack_size`: explicit packing into a user buffer.
//!
//! The packed form is the one every message uses (`Buffer::bytes`): the data of the
//! elements in type-map order, with no header. So `MPI_Pack_size` is the type's size
//! times the count, a packed buffer sent as `MPI_PACKED` (bytes) can be received with
//! the original type and the other way round, and packing is portable only between
//! processes of one machine, which is all an sccemu job has.

use std::ffi::{c_int, c_void};

use crate::comm;
use crate::datatype;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;
use crate::ffi::{Scope, c, entry};

/// The packed buffer's size and the position `at` in it, checked.
fn span(size: c_int, at: c_int, what: &str) -> MpiResult<(usize, usize)> {
    let size =
        usize::try_from(size).map_err(|_| MpiError::new(class::ARG, format!("{what} {size} is negative")))?;
    match usize::try_from(at) {
        Ok(at) if at <= size => Ok((size, at)),
        _ => fail(class::ARG, format!("position {at} is outside the {size}-byte packed buffer")),
    }
}

/// The new position after `bytes` more, which must fit `size`.
fn advance(at: usize, bytes: usize, size: usize) -> MpiResult<c_int> {
    if bytes > size - at {
        return fail(
            class::TRUNCATE,
            format!("{bytes} bytes from position {at} overrun a {size}-byte buffer"),
        );
    }
    c_int::try_from(at + bytes).map_err(|_| MpiError::new(class::ARG, "the position overflows an int"))
}

/// `MPI_Pack`: `incount` elements of `datatype` from `inbuf` into `outbuf` at
/// `*position`, which advances past them.
///
/// # Safety
/// `inbuf` holds `incount` elements of `datatype`; `outbuf` has `outsize` bytes;
/// `position` points to an int.
#[unsafe(export_name = "PMPI_Pack")]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: c_int,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Pack", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        let map = datatype::committed(datatype)?;
        // SAFETY: the caller's buffer of `incount` elements of `datatype` (this call's
        // contract), only read.
        let data = unsafe { Buffer::new(inbuf, incount, &map)? };
        let (size, at) = span(outsize, c!(read(position, "position"))?, "outsize")?;
        let bytes = data.bytes()?;
        let next = advance(at, bytes.len(), size)?;
        let out = c!(array_mut(outbuf.cast::<u8>(), size, "outbuf"))?;
        out[at..at + bytes.len()].copy_from_slice(&bytes);
        c!(out(position, next, "position"))
    })
}

/// `MPI_Unpack`: `outcount` elements of `datatype` into `outbuf` from `inbuf` at
/// `*position`, which advances past them.
///
/// # Safety
/// `inbuf` has `insize` bytes; `outbuf` has room for `outcount` elements of `datatype`;
/// `position` points to an int.
#[unsafe(export_name = "PMPI_Unpack")]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: c_int,
    comm: c_int,
) -> c_int {
    entry("MPI_Unpack", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        let map = datatype::committed(datatype)?;
        // SAFETY: room for `outcount` elements of `datatype` (this call's contract).
        let dst = unsafe { Buffer::new(outbuf, outcount, &map)? };
        let (size, at) = span(insize, c!(read(position, "position"))?, "insize")?;
        let bytes = dst.data_len()?;
        let next = advance(at, bytes, size)?;
        let packed = c!(array(inbuf.cast::<u8>(), insize, "inbuf"))?;
        dst.unpack(&packed[at..at + bytes])?;
        c!(out(position, next, "position"))
    })
}

/// `MPI_Pack_size`: an upper bound (here the exact size) of what `MPI_Pack` writes for
/// `incount` elements of `datatype`.
///
/// # Safety
/// `size` points to an int.
#[unsafe(export_name = "PMPI_Pack_size")]
pub unsafe extern "C" fn MPI_Pack_size(
    incount: c_int,
    datatype: c_int,
    comm: c_int,
    size: *mut c_int,
) -> c_int {
    entry("MPI_Pack_size", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        let map = datatype::committed(datatype)?;
        let n = usize::try_from(incount)
            .map_err(|_| MpiError::new(class::COUNT, format!("incount {incount} is negative")))?;
        let bytes = n.checked_mul(map.size).and_then(|b| c_int::try_from(b).ok());
        let bytes = bytes.ok_or_else(|| MpiError::new(class::COUNT, "the packed size overflows an int"))?;
        c!(out(size, bytes, "size"))
    })
}
