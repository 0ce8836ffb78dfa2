//! What sccemu's MPI library costs over the native API: after a suite's table, every
//! pattern whose `sccmpi/sccemu` ratio passes 1.10 at some configuration, with the
//! range of its ratios and what the MPI layer does there that the native call does not.
//!
//! The causes are written down per pattern family from profiles of the library
//! (`perf record` of the C programs); the figures next to them are this run's.

use std::fmt::Write as _;

use sccemu_benches::measure::Row;

/// Ratios above this are discussed.
const THRESHOLD: f64 = 1.10;

/// What the MPI layer adds, by pattern prefix (the first that matches applies).
const CAUSES: &[(&str, &str)] = &[
    (
        "put-",
        "each `MPI_Put`/`MPI_Get` is a C call that looks up the window and both \
         datatypes, checks ranks, counts and the target range again, and then makes \
         the native call; the flush or epoch call after it is a second such call. \
         At a few bytes this fixed cost (tens of ns) is most of the time; it fades \
         with the size.",
    ),
    ("get-", "as for put: lookups and argument checks around the native copy, per call."),
    (
        "fetch-and-op",
        "`MPI_Fetch_and_op` takes the general accumulate path (element type from the \
         datatype, op checked for it, the element's atomicity domain) where the native \
         pattern calls the typed ARMW; plus the C call's lookups and checks.",
    ),
    (
        "compare-and-swap",
        "`MPI_Compare_and_swap` checks the datatype and reads the operands through \
         pointers before the native compare-and-swap; plus the C call's lookups.",
    ),
    (
        "lock",
        "the MPI calls translate the rank, check the lock type and asserts, and keep \
         the window's state behind the thread-level switch; the lock protocol is the \
         native one.",
    ),
    ("fence", "the fence is the native one; the MPI call adds its lookups and assert checks."),
    (
        "accumulate",
        "the C program passes an `MPI_DOUBLE` buffer that the library views as \
         elements of the datatype's basic type (copied if unaligned) before the \
         native accumulate.",
    ),
    (
        "halo",
        "the same exchange (see `benches/mpi/halo.c`); the MPI calls add lookups per \
         put and per request, and the two-sided version allocates a request per call.",
    ),
    (
        "stencil",
        "the same automaton; the C program's exchange goes through the MPI calls \
         (lookups, requests) and computes with the C compiler's code instead of Rust's.",
    ),
    (
        "latency",
        "`MPI_Send`/`MPI_Recv` add the communicator's context to the tag, check \
         arguments and translate ranks; a receive also builds its status.",
    ),
    (
        "bandwidth",
        "`MPI_Isend`/`MPI_Irecv` allocate a request each and `MPI_Waitall` walks the \
         request table under its lock.",
    ),
    ("barrier", "the communicator's barrier is the native one; the C call adds its lookup."),
    (
        "allreduce",
        "the library packs the buffer and views it as the reduction's element type, \
         then calls the native allreduce; plus the call's lookups.",
    ),
    ("allgather", "the library packs and unpacks around the native allgather."),
];

fn cause(pattern: &str) -> &'static str {
    CAUSES
        .iter()
        .find(|(prefix, _)| pattern.starts_with(prefix) || pattern.contains(prefix))
        .map_or("the C call's lookups and argument checks around the native operation.", |(_, c)| c)
}

/// The native implementation the MPI library runs on in `rows`: `sccemu`, or the
/// default channel's variant where a suite measures each channel.
pub(super) fn native(rows: &[Row]) -> Option<&'static str> {
    ["sccemu", "sccemu-srb"].into_iter().find(|n| rows.iter().any(|r| r.implementation == *n))
}

/// The discussion for `rows` (a suite's), if any ratio passes the threshold.
pub(super) fn discussion(md: &mut String, rows: &[Row]) {
    let Some(native) = native(rows) else { return };
    let median = |implementation: &str, r: &Row| {
        rows.iter()
            .find(|o| {
                o.implementation == implementation
                    && o.pattern == r.pattern
                    && o.cores == r.cores
                    && o.bytes == r.bytes
            })
            .map(|o| o.median_us)
            .filter(|m| m.is_finite() && *m > 0.0)
    };
    // (pattern, lowest ratio above the threshold, highest, configurations above it, all compared)
    let mut patterns: Vec<(String, f64, f64, usize, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.implementation == super::SCCMPI) {
        let (Some(mpi), Some(native)) = (median(super::SCCMPI, r), median(native, r)) else { continue };
        let ratio = mpi / native;
        let entry = match patterns.iter_mut().find(|p| p.0 == r.pattern) {
            Some(e) => e,
            None => {
                patterns.push((r.pattern.clone(), f64::INFINITY, 0.0, 0, 0));
                patterns.last_mut().expect("just pushed")
            }
        };
        entry.4 += 1;
        if ratio > THRESHOLD {
            entry.1 = entry.1.min(ratio);
            entry.2 = entry.2.max(ratio);
            entry.3 += 1;
        }
    }
    patterns.retain(|p| p.3 > 0);
    if patterns.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "Where the MPI layer costs more than 10% over the native API (`sccmpi/sccemu` > {THRESHOLD:.2}):\n"
    );
    for (pattern, lo, hi, over, of) in patterns {
        let _ = writeln!(
            md,
            "- `{pattern}`: {over} of {of} configurations, {} to {}: {}",
            super::ratios::ratio_text(lo),
            super::ratios::ratio_text(hi),
            cause(&pattern)
        );
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_past_the_threshold_are_listed_with_their_cause() {
        let row = |implementation: &str, pattern: &str, bytes: u64, median_us: f64| Row {
            suite: "rma".into(),
            implementation: implementation.into(),
            pattern: pattern.into(),
            cores: 2,
            bytes,
            reps: 3,
            median_us,
            p10_us: median_us,
            p90_us: median_us,
            mb_per_s: None,
            oversubscribed: false,
            note: None,
        };
        let rows = vec![
            row("sccemu", "put-lock-flush", 8, 0.010),
            row("sccmpi", "put-lock-flush", 8, 0.030),
            row("sccemu", "put-lock-flush", 65536, 2.0),
            row("sccmpi", "put-lock-flush", 65536, 2.1),
            row("sccemu", "fence", 0, 1.0),
            row("sccmpi", "fence", 0, 1.05),
        ];
        let mut md = String::new();
        discussion(&mut md, &rows);
        assert!(md.contains("`put-lock-flush`: 1 of 2 configurations, 3.00 to 3.00"), "{md}");
        assert!(md.contains("looks up the window"), "{md}");
        assert!(!md.contains("`fence`"), "within 10%: {md}");
    }
}
