//! `sccmpicc`: the C compiler wrapper for MPI programs on sccemu, like `mpicc`.
//!
//! `sccmpicc [-show] CC-ARGS...` runs `$SCCEMU_MPICC_CC`, `$CC` or `cc` with `mpi.h`'s
//! directory first and, when it links, `libsccmpi.a` and the system libraries after
//! the objects (see `sccmpi::launcher`). `-show` prints the command instead.

fn main() -> std::process::ExitCode {
    sccmpi::launcher::compiler_main("sccmpicc", false).into()
}
