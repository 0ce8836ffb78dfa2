//! How far the machine moved under a comparison: the cache-line probe's readings for
//! the two measurements a ratio divides. On this shared 2-CPU machine the cost of moving
//! a line between CPUs drifts by up to 5x over minutes, and every figure moves with it;
//! a ratio whose two sides saw probes more than [`LIMIT`] apart is flagged.

use std::fmt::Write as _;

use sccemu_benches::measure::Row;

/// One reading of the cache-line ping-pong (µs one way).
#[derive(Clone, Debug)]
pub struct Probe {
    /// When it was taken, e.g. "before sccemu", "before mpich latency,bandwidth at 2 ranks".
    pub point: String,
    /// The peer run it precedes: (implementation, ranks, patterns); `None` on sccemu's side.
    pub run: Option<(String, u32, Vec<String>)>,
    pub us: Option<f64>,
}

/// Implementations measured by peer runs (each run has its own probe).
const PEERS: [&str; 4] = ["mpich", "openmpi", "smpi", "sccmpi"];

/// Probe readings more than this factor apart flag a comparison.
pub const LIMIT: f64 = 2.0;

/// The readings that stand for `row`'s measurement: its peer run's probe, or, for
/// sccemu's native rows, the probes before and after sccemu's side.
fn readings(probes: &[Probe], row: &Row) -> Vec<f64> {
    let of_run: Vec<f64> = probes
        .iter()
        .filter(|p| {
            p.run.as_ref().is_some_and(|(implementation, cores, patterns)| {
                *implementation == row.implementation
                    && *cores == row.cores
                    && patterns.contains(&row.pattern)
            })
        })
        .filter_map(|p| p.us)
        .collect();
    if !of_run.is_empty() {
        return of_run;
    }
    if PEERS.contains(&row.implementation.as_str()) {
        return Vec::new();
    }
    probes
        .iter()
        .filter(|p| p.run.is_none() && (p.point == "before sccemu" || p.point == "after sccemu"))
        .filter_map(|p| p.us)
        .collect()
}

/// The largest over smallest reading of the two measurements, if both have one.
pub fn moved(probes: &[Probe], a: &Row, b: &Row) -> Option<f64> {
    let (ra, rb) = (readings(probes, a), readings(probes, b));
    if ra.is_empty() || rb.is_empty() {
        return None;
    }
    let all = ra.iter().chain(&rb);
    let max = all.clone().copied().fold(f64::MIN, f64::max);
    let min = all.copied().fold(f64::MAX, f64::min);
    (min > 0.0).then(|| max / min)
}

/// Whether the comparison of `a` with `b` is flagged.
pub fn flagged(probes: &[Probe], a: &Row, b: &Row) -> bool {
    moved(probes, a, b).is_some_and(|m| m > LIMIT)
}

/// One line with every reading, so that a reader can tell whether sccemu and the MPIs
/// ran on a machine in the same state.
pub fn line(md: &mut String, probes: &[Probe]) {
    if probes.is_empty() {
        return;
    }
    let points: Vec<String> = probes
        .iter()
        .map(|p| match p.us {
            Some(us) => format!("{} {us:.3} µs", p.point),
            None => format!("{} not measured", p.point),
        })
        .collect();
    let _ = writeln!(
        md,
        "Cache-line one-way cost (the pt2pt suite's `cache-line` probe) during this suite: {}. \
         Where these differ, so does the machine under the figures compared; ratios whose \
         two measurements saw probes more than {LIMIT}x apart are marked ⚠.\n",
        points.join(", ")
    );
}

/// The list under a table of the comparisons it flagged, if any.
pub fn notes(md: &mut String, flagged: &[String]) {
    if flagged.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "⚠ The cache-line probe moved by more than {LIMIT}x between the two measurements of \
         these comparisons, so the machine changed under the figures: {}.\n",
        flagged.join("; ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use sccemu_benches::measure::row;

    fn probe(point: &str, run: Option<(&str, u32)>, us: f64) -> Probe {
        Probe {
            point: point.into(),
            run: run.map(|(i, n)| (i.into(), n, vec!["halo-p2p".into()])),
            us: Some(us),
        }
    }

    #[test]
    fn a_comparison_is_flagged_when_its_two_probes_are_more_than_2x_apart() {
        let probes = vec![
            probe("before sccemu", None, 0.025),
            probe("after sccemu", None, 0.030),
            probe("before mpich", Some(("mpich", 2)), 0.172),
            probe("before openmpi", Some(("openmpi", 2)), 0.040),
        ];
        let ours = row("halo", "sccemu", "halo-p2p", 2, 16, vec![1.0]);
        let mpich = row("halo", "mpich", "halo-p2p", 2, 16, vec![1.0]);
        let openmpi = row("halo", "openmpi", "halo-p2p", 2, 16, vec![1.0]);
        assert!(flagged(&probes, &ours, &mpich), "0.025 against 0.172");
        assert!(!flagged(&probes, &ours, &openmpi), "0.025-0.030 against 0.040");
        let m = moved(&probes, &ours, &mpich).unwrap();
        assert!((m - 0.172 / 0.025).abs() < 1e-9, "{m}");
        // A run without a probe (not attempted) is never flagged.
        let sccmpi = row("halo", "sccmpi", "halo-p2p", 4, 16, vec![1.0]);
        assert_eq!(moved(&probes, &sccmpi, &mpich), None);
    }
}
