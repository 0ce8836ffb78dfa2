//! The process's MPI state: the sccemu core it plays, the thread level, and whether
//! `MPI_Init` and `MPI_Finalize` have run.
//!
//! `MPI_Init` attaches to the job that `sccrun` started (or, run alone, re-runs the
//! program as a one-core job, MPI's "singleton init") and leaks the [`Core`], so that
//! every object built on it (communicators, windows, requests) lives as long as the
//! process, as MPI handles do. `MPI_Finalize` makes every later call an error; the
//! process leaves the job when it exits.
//!
//! Object tables live with their modules (`comm`, `datatype`, `request`, `win`, ...),
//! each under its own lock, so that a thread blocked in one call never holds a table
//! another thread needs (`MPI_THREAD_MULTIPLE`).

use std::ffi::c_int;
use std::sync::OnceLock;

use sccemu::Core;
use sccemu::sync::{AtomicU32, Ordering};

use crate::error::{MpiResult, class, fail};

/// `MPI_THREAD_MULTIPLE`: every level is provided.
pub const THREAD_MULTIPLE: c_int = 3;

/// What `MPI_Init` set up.
pub struct Mpi {
    /// The core this process plays, for the whole process.
    pub core: &'static Core,
    /// The thread level granted.
    pub thread_level: c_int,
    /// The thread that called `MPI_Init`.
    pub main_thread: std::thread::ThreadId,
}

static MPI: OnceLock<Mpi> = OnceLock::new();
// Relaxed: only this process's threads read it, and MPI requires the program to
// order its calls around `MPI_Finalize` itself.
static FINALIZED: AtomicU32 = AtomicU32::new(0);

/// Records the state once; a second `MPI_Init` is refused.
pub fn install(mpi: Mpi) -> MpiResult<&'static Mpi> {
    if MPI.set(mpi).is_err() {
        return fail(class::OTHER, "MPI_Init was called twice");
    }
    Ok(MPI.get().expect("just set"))
}

/// The state, between `MPI_Init` and `MPI_Finalize`.
pub fn mpi() -> MpiResult<&'static Mpi> {
    match MPI.get() {
        _ if FINALIZED.load(Ordering::Relaxed) != 0 => fail(class::OTHER, "called after MPI_Finalize"),
        Some(m) => Ok(m),
        None => fail(class::OTHER, "called before MPI_Init"),
    }
}

/// The state even after `MPI_Finalize` (for the error paths that report).
pub fn installed() -> Option<&'static Mpi> {
    MPI.get()
}

/// Whether `MPI_Init` has run.
pub fn initialized() -> bool {
    MPI.get().is_some()
}

/// Whether `MPI_Finalize` has run.
pub fn finalized() -> bool {
    FINALIZED.load(Ordering::Relaxed) != 0
}

/// Marks the state finalized.
pub fn finalize() {
    FINALIZED.store(1, Ordering::Relaxed);
}
