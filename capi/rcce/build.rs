//! Writes what C build systems need next to the library this crate builds, in
//! `target/<profile>/rcce/`: the RCCE make include (`common/symbols`, so that an RCCE
//! application builds with `make RCCEROOT=target/<profile>/rcce`) and a pkg-config file
//! (`pkgconfig/rcce.pc`). Both name absolute paths of this checkout.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let Some(profile) = out.ancestors().nth(3) else { return };
    let root = profile.join("rcce");
    let include = manifest.join("include");
    let template = manifest.join("make").join("symbols.in");
    println!("cargo:rerun-if-changed={}", template.display());
    println!("cargo:rerun-if-changed=build.rs");
    let path = |p: &Path| p.display().to_string();
    let symbols = std::fs::read_to_string(&template)
        .unwrap_or_default()
        .replace("@SCCEMU_CC@", &path(&profile.join("sccemu-cc")))
        .replace("@RCCE_INCLUDE@", &path(&include))
        .replace("@RCCE_ARCHIVE@", &path(&profile.join("librcce.a")));
    let pc = format!(
        "libdir={}\nincludedir={}\n\nName: rcce\nDescription: RCCE 1.0.13's interface on sccemu\nVersion: {}\n\
         Cflags: -I${{includedir}}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lrcce\n\
         Libs.private: -lm -lpthread -ldl -lrt -lutil -lgcc_s\n",
        path(profile),
        path(&include),
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    for (file, text) in
        [(root.join("common").join("symbols"), symbols), (root.join("pkgconfig").join("rcce.pc"), pc)]
    {
        let written =
            file.parent().map(std::fs::create_dir_all).transpose().and_then(|_| std::fs::write(&file, text));
        if let Err(e) = written {
            println!("cargo:warning=cannot write {}: {e}", file.display());
        }
    }
}
