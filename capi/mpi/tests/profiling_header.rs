//! The profiling interface stays whole as entry points are added: `mpi.h` declares
//! every `MPI_` function under its `PMPI_` name too, with the same parameters, and the
//! library exports exactly the functions `mpi.h` declares, each as `PMPI_` (with the
//! weak `MPI_` trampoline the build script adds), none as a plain `MPI_` symbol that a
//! program's own definition would clash with. `profiling.c` checks the behaviour.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every prototype in `header` whose function name starts with `prefix`, with its
/// whitespace collapsed: (name, the prototype with the name replaced by `NAME`).
fn prototypes(header: &str, prefix: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for statement in header.split(';') {
        let one = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        // Skip the comments and directives before the declaration itself.
        let Some(start) =
            ["int ", "double ", "MPI_Aint "].iter().filter_map(|ty| one.find(&format!("{ty}{prefix}"))).min()
        else {
            continue;
        };
        let decl = &one[start..];
        let Some(open) = decl.find('(') else { continue };
        let (head, params) = decl.split_at(open);
        let Some((ret, name)) = head.rsplit_once(' ') else { continue };
        if name.starts_with(prefix) && !one[..start].contains("typedef") {
            found.push((name[prefix.len()..].to_owned(), format!("{ret} NAME{params}")));
        }
    }
    found
}

/// The `X` of every `export_name = "PMPI_X"` under `dir`, and every `fn MPI_X` that a
/// `#[unsafe(no_mangle)]` exports under its own name.
fn exports(dir: &Path, pmpi: &mut BTreeSet<String>, plain: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            exports(&path, pmpi, plain);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if let Some(rest) = line.split("export_name = \"PMPI_").nth(1) {
                pmpi.insert(rest.split('"').next().unwrap().to_owned());
            }
            if line.trim() == "#[unsafe(no_mangle)]" {
                let next_fn = lines[i + 1..].iter().take(5).find_map(|l| l.split("fn ").nth(1));
                if let Some(name) = next_fn.filter(|n| n.starts_with("MPI_")) {
                    plain.push(format!("{}: {}", path.display(), name.split('(').next().unwrap()));
                }
            }
        }
    }
}

#[test]
fn every_mpi_function_has_its_pmpi_twin() {
    let header = std::fs::read_to_string(crate_dir().join("include/mpi.h")).unwrap();
    let mpi = prototypes(&header, "MPI_");
    let pmpi = prototypes(&header, "PMPI_");
    let missing: Vec<String> = mpi
        .iter()
        .filter(|p| !pmpi.contains(p))
        .map(|(name, proto)| proto.replacen("NAME", &format!("PMPI_{name}"), 1) + ";")
        .collect();
    let stray: Vec<&String> = pmpi.iter().filter(|p| !mpi.contains(p)).map(|(name, _)| name).collect();
    assert!(
        missing.is_empty() && stray.is_empty(),
        "mpi.h's PMPI_ block is out of date; declare:\n{}\nand drop the PMPI_ twins of: {stray:?}",
        missing.join("\n")
    );
    assert!(mpi.len() > 250, "only {} prototypes found: the parser lost its way", mpi.len());
}

#[test]
fn the_library_exports_what_mpi_h_declares_under_pmpi_names() {
    let header = std::fs::read_to_string(crate_dir().join("include/mpi.h")).unwrap();
    let declared: BTreeSet<String> = prototypes(&header, "MPI_").into_iter().map(|(name, _)| name).collect();
    let (mut exported, mut plain) = (BTreeSet::new(), Vec::new());
    exports(&crate_dir().join("src"), &mut exported, &mut plain);
    assert!(
        plain.is_empty(),
        "exported under their MPI_ names (use #[unsafe(export_name = \"PMPI_...\")]): {plain:?}"
    );
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    let unexported: Vec<_> = declared.difference(&exported).collect();
    assert!(undeclared.is_empty(), "exported but not in mpi.h: {undeclared:?}");
    assert!(unexported.is_empty(), "in mpi.h but not exported: {unexported:?}");
}
