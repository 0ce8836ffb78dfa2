//! Rows, repetitions and robust statistics shared by every suite.
//!
//! Timing discipline: warm-up rounds first, then `reps` timed repetitions; a row keeps
//! the median with the 10th and 90th percentiles as its spread. Jobs with more cores
//! than CPUs are marked oversubscribed. Nothing here asserts a time.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One measured configuration: (implementation, pattern, cores, message size).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub suite: String,
    /// `sccemu` (with a variant suffix such as `sccemu-srb`), `mpich` or `openmpi`.
    pub implementation: String,
    pub pattern: String,
    pub cores: u32,
    pub bytes: u64,
    pub reps: u32,
    /// Microseconds per operation.
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
    /// Throughput at the median, where the pattern moves data.
    pub mb_per_s: Option<f64>,
    pub oversubscribed: bool,
    /// Why a figure is missing or qualified (e.g. "gave up after 30 s").
    pub note: Option<String>,
}

/// What a suite is asked to measure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SuiteParams {
    /// Tiny sizes and few repetitions: a smoke test, not a measurement.
    pub quick: bool,
    /// Where suites that compile programs put them (`sccrun bench` passes its
    /// `DIR/build`); a temporary directory of their own when `None`.
    #[serde(default)]
    pub build_dir: Option<PathBuf>,
}

impl SuiteParams {
    pub fn reps(&self, full: u32) -> u32 {
        if self.quick { 3 } else { full }
    }

    pub fn warmup(&self, full: u32) -> u32 {
        if self.quick { 1 } else { full }
    }
}

/// Median and 10th/90th percentiles of samples in microseconds.
pub fn summarize(samples_us: &mut [f64]) -> (f64, f64, f64) {
    if samples_us.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    samples_us.sort_by(f64::total_cmp);
    let at = |q: f64| samples_us[((samples_us.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// Whether `cores` exceed the CPUs this process may use.
pub fn oversubscribed(cores: u32) -> bool {
    cores as usize > sccemu::core::pin::available_cpu_count()
}

/// A row of sccemu's from per-repetition samples (µs per operation).
pub fn row(
    suite: &str,
    implementation: &str,
    pattern: &str,
    cores: u32,
    bytes: u64,
    mut samples_us: Vec<f64>,
) -> Row {
    let (median_us, p10_us, p90_us) = summarize(&mut samples_us);
    let moves_data = bytes > 0;
    Row {
        suite: suite.into(),
        implementation: implementation.into(),
        pattern: pattern.into(),
        cores,
        bytes,
        reps: samples_us.len() as u32,
        median_us,
        p10_us,
        p90_us,
        mb_per_s: moves_data.then(|| bytes as f64 / median_us),
        oversubscribed: oversubscribed(cores),
        note: None,
    }
}

/// Prints rows as an aligned table (what `cargo bench` shows).
pub fn print_table(rows: &[Row]) {
    println!(
        "{:<10} {:<16} {:<24} {:>5} {:>9} {:>12} {:>12} {:>12} {:>10}",
        "suite", "impl", "pattern", "cores", "bytes", "median µs", "p10 µs", "p90 µs", "MB/s"
    );
    for r in rows {
        let mbs = r.mb_per_s.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        let over = if r.oversubscribed { " (oversubscribed)" } else { "" };
        println!(
            "{:<10} {:<16} {:<24} {:>5} {:>9} {:>12.3} {:>12.3} {:>12.3} {:>10}{over}",
            r.suite, r.implementation, r.pattern, r.cores, r.bytes, r.median_us, r.p10_us, r.p90_us, mbs
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_median_and_deciles() {
        let mut s: Vec<f64> = (1..=11).map(f64::from).rev().collect();
        assert_eq!(summarize(&mut s), (6.0, 2.0, 10.0));
        assert!(summarize(&mut []).0.is_nan());
    }
}
