//! Machine-readable output: one CSV file per suite, one row per (implementation,
//! pattern, cores, bytes), and the self-check that every file the run wrote is
//! well-formed.

use std::path::{Path, PathBuf};

use sccemu_benches::measure::Row;

use super::error::BenchError;

pub fn csv_path(out: &Path, suite: &str) -> PathBuf {
    out.join(format!("{suite}.csv"))
}

/// The header line serde derives from [`Row`], so that a suite with no rows still gets
/// a CSV with the same columns.
fn header() -> Vec<u8> {
    let sample = Row {
        suite: String::new(),
        implementation: String::new(),
        pattern: String::new(),
        cores: 0,
        bytes: 0,
        reps: 0,
        median_us: 0.0,
        p10_us: 0.0,
        p90_us: 0.0,
        mb_per_s: None,
        oversubscribed: false,
        note: None,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(sample).expect("a row serializes");
    let text = writer.into_inner().expect("in memory");
    text.split(|&b| b == b'\n').next().map(|l| [l, b"\n"].concat()).unwrap_or_default()
}

pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), BenchError> {
    let csv_error = |source| BenchError::Csv { path: path.into(), source };
    if rows.is_empty() {
        return std::fs::write(path, header()).map_err(BenchError::io(path));
    }
    let mut writer = csv::Writer::from_path(path).map_err(csv_error)?;
    for row in rows {
        writer.serialize(row).map_err(csv_error)?;
    }
    writer.flush().map_err(BenchError::io(path))
}

pub fn read_csv(path: &Path) -> Result<Vec<Row>, BenchError> {
    let csv_error = |source| BenchError::Csv { path: path.into(), source };
    let mut reader = csv::Reader::from_path(path).map_err(csv_error)?;
    reader.deserialize().collect::<Result<Vec<Row>, _>>().map_err(csv_error)
}

/// Checks a suite's CSV parses back to the rows written.
pub fn check_csv(path: &Path, expected_rows: usize) -> Result<(), BenchError> {
    let rows = read_csv(path)?;
    if rows.len() != expected_rows {
        let problem = format!("{} rows read back, {expected_rows} written", rows.len());
        return Err(BenchError::Malformed { path: path.into(), problem });
    }
    Ok(())
}

/// Checks a plot exists, is not empty and is an SVG document.
pub fn check_svg(path: &Path) -> Result<(), BenchError> {
    let text = std::fs::read_to_string(path).map_err(BenchError::io(path))?;
    if !text.contains("<svg") || !text.trim_end().ends_with("</svg>") {
        return Err(BenchError::Malformed {
            path: path.into(),
            problem: "not a complete SVG document".into(),
        });
    }
    Ok(())
}

/// Checks the report names every suite in a heading of its own.
pub fn check_report(path: &Path, suites: &[String]) -> Result<(), BenchError> {
    let text = std::fs::read_to_string(path).map_err(BenchError::io(path))?;
    for suite in suites {
        if !text.lines().any(|l| l == format!("## {suite}")) {
            return Err(BenchError::Malformed {
                path: path.into(),
                problem: format!("no section for `{suite}`"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_full_csvs_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.csv");
        write_csv(&empty, &[]).unwrap();
        check_csv(&empty, 0).unwrap();
        let mut row = sccemu_benches::measure::row("s", "mpich", "p", 2, 8, vec![1.0, 2.0]);
        let mut missing = row.clone();
        missing.median_us = f64::NAN;
        missing.note = Some("gave up after 3.0 s".into());
        row.mb_per_s = None;
        let full = dir.path().join("full.csv");
        write_csv(&full, &[row.clone(), missing]).unwrap();
        let back = read_csv(&full).unwrap();
        assert_eq!(back[0], row);
        assert!(back[1].median_us.is_nan());
    }
}
