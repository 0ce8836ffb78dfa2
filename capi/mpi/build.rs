//! Writes a pkg-config file for the library this crate builds,
//! `target/<profile>/sccmpi/pkgconfig/sccmpi.pc` (and `mpi.pc` beside it, the name
//! build systems look for), naming absolute paths of this checkout.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=build.rs");
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let Some(profile) = out.ancestors().nth(3) else { return };
    let dir = profile.join("sccmpi").join("pkgconfig");
    let pc = format!(
        "libdir={}\nincludedir={}\n\nName: sccmpi\nDescription: MPI 3.1 (subset) on sccemu\nVersion: {}\n\
         Cflags: -I${{includedir}}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lsccmpi\n\
         Libs.private: -lm -lpthread -ldl -lrt -lutil -lgcc_s\n",
        profile.display(),
        manifest.join("include").display(),
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("sccmpi.pc"), &pc))
        .and_then(|_| std::fs::write(dir.join("mpi.pc"), &pc));
    if let Err(e) = written {
        println!("cargo:warning=cannot write {}: {e}", dir.display());
    }
}
