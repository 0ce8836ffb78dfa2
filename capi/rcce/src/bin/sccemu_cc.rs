//! `sccemu-cc`: the C compiler for RCCE programs, in the place of the SCC's icc.
//!
//! `sccemu-cc [-show] CC-ARGS...` runs `$CC` (default `cc`) with RCCE's include
//! directory first and, when it links, `librcce.a`, `-lm` and the system libraries the
//! Rust runtime needs after the objects. The archive is `$SCCEMU_RCCE_LIB`, or the
//! newer of this program's directory's and its `deps/`'s (where `cargo test` leaves
//! it). icc-only flags that gcc and clang refuse are dropped silently. `-show` prints
//! the command instead of running it.

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

/// The archive to link (see the module docs).
fn archive() -> Option<PathBuf> {
    if let Some(lib) = std::env::var_os("SCCEMU_RCCE_LIB") {
        return Some(lib.into());
    }
    let dir = std::env::current_exe().ok()?.parent()?.to_path_buf();
    let built = |p: PathBuf| Some((p.metadata().ok()?.modified().ok()?, p));
    let found =
        [dir.join("librcce.a"), dir.join("deps").join("librcce.a")].into_iter().filter_map(built).max();
    found.map(|(_, p)| p)
}

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
        let Some(archive) = archive() else {
            eprintln!("sccemu-cc: librcce.a is missing; build it with `cargo build -p sccemu-rcce`");
            return ExitCode::from(2);
        };
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
