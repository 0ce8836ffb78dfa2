//! The virtual-time trace (`sccrun --trace FILE`): one track per core, a slice per
//! operation, flow arrows from a message's send to its receive, in the Chrome
//! trace-event JSON format that Perfetto and chrome://tracing open.
//!
//! Each core keeps its events in memory and writes them, one JSON object a line, to
//! `FILE.<rank>` when it leaves the job; the launcher then merges the cores' files into
//! `FILE` ([`merge`]). Times are virtual microseconds.
//!
//! The program sets how much is recorded (`MPI_Pcontrol`, [`Trace::set_level`]), with
//! MPI's levels: at 0 nothing; at 1 (the start) every operation that takes virtual time
//! or sends a message; 2 asks to flush, which changes nothing here (the trace is
//! written at exit) and records as 1 does; sccemu's own level 3 and above also records
//! operations that took no time. Each change is an instant event on the core's track,
//! so the gaps it leaves are visible.

use std::fmt::Write as _;
use std::path::Path;

use crate::timing::clock::Ps;

/// What an operation's time is, in the trace and the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// Computation between library calls.
    Compute,
    /// A two-sided send.
    Send,
    /// A two-sided receive.
    Recv,
    /// A put (window or MPB).
    Put,
    /// A get (window or MPB).
    Get,
    /// An atomic or accumulate.
    Atomic,
    /// A flag write.
    Flag,
    /// A wait for a flag.
    FlagWait,
    /// A lock, test-and-set or epoch wait.
    Lock,
    /// A barrier, fence or other collective synchronisation.
    Sync,
    /// A collective's data movement.
    Collective,
}

impl Category {
    /// Its name in the trace.
    pub fn name(self) -> &'static str {
        match self {
            Category::Compute => "compute",
            Category::Send => "send",
            Category::Recv => "recv",
            Category::Put => "put",
            Category::Get => "get",
            Category::Atomic => "atomic",
            Category::Flag => "flag",
            Category::FlagWait => "flag wait",
            Category::Lock => "lock",
            Category::Sync => "sync",
            Category::Collective => "collective",
        }
    }

    /// Every category, for reports.
    pub const ALL: [Category; 11] = [
        Category::Compute,
        Category::Send,
        Category::Recv,
        Category::Put,
        Category::Get,
        Category::Atomic,
        Category::Flag,
        Category::FlagWait,
        Category::Lock,
        Category::Sync,
        Category::Collective,
    ];

    /// The category of a trace name.
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }
}

struct Event {
    category: Category,
    name: &'static str,
    start: Ps,
    dur: Ps,
    flow: Option<(u64, bool)>,
}

/// One core's events.
pub struct Trace {
    events: Vec<Event>,
    /// How much is recorded (module docs).
    level: u32,
    /// The level changes: when, and to what.
    levels: Vec<(Ps, u32)>,
}

impl Default for Trace {
    fn default() -> Trace {
        Trace { events: Vec::new(), level: 1, levels: Vec::new() }
    }
}

fn us(ps: Ps) -> f64 {
    ps as f64 / 1e6
}

impl Trace {
    /// Records an operation, if the level asks for it (module docs).
    pub fn push(&mut self, category: Category, name: &'static str, start: Ps, dur: Ps, flow: Option<(u64, bool)>) {
        let wanted = match self.level {
            0 => false,
            1 | 2 => dur > 0 || flow.is_some(),
            _ => true,
        };
        if wanted {
            self.events.push(Event { category, name, start, dur, flow });
        }
    }

    /// Records from `at` on at `level` (module docs).
    pub fn set_level(&mut self, level: u32, at: Ps) {
        self.level = level;
        self.levels.push((at, level));
    }

    /// The events as JSON objects, one a line, on track `rank`.
    pub fn json_lines(&self, rank: u32) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"{{"ph":"M","name":"thread_name","pid":0,"tid":{rank},"args":{{"name":"core {rank}"}}}}"#
        );
        for &(at, level) in &self.levels {
            let _ = writeln!(
                out,
                r#"{{"ph":"i","name":"profiling level {level}","cat":"profiling","s":"t","pid":0,"tid":{rank},"ts":{:.6}}}"#,
                us(at)
            );
        }
        for e in &self.events {
            let _ = writeln!(
                out,
                r#"{{"ph":"X","name":"{}","cat":"{}","pid":0,"tid":{rank},"ts":{:.6},"dur":{:.6}}}"#,
                e.name,
                e.category.name(),
                us(e.start),
                us(e.dur)
            );
            if let Some((id, starts)) = e.flow {
                // A flow starts inside the send's slice and ends at the receive's end.
                let (ph, ts) = if starts { ("s", e.start) } else { ("f", e.start + e.dur) };
                let bind = if starts { "" } else { r#","bp":"e""# };
                let _ = writeln!(
                    out,
                    r#"{{"ph":"{ph}","name":"message","cat":"message","id":{id},"pid":0,"tid":{rank},"ts":{:.6}{bind}}}"#,
                    us(ts)
                );
            }
        }
        out
    }
}

/// Where core `rank` writes its part of the trace `file`.
pub fn part_path(file: &Path, rank: u32) -> std::path::PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".{rank}"));
    name.into()
}

/// Where node `node` of a job across nodes merges its cores' parts of `file`.
pub fn node_path(file: &Path, node: u32) -> std::path::PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(format!(".node{node}"));
    name.into()
}

/// The first line of every trace this module writes; each event follows on a line of
/// its own.
const HEAD: &str = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

fn write_trace(file: &Path, events: &[String]) -> std::io::Result<()> {
    std::fs::write(file, format!("{HEAD}\n{}\n]}}\n", events.join(",\n")))
}

/// Merges the parts of the cores `ranks` of `file` into the trace `into`, removing the
/// parts; a missing part (a core that died) is skipped.
pub fn merge(file: &Path, ranks: std::ops::Range<u32>, into: &Path) -> std::io::Result<()> {
    let mut events = Vec::new();
    for rank in ranks {
        let part = part_path(file, rank);
        if let Ok(text) = std::fs::read_to_string(&part) {
            events.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned));
            let _ = std::fs::remove_file(&part);
        }
    }
    write_trace(into, &events)
}

/// Merges the traces of `file`'s `nodes` nodes ([`node_path`], which their launchers
/// wrote with [`merge`]) into `file`, removing them; a missing one is skipped.
pub fn merge_nodes(file: &Path, nodes: u32) -> std::io::Result<()> {
    let mut events = Vec::new();
    for node in 0..nodes {
        let path = node_path(file, node);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let body = text.lines().filter(|l| *l != HEAD && *l != "]}" && !l.is_empty());
            events.extend(body.map(|l| l.trim_end_matches(',').to_owned()));
            let _ = std::fs::remove_file(&path);
        }
    }
    write_trace(file, &events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_become_chrome_trace_objects_with_flows() {
        let mut t = Trace::default();
        t.push(Category::Send, "send", 1_000_000, 500_000, Some((7, true)));
        t.push(Category::Compute, "compute", 2_000_000, 1_000, None);
        let lines = t.json_lines(3);
        assert!(lines.contains(r#""name":"core 3""#));
        assert!(lines.contains(r#""ph":"X","name":"send","cat":"send","pid":0,"tid":3,"ts":1.000000,"dur":0.500000"#));
        assert!(lines.contains(r#""ph":"s","name":"message","cat":"message","id":7"#));
        let dir = std::env::temp_dir().join(format!("sccemu-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.json");
        std::fs::write(part_path(&file, 0), &lines).unwrap();
        merge(&file, 0..2, &file).unwrap();
        let merged: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(merged["traceEvents"].as_array().unwrap().len(), 4);
        assert!(!part_path(&file, 0).exists());
        // Two nodes' traces, one of ranks 0 and 1 and one of rank 2, into one.
        std::fs::write(part_path(&file, 0), &lines).unwrap();
        std::fs::write(part_path(&file, 2), t.json_lines(2)).unwrap();
        merge(&file, 0..2, &node_path(&file, 0)).unwrap();
        merge(&file, 2..3, &node_path(&file, 1)).unwrap();
        merge_nodes(&file, 2).unwrap();
        let merged: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(merged["traceEvents"].as_array().unwrap().len(), 8);
        assert!(!node_path(&file, 0).exists() && !node_path(&file, 1).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
