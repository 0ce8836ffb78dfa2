//! MPI-IO entry points that place data rather than move it: views
//! (`MPI_File_set_view`, `MPI_File_get_view`), the individual file pointer
//! (`MPI_File_seek`, `MPI_File_get_position`, `MPI_File_get_byte_offset`) and the
//! shared one (`MPI_File_seek_shared`, `MPI_File_get_position_shared`; see
//! `crate::io::shared`). Offsets are in etypes of the view; `MPI_SEEK_END` is the
//! end of the file as the view sees it (its data bytes below the file's size).

use std::ffi::{c_char, c_int};
use std::sync::Arc;

use crate::comm::coll_error;
use crate::datatype::{self, TypeRef};
use crate::error::{MpiError, class, fail};
use crate::ffi::c;
use crate::ffi::file::file_entry;
use crate::io::view::View;
use crate::io::{self, SEEK_CUR, SEEK_END, SEEK_SET};

/// `MPI_MAX_DATAREP_STRING` (mpi.h).
const MAX_DATAREP: usize = 128;

/// `MPI_File_set_view`, collective: displacement `disp` (bytes, or
/// `MPI_DISPLACEMENT_CURRENT`: where the shared pointer is, for sequential files),
/// etype, filetype, data representation (`"native"` only). Resets the file pointers
/// to 0.
///
/// # Safety
/// `datarep` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_File_set_view")]
pub unsafe extern "C" fn MPI_File_set_view(
    fh: c_int,
    disp: i64,
    etype: c_int,
    filetype: c_int,
    datarep: *const c_char,
    info: c_int,
) -> c_int {
    file_entry("MPI_File_set_view", fh, || {
        let f = io::lookup(fh)?;
        let local = (|| {
            let rep = c!(string(datarep, "datarep"))?;
            if rep != "native" {
                return fail(
                    class::UNSUPPORTED_DATAREP,
                    format!("data representation {rep:?}: only \"native\""),
                );
            }
            let disp = if disp == io::DISPLACEMENT_CURRENT {
                // Where the shared pointer is, in bytes (read before anyone resets it:
                // the reset follows the agreement below).
                if f.amode & io::mode::SEQUENTIAL == 0 {
                    return fail(class::ARG, "MPI_DISPLACEMENT_CURRENT is for MPI_MODE_SEQUENTIAL files");
                }
                let old = f.state().view.clone();
                let at = io::shared::position(&f)?.checked_mul(old.etype_size());
                old.stream_byte_end(at.ok_or_else(|| MpiError::new(class::ARG, "the offset is too large"))?)?
            } else {
                match u64::try_from(disp) {
                    Ok(d) => d,
                    Err(_) => return fail(class::ARG, format!("displacement {disp} is negative")),
                }
            };
            let e = datatype::committed(etype)?;
            let t = datatype::committed(filetype)?;
            let hints = crate::info::pairs(info)?;
            Ok((View::new(disp, (e, etype), (t, filetype))?, hints))
        })();
        let esize = local.as_ref().map_or(0, |(v, _)| v.etype_size() as i64);
        io::open::agree(f.comm()?, local.as_ref().map(drop).map_err(Clone::clone), &[esize])?;
        let (view, hints) = local?;
        let mut st = f.state();
        st.view = view;
        st.pointer = 0;
        crate::ffi::file::merge_hints(&mut st.hints, hints);
        drop(st);
        io::shared::reset(&f, Ok(0))
    })
}

/// The handle `MPI_File_get_view` gives for a view's type: a predefined type's own,
/// a new handle to a copy of a derived one (which the program frees).
fn handle_for(t: &(TypeRef, c_int)) -> c_int {
    match &t.0 {
        TypeRef::Predefined(_) => t.1,
        TypeRef::User(map) => datatype::insert(Arc::new((**map).clone())),
    }
}

/// `MPI_File_get_view`.
///
/// # Safety
/// `disp` points to an `MPI_Offset`, `etype` and `filetype` to `MPI_Datatype`s,
/// `datarep` to `MPI_MAX_DATAREP_STRING` chars.
#[unsafe(export_name = "PMPI_File_get_view")]
pub unsafe extern "C" fn MPI_File_get_view(
    fh: c_int,
    disp: *mut i64,
    etype: *mut c_int,
    filetype: *mut c_int,
    datarep: *mut c_char,
) -> c_int {
    file_entry("MPI_File_get_view", fh, || {
        let view = io::lookup(fh)?.state().view.clone();
        if disp.is_null() || etype.is_null() || filetype.is_null() || datarep.is_null() {
            return fail(class::ARG, "an out-parameter is a null pointer");
        }
        c!(out(disp, view.disp as i64, "disp"))?;
        c!(out(etype, handle_for(&view.etype), "etype"))?;
        c!(out(filetype, handle_for(&view.filetype), "filetype"))?;
        c!(out_string(datarep, std::ptr::null_mut(), MAX_DATAREP, "native"))
    })
}

/// `MPI_File_seek`: moves the individual file pointer (in etypes of the view).
#[unsafe(export_name = "PMPI_File_seek")]
pub extern "C" fn MPI_File_seek(fh: c_int, offset: i64, whence: c_int) -> c_int {
    file_entry("MPI_File_seek", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let mut st = f.state();
        let base = match whence {
            SEEK_SET => 0,
            SEEK_CUR => st.pointer,
            SEEK_END => (st.view.stream_below(io::open::size(&f)?) / st.view.etype_size()) as i64,
            _ => return fail(class::ARG, format!("whence {whence} is not an MPI_SEEK_*")),
        };
        match base.checked_add(offset) {
            Some(p) if p >= 0 => {
                st.pointer = p;
                Ok(())
            }
            _ => fail(class::ARG, format!("seeking to {base} + {offset}: before the view's start")),
        }
    })
}

/// `MPI_File_get_position`: the individual file pointer, in etypes of the view.
///
/// # Safety
/// `offset` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_position")]
pub unsafe extern "C" fn MPI_File_get_position(fh: c_int, offset: *mut i64) -> c_int {
    file_entry("MPI_File_get_position", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let p = f.state().pointer;
        c!(out(offset, p, "offset"))
    })
}

/// `MPI_File_get_byte_offset`: the file byte of view offset `offset` (in etypes).
///
/// # Safety
/// `disp` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_byte_offset")]
pub unsafe extern "C" fn MPI_File_get_byte_offset(fh: c_int, offset: i64, disp: *mut i64) -> c_int {
    file_entry("MPI_File_get_byte_offset", fh, || {
        let f = io::lookup(fh)?;
        f.check_not_sequential()?;
        let Ok(k) = u64::try_from(offset) else {
            return fail(class::ARG, format!("offset {offset} is negative"));
        };
        let view = f.state().view.clone();
        let pos = k
            .checked_mul(view.etype_size())
            .ok_or_else(|| MpiError::new(class::ARG, "the offset is too large"))?;
        let byte = view.file_byte(pos)?;
        c!(out(disp, byte as i64, "disp"))
    })
}

/// `MPI_File_seek_shared`, collective (every member passes the same arguments): moves
/// the shared file pointer.
#[unsafe(export_name = "PMPI_File_seek_shared")]
pub extern "C" fn MPI_File_seek_shared(fh: c_int, offset: i64, whence: c_int) -> c_int {
    file_entry("MPI_File_seek_shared", fh, || {
        let f = io::lookup(fh)?;
        let target = (|| {
            let view = f.state().view.clone();
            let base = match whence {
                SEEK_SET => 0,
                SEEK_CUR => io::shared::position(&f)? as i64,
                SEEK_END => (view.stream_below(io::open::size(&f)?) / view.etype_size()) as i64,
                _ => return fail(class::ARG, format!("whence {whence} is not an MPI_SEEK_*")),
            };
            match base.checked_add(offset) {
                Some(p) if p >= 0 => Ok(p as u64),
                _ => fail(class::ARG, format!("seeking to {base} + {offset}: before the view's start")),
            }
        })();
        // Every member must find the same place (MPI_SEEK_CUR read before anyone moved it).
        f.comm()?.coll().barrier().map_err(coll_error)?;
        io::shared::reset(&f, target)
    })
}

/// `MPI_File_get_position_shared`: the shared file pointer, in etypes of the view.
///
/// # Safety
/// `offset` points to an `MPI_Offset`.
#[unsafe(export_name = "PMPI_File_get_position_shared")]
pub unsafe extern "C" fn MPI_File_get_position_shared(fh: c_int, offset: *mut i64) -> c_int {
    file_entry("MPI_File_get_position_shared", fh, || {
        let p = io::shared::position(&*io::lookup(fh)?)?;
        c!(out(offset, p as i64, "offset"))
    })
}
