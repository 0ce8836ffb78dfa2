//! Start-up and shutdown, identity, time, errors and debugging, test-and-set locks,
//! shared DRAM, fences, communicators and the barrier.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{Ordering, fence};

use sccemu::Core;

use super::{Comm48, guard, with_rcce, world_ptr};
use crate::codes::{Error, MAX_ERROR_STRING, debug};
use crate::launch_args::LaunchArgs;
use crate::state::{Rcce, Variant, rcce};

/// Variant bits `RCCE_init_variant` takes (`SCCEMU_RCCE_VARIANT` in RCCE.h).
const SINGLE_BIT_FLAGS: c_int = 1;
/// See [`SINGLE_BIT_FLAGS`].
const GORY: c_int = 2;

/// `RCCE_init` for a program built with `variant` (bits: 1 single-bit flags, 2 gory)
/// and `RCCE_MAXNP` `maxnp`.
///
/// # Safety
/// `argc` and `argv` must be `main`'s (or null, when there are no launcher arguments).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_init_variant(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    variant: c_int,
    maxnp: c_int,
) -> c_int {
    guard(|| {
        if rcce().is_ok() {
            return Err(Error::CommInitialized);
        }
        let maxnp = usize::try_from(maxnp)
            .ok()
            .filter(|&m| (1..=super::MAXNP_LIMIT).contains(&m))
            .ok_or(Error::NumUes)?;
        let variant =
            Variant { single_bit_flags: variant & SINGLE_BIT_FLAGS != 0, gory: variant & GORY != 0, maxnp };
        let core = Core::attach().map_err(|e| {
            sccemu::job::say(&format!("RCCE_init: {e}\n"));
            Error::NumUes
        })?;
        // SAFETY: per this function's contract.
        let args = unsafe { c_args(argc, argv) };
        let launch =
            LaunchArgs::parse(&args.iter().skip(1).map(String::as_str).collect::<Vec<_>>(), core.size());
        let rank = core.rank();
        let ghz = match &launch {
            Some(l) => {
                let id = core.core_id(rank).expect("own rank");
                if l.rank_of(id) != Some(rank) {
                    sccemu::job::say(&format!(
                        "RCCE_init: core {id} (rank {rank}) is not in the host list {:?}\n",
                        l.ids
                    ));
                    return Err(Error::CoreNotInHostfile);
                }
                l.ghz
            }
            None => 0.533,
        };
        let rcce = Rcce::init(core, rank, ghz, variant).map_err(|(e, why)| {
            sccemu::job::say(&format!("RCCE_init: {why}\n"));
            e
        })?;
        rcce.publish_world();
        if let Some(l) = launch {
            // SAFETY: `argv` holds `*argc >= 1 + consumed` pointers (the launcher
            // arguments parsed above): moving `argv[0]` up to the last consumed one and
            // the array start past the rest leaves a valid argv of the program's own.
            unsafe {
                let at = (*argv).add(l.consumed());
                *at = **argv;
                *argv = at;
                *argc -= l.consumed() as c_int;
            }
        }
        // SAFETY: `finalize_at_exit` is an `extern "C" fn()` that never unwinds.
        if unsafe { atexit(finalize_at_exit) } != 0 {
            sccemu::job::say("RCCE_init: cannot register the exit handler; call RCCE_finalize\n");
        }
        Ok(())
    })
}

/// `main`'s arguments as strings.
///
/// # Safety
/// As for [`RCCE_init_variant`].
unsafe fn c_args(argc: *mut c_int, argv: *mut *mut *mut c_char) -> Vec<String> {
    if argc.is_null() || argv.is_null() {
        return Vec::new();
    }
    // SAFETY: `main`'s argc and argv: `*argc` non-null C strings.
    unsafe {
        let n = usize::try_from(*argc).unwrap_or(0);
        (0..n)
            .map(|i| *(*argv).add(i))
            .take_while(|p| !p.is_null())
            .map(|p| CStr::from_ptr(p).to_string_lossy().into_owned())
            .collect()
    }
}

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> c_int;
}

/// A UE that returns from `main` without `RCCE_finalize` leaves the job cleanly.
extern "C" fn finalize_at_exit() {
    if let Ok(r) = rcce() {
        r.core.leave();
    }
}

/// `RCCE_init` with byte flags and `RCCE_MAXNP` 48 (for callers without RCCE.h's
/// macro).
///
/// # Safety
/// As for [`RCCE_init_variant`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: the same contract.
    unsafe { RCCE_init_variant(argc, argv, 0, 48) }
}

/// `RCCE_finalize`: this UE leaves the job (the others go on).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_finalize() -> c_int {
    with_rcce(debug::DEBUG, "RCCE_finalize", |r| {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        r.core.leave();
        Ok(())
    })
}

/// `RCCE_wtime`: seconds since the job started.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_wtime() -> f64 {
    rcce().map_or(0.0, |r| r.core.wtime())
}

/// `RCCE_ue`: this UE's rank (-1 before `RCCE_init`).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_ue() -> c_int {
    rcce().map_or(-1, |r| r.rank as c_int)
}

/// `RCCE_num_ues`: the number of UEs (-1 before `RCCE_init`).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_num_ues() -> c_int {
    rcce().map_or(-1, |r| r.size as c_int)
}

/// `RCCE_error_string`: the message of `code` into `buf` (at most
/// `RCCE_MAX_ERROR_STRING` bytes with its NUL), its length into `len`.
///
/// # Safety
/// `buf` must hold `RCCE_MAX_ERROR_STRING` bytes and `len` be writable, or be null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_error_string(code: c_int, buf: *mut c_char, len: *mut c_int) -> c_int {
    guard(|| {
        let text = if code == crate::codes::SUCCESS {
            Some("success")
        } else {
            Error::from_code(code).map(Error::message)
        };
        let (text, result) = match text {
            Some(text) => (text, Ok(())),
            None => ("", Err(Error::InvalidErrorCode)),
        };
        let n = text.len().min(MAX_ERROR_STRING - 1);
        // SAFETY: per the contract, `buf` holds MAX_ERROR_STRING bytes; `n + 1` fit.
        unsafe {
            if !buf.is_null() {
                std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), buf, n);
                *buf.add(n) = 0;
            }
            if !len.is_null() {
                *len = n as c_int;
            }
        }
        result
    })
}

fn set_debug(level: c_int, on: bool) -> c_int {
    guard(|| {
        let r = rcce()?;
        let bit = debug::bit(level).ok_or(Error::DebugFlag)?;
        if on {
            r.debug.fetch_or(bit, Ordering::Relaxed)
        } else {
            r.debug.fetch_and(!bit, Ordering::Relaxed)
        };
        Ok(())
    })
}

/// `RCCE_debug_set`: print the errors of a category (to stdout, as RCCE does).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_debug_set(level: c_int) -> c_int {
    set_debug(level, true)
}

/// `RCCE_debug_unset`.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_debug_unset(level: c_int) -> c_int {
    set_debug(level, false)
}

/// `RCCE_acquire_lock`: takes core `id`'s test-and-set register.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_acquire_lock(id: c_int) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_acquire_lock", |r| {
        let id = r.check_id(id.into())?;
        r.test_and_set(id);
        Ok(())
    })
}

/// `RCCE_release_lock`.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_release_lock(id: c_int) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_release_lock", |r| {
        let id = r.check_id(id.into())?;
        r.release_register(id);
        Ok(())
    })
}

/// `RCCE_fence`: a full memory fence.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_fence() {
    fence(Ordering::SeqCst);
}

/// `RCCE_shmalloc`: shared off-chip memory, the same address on every UE (all UEs
/// allocate in the same order); null when it is exhausted, and always when the job
/// spans nodes, which share no memory (with a line on stderr).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_shmalloc(size: usize) -> *mut u8 {
    let Ok(r) = rcce() else { return std::ptr::null_mut() };
    if r.spans {
        sccemu::job::say(&format!(
            "RCCE UE {}: RCCE_shmalloc({size}): the job spans nodes, which share no memory: no shared DRAM\n",
            r.rank
        ));
        r.report(debug::DEBUG, "RCCE_shmalloc", Error::Malloc);
        return std::ptr::null_mut();
    }
    match r.shmalloc(size) {
        Some(at) => r.shared_bytes().addr(at),
        None if size == 0 => std::ptr::null_mut(),
        None => {
            println!("RCCE UE {}: RCCE_shmalloc({size}): shared memory exhausted", r.rank);
            std::ptr::null_mut()
        }
    }
}

/// `RCCE_shfree`.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_shfree(ptr: *mut u8) {
    let _ = with_rcce(debug::DEBUG, "RCCE_shfree", |r| {
        let base = r.shared_bytes().addr(0) as usize;
        r.shfree((ptr as usize).checked_sub(base).ok_or(Error::Target)?)
    });
}

/// `RC_cache_invalidate`: makes the next reads of MPB lines see other UEs' writes (a
/// full fence; the chip invalidates its MPB-typed L1 lines).
#[unsafe(no_mangle)]
pub extern "C" fn RC_cache_invalidate() {
    fence(Ordering::SeqCst);
}

/// `RCCE_shflush`: makes this UE's stores to shared memory visible (a full fence).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_shflush() {
    fence(Ordering::SeqCst);
}

/// `RCCE_barrier`.
///
/// # Safety
/// `comm` must point to an `RCCE_COMM` (as the program's RCCE.h declares it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_barrier(comm: *const u8) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_barrier", |r| {
        // SAFETY: per this function's contract, in the program's layout.
        let comm = unsafe { r.read_comm(comm, r.variant.maxnp)? };
        r.barrier(&comm);
        Ok(())
    })
}

/// `RCCE_comm_split`: the UEs whose colour matches this one's (`color(rank, aux)` is
/// evaluated for every rank), into `comm`. Collective.
///
/// # Safety
/// `color` must be callable with `aux`; `comm` must point to a writable `RCCE_COMM`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_split(
    color: Option<unsafe extern "C" fn(c_int, *mut c_void) -> c_int>,
    aux: *mut c_void,
    comm: *mut u8,
) -> c_int {
    with_rcce(debug::COMM, "RCCE_comm_split", |r| {
        let color = color.ok_or(Error::CommUndefined)?;
        if comm.is_null() {
            return Err(Error::CommUndefined);
        }
        // SAFETY: per this function's contract.
        let split = r.split(|rank| unsafe { color(rank as c_int, aux) })?;
        // SAFETY: per this function's contract, in the program's layout.
        unsafe { r.write_comm(&split, comm, r.variant.maxnp) };
        Ok(())
    })
}

/// `RCCE_comm_free`. Collective.
///
/// # Safety
/// `comm` must point to an `RCCE_COMM` that `RCCE_comm_split` filled.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_free(comm: *mut u8) -> c_int {
    with_rcce(debug::COMM, "RCCE_comm_free", |r| {
        if std::ptr::eq(comm, world_ptr()) {
            return Err(Error::CommUndefined);
        }
        // SAFETY: per this function's contract.
        let c = unsafe { r.read_comm(comm, r.variant.maxnp)? };
        r.comm_free(&c)?;
        // SAFETY: `initialized` is the third int of the struct.
        unsafe { comm.add(8).cast::<c_int>().write_unaligned(0) };
        Ok(())
    })
}

fn comm_query(
    comm: *const u8,
    maxnp: Option<usize>,
    out: *mut c_int,
    what: fn(&crate::collective::Comm) -> usize,
) -> c_int {
    with_rcce(debug::COMM, "RCCE_comm_size/rank", |r| {
        // SAFETY: the exported callers pass a readable RCCE_COMM of this layout.
        let c = unsafe { r.read_comm(comm, maxnp.unwrap_or(r.variant.maxnp))? };
        if out.is_null() {
            return Err(Error::ValUndefined);
        }
        // SAFETY: non-null (checked); the caller's out-parameter.
        unsafe { *out = what(&c) as c_int };
        Ok(())
    })
}

/// `RCCE_comm_size` (by value, for `RCCE_MAXNP` 48).
///
/// # Safety
/// `size` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_size(comm: Comm48, size: *mut c_int) -> c_int {
    comm_query((&raw const comm).cast(), Some(48), size, |c| c.members.len())
}

/// `RCCE_comm_rank` (by value, for `RCCE_MAXNP` 48).
///
/// # Safety
/// `rank` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_rank(comm: Comm48, rank: *mut c_int) -> c_int {
    comm_query((&raw const comm).cast(), Some(48), rank, |c| c.my_rank)
}

/// `RCCE_comm_size` for programs built with another `RCCE_MAXNP` (RCCE.h passes a
/// pointer).
///
/// # Safety
/// `comm` must point to an `RCCE_COMM`; `size` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_size_p(comm: *const u8, size: *mut c_int) -> c_int {
    comm_query(comm, None, size, |c| c.members.len())
}

/// `RCCE_comm_rank` for programs built with another `RCCE_MAXNP`.
///
/// # Safety
/// As for [`RCCE_comm_size_p`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_comm_rank_p(comm: *const u8, rank: *mut c_int) -> c_int {
    comm_query(comm, None, rank, |c| c.my_rank)
}
