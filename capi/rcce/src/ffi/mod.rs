//! The C boundary: every exported `RCCE_*` symbol, and the only unsafe code of the
//! library.
//!
//! Each entry point turns C pointers into MPB offsets and slices (checking them
//! against the MPB, the job and the flag tables), calls the safe logic, and returns
//! RCCE's code. No Rust panic unwinds into C: [`guard`] catches it, reports it and
//! ends the UE, which the launcher turns into a job abort. Before `RCCE_init`, calls
//! return `RCCE_ERROR_COMM_UNDEFINED`.
//!
//! Files: [`env`](mod@env) (start-up, identity, errors, debugging, locks, shared DRAM,
//! communicators), [`mpb`] (allocation, put/get, flags, the gory send and receive),
//! [`nongory`] (send, receive, collectives), [`power`].

use std::ffi::c_int;
use std::panic::AssertUnwindSafe;

use crate::codes::{Error, LINE, MPB_BYTES, SUCCESS};
use crate::collective::Comm;
use crate::flags::Flag;
use crate::state::{Rcce, rcce};

pub mod env;
pub mod mpb;
pub mod nongory;
pub mod power;

/// `RCCE_FLAG`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RcceFlag {
    /// The byte index (byte flags) or bit index (single-bit flags) in its line.
    pub location: c_int,
    /// The flag's byte in this core's MPB.
    pub flag_addr: *mut u8,
    /// Its line in this core's MPB.
    pub line_address: *mut u8,
}

/// `RCCE_COMM` as a program built with the default `RCCE_MAXNP` (48) passes it by
/// value.
#[repr(C)]
pub struct Comm48 {
    size: c_int,
    my_rank: c_int,
    initialized: c_int,
    member: [c_int; 48],
    gather: RcceFlag,
    release: RcceFlag,
}

/// The largest `RCCE_MAXNP` a program may be built with.
pub const MAXNP_LIMIT: usize = 4096;

/// Bytes of an `RCCE_COMM` for `maxnp`, and the offset of its `gather` flag.
const fn comm_layout(maxnp: usize) -> (usize, usize) {
    let gather = (12 + 4 * maxnp).next_multiple_of(8);
    (gather + 2 * size_of::<RcceFlag>(), gather)
}

/// `RCCE_COMM_WORLD`, large enough for any `RCCE_MAXNP` up to [`MAXNP_LIMIT`];
/// `RCCE_init` fills it in the layout of the program's `RCCE_MAXNP`.
#[unsafe(no_mangle)]
pub static mut RCCE_COMM_WORLD: [u64; comm_layout(MAXNP_LIMIT).0 / 8] = [0; comm_layout(MAXNP_LIMIT).0 / 8];

/// `RCCE_IAM`: this UE's rank, set by `RCCE_init`.
#[unsafe(no_mangle)]
pub static mut RCCE_IAM: c_int = -1;

/// `RCCE_NP`: the number of UEs, set by `RCCE_init`.
#[unsafe(no_mangle)]
pub static mut RCCE_NP: c_int = 0;

/// `RCCE_comm_buffer`: every UE's MPB as an address in this process (RCCE's
/// `RCCE_MAXNP` limit for the array's size), set by `RCCE_init`. Null for a UE on
/// another node, whose MPB is not in this process (reach it with `RCCE_put`/`RCCE_get`).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)] // RCCE's name
pub static mut RCCE_comm_buffer: [*mut u8; MAXNP_LIMIT] = [std::ptr::null_mut(); MAXNP_LIMIT];

/// Runs `body` for a C caller: its result, or RCCE's code for its error; a panic ends
/// the UE instead of unwinding into C.
pub fn guard(body: impl FnOnce() -> Result<(), Error>) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(e)) => e.code(),
        Err(panic) => {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned());
            sccemu::job::say(&format!("RCCE: internal error: {}\n", why.unwrap_or_default()));
            std::process::exit(70)
        }
    }
}

/// [`guard`] with the state, reporting an error under debug `category` as `what`. In
/// virtual-time mode the call is one operation of the core's clock, charged the
/// chip's cost of a library call (see `crate::vtime`).
pub fn with_rcce(
    category: c_int,
    what: &'static str,
    body: impl FnOnce(&'static Rcce) -> Result<(), Error>,
) -> c_int {
    guard(|| {
        let r = rcce()?;
        let _op = crate::vtime::call(what);
        body(r).inspect_err(|&e| r.report(category, what, e))
    })
}

impl Rcce {
    /// The address of MPB offset `offset` in this core's MPB.
    pub fn local_addr(&self, offset: usize) -> *mut u8 {
        self.mpb(self.rank).addr(offset)
    }

    /// The offset of `addr` in this core's MPB, if `len` bytes from it lie in the
    /// usable MPB (past the reserved line 0).
    pub fn mpb_offset_of(&self, addr: *const u8, len: usize) -> Option<usize> {
        let base = self.local_addr(0) as usize;
        let offset = (addr as usize).checked_sub(base)?;
        (offset >= LINE && offset.checked_add(len)? <= MPB_BYTES).then_some(offset)
    }

    /// The C form of `flag`.
    pub fn c_flag(&self, flag: Flag) -> RcceFlag {
        let bits = self.variant.single_bit_flags;
        RcceFlag {
            location: flag.slot as c_int,
            flag_addr: self.local_addr(flag.byte(bits)),
            line_address: self.local_addr(flag.line),
        }
    }

    /// The allocated flag a C `RCCE_FLAG` names.
    pub fn flag_of(&self, flag: &RcceFlag) -> Result<Flag, Error> {
        if flag.line_address.is_null() {
            return Err(Error::FlagNotAllocated);
        }
        let line = self.mpb_offset_of(flag.line_address, LINE).ok_or(Error::FlagNotInCommBuffer)?;
        let slot = usize::try_from(flag.location).map_err(|_| Error::FlagNotAllocated)?;
        if line % LINE != 0 {
            return Err(Error::FlagNotInCommBuffer);
        }
        self.check_flag(Flag { line, slot })
    }

    /// Reads the communicator at `comm`, laid out for the program's `RCCE_MAXNP`
    /// (`maxnp`), and checks it.
    ///
    /// # Safety
    /// `comm` must point to a readable `RCCE_COMM` of that layout.
    pub unsafe fn read_comm(&self, comm: *const u8, maxnp: usize) -> Result<Comm, Error> {
        if comm.is_null() {
            return Err(Error::CommUndefined);
        }
        let (_, gather_at) = comm_layout(maxnp);
        // SAFETY: the caller's contract: `comm` is a readable RCCE_COMM of this layout,
        // which places three ints, `maxnp` members and the two flags at these offsets.
        let (size, my_rank, initialized, gather, release) = unsafe {
            let int = |at: usize| comm.add(at).cast::<c_int>().read_unaligned();
            let flag = |at: usize| comm.add(at).cast::<RcceFlag>().read_unaligned();
            (int(0), int(4), int(8), flag(gather_at), flag(gather_at + size_of::<RcceFlag>()))
        };
        match initialized {
            1 => {}
            0 => return Err(Error::CommInitialized), // freed, or never split into
            _ => return Err(Error::CommUndefined),
        }
        let size =
            usize::try_from(size).ok().filter(|&s| s >= 1 && s <= maxnp).ok_or(Error::CommUndefined)?;
        let members = (0..size)
            // SAFETY: member `i < size <= maxnp` lies inside the struct (contract above).
            .map(|i| unsafe { comm.add(12 + 4 * i).cast::<c_int>().read_unaligned() })
            .map(|m| u32::try_from(m).map_err(|_| Error::CommUndefined))
            .collect::<Result<Vec<u32>, Error>>()?;
        let my_rank = usize::try_from(my_rank).map_err(|_| Error::CommUndefined)?;
        let comm =
            Comm { members, my_rank, gather: self.flag_of(&gather)?, release: self.flag_of(&release)? };
        self.check_comm(&comm)?;
        Ok(comm)
    }

    /// Writes `comm` into the C struct at `out`, laid out for `maxnp`.
    ///
    /// # Safety
    /// `out` must point to a writable `RCCE_COMM` of that layout.
    pub unsafe fn write_comm(&self, comm: &Comm, out: *mut u8, maxnp: usize) {
        let (_, gather_at) = comm_layout(maxnp);
        let (gather, release) = (self.c_flag(comm.gather), self.c_flag(comm.release));
        // SAFETY: the caller's contract; every offset lies inside an RCCE_COMM of this
        // layout, and `comm.members.len() <= size <= maxnp` (checked by `Rcce::init`).
        unsafe {
            let int = |at: usize, v: c_int| out.add(at).cast::<c_int>().write_unaligned(v);
            int(0, comm.members.len() as c_int);
            int(4, comm.my_rank as c_int);
            int(8, 1);
            for (i, &m) in comm.members.iter().enumerate() {
                int(12 + 4 * i, m as c_int);
            }
            out.add(gather_at).cast::<RcceFlag>().write_unaligned(gather);
            out.add(gather_at + size_of::<RcceFlag>()).cast::<RcceFlag>().write_unaligned(release);
        }
    }

    /// Fills `RCCE_COMM_WORLD`, `RCCE_IAM`, `RCCE_NP` and `RCCE_comm_buffer`.
    pub fn publish_world(&self) {
        let world = (&raw mut RCCE_COMM_WORLD).cast::<u8>();
        // SAFETY: RCCE_COMM_WORLD holds an RCCE_COMM for any maxnp up to MAXNP_LIMIT
        // (`Rcce::init` refuses larger), and the globals hold what they are declared
        // to; only this call writes them, once, before the program reads them.
        unsafe {
            self.write_comm(&self.world(), world, self.variant.maxnp);
            RCCE_IAM = self.rank as c_int;
            RCCE_NP = self.size as c_int;
            let buffers = (&raw mut RCCE_comm_buffer).cast::<*mut u8>();
            for ue in 0..self.size {
                let mpb = if self.is_local(ue) { self.mpb(ue).addr(0) } else { std::ptr::null_mut() };
                buffers.add(ue as usize).write(mpb);
            }
        }
    }
}

/// `RCCE_COMM_WORLD`'s address, for the calls that take `RCCE_COMM *`.
pub fn world_ptr() -> *const u8 {
    (&raw const RCCE_COMM_WORLD).cast::<u8>()
}
