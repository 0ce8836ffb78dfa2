//! `report.md`: machine metadata, then per suite its plots, a table of every figure
//! and the ratios sccemu/MPI. Every ratio divides two host times from this same run;
//! SMPI's figures are virtual times and get columns of their own, in no ratio. A ratio
//! whose two measurements saw the cache-line probe more than 2x apart is flagged
//! (`drift`).

use std::fmt::Write as _;
use std::path::Path;

use sccemu_benches::measure::Row;

use super::catalog::Baseline;
use super::metadata::Metadata;
use super::peer_run::Incident;

mod drift;
mod mpi_layer;
mod ratios;

pub use drift::Probe;

use ratios::ratio_text;

/// Where sccemu's side of a suite stands.
#[derive(Clone, Debug)]
pub enum SccemuSide {
    Measured,
    NotRegistered,
    Failed(String),
}

/// Everything the report needs about one suite.
pub struct SuiteResult {
    pub name: String,
    pub about: String,
    /// What the suite's table of ratios divides by, if it has one.
    pub baseline: Option<Baseline>,
    /// Whether the suite has MPI peer programs (some compare sccemu with itself only).
    pub has_peers: bool,
    pub sccemu: SccemuSide,
    pub rows: Vec<Row>,
    /// Plot paths relative to the report.
    pub plots: Vec<String>,
    pub incidents: Vec<Incident>,
    /// The cache-line ping-pong's one-way µs at points of the suite (before sccemu,
    /// after it, before each peer run): how far the machine drifted while it ran.
    pub probes: Vec<Probe>,
    /// A suite that writes its own table (the harness's `scale` and `vtime`).
    pub custom: Option<String>,
}

const MPIS: [&str; 2] = ["mpich", "openmpi"];
/// Implementations whose figures are virtual times (SimGrid's SMPI).
const VIRTUAL: [&str; 1] = ["smpi"];

/// Whether `implementation`'s figures are virtual times, never divided by host times.
pub fn is_virtual(implementation: &str) -> bool {
    VIRTUAL.contains(&implementation)
}

/// Neither an MPI compared with nor a simulator: one of sccemu's.
fn is_ours(implementation: &str) -> bool {
    !MPIS.contains(&implementation) && !is_virtual(implementation)
}
/// sccemu's own MPI library's rows: one of "ours", also compared with the native API.
const SCCMPI: &str = "sccmpi";

pub fn render(meta: &Metadata, suites: &[SuiteResult]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# sccemu benchmark report\n");
    if meta.quick {
        let _ = writeln!(
            md,
            "**Quick mode:** tiny sizes and few repetitions; a smoke test, not a measurement.\n"
        );
    }
    machine(&mut md, meta);
    let _ = writeln!(
        md,
        "Times are µs per operation: the median over the repetitions, with the 10th–90th \
         percentile spread in brackets (and, where data moves, the bandwidth at the median \
         in MB/s), after warm-up rounds, with every rank pinned to a \
         core. † marks oversubscribed runs (more ranks than the {} CPUs available). A ratio \
         sccemu/MPI below 1 means sccemu is faster; both figures come from this run.\n",
        meta.cpus_available
    );
    let _ = writeln!(
        md,
        "The `smpi` columns are SimGrid SMPI's **virtual** times: the same C program run by \
         `smpirun` on the SCC platform that `sccrun smpi-platform` generates from sccemu's \
         chip description (µs on the emulated chip, not on this machine). They are a \
         prediction to set beside sccemu's `--timing scc`, never divided by host times.\n"
    );
    summary(&mut md, suites);
    // MPIs that were asked for but could not run: every suite says it lacks them.
    let unavailable: Vec<String> = meta
        .peers
        .iter()
        .filter(|(_, status)| status.starts_with("unavailable"))
        .map(|(mpi, status)| format!("{mpi}: not measured ({status})"))
        .collect();
    for suite in suites {
        section(&mut md, suite, &unavailable);
    }
    md
}

/// Per suite, how sccemu's best variant compares with the faster MPI, configuration by
/// configuration: the one-line answer to "how does it compare with my MPI here".
fn summary(md: &mut String, suites: &[SuiteResult]) {
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(
        md,
        "| suite | sccemu | configurations compared | sccemu faster than the faster MPI | \
         geometric mean of sccemu/faster MPI | flagged (probe moved > 2x) |\n|---|---|---:|---:|---:|---:|"
    );
    for suite in suites {
        let compared = best_ratios(&suite.rows);
        let flagged = compared.iter().filter(|(_, a, b)| drift::flagged(&suite.probes, a, b)).count();
        let ratios: Vec<f64> = compared.iter().map(|c| c.0).collect();
        let status = match &suite.sccemu {
            SccemuSide::Measured => "measured",
            SccemuSide::NotRegistered => "not registered",
            SccemuSide::Failed(_) => "failed",
        };
        let faster = ratios.iter().filter(|&&r| r < 1.0).count();
        let mean = if ratios.is_empty() {
            "—".to_owned()
        } else {
            ratio_text((ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp())
        };
        let _ =
            writeln!(md, "| {} | {status} | {} | {faster} | {mean} | {flagged} |", suite.name, ratios.len());
    }
    md.push('\n');
}

/// For each (pattern, cores, bytes) with figures from both sides: the fastest sccemu
/// variant's median over the fastest MPI's, with the two rows divided.
fn best_ratios(rows: &[Row]) -> Vec<(f64, &Row, &Row)> {
    let mut keys: Vec<(&str, u32, u64)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.pattern.as_str(), r.cores, r.bytes)) {
            keys.push((r.pattern.as_str(), r.cores, r.bytes));
        }
    }
    let fastest = |key: &(&str, u32, u64), mpi: bool| {
        rows.iter()
            .filter(|r| (r.pattern.as_str(), r.cores, r.bytes) == *key)
            .filter(
                |r| if mpi { MPIS.contains(&r.implementation.as_str()) } else { is_ours(&r.implementation) },
            )
            .filter(|r| r.median_us.is_finite() && r.median_us > 0.0)
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
    };
    keys.iter()
        .filter_map(|key| {
            let (ours, theirs) = (fastest(key, false)?, fastest(key, true)?);
            Some((ours.median_us / theirs.median_us, ours, theirs))
        })
        .collect()
}

fn machine(md: &mut String, meta: &Metadata) {
    let _ = writeln!(md, "## Machine\n\n| | |\n|---|---|");
    let mut fact = |name: &str, value: &str| {
        let _ = writeln!(md, "| {name} | {} |", value.replace('|', "\\|"));
    };
    fact("date", &meta.date_utc);
    fact("CPU", &meta.cpu_model);
    fact("CPUs (available / online)", &format!("{} / {}", meta.cpus_available, meta.cpus_online));
    fact("kernel", &meta.kernel);
    fact("rustc", &meta.rustc);
    fact("git commit", &meta.git_commit);
    for (peer, version) in &meta.peers {
        fact(peer, version);
    }
    fact("command", &format!("`{}`", meta.command));
    md.push('\n');
}

/// sccemu's implementations, then the MPIs, then the simulators.
fn sccemu_first(implementations: &mut [String]) {
    let rank = |i: &String| match MPIS.iter().position(|m| m == i) {
        Some(p) => (1 + p, i.clone()),
        None if is_virtual(i) => (1 + MPIS.len(), i.clone()),
        None => (0, i.clone()),
    };
    implementations.sort_by_key(rank);
}

fn section(md: &mut String, suite: &SuiteResult, unavailable_peers: &[String]) {
    let _ = writeln!(md, "## {}\n\n{}\n", suite.name, suite.about);
    if let Some(custom) = &suite.custom {
        md.push_str(custom);
        return;
    }
    match &suite.sccemu {
        SccemuSide::Measured => {}
        SccemuSide::NotRegistered => {
            let _ = writeln!(md, "sccemu: not measured (suite not registered)\n");
        }
        SccemuSide::Failed(why) => {
            let _ = writeln!(md, "sccemu: not measured (the suite failed: {why})\n");
        }
    }
    if suite.has_peers {
        for peer in unavailable_peers {
            let _ = writeln!(md, "{peer}\n");
        }
    } else {
        let _ = writeln!(md, "No MPI peer: this suite compares implementations on sccemu.\n");
    }
    drift::line(md, &suite.probes);
    for plot in &suite.plots {
        let _ = writeln!(md, "![{plot}]({plot})");
    }
    if !suite.plots.is_empty() {
        md.push('\n');
    }
    if suite.rows.is_empty() {
        let _ = writeln!(md, "No figures.\n");
    } else {
        table(md, &suite.rows, &suite.probes);
        mpi_layer::discussion(md, &suite.rows);
        if let Some(baseline) = suite.baseline {
            ratios::table(md, &suite.rows, baseline);
        }
    }
    if !suite.incidents.is_empty() {
        let _ = writeln!(md, "Peer runs that did not finish every configuration:\n");
        for i in &suite.incidents {
            let ranks = if i.cores > 0 { format!(" with {} ranks", i.cores) } else { String::new() };
            let _ = writeln!(md, "- {} {}{ranks}: {}", i.implementation, i.patterns, i.what);
        }
        md.push('\n');
    }
}

/// The implementations of `rows` (sccemu's first) and the (pattern, cores, bytes) keys
/// of the rows that `keep` accepts, each in order of first appearance.
fn columns_and_keys(rows: &[Row], keep: impl Fn(&Row) -> bool) -> (Vec<String>, Vec<(String, u32, u64)>) {
    let mut implementations: Vec<String> = Vec::new();
    let mut keys: Vec<(String, u32, u64)> = Vec::new();
    for r in rows {
        if !implementations.contains(&r.implementation) {
            implementations.push(r.implementation.clone());
        }
        let key = (r.pattern.clone(), r.cores, r.bytes);
        if keep(r) && !keys.contains(&key) {
            keys.push(key);
        }
    }
    sccemu_first(&mut implementations);
    (implementations, keys)
}

fn table(md: &mut String, rows: &[Row], probes: &[Probe]) {
    let (implementations, keys) = columns_and_keys(rows, |_| true);
    // Patterns keep their order of first appearance; within one, cores then bytes.
    let pattern_order = |p: &str| keys.iter().position(|k| k.0 == p).unwrap_or(usize::MAX);
    let mut ordered = keys.clone();
    ordered.sort_by_key(|k| (pattern_order(&k.0), k.1, k.2));

    let ours: Vec<&String> = implementations.iter().filter(|i| is_ours(i)).collect();
    let theirs: Vec<&String> = implementations.iter().filter(|i| MPIS.contains(&i.as_str())).collect();
    let mut ratios: Vec<(&String, &String)> =
        ours.iter().flat_map(|o| theirs.iter().map(move |t| (*o, *t))).collect();
    // sccemu's MPI library against the native API on the same pattern: the cost of
    // the MPI layer.
    let native = mpi_layer::native(rows).and_then(|n| implementations.iter().find(|i| *i == n));
    if let (Some(mpi), Some(native)) = (implementations.iter().find(|i| *i == SCCMPI), native) {
        ratios.push((mpi, native));
    }

    let mut header = String::from("| pattern | cores | bytes |");
    let mut rule = String::from("|---|---:|---:|");
    for i in &implementations {
        let virtual_note = if is_virtual(i) { " (virtual µs)" } else { "" };
        let _ = write!(header, " {i}{virtual_note} |");
        rule.push_str("---|");
    }
    let mut flagged = Vec::new();
    for (o, t) in &ratios {
        let _ = write!(header, " {o}/{t} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(md, "{header}\n{rule}");
    for (pattern, cores, bytes) in ordered {
        let find = |implementation: &str| {
            rows.iter().find(|r| {
                r.implementation == implementation
                    && r.pattern == pattern
                    && r.cores == cores
                    && r.bytes == bytes
            })
        };
        let oversubscribed = rows.iter().any(|r| r.cores == cores && r.oversubscribed);
        let mark = if oversubscribed { "†" } else { "" };
        let _ = write!(md, "| {pattern} | {cores}{mark} | {bytes} |");
        for i in &implementations {
            let _ = write!(md, " {} |", find(i).map_or_else(|| "—".to_owned(), cell));
        }
        for (o, t) in &ratios {
            let ratio = match (find(o), find(t)) {
                (Some(a), Some(b))
                    if a.median_us.is_finite() && b.median_us.is_finite() && b.median_us > 0.0 =>
                {
                    let text = ratio_text(a.median_us / b.median_us);
                    match drift::moved(probes, a, b).filter(|m| *m > drift::LIMIT) {
                        Some(m) => {
                            flagged.push(format!("{o}/{t} {pattern} {cores} cores {bytes} B ({m:.1}x)"));
                            format!("{text} ⚠")
                        }
                        None => text,
                    }
                }
                _ => "—".to_owned(),
            };
            let _ = write!(md, " {ratio} |");
        }
        md.push('\n');
    }
    md.push('\n');
    drift::notes(md, &flagged);
}

/// Three significant digits, whatever the magnitude (µs or MB/s).
fn us(value: f64) -> String {
    match value.abs() {
        v if v < 10.0 => format!("{value:.3}"),
        v if v < 100.0 => format!("{value:.2}"),
        v if v < 1000.0 => format!("{value:.1}"),
        _ => format!("{value:.0}"),
    }
}

fn cell(row: &Row) -> String {
    // Notes quote outside programs' messages, which may contain a table's `|`.
    if !row.median_us.is_finite() {
        return row.note.as_deref().unwrap_or("no figure").replace('|', "\\|");
    }
    let mut text = format!("{} [{}–{}]", us(row.median_us), us(row.p10_us), us(row.p90_us));
    if let Some(mb_per_s) = row.mb_per_s.filter(|v| v.is_finite()) {
        let _ = write!(text, " · {} MB/s", us(mb_per_s));
    }
    if let Some(note) = &row.note {
        let _ = write!(text, " ({})", note.replace('|', "\\|"));
    }
    text
}

/// Relative path of `path` under `base`, with forward slashes, for Markdown links.
pub fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sccemu_benches::measure::row;

    fn suite(rows: Vec<Row>) -> SuiteResult {
        SuiteResult {
            name: "halo".into(),
            about: "about".into(),
            baseline: Some(Baseline::Pattern("halo-p2p")),
            has_peers: true,
            sccemu: SccemuSide::Measured,
            rows,
            plots: vec!["plots/halo.svg".into()],
            incidents: Vec::new(),
            probes: vec![
                Probe { point: "before sccemu".into(), run: None, us: Some(0.047) },
                Probe { point: "after sccemu".into(), run: None, us: None },
            ],
            custom: None,
        }
    }

    #[test]
    fn tables_carry_ratios_marks_and_give_up_notes() {
        let mut gave_up = row("halo", "openmpi", "halo-p2p", 2, 16, Vec::new());
        gave_up.note = Some("gave up after 30.0 s (timeout) | really".into());
        let mut over = row("halo", "sccemu", "halo-fence", 48, 16, vec![4.0]);
        over.oversubscribed = true;
        let rows = vec![
            row("halo", "sccemu", "halo-p2p", 2, 16, vec![1.0]),
            row("halo", "sccemu", "halo-fence", 2, 16, vec![0.5]),
            row("halo", "mpich", "halo-p2p", 2, 16, vec![4.0]),
            row("halo", "mpich", "halo-fence", 2, 16, vec![8.0]),
            gave_up,
            over,
        ];
        let mut md = String::new();
        section(&mut md, &suite(rows), &["openmpi: not measured (unavailable: x)".into()]);
        assert!(md.contains(
            "| pattern | cores | bytes | sccemu | mpich | openmpi | sccemu/mpich | sccemu/openmpi |"
        ));
        assert!(md.contains("| halo-p2p | 2 | 16 | 1.000 [1.000–1.000] · 16.00 MB/s |"), "{md}");
        assert!(md.contains("gave up after 30.0 s (timeout) \\| really | 0.25 | — |"), "{md}");
        assert!(md.contains("| halo-fence | 48† | 16 |"), "{md}");
        assert!(md.contains("during this suite: before sccemu 0.047 µs, after sccemu not measured."), "{md}");
        assert!(!md.contains(" ⚠ |"), "no peer probe, nothing flagged: {md}");
        // The ratio table divides each pattern by halo-p2p within one implementation.
        assert!(md.contains("| halo-fence | 2 | 16 | 0.50 | 2.00 | — |"), "{md}");
        assert!(md.contains("openmpi: not measured (unavailable: x)"));
    }

    #[test]
    fn drifted_comparisons_are_flagged_and_smpi_stays_out_of_the_ratios() {
        let rows = vec![
            row("halo", "sccemu", "halo-p2p", 2, 16, vec![1.0]),
            row("halo", "mpich", "halo-p2p", 2, 16, vec![4.0]),
            row("halo", "smpi", "halo-p2p", 2, 16, vec![9.0]),
        ];
        let mut result = suite(rows);
        result.probes = vec![
            Probe { point: "before sccemu".into(), run: None, us: Some(0.025) },
            Probe {
                point: "before mpich".into(),
                run: Some(("mpich".into(), 2, vec!["halo-p2p".into()])),
                us: Some(0.172),
            },
        ];
        let mut md = String::new();
        section(&mut md, &result, &[]);
        assert!(md.contains("| sccemu | mpich | smpi (virtual µs) | sccemu/mpich |\n"), "{md}");
        assert!(md.contains("| 0.25 ⚠ |"), "{md}");
        assert!(md.contains("sccemu/mpich halo-p2p 2 cores 16 B (6.9x)"), "{md}");
        let ratios: Vec<f64> = best_ratios(&result.rows).iter().map(|r| r.0).collect();
        assert_eq!(ratios, vec![0.25], "smpi is neither sccemu's nor an MPI's");
    }

    #[test]
    fn the_summary_compares_the_best_sccemu_with_the_faster_mpi() {
        let rows = vec![
            row("s", "sccemu-a", "p", 2, 8, vec![2.0]),
            row("s", "sccemu-b", "p", 2, 8, vec![1.0]),
            row("s", "mpich", "p", 2, 8, vec![4.0]),
            row("s", "openmpi", "p", 2, 8, vec![2.0]),
            row("s", "sccemu-a", "q", 2, 8, vec![1.0]),
        ];
        let ratios: Vec<f64> = best_ratios(&rows).iter().map(|r| r.0).collect();
        assert_eq!(ratios, vec![0.5]);
    }
}
