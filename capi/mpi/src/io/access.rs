//! Reads and writes through a view: the memory side is a user buffer (any committed
//! datatype, packed or unpacked in type-map order by `crate::ffi::buffer`), the file
//! side the view's pieces for the requested part of its data stream
//! ([`View::segments`]), each moved with one positioned read or write.
//!
//! A read stops at the end of the file: the bytes before it are delivered (a partial
//! last element as far as it goes) and counted in the status; a write extends the
//! file. Offsets are in etypes of the view, and the data moved must be whole etypes
//! (MPI requires the memory type's signature to be made of etypes).

use std::os::unix::fs::FileExt;

use super::FileObj;
use super::view::View;
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::buffer::Buffer;

/// The byte position in `view`'s data stream of etype offset `offset`, after checking
/// that `buf` holds whole etypes.
fn start(view: &View, offset: i64, buf: &Buffer<'_>) -> MpiResult<u64> {
    let Ok(offset) = u64::try_from(offset) else {
        return fail(class::ARG, format!("offset {offset} is negative"));
    };
    if buf.data_len()? as u64 % view.etype_size() != 0 {
        return fail(
            class::TYPE,
            format!(
                "{} bytes of data are not a whole number of etypes {}",
                buf.data_len()?,
                view.etype.0.name
            ),
        );
    }
    offset
        .checked_mul(view.etype_size())
        .ok_or_else(|| MpiError::new(class::ARG, format!("offset {offset} is too large")))
}

/// Reads into `buf` from etype offset `offset` of `view`: the bytes read (fewer than
/// the buffer holds at the end of the file).
pub fn read(f: &FileObj, view: &View, offset: i64, buf: &Buffer<'_>) -> MpiResult<usize> {
    f.check_readable()?;
    let pos = start(view, offset, buf)?;
    let len = buf.data_len()?;
    let mut scratch = Vec::new();
    let data: &mut [u8] = match buf.contiguous_mut()? {
        Some(direct) => direct,
        None => {
            scratch.resize(len, 0);
            &mut scratch
        }
    };
    let mut got = 0;
    'pieces: for (at, n) in view.segments(pos, len)? {
        let mut done = 0;
        while done < n {
            match f.file.read_at(&mut data[got..got + n - done], at + done as u64) {
                Ok(0) => break 'pieces,
                Ok(k) => {
                    done += k;
                    got += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(super::io_error(&f.path, &e)),
            }
        }
    }
    if !buf.is_contiguous() {
        buf.unpack(&scratch[..got])?;
    }
    Ok(got)
}

/// Writes `buf` at etype offset `offset` of `view`: the bytes written (all of them).
pub fn write(f: &FileObj, view: &View, offset: i64, buf: &Buffer<'_>) -> MpiResult<usize> {
    f.check_writable()?;
    let pos = start(view, offset, buf)?;
    let data = buf.bytes()?;
    let mut from = 0;
    for (at, n) in view.segments(pos, data.len())? {
        f.file.write_all_at(&data[from..from + n], at).map_err(|e| super::io_error(&f.path, &e))?;
        from += n;
    }
    Ok(data.len())
}
