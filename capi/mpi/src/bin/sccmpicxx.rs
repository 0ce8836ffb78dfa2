//! `sccmpicxx`: `sccmpicc` for C++ (`$CXX` or `c++`), like `mpicxx`.

fn main() -> std::process::ExitCode {
    sccmpi::launcher::compiler_main("sccmpicxx", true).into()
}
