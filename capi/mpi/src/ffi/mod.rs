//! The C boundary: every exported `MPI_*` symbol (each exported as `PMPI_*`, with a
//! weak `MPI_*` beside it: `pmpi`, the profiling interface), and the only unsafe code
//! of the library.
//!
//! Each entry point runs its body through [`entry`]: the body checks its arguments,
//! turns C pointers into slices (see [`buffer`]) and calls the safe logic; `entry`
//! turns an error into the code to return, or, under `MPI_ERRORS_ARE_FATAL`, into a
//! job abort with a message naming the call and the rank. No Rust panic unwinds into
//! C: `entry` catches it and aborts the job the same way.
//!
//! Files: [`env`](mod@env) (start-up, errors, info, memory), [`handlers`] (error
//! handlers), [`comm`] (communicators, groups), [`intercomm`] (intercommunicators), [`group_ops`] (groups from groups),
//! [`topology`], [`graph`] and [`dist_graph`] (and their [`neighbor`]hood collectives), [`attr`] (attributes and their
//! keys), [`p2p`] (point-to-point), [`modes`] (buffered and ready nonblocking sends),
//! [`mprobe`] (matched probes), [`pending`] (requests in flight; `recv_pool`, their boxes), [`requests`] (request
//! completion), [`datatype`] (and the decoding calls, [`decode`], and the array types,
//! [`array_types`]), [`coll`]
//! (collectives), [`vcoll`] (the v-collectives), [`icoll`] (the nonblocking collectives), [`userop`] (user ops, scan and exscan),
//! [`window`] (window creation and queries), [`win_attr`] (window attributes and
//! names), [`rma`] (one-sided communication), [`winsync`] (epochs), [`fast`] and
//! [`fast_p2p`] (the fast paths of the hottest calls; [`fast_run`], how an entry point runs them), [`file`](mod@file) (MPI-IO on whole files,
//! and file error handlers) [`file_data`] (reads and writes), [`file_nonblocking`] (their nonblocking forms),
//! [`file_split`] (split collectives) and
//! [`file_shared`] (views, file pointers), [`registry`] (lock-free handle
//! lookup), [`buffer`] (user buffers).

// The entry points keep their C names in Rust too.
#![allow(non_snake_case)]

use sccemu::job::say;
use std::ffi::c_int;
use std::panic::AssertUnwindSafe;

use crate::errhandler;
use crate::error::{MpiError, MpiResult, class, code_of, fail};
use crate::state;

pub mod array_types;
pub mod attr;
pub mod buffer;
pub mod coll;
pub mod comm;
pub mod datatype;
pub mod decode;
pub mod dist_graph;
pub mod env;
pub mod fast;
pub mod fast_p2p;
pub mod fast_run;
pub mod file;
pub mod file_data;
pub mod file_nonblocking;
pub mod file_shared;
pub mod file_split;
pub mod graph;
pub mod grequest;
pub mod group_ops;
pub mod handlers;
pub mod icoll;
pub mod info;
mod intercoll;
pub mod intercomm;
pub mod modes;
pub mod mprobe;
pub mod neighbor;
pub mod p2p;
pub mod pack;
pub mod pending;
pub mod persistent;
mod pmpi;
mod recv_pool;
pub mod registry;
pub mod requests;
pub mod rma;
pub mod topology;
pub mod userop;
pub mod vcoll;
pub mod win_attr;
pub mod window;
pub mod winsync;

pub use buffer::user_buffer;
pub use p2p::{status_of, write_status};

/// The object whose error handler applies to a call's errors.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// A communicator (or a call with none: `MPI_COMM_WORLD`'s handler).
    Comm(c_int),
    /// A window.
    Win(c_int),
}

/// `MPI_COMM_WORLD`.
pub const WORLD: Scope = Scope::Comm(crate::comm::WORLD);

/// Calls one of the pointer helpers below from an entry point. Every use is in the
/// body of an `unsafe extern "C"` entry point, on pointers that are that entry
/// point's own parameters (or derived from them as its `# Safety` section says), so
/// the helper's contract is the entry point's own; the macros only keep that one
/// argument out of two hundred call sites.
macro_rules! c {
    ($helper:ident ( $($arg:expr),* $(,)? )) => {{
        // SAFETY: the pointers are parameters of the calling C entry point, valid as
        // its `# Safety` section requires; see the macro's documentation.
        unsafe { $crate::ffi::$helper($($arg),*) }
    }};
    ($path:ident :: $helper:ident ( $($arg:expr),* $(,)? )) => {{
        // SAFETY: as above.
        unsafe { $crate::ffi::$path::$helper($($arg),*) }
    }};
}
pub(crate) use c;

/// Runs the body of the MPI call `name` for a C caller and returns its code.
///
/// Inlined into every entry point, with the error and panic paths out of line
/// (`failed`, `panicked`): the success path is then one test of the body's
/// one-word result, and the entry point's frame holds nothing the error paths need.
#[inline(always)]
pub fn entry(name: &'static str, scope: Scope, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => class::SUCCESS,
        Ok(Err(e)) => failed(name, scope, e),
        Err(panic) => panicked(name, panic),
    }
}

/// The code for `error` in `name`, or the job's end, as the error handler of `scope`
/// says.
#[cold]
#[inline(never)]
pub fn failed(name: &'static str, scope: Scope, error: MpiError) -> c_int {
    let object = match scope {
        Scope::Comm(c) | Scope::Win(c) => c,
    };
    let handler = match errhandler::of(object) {
        // An invalid object has no handler of its own: MPI_COMM_WORLD's applies.
        h if h == errhandler::FATAL => errhandler::of(crate::comm::WORLD),
        h => h,
    };
    if !state::initialized() || state::finalized() {
        fatal(name, &error)
    }
    match handler {
        h if h == errhandler::RETURN => code_of(&error),
        h => errhandler::call_user(h, object, code_of(&error)).unwrap_or_else(|| fatal(name, &error)),
    }
}

/// Ends the job after a panic in `name` (a bug of this library), naming the call; but
/// a request function refused for its thread holding the request table fails with
/// `MPI_ERR_OTHER` under `MPI_COMM_WORLD`'s handler (`request::lock`).
#[cold]
#[inline(never)]
pub(crate) fn panicked(name: &'static str, panic: Box<dyn std::any::Any + Send>) -> c_int {
    // A request function called from a generalized request's callback: an error of the
    // call, not of the library (`request::lock`).
    if panic.is::<crate::request::Reentered>() {
        return failed(name, WORLD, crate::request::Reentered::error());
    }
    let why = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    fatal(name, &MpiError::new(class::INTERN, format!("internal error: {why}")))
}

/// Ends the job after `error` in `name`: one line on stderr naming the call and the
/// rank, then the job aborts (every other core's calls fail naming this rank).
pub fn fatal(name: &str, error: &MpiError) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    match state::installed() {
        Some(mpi) => {
            say(&format!("sccemu MPI: {name} on rank {}: {error}\n", mpi.core.rank()));
            mpi.core.abort(1)
        }
        None => {
            say(&format!("sccemu MPI: {name}: {error}\n"));
            std::process::exit(1)
        }
    }
}

/// Writes `value` through the C out-parameter `out`.
///
/// # Safety
/// `out` is null or points to a writable `T` (an out-parameter of the calling entry
/// point, whose own contract says so).
pub unsafe fn out<T>(out: *mut T, value: T, what: &str) -> MpiResult<()> {
    if out.is_null() {
        return fail(class::ARG, format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; MPI requires an out-parameter to point to a writable object of
    // its type, which is the caller's side of this call's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Reads the C in-parameter `p`.
///
/// # Safety
/// `p` is null or points to a readable `T`.
pub unsafe fn read<T: Copy>(p: *const T, what: &str) -> MpiResult<T> {
    if p.is_null() {
        return fail(class::ARG, format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; the caller passes a readable object of its type (MPI's
    // contract for in-parameters).
    Ok(unsafe { p.read() })
}

/// The `n` values of the C array `p` (empty for `n == 0`, whatever `p` is).
///
/// # Safety
/// `p` is null or points to `n` readable values that live as long as `'a` and that
/// nobody writes meanwhile.
pub unsafe fn array<'a, T>(p: *const T, n: c_int, what: &str) -> MpiResult<&'a [T]> {
    let n =
        usize::try_from(n).map_err(|_| MpiError::new(class::COUNT, format!("{what}: negative count {n}")))?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return fail(class::ARG, format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; MPI's contract: `p` points to `n` readable values, which live
    // for the duration of the call (the slice does not outlive it in any caller).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The `n` values of the C array `p`, to write.
///
/// # Safety
/// `p` is null or points to `n` writable values that live as long as `'a` and that
/// nobody else accesses meanwhile.
pub unsafe fn array_mut<'a, T>(p: *mut T, n: usize, what: &str) -> MpiResult<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return fail(class::ARG, format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; MPI's contract: `p` points to `n` writable values that no one
    // else accesses during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// Writes a C string into `buf` (at most `max` bytes with the NUL) and its length
/// into `len`.
///
/// # Safety
/// `buf` is null or holds `max` writable chars; `len` is null or points to an int.
pub unsafe fn out_string(
    buf: *mut std::ffi::c_char,
    len: *mut c_int,
    max: usize,
    text: &str,
) -> MpiResult<()> {
    let bytes = &text.as_bytes()[..text.len().min(max.saturating_sub(1))];
    // SAFETY: `buf` holds `max` chars, and at most `max` are written (this function's
    // contract).
    let dst = unsafe { array_mut(buf.cast::<u8>(), bytes.len() + 1, "string buffer")? };
    dst[..bytes.len()].copy_from_slice(bytes);
    dst[bytes.len()] = 0;
    if !len.is_null() {
        // SAFETY: `len` points to an int (this function's contract).
        unsafe { out(len, bytes.len() as c_int, "length")? };
    }
    Ok(())
}

/// The Rust string of the C string `p`.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
pub unsafe fn string(p: *const std::ffi::c_char, what: &str) -> MpiResult<String> {
    if p.is_null() {
        return fail(class::ARG, format!("{what} is a null pointer"));
    }
    // SAFETY: non-null; MPI's contract: a NUL-terminated string.
    Ok(unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
