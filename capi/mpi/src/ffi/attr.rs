//! Attributes of communicators: the ones MPI predefines on `MPI_COMM_WORLD`, and the
//! program's own (`keyval`), read with `MPI_Comm_get_attr` (MPI-1: `MPI_Attr_get`).
//!
//! Each predefined attribute's value lives in a static, whose address the call hands
//! out, as the standard's "pointer to the value" requires; the values never change
//! during the job (the universe is the job, and virtual time is on or off for all of
//! it), but for `MPI_LASTUSEDCODE`, which grows as the program adds error classes and
//! codes. On a communicator other than `MPI_COMM_WORLD` they are absent (flag false), as
//! they are attached to `MPI_COMM_WORLD` alone; the program cannot set them.
//!
//! The program's own attributes, of communicators, windows and datatypes, are kept by
//! [`store`], whose entry points are [`keyval`] (communicators), [`win_keyval`] and
//! [`type_keyval`].

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use crate::comm;
use crate::error::{MpiResult, class, fail};
use crate::ffi::{Scope, entry};

pub mod keyval;
pub mod store;
pub mod type_keyval;
pub mod win_keyval;

/// `MPI_TAG_UB`, `MPI_HOST`, `MPI_IO`, `MPI_WTIME_IS_GLOBAL`, `MPI_UNIVERSE_SIZE`,
/// `MPI_LASTUSEDCODE` and `MPI_APPNUM` (mpi.h).
const TAG_UB: c_int = 0x6440_0001;
const HOST: c_int = 0x6440_0003;
const IO: c_int = 0x6440_0005;
const WTIME_IS_GLOBAL: c_int = 0x6440_0007;
const UNIVERSE_SIZE: c_int = 0x6440_0009;
const LASTUSEDCODE: c_int = 0x6440_000b;
const APPNUM: c_int = 0x6440_000d;

/// The largest tag (the communicator's context takes the tag's upper bits).
static TAG_UB_VALUE: c_int = comm::TAG_UB;
/// No host process.
static HOST_VALUE: c_int = crate::p2p::PROC_NULL;
/// Every process may do I/O.
static IO_VALUE: c_int = crate::p2p::ANY_SOURCE;
/// Host clocks are one machine's monotonic clock, the same for every core; virtual
/// clocks are each core's own.
static GLOBAL: c_int = 1;
static NOT_GLOBAL: c_int = 0;
/// One application.
static APPNUM_VALUE: c_int = 0;

/// Whether `keyval` is one of the predefined attributes.
fn is_predefined(keyval: c_int) -> bool {
    matches!(keyval, TAG_UB | HOST | IO | WTIME_IS_GLOBAL | UNIVERSE_SIZE | LASTUSEDCODE | APPNUM)
}

/// Where the value of predefined attribute `keyval` on `MPI_COMM_WORLD` lives.
fn predefined(keyval: c_int) -> MpiResult<*mut c_void> {
    if keyval == LASTUSEDCODE {
        // The one that changes: when the program adds error classes and codes.
        return Ok(crate::user_errors::last_used().cast());
    }
    let value: &'static c_int = match keyval {
        TAG_UB => &TAG_UB_VALUE,
        HOST => &HOST_VALUE,
        IO => &IO_VALUE,
        WTIME_IS_GLOBAL if sccemu::timing::clock().is_some() => &NOT_GLOBAL,
        WTIME_IS_GLOBAL => &GLOBAL,
        UNIVERSE_SIZE => {
            static SIZE: OnceLock<c_int> = OnceLock::new();
            let world = comm::lookup(comm::WORLD)?.size();
            SIZE.get_or_init(|| world as c_int)
        }
        APPNUM => &APPNUM_VALUE,
        other => return fail(class::KEYVAL, format!("{other:#x} is not an attribute key")),
    };
    Ok(std::ptr::from_ref(value).cast_mut().cast())
}

/// `MPI_Comm_get_attr`: stores the attribute through `attribute_val` (a `void **`
/// passed as `void *`: for a predefined attribute a pointer to its value, for the
/// program's own the value it set) and sets `flag`.
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` points to an int.
#[unsafe(export_name = "PMPI_Comm_get_attr")]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Comm_get_attr", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        let value = match is_predefined(comm_keyval) {
            true if comm != comm::WORLD => None,
            true => Some(predefined(comm_keyval)?),
            false => keyval::get(comm, comm_keyval)?.map(|v| v as *mut c_void),
        };
        // SAFETY: this call's contract.
        unsafe { store::get_out(value, attribute_val, flag) }
    })
}

/// `MPI_Attr_get`, MPI-1's name for [`MPI_Comm_get_attr`].
///
/// # Safety
/// As [`MPI_Comm_get_attr`].
#[unsafe(export_name = "PMPI_Attr_get")]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: c_int,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { MPI_Comm_get_attr(comm, keyval, attribute_val, flag) }
}
