//! Power management (`RC_POWER_MANAGEMENT`) and `RCCE_qsort`.

use std::ffi::{c_int, c_longlong, c_void};

use super::with_rcce;
use crate::codes::{Error, debug};
use crate::power::DEFAULT_DIVIDER;
use crate::state::rcce;

/// `RCCE_REQUEST`: a power change in flight.
#[repr(C)]
pub struct RcceRequest {
    release: c_int,
    old_voltage_level: c_int,
    new_voltage_level: c_int,
    old_frequency_divider: c_int,
    new_frequency_divider: c_int,
    start_cycle: c_longlong,
}

/// `RCCE_power_domain`: the caller's voltage domain (-1 before `RCCE_init`).
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_power_domain() -> c_int {
    rcce().map_or(-1, |r| r.power_domain() as c_int)
}

/// `RCCE_power_domain_master`: the lowest rank in the caller's domain.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_power_domain_master() -> c_int {
    rcce().map_or(-1, |r| r.domain_members().first().map_or(-1, |&m| m as c_int))
}

/// `RCCE_power_domain_size`: the job's UEs in the caller's domain.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_power_domain_size() -> c_int {
    rcce().map_or(-1, |r| r.domain_members().len() as c_int)
}

/// `RCCE_iset_power`: starts setting the caller's domain to divider `fdiv` (clamped to
/// 2..16; `RCCE_POWER_DEFAULT` for 3) at the lowest voltage that carries it. Only the
/// domain's master changes anything (one request at a time); from other UEs it
/// succeeds and leaves `req` completed.
///
/// # Safety
/// `req`, `new_fdiv` and `new_vlevel` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_iset_power(
    fdiv: c_int,
    req: *mut RcceRequest,
    new_fdiv: *mut c_int,
    new_vlevel: *mut c_int,
) -> c_int {
    with_rcce(debug::RPC, "RCCE_iset_power", |r| {
        if req.is_null() {
            return Err(Error::RpcNotAllocated);
        }
        let old = r.divider(r.core.position().tile);
        let old_level = r.voltage_level();
        let (divider, level, in_flight) = if r.is_power_master() {
            let change = r.iset_power(fdiv)?;
            (change.divider, change.level, 1)
        } else {
            (old, old_level, 0)
        };
        // SAFETY: non-null and writable per the contract; the others checked below.
        unsafe {
            req.write(RcceRequest {
                release: in_flight,
                old_voltage_level: old_level as c_int,
                new_voltage_level: level as c_int,
                old_frequency_divider: old as c_int,
                new_frequency_divider: divider as c_int,
                start_cycle: (r.core.wtime() * r.ghz * 1e9) as c_longlong,
            });
            if !new_fdiv.is_null() {
                *new_fdiv = divider as c_int;
            }
            if !new_vlevel.is_null() {
                *new_vlevel = level as c_int;
            }
        }
        Ok(())
    })
}

/// `RCCE_wait_power`: completes the request `RCCE_iset_power` started (a no-op on
/// other UEs than the domain's master).
///
/// # Safety
/// `req` must be readable and writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_wait_power(req: *mut RcceRequest) -> c_int {
    with_rcce(debug::RPC, "RCCE_wait_power", |r| {
        // SAFETY: per the contract (null checked).
        let req = unsafe { req.as_mut() }.ok_or(Error::NoActiveRpcRequest)?;
        if r.is_power_master() {
            r.wait_power()?;
        }
        req.release = 0;
        Ok(())
    })
}

/// `RCCE_set_frequency_divider`: the caller's domain to `fdiv` (clamped to 2..16;
/// `RCCE_POWER_DEFAULT` for 3) at its current voltage; the divider set goes to
/// `new_fdiv`. Only the domain's master changes anything.
///
/// # Safety
/// `new_fdiv` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_set_frequency_divider(fdiv: c_int, new_fdiv: *mut c_int) -> c_int {
    with_rcce(debug::RPC, "RCCE_set_frequency_divider", |r| {
        if !r.is_power_master() {
            return Ok(()); // accepted and ignored, as on the chip
        }
        let set = r.set_frequency_divider(fdiv)?;
        if !new_fdiv.is_null() {
            // SAFETY: non-null, writable per the contract.
            unsafe { *new_fdiv = set as c_int };
        }
        Ok(())
    })
}

/// `print_dividers`: every tile's divider and frequency, one line each.
#[unsafe(no_mangle)]
pub extern "C" fn print_dividers() {
    match rcce() {
        Ok(r) => r.print_dividers(),
        Err(_) => println!("print_dividers: RCCE_init has not run (every divider is {DEFAULT_DIVIDER})"),
    }
}

/// `RCCE_qsort`: sorts `num` elements of `size` bytes at `base` with `compare`, like
/// qsort(3).
///
/// # Safety
/// `base` must hold `num * size` bytes; `compare` must be callable on two elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_qsort(
    base: *mut u8,
    num: usize,
    size: usize,
    compare: Option<unsafe extern "C" fn(*const c_void, *const c_void) -> c_int>,
) -> c_int {
    super::guard(|| {
        let compare = compare.ok_or(Error::ValUndefined)?;
        let bytes = num.checked_mul(size).ok_or(Error::MessageLength)?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: per the contract, `base` holds `num * size` bytes.
        let all = unsafe { std::slice::from_raw_parts_mut(base, bytes) };
        let mut elems: Vec<Vec<u8>> = all.chunks_exact(size).map(<[u8]>::to_vec).collect();
        // SAFETY: `compare` takes two elements, per the contract.
        elems.sort_by(|a, b| unsafe { compare(a.as_ptr().cast(), b.as_ptr().cast()) }.cmp(&0));
        all.copy_from_slice(&elems.concat());
        Ok(())
    })
}
