//! Linking C programs against one of sccemu's static C libraries (`librcce.a`,
//! `libsccmpi.a`): what the compiler wrappers `sccemu-cc` and `sccmpicc` add after the
//! program's own arguments, and where they find the archive.
//!
//! A Rust static library needs the system libraries `rustc --print native-static-libs`
//! names, after it on the command line; and, as rustc's own links do, the linker drops
//! the sections no program reaches (the Rust code is compiled a section per function:
//! a debug build's program shrinks from 24 to 16 MB).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags after which the compiler does not link.
const NO_LINK: &[&str] = &["-c", "-S", "-E", "-M", "-MM", "-fsyntax-only"];
/// What a Rust static library needs from the system.
const SYSTEM_LIBS: &[&str] = &["-lm", "-lpthread", "-ldl", "-lrt", "-lutil", "-lgcc_s", "-lc"];
/// Drops the archive's unreached code.
const DROP_UNREACHED: &str = "-Wl,--gc-sections";

/// Whether a compiler run with `args` links (it has inputs and no flag that stops it
/// before the link).
pub fn links<S: AsRef<str>>(args: &[S]) -> bool {
    !args.is_empty() && !args.iter().any(|a| NO_LINK.contains(&a.as_ref()))
}

/// Appends `archive` and what it needs to a compiler command that links.
pub fn link_archive(cmd: &mut Command, archive: &Path) {
    cmd.arg(archive).args(SYSTEM_LIBS).arg(DROP_UNREACHED);
}

/// The archive to link: the path in environment variable `override_var`, or the newer
/// `file` of `dir` and of `dir/deps` (where `cargo test` leaves it).
pub fn archive(dir: &Path, file: &str, override_var: &str) -> Option<PathBuf> {
    if let Some(lib) = std::env::var_os(override_var) {
        return Some(lib.into());
    }
    let built = |p: PathBuf| Some((p.metadata().ok()?.modified().ok()?, p));
    [dir.join(file), dir.join("deps").join(file)].into_iter().filter_map(built).max().map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiling_only_does_not_link() {
        assert!(links(&["prog.c", "-o", "prog"]));
        assert!(!links(&["-c", "prog.c"]));
        assert!(!links::<&str>(&[]));
    }
}
