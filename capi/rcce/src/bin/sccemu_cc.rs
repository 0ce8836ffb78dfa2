//! `sccemu-cc`: the C compiler for RCCE programs, in the place of the SCC's icc.
//!
//! `sccemu-cc [-show] CC-ARGS...` runs `$CC` (default `cc`) with RCCE's include
//! directory first and, when it links, `librcce.a`, `-lm` and the system libraries the
//! Rust runtime needs after the objects (see `rcce::launcher`). The archive is
//! `$SCCEMU_RCCE_LIB`, or the newer of this program's directory's and its `deps/`'s.
//! icc-only flags that gcc and clang refuse are dropped silently. `-show` prints the
//! command instead of running it.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "-show");
    args.retain(|a| a != "-show");
    let dir =
        std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.to_path_buf())).unwrap_or_default();
    let mut cmd = match rcce::launcher::compile_command(&args, &dir) {
        Ok(cmd) => cmd,
        Err(e) => {
            eprintln!("sccemu-cc: {e}");
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
            eprintln!("sccemu-cc: cannot run {}: {e}", cmd.get_program().to_string_lossy());
            ExitCode::from(2)
        }
    }
}
