//! SVG plots, one per figure, with one line per implementation. Size sweeps are
//! plotted against message size on log axes, with a second, bandwidth plot, and get a
//! figure per core count when measured at several; size-less patterns (barrier, fence)
//! are plotted against the number of cores. Bars show the p10–p90 spread.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use sccemu_benches::measure::Row;

use super::error::BenchError;

/// `pattern` with every character but letters, digits, `-` and `_` replaced by `-`.
fn file_safe(pattern: &str) -> String {
    pattern.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect()
}

/// A plotted point: x, median, p10, p90.
type Point = (f64, f64, f64, f64);

/// One line of a figure.
struct Series {
    implementation: String,
    label: String,
    points: Vec<Point>,
}

/// What a figure plots against what.
#[derive(Clone, Copy, PartialEq)]
enum Axes {
    LatencyBySize,
    BandwidthBySize,
    LatencyByCores,
}

impl Axes {
    fn x_label(self) -> &'static str {
        match self {
            Axes::LatencyByCores => "cores (ranks); beyond the machine's CPUs they are oversubscribed",
            _ => "message size (bytes)",
        }
    }

    fn y_label(self) -> &'static str {
        match self {
            Axes::BandwidthBySize => "MB/s at the median (higher is better)",
            _ => "µs per operation, median with p10–p90 (lower is better)",
        }
    }
}

/// Writes the figures of one suite into `dir`; returns their paths.
pub fn plot_suite(dir: &Path, suite: &str, rows: &[Row]) -> Result<Vec<PathBuf>, BenchError> {
    let mut written = Vec::new();
    for pattern in patterns(rows) {
        // A pattern may hold characters a file name cannot (`owner/caller`).
        let file = file_safe(&pattern);
        let of_pattern: Vec<&Row> =
            rows.iter().filter(|r| r.pattern == pattern && r.median_us.is_finite()).collect();
        if of_pattern.is_empty() {
            continue;
        }
        let sweeps_sizes = distinct(of_pattern.iter().map(|r| r.bytes)).len() > 1;
        if !sweeps_sizes {
            let path = dir.join(format!("{suite}-{file}-latency.svg"));
            let title = format!("{suite}: {pattern} (µs per operation)");
            draw_figure(&path, &title, Axes::LatencyByCores, &of_pattern)?;
            written.push(path);
            continue;
        }
        // A size sweep at several core counts gets a figure per count (the allgather
        // paper's figures are per N): one chart with every count would be unreadable.
        let core_counts = distinct(of_pattern.iter().map(|r| r.cores));
        for &cores in &core_counts {
            let at_cores: Vec<&Row> = of_pattern.iter().copied().filter(|r| r.cores == cores).collect();
            let (stem, label) = if core_counts.len() > 1 {
                let over = if at_cores.iter().any(|r| r.oversubscribed) { ", oversubscribed" } else { "" };
                (format!("{suite}-{file}-n{cores}"), format!(", {cores} cores{over}"))
            } else {
                (format!("{suite}-{file}"), String::new())
            };
            for (axes, kind, unit) in [
                (Axes::LatencyBySize, "latency", "µs per operation"),
                (Axes::BandwidthBySize, "bandwidth", "MB/s"),
            ] {
                let path = dir.join(format!("{stem}-{kind}.svg"));
                draw_figure(&path, &format!("{suite}: {pattern}{label} ({unit})"), axes, &at_cores)?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

fn draw_figure(path: &Path, title: &str, axes: Axes, rows: &[&Row]) -> Result<(), BenchError> {
    draw(path, title, axes, &series(rows, axes))
        .map_err(|message| BenchError::Plot { path: path.into(), message })
}

fn patterns(rows: &[Row]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for row in rows {
        if !seen.contains(&row.pattern) {
            seen.push(row.pattern.clone());
        }
    }
    seen
}

fn distinct<T: PartialEq>(values: impl Iterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen
}

fn series(rows: &[&Row], axes: Axes) -> Vec<Series> {
    let several_core_counts = distinct(rows.iter().map(|r| r.cores)).len() > 1;
    let keys = distinct(rows.iter().map(|r| match axes {
        Axes::LatencyByCores => (r.implementation.clone(), 0),
        _ => (r.implementation.clone(), if several_core_counts { r.cores } else { 0 }),
    }));
    keys.into_iter()
        .map(|(implementation, cores)| {
            let mut points: Vec<Point> = rows
                .iter()
                .filter(|r| r.implementation == implementation && (cores == 0 || r.cores == cores))
                .map(|r| match axes {
                    Axes::LatencyBySize => (r.bytes as f64, r.median_us, r.p10_us, r.p90_us),
                    // Bandwidth at p10 time is the high end of the spread, at p90 the low.
                    Axes::BandwidthBySize => {
                        let b = r.bytes as f64;
                        (b, b / r.median_us, b / r.p90_us, b / r.p10_us)
                    }
                    Axes::LatencyByCores => (f64::from(r.cores), r.median_us, r.p10_us, r.p90_us),
                })
                .filter(|p| p.0 > 0.0 && p.1 > 0.0 && p.1.is_finite())
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label =
                if cores == 0 { implementation.clone() } else { format!("{implementation}, {cores} cores") };
            Series { implementation, label, points }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn human_bytes(bytes: f64) -> String {
    match bytes {
        b if b >= 1024.0 * 1024.0 => format!("{}M", b / (1024.0 * 1024.0)),
        b if b >= 1024.0 => format!("{}K", b / 1024.0),
        b => format!("{b}"),
    }
}

/// The MPIs keep one colour in every figure; sccemu's variants take warm colours in
/// order. All are dark enough to read on white.
fn color_for(implementation: &str, sccemu_variants_so_far: &mut usize) -> RGBAColor {
    // Enough distinct colours for the most variants a figure has (allgather: 6 plus
    // `sccemu`), so that no two lines of one figure share a colour.
    const SCCEMU: [RGBColor; 8] = [
        RGBColor(214, 39, 40),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(127, 127, 127),
    ];
    let color = match implementation {
        "mpich" => RGBColor(31, 119, 180),
        "openmpi" => RGBColor(44, 160, 44),
        "sccmpi" => RGBColor(0, 0, 0),
        _ => {
            *sccemu_variants_so_far += 1;
            SCCEMU[(*sccemu_variants_so_far - 1) % SCCEMU.len()]
        }
    };
    color.to_rgba()
}

/// Tick positions on a log axis: 1, 2, 5 times powers of ten within the range;
/// decades alone when that would crowd the axis.
fn one_two_five(lo: f64, hi: f64) -> Vec<f64> {
    let steps: &[f64] = if hi / lo > 1e4 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    let mut ticks = Vec::new();
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for &step in steps {
            let tick = decade * step;
            if (lo..=hi).contains(&tick) {
                ticks.push(tick);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// The measured x values, thinned to at most a dozen labels.
fn measured_ticks(series: &[Series]) -> Vec<f64> {
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let stride = xs.len().div_ceil(12).max(1);
    xs.into_iter().step_by(stride).collect()
}

/// A tick value with no more digits than it needs (0.05, 2, 500, 20000).
fn tick_label(value: f64) -> String {
    let decimals = (-value.log10().floor()).max(0.0) as usize;
    format!("{value:.decimals$}")
}

fn draw(path: &Path, title: &str, axes: Axes, series: &[Series]) -> Result<(), String> {
    let all = series.iter().flat_map(|s| &s.points);
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, median, lo, hi) in all {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        for y in [median, lo, hi].into_iter().filter(|y| y.is_finite() && *y > 0.0) {
            y_lo = y_lo.min(y);
            y_hi = y_hi.max(y);
        }
    }
    // A single x or y value still needs a visible range on a log axis.
    let (x_lo, x_hi, y_lo, y_hi) = (x_lo / 1.5, x_hi * 1.5, y_lo / 2.0, y_hi * 2.0);
    let x_axis = (x_lo..x_hi).log_scale().with_key_points(measured_ticks(series));
    let y_axis = (y_lo..y_hi).log_scale().with_key_points(one_two_five(y_lo, y_hi));

    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 26))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(90)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(|e| e.to_string())?;
    let format_x = |x: &f64| if axes == Axes::LatencyByCores { format!("{x:.0}") } else { human_bytes(*x) };
    chart
        .configure_mesh()
        .x_desc(axes.x_label())
        .y_desc(axes.y_label())
        .x_label_formatter(&format_x)
        .y_label_formatter(&|y| tick_label(*y))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(|e| e.to_string())?;
    let mut ours = 0;
    for line in series {
        let color = color_for(&line.implementation, &mut ours);
        let centre = line.points.iter().map(|&(x, m, _, _)| (x, m));
        chart
            .draw_series(LineSeries::new(centre.clone(), color.stroke_width(3)))
            .map_err(|e| e.to_string())?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3)));
        chart.draw_series(centre.map(|p| Circle::new(p, 4, color.filled()))).map_err(|e| e.to_string())?;
        let bars = line
            .points
            .iter()
            .map(|&(x, m, lo, hi)| ErrorBar::new_vertical(x, lo.min(hi), m, lo.max(hi), color, 8));
        chart.draw_series(bars).map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .label_font(("sans-serif", 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_become_file_names() {
        assert_eq!(file_safe("owner/caller"), "owner-caller");
        assert_eq!(file_safe("halo-p2p"), "halo-p2p");
    }

    #[test]
    fn log_ticks_and_labels() {
        assert_eq!(one_two_five(0.3, 60.0), vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        assert_eq!(one_two_five(0.3, 20000.0), vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!(tick_label(0.05), "0.05");
        assert_eq!(tick_label(2.0), "2");
        assert_eq!(tick_label(20000.0), "20000");
        assert_eq!(human_bytes(737280.0), "720K");
    }

    #[test]
    fn a_sweep_at_two_core_counts_gets_a_figure_pair_per_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Vec::new();
        for implementation in ["sccemu", "mpich"] {
            for cores in [2, 8] {
                for bytes in [512, 4096] {
                    rows.push(sccemu_benches::measure::row(
                        "s",
                        implementation,
                        "allgather",
                        cores,
                        bytes,
                        vec![1.0],
                    ));
                }
            }
            rows.push(sccemu_benches::measure::row("s", implementation, "barrier", 2, 0, vec![1.0]));
            rows.push(sccemu_benches::measure::row("s", implementation, "barrier", 8, 0, vec![3.0]));
        }
        let written = plot_suite(dir.path(), "s", &rows).unwrap();
        let names: Vec<String> =
            written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            [
                "s-allgather-n2-latency.svg",
                "s-allgather-n2-bandwidth.svg",
                "s-allgather-n8-latency.svg",
                "s-allgather-n8-bandwidth.svg",
                "s-barrier-latency.svg"
            ]
        );
        for path in &written {
            crate::bench::output::check_svg(path).unwrap();
        }
    }
}
