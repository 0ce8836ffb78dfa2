//! Start-up and shut-down, the error interface and memory.

use sccemu::job::say;
use std::ffi::{c_char, c_int, c_void};

use crate::error::{MpiError, class, fail};
use crate::ffi::{WORLD, c, entry};
use crate::{comm, info, state};

fn init(required: c_int) -> crate::error::MpiResult<c_int> {
    if state::initialized() {
        return fail(class::OTHER, "MPI is already initialized");
    }
    let core = match sccemu::Core::attach() {
        Ok(core) => core,
        Err(sccemu::segment::AttachError::NotInJob(_)) => crate::launcher::run_as_singleton(),
        Err(e) => return fail(class::OTHER, format!("cannot join the sccemu job: {e}")),
    };
    let core: &'static sccemu::Core = Box::leak(Box::new(core));
    let provided = required.clamp(0, state::THREAD_MULTIPLE);
    crate::ffi::registry::set_multiple(provided == state::THREAD_MULTIPLE);
    let mpi = state::install(state::Mpi {
        core,
        thread_level: provided,
        main_thread: std::thread::current().id(),
    })?;
    comm::init_predefined(mpi.core)?;
    // The MPB window pool (`sccemu::segment::mpb_pool`), with every byte of the MPB
    // that the two-sided channels left: MPB windows (`sccemu_placement=mpb`) on any
    // communicator take their parts from it. Collective over the job, as MPI_Init is.
    // Across nodes there is no pool (it lives in the shared heap, which is one node's
    // alone): every rank decides this alike from the job's config, so none waits, and
    // MPB windows are refused there anyway.
    let free = if mpi.core.context().spans_nodes() { 0 } else { mpi.core.mpb_largest_free() };
    if free > 0 {
        mpi.core.reserve_mpb_pool(free).map_err(|e| MpiError::new(class::NO_MEM, e.to_string()))?;
    }
    Ok(provided)
}

/// `MPI_Init`.
///
/// # Safety
/// `argc` and `argv` are null or `main`'s (they are not read).
#[unsafe(export_name = "PMPI_Init")]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    entry("MPI_Init", WORLD, || init(0).map(drop))
}

/// `MPI_Init_thread`: every level up to `MPI_THREAD_MULTIPLE` is provided.
///
/// # Safety
/// As [`MPI_Init`]; `provided` points to an int.
#[unsafe(export_name = "PMPI_Init_thread")]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    entry("MPI_Init_thread", WORLD, || {
        if !(0..=state::THREAD_MULTIPLE).contains(&required) {
            return fail(class::ARG, format!("thread level {required} is none of MPI_THREAD_*"));
        }
        let level = init(required)?;
        c!(out(provided, level, "provided"))
    })
}

/// `MPI_Initialized`.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_Initialized")]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    entry("MPI_Initialized", WORLD, || c!(out(flag, state::initialized() as c_int, "flag")))
}

/// `MPI_Finalized`.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_Finalized")]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    entry("MPI_Finalized", WORLD, || c!(out(flag, state::finalized() as c_int, "flag")))
}

/// `MPI_Finalize`: a barrier of `MPI_COMM_WORLD` (so that no process leaves while
/// another may still target its windows), then every later call is an error.
#[unsafe(export_name = "PMPI_Finalize")]
pub extern "C" fn MPI_Finalize() -> c_int {
    entry("MPI_Finalize", WORLD, || {
        // Libraries hook their clean-up on MPI_COMM_SELF's attributes: deleted first.
        crate::ffi::attr::keyval::delete_all(comm::SELF)?;
        crate::ffi::attr::keyval::delete_all(comm::WORLD)?;
        crate::request::wait_detached()?;
        crate::ffi::modes::drain()?;
        let mpi = state::mpi()?;
        comm::lookup(comm::WORLD)?.coll().barrier().map_err(comm::coll_error)?;
        state::finalize();
        mpi.core.leave();
        Ok(())
    })
}

/// `MPI_Query_thread`.
///
/// # Safety
/// `provided` points to an int.
#[unsafe(export_name = "PMPI_Query_thread")]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    entry("MPI_Query_thread", WORLD, || c!(out(provided, state::mpi()?.thread_level, "provided")))
}

/// `MPI_Is_thread_main`.
///
/// # Safety
/// `flag` points to an int.
#[unsafe(export_name = "PMPI_Is_thread_main")]
pub unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    entry("MPI_Is_thread_main", WORLD, || {
        c!(out(flag, (state::mpi()?.main_thread == std::thread::current().id()) as c_int, "flag"))
    })
}

/// `MPI_Abort`: aborts the whole job (whatever `comm`), exiting with `errorcode`.
#[unsafe(export_name = "PMPI_Abort")]
pub extern "C" fn MPI_Abort(_comm: c_int, errorcode: c_int) -> c_int {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    match state::installed() {
        Some(mpi) => {
            say(&format!("sccemu MPI: MPI_Abort({errorcode}) on rank {}\n", mpi.core.rank()));
            mpi.core.abort(errorcode)
        }
        None => std::process::exit(errorcode),
    }
}

/// `MPI_Wtime`: seconds since an arbitrary point of this process's past (virtual
/// seconds since the job started, under `sccrun --timing`).
#[unsafe(export_name = "PMPI_Wtime")]
pub extern "C" fn MPI_Wtime() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    sccemu::timing::wtime()
        .unwrap_or_else(|| START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64())
}

/// `MPI_Wtick`: `MPI_Wtime`'s resolution (a nanosecond clock; a picosecond one in
/// virtual time).
#[unsafe(export_name = "PMPI_Wtick")]
pub extern "C" fn MPI_Wtick() -> f64 {
    if sccemu::timing::clock().is_some() { 1e-12 } else { 1e-9 }
}

/// `MPI_Pcontrol`: how much sccemu's profiler, the virtual-time trace (`sccmpiexec
/// --timing scc --trace FILE`), records of this process from now on: nothing at level 0
/// (or below), every operation that takes virtual time at 1 (the start) and 2 (a flush,
/// which changes nothing: the trace is written at exit), and also those that took none
/// at 3 and above; each change is marked on the core's track. Without a trace there is
/// nothing to control, and the call only returns. A profiling layer of the program's
/// own sees the call first (`ffi::pmpi`).
///
/// `mpi.h` declares it variadic, as MPI does; the further arguments are not read (on
/// x86_64 and aarch64 a variadic call passes `level` where this function reads it).
#[unsafe(export_name = "PMPI_Pcontrol")]
pub extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    entry("MPI_Pcontrol", WORLD, || {
        state::mpi()?;
        if let Some(clock) = sccemu::timing::clock() {
            clock.set_trace_level(u32::try_from(level).unwrap_or(0));
        }
        Ok(())
    })
}

/// `MPI_Get_processor_name`: the emulated core, e.g. `sccemu core 5 (tile 2)`.
///
/// # Safety
/// `name` holds `MPI_MAX_PROCESSOR_NAME` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Get_processor_name")]
pub unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
    entry("MPI_Get_processor_name", WORLD, || {
        let core = state::mpi()?.core;
        let id = core.core_id(core.rank()).unwrap_or(core.rank());
        c!(out_string(name, resultlen, 256, &format!("sccemu core {id} (tile {})", id / 2)))
    })
}

/// `MPI_Get_version`.
///
/// # Safety
/// Both point to ints.
#[unsafe(export_name = "PMPI_Get_version")]
pub unsafe extern "C" fn MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    entry("MPI_Get_version", WORLD, || {
        c!(out(version, 3, "version"))?;
        c!(out(subversion, 1, "subversion"))
    })
}

/// `MPI_Get_library_version`.
///
/// # Safety
/// `version` holds `MPI_MAX_LIBRARY_VERSION_STRING` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Get_library_version")]
pub unsafe extern "C" fn MPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
    entry("MPI_Get_library_version", WORLD, || {
        let text = concat!("sccemu MPI ", env!("CARGO_PKG_VERSION"), " (MPI 3.1 subset on sccemu)");
        c!(out_string(version, resultlen, 256, text))
    })
}

/// `MPI_Error_string`.
///
/// # Safety
/// `string` holds `MPI_MAX_ERROR_STRING` chars; `resultlen` points to an int.
#[unsafe(export_name = "PMPI_Error_string")]
pub unsafe extern "C" fn MPI_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    entry("MPI_Error_string", WORLD, || {
        let text = crate::error::text_of(errorcode)
            .ok_or_else(|| MpiError::new(class::ARG, format!("{errorcode} is not an error code")))?;
        c!(out_string(string, resultlen, 512, &text))
    })
}

/// `MPI_Error_class`.
///
/// # Safety
/// `errorclass` points to an int.
#[unsafe(export_name = "PMPI_Error_class")]
pub unsafe extern "C" fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    entry("MPI_Error_class", WORLD, || {
        let c = crate::error::class_of(errorcode)
            .ok_or_else(|| MpiError::new(class::ARG, format!("{errorcode} is not an error code")))?;
        c!(out(errorclass, c, "errorclass"))
    })
}

/// `MPI_Add_error_class`: a new error class of the program's (`crate::user_errors`).
///
/// # Safety
/// `errorclass` points to an int.
#[unsafe(export_name = "PMPI_Add_error_class")]
pub unsafe extern "C" fn MPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    entry("MPI_Add_error_class", WORLD, || {
        c!(out(errorclass, crate::user_errors::add_class()?, "errorclass"))
    })
}

/// `MPI_Add_error_code`: a new error code of `errorclass`.
///
/// # Safety
/// `errorcode` points to an int.
#[unsafe(export_name = "PMPI_Add_error_code")]
pub unsafe extern "C" fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    entry("MPI_Add_error_code", WORLD, || {
        c!(out(errorcode, crate::user_errors::add_code(errorclass)?, "errorcode"))
    })
}

/// `MPI_Add_error_string`: the text `MPI_Error_string` gives for a class or code the
/// program added.
///
/// # Safety
/// `string` is a NUL-terminated string.
#[unsafe(export_name = "PMPI_Add_error_string")]
pub unsafe extern "C" fn MPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    entry("MPI_Add_error_string", WORLD, || {
        crate::user_errors::set_text(errorcode, &c!(string(string, "string"))?)
    })
}

/// `MPI_Alloc_mem`: memory in the job's shared segment when it fits, so that a window
/// created over it (`MPI_Win_create`) is remotely accessible in place.
///
/// # Safety
/// `baseptr` points to a `void *`.
#[unsafe(export_name = "PMPI_Alloc_mem")]
pub unsafe extern "C" fn MPI_Alloc_mem(size: isize, info: c_int, baseptr: *mut c_void) -> c_int {
    entry("MPI_Alloc_mem", WORLD, || {
        info::pairs(info)?;
        let size = usize::try_from(size).map_err(|_| MpiError::new(class::SIZE, format!("size {size}")))?;
        let p = crate::win::alloc_mem(size)?;
        c!(out(baseptr.cast::<*mut c_void>(), p, "baseptr"))
    })
}

/// `MPI_Free_mem`.
///
/// # Safety
/// `base` came from `MPI_Alloc_mem` and is not used after.
#[unsafe(export_name = "PMPI_Free_mem")]
pub unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    entry("MPI_Free_mem", WORLD, || crate::win::free_mem(base))
}
