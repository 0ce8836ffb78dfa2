//! The layering of `src/` stays true: every `crate::X` a file names points to its own
//! top-level module or to one below it (docs/ARCHITECTURE.md), so there is no import
//! cycle. A stricter twin of `layers.py`, which only looks for cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module and the modules it may import.
const MAY_USE: &[(&str, &[&str])] = &[
    ("sync", &[]),
    ("protocol", &["sync"]),
    ("segment", &["protocol", "sync"]),
    ("timing", &["segment", "protocol", "sync"]),
    ("p2p", &["timing", "segment", "protocol", "sync"]),
    ("rma", &["timing", "segment", "protocol", "sync"]),
    ("coll", &["p2p", "rma", "timing", "segment", "protocol", "sync"]),
    ("core", &["coll", "p2p", "rma", "timing", "segment", "protocol", "sync"]),
    ("job", &["core", "coll", "p2p", "rma", "timing", "segment", "protocol", "sync"]),
];

/// Top-level modules named by `crate::` paths in `text`, comments left out.
fn referenced(text: &str) -> BTreeSet<String> {
    let code: String =
        text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                names.insert(first_segment(part.trim()));
            }
        } else {
            names.insert(first_segment(rest));
        }
    }
    names
}

fn first_segment(path: &str) -> String {
    path.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn imports_run_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = MAY_USE.iter().copied().collect();
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut violations = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        seen.insert(top.clone());
        let Some(may) = allowed.get(top.as_str()) else {
            violations
                .push(format!("{}: top-level module `{top}` has no place in the layers", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for name in referenced(&text) {
            if name != top && allowed.contains_key(name.as_str()) && !may.contains(&name.as_str()) {
                violations
                    .push(format!("{}: `{top}` imports `{name}`, which is not below it", rel.display()));
            }
        }
    }
    assert!(violations.is_empty(), "layering broken:\n{}", violations.join("\n"));
    assert_eq!(seen.len(), MAY_USE.len(), "every layer exists: {seen:?}");
}

#[test]
fn an_upward_import_is_seen() {
    let text = "use crate::segment::CoreContext;\nuse crate::{core::Core, sync::Ordering};\n// crate::job\n";
    let names = referenced(text);
    assert_eq!(names, ["core", "segment", "sync"].iter().map(|s| s.to_string()).collect());
}
