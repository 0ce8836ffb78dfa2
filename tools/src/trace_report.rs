//! `sccrun trace-report FILE [--out SVG]`: a virtual-time trace (`sccrun --timing scc
//! --trace FILE`) drawn as a timeline, one row per core, each operation a bar coloured
//! by its category, with each core's total time per category listed beside the chart;
//! for whoever wants a picture without a trace viewer.

use std::collections::BTreeMap;
use std::path::PathBuf;

use plotters::prelude::*;
use sccemu::timing::Category;

/// `sccrun trace-report FILE [--out SVG]`
#[derive(clap::Args, Clone, Debug)]
pub struct TraceReportArgs {
    /// The trace (Chrome trace-event JSON, as `sccrun --trace` writes it).
    pub file: PathBuf,
    /// The SVG to write (default: FILE with `.svg` appended).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One operation of one core, in virtual µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Slice {
    pub core: u32,
    pub category: Category,
    pub start: f64,
    pub dur: f64,
}

/// The slices of a trace's JSON text.
pub fn slices(text: &str) -> Result<Vec<Slice>, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a trace: {e}"))?;
    let events = json["traceEvents"].as_array().ok_or("no traceEvents array")?;
    Ok(events
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| {
            Some(Slice {
                core: e["tid"].as_u64()? as u32,
                category: Category::from_name(e["cat"].as_str()?)?,
                start: e["ts"].as_f64()?,
                dur: e["dur"].as_f64()?,
            })
        })
        .collect())
}

fn colour(c: Category) -> RGBColor {
    let palette = [
        RGBColor(160, 160, 160),
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(214, 39, 40),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(70, 70, 70),
    ];
    palette[Category::ALL.iter().position(|x| *x == c).unwrap_or(0) % palette.len()]
}

/// Each core's total µs per category.
pub fn totals(slices: &[Slice]) -> BTreeMap<u32, BTreeMap<&'static str, f64>> {
    let mut out: BTreeMap<u32, BTreeMap<&'static str, f64>> = BTreeMap::new();
    for s in slices {
        *out.entry(s.core).or_default().entry(s.category.name()).or_default() += s.dur;
    }
    out
}

/// Draws `slices` into the SVG `out`.
pub fn draw(slices: &[Slice], out: &std::path::Path) -> Result<(), String> {
    let cores = slices.iter().map(|s| s.core + 1).max().unwrap_or(1);
    let end = slices.iter().map(|s| s.start + s.dur).fold(1e-3, f64::max);
    let height = (120 + 18 * cores).min(4000);
    let root = SVGBackend::new(out, (1200, height)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (chart_area, legend) = root.split_horizontally(1000);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption("virtual time per core", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..end, 0f64..f64::from(cores))
        .map_err(|x| e(&x))?;
    chart.configure_mesh().x_desc("virtual µs").y_desc("core").disable_y_mesh().draw().map_err(|x| e(&x))?;
    chart
        .draw_series(slices.iter().filter(|s| s.dur > 0.0).map(|s| {
            let y = f64::from(s.core);
            Rectangle::new([(s.start, y + 0.1), (s.start + s.dur, y + 0.9)], colour(s.category).filled())
        }))
        .map_err(|x| e(&x))?;
    for (i, c) in Category::ALL.iter().enumerate() {
        let y = 30 + 20 * i as i32;
        legend.draw(&Rectangle::new([(10, y), (24, y + 12)], colour(*c).filled())).map_err(|x| e(&x))?;
        legend.draw(&Text::new(c.name(), (30, y), ("sans-serif", 13))).map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))
}

/// Reads the trace, draws the SVG and prints each core's totals.
pub fn run(args: &TraceReportArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let slices = slices(&text)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let mut p = args.file.clone().into_os_string();
        p.push(".svg");
        p.into()
    });
    draw(&slices, &out)?;
    for (core, per) in totals(&slices) {
        let parts: Vec<String> = per.iter().map(|(c, us)| format!("{c} {us:.3}")).collect();
        println!("core {core}: {} (µs)", parts.join(", "));
    }
    println!("wrote {}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_becomes_totals_and_an_svg() {
        let text = r#"{"traceEvents":[
            {"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"core 0"}},
            {"ph":"X","name":"send","cat":"send","pid":0,"tid":0,"ts":1.0,"dur":2.5},
            {"ph":"X","name":"compute","cat":"compute","pid":0,"tid":1,"ts":0.0,"dur":4.0},
            {"ph":"s","name":"message","cat":"message","id":1,"pid":0,"tid":0,"ts":1.0}]}"#;
        let s = slices(text).unwrap();
        assert_eq!(s.len(), 2);
        let t = totals(&s);
        assert_eq!(t[&0]["send"], 2.5);
        assert_eq!(t[&1]["compute"], 4.0);
        let out = std::env::temp_dir().join(format!("trace-report-{}.svg", std::process::id()));
        draw(&s, &out).unwrap();
        assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
        let _ = std::fs::remove_file(out);
    }
}
