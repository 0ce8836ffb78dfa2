//! The profiling interface (MPI-3.1 section 14.2): every entry point of this library
//! is also callable by its `PMPI_` name, and a program (or a profiling library linked
//! before this one) may define `MPI_` functions of its own that call the `PMPI_` ones.
//!
//! So each entry point is exported as `PMPI_X` (`#[unsafe(export_name)]` in the
//! modules of `ffi`), and `MPI_X` is a weak symbol whose one instruction jumps to it,
//! with every argument still in place: a program's own `MPI_X` replaces it at link
//! time, in the static library (a strong definition beats a weak one) as in the shared
//! one (the executable's symbols come first). The build script writes one such
//! trampoline per `PMPI_` name it finds under `src/`, and the version script that
//! exports them from `libsccmpi.so`. The library never calls its own `MPI_` names, so
//! a profiler counts each of the program's calls once.

include!(concat!(env!("OUT_DIR"), "/pmpi_trampolines.rs"));
