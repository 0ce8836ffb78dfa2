//! `sccemu-cc`: the C compiler for RCCE programs, in the place of the SCC's icc.
//!
//! `sccemu-cc [-show] CC-ARGS...` runs `$CC` (default `cc`) with RCCE's include
//! directory first and, when it links, `librcce.a` (from this program's own directory),
//! `-lm` and the system libraries the Rust runtime needs after the objects. icc-only
//! flags that gcc and clang refuse are dropped silently. `-show` prints the command
//! instead of running it.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// icc flags RCCE Makefiles pass that other compilers refuse.
const ICC_ONLY: &[&str] = &[
    "-restrict",
    "-fno-alias",
    "-fno-fnalias",
    "-no-multibyte-chars",
    "-static-intel",
    "-openmp",
    "-mcpu=pentium",
];
/// Flags after which the compiler does not link.
const NO_LINK: &[&str] = &["-c", "-S", "-E", "-M", "-MM", "-fsyntax-only"];
/// What a Rust static library needs from the system (`rustc --print native-static-libs`).
const SYSTEM_LIBS: &[&str] = &["-lm", "-lpthread", "-ldl", "-lrt", "-lutil", "-lgcc_s", "-lc"];

fn main() -> ExitCode {
    let mut show = false;
    let mut args: Vec<String> = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "-show" => show = true,
            a if ICC_ONLY.contains(&a) => {}
            _ => args.push(arg),
        }
    }
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let links = !args.iter().any(|a| NO_LINK.contains(&a.as_str())) && !args.is_empty();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.arg(format!("-I{}", include.display())).args(&args);
    if links {
        let dir =
            std::env::current_exe().ok().and_then(|e| e.parent().map(PathBuf::from)).unwrap_or_default();
        let archive = dir.join("librcce.a");
        if !archive.exists() && !show {
            eprintln!(
                "sccemu-cc: {} is missing; build it with `cargo build -p sccemu-rcce`",
                archive.display()
            );
            return ExitCode::from(2);
        }
        cmd.arg(archive).args(SYSTEM_LIBS);
    }
    if show {
        let words: Vec<String> =
            std::iter::once(cc).chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned())).collect();
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
