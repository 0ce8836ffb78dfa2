//! `sccmpicc`: the C compiler wrapper for MPI programs on sccemu, like `mpicc`.
//!
//! `sccmpicc [-show] CC-ARGS...` runs `$SCCEMU_MPICC_CC`, `$CC` or `cc` with `mpi.h`'s
//! directory first and, when it links, `libsccmpi.a` and the system libraries after
//! the objects (see `sccmpi::launcher`). Invoked as `sccmpicxx` (a link or copy of the
//! same program), it runs `$CXX` or `c++`. `-show` prints the command instead.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "-show");
    args.retain(|a| a != "-show");
    let me = std::env::current_exe().unwrap_or_default();
    let cxx = std::env::args().next().is_some_and(|a| a.ends_with("cxx") || a.ends_with("c++"));
    let compiler = if cxx {
        std::env::var("CXX").unwrap_or_else(|_| "c++".into())
    } else {
        std::env::var("SCCEMU_MPICC_CC").or_else(|_| std::env::var("CC")).unwrap_or_else(|_| "cc".into())
    };
    let dir = me.parent().map(|d| d.to_path_buf()).unwrap_or_default();
    let mut cmd = match sccmpi::launcher::compile_command(&compiler, &args, &dir) {
        Ok(cmd) => cmd,
        Err(e) => {
            eprintln!("sccmpicc: {e}");
            return ExitCode::from(2);
        }
    };
    if show {
        let words: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        println!("{}", words.join(" "));
        return ExitCode::SUCCESS;
    }
    match cmd.status() {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("sccmpicc: cannot run {}: {e}", cmd.get_program().to_string_lossy());
            ExitCode::from(2)
        }
    }
}
