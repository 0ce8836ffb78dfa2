//! A suite's second table: every figure divided by a reference figure of the same run,
//! as its catalogue entry's [`Baseline`] says (another pattern of the same
//! implementation, the same pattern at one core, or another implementation).

use std::fmt::Write as _;

use sccemu_benches::measure::Row;

use super::columns_and_keys;
use crate::bench::catalog::Baseline;

/// Two decimals, or two significant digits for ratios far below 1.
pub(super) fn ratio_text(ratio: f64) -> String {
    if ratio >= 0.095 { format!("{ratio:.2}") } else { format!("{ratio:.1e}") }
}

/// The table of ratios `baseline` asks for, if any figure has its reference.
pub(super) fn table(md: &mut String, rows: &[Row], baseline: Baseline) {
    match baseline {
        Baseline::Pattern(pattern) => pattern_table(md, rows, pattern),
        Baseline::OneCore => speedup_table(md, rows),
        Baseline::Implementation(implementation) => implementation_table(md, rows, implementation),
    }
}

/// The median of `implementation` at (pattern, cores, bytes), if measured.
fn median(rows: &[Row], implementation: &str, pattern: &str, cores: u32, bytes: u64) -> Option<f64> {
    rows.iter()
        .find(|r| {
            r.implementation == implementation && r.pattern == pattern && r.cores == cores && r.bytes == bytes
        })
        .map(|r| r.median_us)
        .filter(|m| m.is_finite() && *m > 0.0)
}

/// Each pattern's time divided by the baseline pattern's, per implementation, at the
/// same cores and bytes: how much a synchronization mode costs over the baseline.
fn pattern_table(md: &mut String, rows: &[Row], baseline: &str) {
    let title = format!("Time relative to `{baseline}` (same implementation, cores and bytes):");
    relative_table(
        md,
        rows,
        &title,
        |r| r.pattern != baseline,
        |_| true,
        |of, pattern, cores, bytes| {
            Some(ratio_text(of(pattern, cores, bytes)? / of(baseline, cores, bytes)?))
        },
    );
}

/// Speedup over one core, per implementation: time at 1 core over time at N, for the
/// same pattern and bytes.
fn speedup_table(md: &mut String, rows: &[Row]) {
    let title = "Speedup over one core (time at 1 core / time at N; linear is N):";
    relative_table(
        md,
        rows,
        title,
        |r| r.cores > 1,
        |_| true,
        |of, pattern, cores, bytes| {
            Some(format!("{:.2}", of(pattern, 1, bytes)? / of(pattern, cores, bytes)?))
        },
    );
}

/// Every other implementation's time divided by the baseline implementation's, at the
/// same pattern, cores and bytes.
fn implementation_table(md: &mut String, rows: &[Row], baseline: &str) {
    let title =
        format!("Time relative to `{baseline}` (same pattern, cores and bytes; below 1 is faster than it):");
    relative_table(
        md,
        rows,
        &title,
        |_| true,
        |implementation| implementation != baseline,
        |of, pattern, cores, bytes| {
            Some(ratio_text(of(pattern, cores, bytes)? / median(rows, baseline, pattern, cores, bytes)?))
        },
    );
}

/// A median lookup for one implementation: (pattern, cores, bytes) to µs.
type Median<'a> = &'a dyn Fn(&str, u32, u64) -> Option<f64>;

/// A table with one row per (pattern, cores, bytes) of the rows `keep` selects and one
/// column per implementation `column` selects, whose cells `cell` derives from that
/// implementation's medians; rows with no cell at all are left out, and so is a table
/// with no row.
fn relative_table(
    md: &mut String,
    rows: &[Row],
    title: &str,
    keep: impl Fn(&Row) -> bool,
    column: impl Fn(&str) -> bool,
    cell: impl Fn(Median<'_>, &str, u32, u64) -> Option<String>,
) {
    let (mut implementations, keys) = columns_and_keys(rows, keep);
    implementations.retain(|i| column(i));
    let mut lines = Vec::new();
    for (pattern, cores, bytes) in &keys {
        let cells: Vec<String> = implementations
            .iter()
            .map(|implementation| {
                let of = |pattern: &str, cores: u32, bytes: u64| {
                    median(rows, implementation, pattern, cores, bytes)
                };
                cell(&of, pattern, *cores, *bytes).unwrap_or_else(|| "—".to_owned())
            })
            .collect();
        if cells.iter().any(|c| c != "—") {
            lines.push(format!("| {pattern} | {cores} | {bytes} | {} |", cells.join(" | ")));
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(md, "{title}\n");
    let _ = writeln!(md, "| pattern | cores | bytes | {} |", implementations.join(" | "));
    let _ = writeln!(md, "|---|---:|---:|{}", "---:|".repeat(implementations.len()));
    for line in lines {
        let _ = writeln!(md, "{line}");
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use sccemu_benches::measure::row;

    #[test]
    fn implementations_are_divided_by_the_baseline_one() {
        let rows = vec![
            row("rcce", "rcce", "latency", 2, 32, vec![2.0]),
            row("rcce", "sccemu-srb", "latency", 2, 32, vec![0.5]),
            row("rcce", "sccemu-srb", "latency", 2, 64, vec![0.5]),
        ];
        let mut md = String::new();
        table(&mut md, &rows, Baseline::Implementation("rcce"));
        assert!(md.contains("| pattern | cores | bytes | sccemu-srb |\n"), "{md}");
        assert!(md.contains("| latency | 2 | 32 | 0.25 |"), "{md}");
        assert!(!md.contains("| latency | 2 | 64 |"), "no rcce figure at 64 B: {md}");
    }
}
