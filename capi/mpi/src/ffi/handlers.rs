//! Error handlers of communicators and windows (`crate::errhandler` keeps them):
//! setting and getting them, the program's own (`MPI_Comm_create_errhandler`,
//! `MPI_Win_create_errhandler`), calling them (`MPI_Comm_call_errhandler`,
//! `MPI_Win_call_errhandler`) and freeing them.

use std::ffi::c_int;

use crate::errhandler::{self, Kind, UserFunction};
use crate::error::{MpiError, MpiResult, class, fail};
use crate::ffi::{Scope, WORLD, c, entry, fatal};
use crate::{comm, win};

pub(crate) fn set_handler(object: c_int, handler: c_int, kind: Kind) -> MpiResult<()> {
    if !errhandler::is_valid(handler, kind) {
        return fail(class::ARG, format!("{handler:#x} is not an error handler for this kind of object"));
    }
    errhandler::set(object, handler);
    Ok(())
}

/// Runs the handler of `object` on error code `code`, as an error of `name` would:
/// a user handler is called, `MPI_ERRORS_RETURN` does nothing, and
/// `MPI_ERRORS_ARE_FATAL` ends the job.
pub(crate) fn call(name: &'static str, object: c_int, code: c_int) -> MpiResult<()> {
    let error_class = crate::error::class_of(code)
        .ok_or_else(|| MpiError::new(class::ARG, format!("{code} is not an error code")))?;
    match errhandler::of(object) {
        h if h == errhandler::RETURN => Ok(()),
        h if h == errhandler::FATAL => {
            let text = crate::error::text_of(code).filter(|t| !t.is_empty());
            fatal(name, &MpiError::new(error_class, text.unwrap_or_else(|| "called by the program".into())))
        }
        h => {
            errhandler::call_user(h, object, code);
            Ok(())
        }
    }
}

/// `MPI_Comm_set_errhandler`: `MPI_ERRORS_ARE_FATAL`, `MPI_ERRORS_RETURN` or one of
/// the program's.
#[unsafe(export_name = "PMPI_Comm_set_errhandler")]
pub extern "C" fn MPI_Comm_set_errhandler(comm: c_int, errhandler: c_int) -> c_int {
    entry("MPI_Comm_set_errhandler", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        set_handler(comm, errhandler, Kind::Comm)
    })
}

/// `MPI_Comm_get_errhandler`.
///
/// # Safety
/// `errhandler` points to an int.
#[unsafe(export_name = "PMPI_Comm_get_errhandler")]
pub unsafe extern "C" fn MPI_Comm_get_errhandler(comm: c_int, errhandler: *mut c_int) -> c_int {
    entry("MPI_Comm_get_errhandler", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        c!(out(errhandler, errhandler::of(comm), "errhandler"))
    })
}

/// `MPI_Win_set_errhandler`.
#[unsafe(export_name = "PMPI_Win_set_errhandler")]
pub extern "C" fn MPI_Win_set_errhandler(w: c_int, errhandler: c_int) -> c_int {
    entry("MPI_Win_set_errhandler", Scope::Win(w), || {
        win::check_handle(w)?;
        set_handler(w, errhandler, Kind::Win)
    })
}

/// `MPI_Win_get_errhandler`.
///
/// # Safety
/// `errhandler` points to an int.
#[unsafe(export_name = "PMPI_Win_get_errhandler")]
pub unsafe extern "C" fn MPI_Win_get_errhandler(w: c_int, errhandler: *mut c_int) -> c_int {
    entry("MPI_Win_get_errhandler", Scope::Win(w), || {
        win::check_handle(w)?;
        c!(out(errhandler, errhandler::of(w), "errhandler"))
    })
}

/// A new user handler of `kind` calling `function`, handed out through `errhandler`.
///
/// # Safety
/// `function` is a handler function of `kind`'s C type; `errhandler` points to an int.
unsafe fn create(function: Option<UserFunction>, kind: Kind, errhandler: *mut c_int) -> MpiResult<()> {
    let f = function.ok_or_else(|| MpiError::new(class::ARG, "the function is a null pointer"))?;
    c!(out(errhandler, errhandler::create(f, kind), "errhandler"))
}

/// `MPI_Comm_create_errhandler`: a handler that calls `function` with the
/// communicator and the error code; the failing call then returns the code.
///
/// # Safety
/// `function` is an `MPI_Comm_errhandler_function`; `errhandler` points to an int.
#[unsafe(export_name = "PMPI_Comm_create_errhandler")]
pub unsafe extern "C" fn MPI_Comm_create_errhandler(
    function: Option<UserFunction>,
    errhandler: *mut c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Comm_create_errhandler", WORLD, || unsafe { create(function, Kind::Comm, errhandler) })
}

/// `MPI_Win_create_errhandler`: as [`MPI_Comm_create_errhandler`], for windows.
///
/// # Safety
/// `function` is an `MPI_Win_errhandler_function`; `errhandler` points to an int.
#[unsafe(export_name = "PMPI_Win_create_errhandler")]
pub unsafe extern "C" fn MPI_Win_create_errhandler(
    function: Option<UserFunction>,
    errhandler: *mut c_int,
) -> c_int {
    // SAFETY: this call's contract.
    entry("MPI_Win_create_errhandler", WORLD, || unsafe { create(function, Kind::Win, errhandler) })
}

/// `MPI_Comm_call_errhandler`: runs the communicator's handler on `errorcode`.
#[unsafe(export_name = "PMPI_Comm_call_errhandler")]
pub extern "C" fn MPI_Comm_call_errhandler(comm: c_int, errorcode: c_int) -> c_int {
    entry("MPI_Comm_call_errhandler", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        call("MPI_Comm_call_errhandler", comm, errorcode)
    })
}

/// `MPI_Win_call_errhandler`: runs the window's handler on `errorcode`.
#[unsafe(export_name = "PMPI_Win_call_errhandler")]
pub extern "C" fn MPI_Win_call_errhandler(w: c_int, errorcode: c_int) -> c_int {
    entry("MPI_Win_call_errhandler", Scope::Win(w), || {
        win::check_handle(w)?;
        call("MPI_Win_call_errhandler", w, errorcode)
    })
}

/// `MPI_Errhandler_free`: the handle becomes null; objects that use a freed user
/// handler keep it.
///
/// # Safety
/// `errhandler` points to an int.
#[unsafe(export_name = "PMPI_Errhandler_free")]
pub unsafe extern "C" fn MPI_Errhandler_free(errhandler: *mut c_int) -> c_int {
    entry("MPI_Errhandler_free", WORLD, || {
        let h = c!(read(errhandler, "errhandler"))?;
        if !errhandler::free(h) {
            return fail(class::ARG, format!("{h:#x} is not an error handler"));
        }
        c!(out(errhandler, errhandler::NULL, "errhandler"))
    })
}
