//! The MPB: symmetric allocation, put and get, flags, and the gory send and receive
//! over a program's own buffer and flags.

use std::ffi::{c_char, c_int};

use super::{RcceFlag, with_rcce};
use crate::codes::{Error, FLAG_SET, FLAG_UNSET, LINE, debug};
use crate::message::Channel;

/// `RCCE_malloc`: `size` bytes (rounded up to lines) of MPB, at the same address on
/// every UE. Collective. Null, with one line on stdout naming the request and the
/// space left, when the MPB is exhausted.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_malloc(size: usize) -> *mut u8 {
    let Ok(r) = crate::state::rcce() else { return std::ptr::null_mut() };
    match r.malloc(size) {
        Ok(offset) => r.local_addr(offset),
        Err(e) if e != Error::Malloc => {
            r.report(debug::DEBUG, "RCCE_malloc", e);
            std::ptr::null_mut()
        }
        Err(_) => {
            println!(
                "RCCE UE {}: RCCE_malloc({size}): MPB exhausted, {} bytes free",
                r.rank,
                r.mpb_free_bytes()
            );
            std::ptr::null_mut()
        }
    }
}

/// `RCCE_malloc_request`: as much of `size` as fits, halving; the size granted goes to
/// `chunk`.
///
/// # Safety
/// `chunk` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_malloc_request(size: usize, chunk: *mut usize) -> *mut u8 {
    let Ok(r) = crate::state::rcce() else { return std::ptr::null_mut() };
    let (addr, granted) = match r.malloc_request(size) {
        Ok((offset, granted)) => (r.local_addr(offset), granted),
        Err(_) => (std::ptr::null_mut(), 0),
    };
    if !chunk.is_null() {
        // SAFETY: non-null, writable per the contract.
        unsafe { *chunk = granted };
    }
    addr
}

/// `RCCE_free`. Collective.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_free(ptr: *mut u8) {
    let _ = with_rcce(debug::DEBUG, "RCCE_free", |r| r.free(r.mpb_offset_of(ptr, 1).ok_or(Error::Target)?));
}

/// Copies between private memory and an MPB range: `to_mpb` puts `private` at `mpb` of
/// core `id`, otherwise gets it from there. Lines (`bytes == false`) need a line-aligned
/// MPB address and whole lines; bytes may not copy a byte onto itself. Errors are
/// checked in this order: the ID, null addresses, an MPB address outside the MPB, its
/// alignment, the length, the range's end.
fn transfer(
    what: &'static str,
    mpb: *const u8,
    private: *mut u8,
    n: c_int,
    id: c_int,
    to_mpb: bool,
    bytes: bool,
) -> c_int {
    with_rcce(debug::COMM, what, |r| {
        let id = r.check_id(id.into())?;
        let (bad_mpb, bad_private) =
            if to_mpb { (Error::Target, Error::Source) } else { (Error::Source, Error::Target) };
        if mpb.is_null() {
            return Err(bad_mpb);
        }
        if private.is_null() {
            return Err(bad_private);
        }
        let offset = r.mpb_offset_of(mpb, 0).ok_or(bad_mpb)?;
        let n = usize::try_from(n).map_err(|_| Error::MessageLength)?;
        if !bytes && offset % LINE != 0 {
            return Err(Error::Alignment);
        }
        if !bytes && n % LINE != 0 {
            return Err(Error::MessageLength);
        }
        r.mpb_offset_of(mpb, n).ok_or(bad_mpb)?;
        if bytes && std::ptr::eq(mpb, private) {
            return Err(Error::DataOverlap);
        }
        // SAFETY: the C caller's buffer of `n` bytes (RCCE's contract for put/get).
        let private = unsafe { std::slice::from_raw_parts_mut(private, n) };
        if to_mpb {
            r.mpb_write(id, offset, private)
        } else {
            r.mpb_read(id, offset, private)
        }
        crate::vtime::copied(id, n, n);
        Ok(())
    })
}

/// `RCCE_put`: `nbytes` from private `source` to `target` (an address in this UE's
/// MPB), at the same offset of core `id`'s MPB.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_put(target: *mut u8, source: *mut u8, nbytes: c_int, id: c_int) -> c_int {
    transfer("RCCE_put", target, source, nbytes, id, true, false)
}

/// `RCCE_get`: `nbytes` into private `target` from `source` (an address in this UE's
/// MPB), read at the same offset of core `id`'s MPB.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_get(target: *mut u8, source: *mut u8, nbytes: c_int, id: c_int) -> c_int {
    transfer("RCCE_get", source, target, nbytes, id, false, false)
}

/// `RCCE_put_char`: one byte.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_put_char(target: *mut u8, source: *mut u8, id: c_int) -> c_int {
    transfer("RCCE_put_char", target, source, 1, id, true, true)
}

/// `RCCE_get_char`: one byte.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_get_char(target: *mut u8, source: *mut u8, id: c_int) -> c_int {
    transfer("RCCE_get_char", source, target, 1, id, false, true)
}

/// `RCCE_flag_alloc`. Collective.
///
/// # Safety
/// `flag` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_flag_alloc(flag: *mut RcceFlag) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_flag_alloc", |r| {
        if flag.is_null() {
            return Err(Error::FlagUndefined);
        }
        let f = r.flag_alloc()?;
        // SAFETY: non-null and writable per the contract.
        unsafe { flag.write(r.c_flag(f)) };
        Ok(())
    })
}

/// `RCCE_flag_free`. Collective.
///
/// # Safety
/// `flag` must be readable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_flag_free(flag: *mut RcceFlag) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_flag_free", |r| {
        // SAFETY: readable per the contract (null checked).
        let f = unsafe { flag.as_ref() }.ok_or(Error::FlagUndefined)?;
        r.flag_free(r.flag_of(f)?)
    })
}

fn status(val: c_int) -> Result<bool, Error> {
    match val {
        FLAG_SET => Ok(true),
        FLAG_UNSET => Ok(false),
        _ => Err(Error::FlagStatusUndefined),
    }
}

/// `RCCE_flag_write`: `val` into `flag` in core `id`'s MPB.
///
/// # Safety
/// `flag` must be readable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_flag_write(flag: *mut RcceFlag, val: c_int, id: c_int) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_flag_write", |r| {
        // SAFETY: readable per the contract (null checked).
        let f = r.flag_of(unsafe { flag.as_ref() }.ok_or(Error::FlagUndefined)?)?;
        r.flag_write(f, status(val)?, r.check_id(id.into())?);
        Ok(())
    })
}

/// `RCCE_flag_read`: `flag` in core `id`'s MPB into `val`.
///
/// # Safety
/// `val` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn RCCE_flag_read(flag: RcceFlag, val: *mut c_int, id: c_int) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_flag_read", |r| {
        let f = r.flag_of(&flag)?;
        let set = r.flag_read_observed(f, r.check_id(id.into())?);
        if val.is_null() {
            return Err(Error::ValUndefined);
        }
        // SAFETY: non-null, writable per the contract.
        unsafe { *val = if set { FLAG_SET } else { FLAG_UNSET } };
        Ok(())
    })
}

/// `RCCE_wait_until`: waits until this UE's `flag` reads `val`.
#[unsafe(no_mangle)]
pub extern "C" fn RCCE_wait_until(flag: RcceFlag, val: c_int) -> c_int {
    with_rcce(debug::SYNCH, "RCCE_wait_until", |r| {
        r.wait_until(r.flag_of(&flag)?, status(val)?);
        Ok(())
    })
}

/// The gory calls' channel: the program's buffer (an address in its MPB), chunk (a
/// positive multiple of the line) and flags. A bad buffer is the send's target or the
/// receive's source.
///
/// # Safety
/// `ready` and `sent` must be readable or null.
unsafe fn gory_channel(
    r: &crate::state::Rcce,
    combuf: *mut u8,
    chunk: usize,
    ready: *mut RcceFlag,
    sent: *mut RcceFlag,
    sending: bool,
) -> Result<Channel, Error> {
    let bad_buffer = if sending { Error::Target } else { Error::Source };
    r.mpb_offset_of(combuf, 0).ok_or(bad_buffer)?;
    if chunk == 0 || chunk % LINE != 0 {
        return Err(Error::MessageLength);
    }
    let buffer = r.mpb_offset_of(combuf, chunk).ok_or(bad_buffer)?;
    // SAFETY: per the contract (null checked).
    let (ready, sent) = unsafe { (ready.as_ref(), sent.as_ref()) };
    let ready = r.flag_of(ready.ok_or(Error::FlagUndefined)?)?;
    let sent = r.flag_of(sent.ok_or(Error::FlagUndefined)?)?;
    Ok(Channel { buffer, chunk, ready, sent })
}

macro_rules! gory {
    ($name:ident, $what:literal, $sending:expr, $body:expr) => {
        /// The gory
        #[doc = $what]
        /// : the program's communication buffer `combuf` (in its MPB), `chunk` bytes
        /// per handshake, and its `ready` and `sent` flags.
        ///
        /// # Safety
        /// `privbuf` must hold `size` bytes; the flags must be readable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            privbuf: *mut c_char,
            combuf: *mut u8,
            chunk: usize,
            ready: *mut RcceFlag,
            sent: *mut RcceFlag,
            size: usize,
            peer: c_int,
        ) -> c_int {
            with_rcce(debug::COMM, $what, |r| {
                let peer = r.check_id(peer.into())?;
                // SAFETY: per this function's contract.
                let ch = unsafe { gory_channel(r, combuf, chunk, ready, sent, $sending)? };
                // SAFETY: per this function's contract.
                let buf = unsafe { private(privbuf, size)? };
                $body(r, buf, ch, peer)
            })
        }
    };
}

/// The program's private buffer of `size` bytes (empty for 0).
///
/// # Safety
/// `ptr` must be null or hold `size` bytes that nothing else uses during `'a`.
pub unsafe fn private<'a>(ptr: *mut c_char, size: usize) -> Result<&'a mut [u8], Error> {
    if size == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Error::Source);
    }
    // SAFETY: per this function's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), size) })
}

gory!(RCCE_send_gory, "RCCE_send", true, |r: &crate::state::Rcce, buf: &mut [u8], ch, peer| r
    .send(buf, ch, peer));
gory!(RCCE_recv_gory, "RCCE_recv", false, |r: &crate::state::Rcce, buf: &mut [u8], ch, peer| r
    .recv(buf, ch, peer));

/// The gory `RCCE_recv_test`: receives if the message's first chunk is there; `test`
/// says whether it did.
///
/// # Safety
/// As for [`RCCE_recv_gory`]; `test` must be writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn RCCE_recv_test_gory(
    privbuf: *mut c_char,
    combuf: *mut u8,
    chunk: usize,
    ready: *mut RcceFlag,
    sent: *mut RcceFlag,
    size: usize,
    source: c_int,
    test: *mut c_int,
) -> c_int {
    with_rcce(debug::COMM, "RCCE_recv_test", |r| {
        let source = r.check_id(source.into())?;
        // SAFETY: per this function's contract.
        let ch = unsafe { gory_channel(r, combuf, chunk, ready, sent, false)? };
        // SAFETY: per this function's contract.
        let done = r.recv_test(unsafe { private(privbuf, size)? }, ch, source)?;
        if !test.is_null() {
            // SAFETY: non-null, writable per the contract.
            unsafe { *test = c_int::from(done) };
        }
        Ok(())
    })
}
