//! `MPI_Comm_get_attr` (and its MPI-1 name `MPI_Attr_get`) for the attributes MPI
//! predefines on `MPI_COMM_WORLD`.
//!
//! Each attribute's value lives in a static, whose address the call hands out, as
//! the standard's "pointer to the value" requires; the values never change during the
//! job (the universe is the job, and virtual time is on or off for all of it). No
//! user keyvals exist (`MPI_Comm_create_keyval` is not offered), so any other keyval
//! is `MPI_ERR_KEYVAL`; on a communicator other than `MPI_COMM_WORLD` the predefined
//! ones are absent (flag false), as they are attached to `MPI_COMM_WORLD` alone.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use crate::comm;
use crate::error::{MpiResult, class, fail};
use crate::ffi::{Scope, c, entry};

/// `MPI_TAG_UB`, `MPI_HOST`, `MPI_IO`, `MPI_WTIME_IS_GLOBAL`, `MPI_UNIVERSE_SIZE`
/// and `MPI_APPNUM` (mpi.h).
const TAG_UB: c_int = 0x6440_0001;
const HOST: c_int = 0x6440_0003;
const IO: c_int = 0x6440_0005;
const WTIME_IS_GLOBAL: c_int = 0x6440_0007;
const UNIVERSE_SIZE: c_int = 0x6440_0009;
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

/// The value of predefined attribute `keyval` on `MPI_COMM_WORLD`.
fn predefined(keyval: c_int) -> MpiResult<&'static c_int> {
    Ok(match keyval {
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
    })
}

/// `MPI_Comm_get_attr`: stores a pointer to the value through `attribute_val` (a
/// `void **` passed as `void *`) and sets `flag`.
///
/// # Safety
/// `attribute_val` points to a `void *`; `flag` points to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    entry("MPI_Comm_get_attr", Scope::Comm(comm), || {
        comm::lookup(comm)?;
        let value = predefined(comm_keyval)?;
        if comm != comm::WORLD {
            return c!(out(flag, 0, "flag"));
        }
        let value = std::ptr::from_ref(value).cast_mut().cast::<c_void>();
        c!(out(attribute_val.cast::<*mut c_void>(), value, "attribute_val"))?;
        c!(out(flag, 1, "flag"))
    })
}

/// `MPI_Attr_get`, MPI-1's name for [`MPI_Comm_get_attr`].
///
/// # Safety
/// As [`MPI_Comm_get_attr`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: c_int,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { MPI_Comm_get_attr(comm, keyval, attribute_val, flag) }
}
