//! SVG charts drawn with `plotters` (SVG backend only: text is written as SVG `<text>`, so no
//! system fonts are needed to draw them).
//!
//! 1. ns per lookup of absent keys against the number of keys, a line per filter;
//! 2. bits per item against the measured false-positive rate, a point per filter (the
//!    space/accuracy trade-off; lower left is better), with the information-theoretic floor
//!    `log2(1/eps)` for reference.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::Report;
use crate::contender::{grouped, percent};

/// Distinct colours, bugu rows first in table order.
pub(crate) const COLOURS: [RGBColor; 12] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
    RGBColor(0, 0, 0),
    RGBColor(90, 60, 160),
];

/// Row names in table order, each with its colour.
fn series(report: &Report) -> Vec<(String, RGBColor)> {
    let mut names: Vec<String> = Vec::new();
    for m in &report.measurements {
        if !names.contains(&m.name) {
            names.push(m.name.clone());
        }
    }
    names.into_iter().enumerate().map(|(i, name)| (name, COLOURS[i % COLOURS.len()])).collect()
}

fn colour_of(series: &[(String, RGBColor)], name: &str) -> RGBColor {
    series.iter().find(|(n, _)| n == name).map_or(BLACK, |&(_, c)| c)
}

/// Width and height of every chart, in pixels.
pub(crate) const SIZE: (u32, u32) = (960, 600);

/// A white drawing area of [`SIZE`] over `backend`.
pub(crate) fn canvas<'a>(
    backend: SVGBackend<'a>,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, Box<dyn Error>> {
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

/// The frame every chart shares: `caption` above the plot, and room for the axes' labels.
pub(crate) fn frame<'a, 'b, 'c>(
    root: &'a DrawingArea<SVGBackend<'c>, Shift>,
    caption: String,
) -> ChartBuilder<'a, 'b, SVGBackend<'c>> {
    let mut builder = ChartBuilder::on(root);
    builder.caption(caption, ("sans-serif", 22)).margin(20).x_label_area_size(50).y_label_area_size(70);
    builder
}

/// A legend entry's sample: a short line in `style`.
pub(crate) fn legend_line(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style)
}

/// Draws the legend of `chart`'s labelled series at `position`, on a box that keeps lines
/// under it readable.
pub(crate) fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), Box<dyn Error>> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Chart 1: ns per lookup (0% present) against the number of keys.
pub fn lookup_chart(report: &Report, path: &Path) -> Result<(), Box<dyn Error>> {
    let sizes = report.sizes();
    let (Some(&min), Some(&max)) = (sizes.first(), sizes.last()) else { return Ok(()) };
    // Headroom above the highest point keeps the lines clear of the legend in the upper left.
    let y_max = report.measurements.iter().map(|m| m.lookup_ns[0]).fold(0.0, f64::max) * 1.7;

    let root = canvas(SVGBackend::new(path, SIZE))?;
    let caption =
        format!("Lookup of absent keys ({} keys, median of {} repeat(s))", report.key_type, report.repeats);
    let mut chart = frame(&root, caption)
        .build_cartesian_2d((min as f64 / 1.5..max as f64 * 1.5).log_scale(), 0.0..y_max.max(1.0))?;
    chart
        .configure_mesh()
        .x_desc("keys in the filter")
        .y_desc("ns per lookup (0% present)")
        .x_labels(6)
        .x_label_formatter(&|x| grouped(x.round() as usize))
        .draw()?;

    for (name, colour) in series(report) {
        let points: Vec<(f64, f64)> = report
            .measurements
            .iter()
            .filter(|m| m.name == name)
            .map(|m| (m.keys as f64, m.lookup_ns[0]))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
            .label(name)
            .legend(legend_line(colour.stroke_width(2)));
        chart.draw_series(points.into_iter().map(|p| Circle::new(p, 4, colour.filled())))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}

/// Chart 2 at one size: bits per item against the measured false-positive rate. Returns the
/// names of the filters left out because they measured no false positive (a log axis cannot
/// show 0).
pub fn space_chart(report: &Report, keys: usize, path: &Path) -> Result<Vec<String>, Box<dyn Error>> {
    let rows: Vec<_> = report.at(keys).filter(|m| !m.kind.is_variant()).collect();
    let (shown, zero): (Vec<_>, Vec<_>) = rows.into_iter().partition(|m| m.false_positives > 0);
    let left_out: Vec<String> = zero.iter().map(|m| m.name.clone()).collect();
    if shown.is_empty() {
        // Small sizes can measure no false positive at all (a peer's random hasher makes that
        // vary from run to run): the chart is still written, saying so, so that its path exists.
        let root = canvas(SVGBackend::new(path, SIZE))?;
        root.draw(&Text::new(
            format!(
                "Space vs accuracy at {} {} keys: no filter measured a false positive ({})",
                grouped(keys),
                report.key_type,
                left_out.join(", ")
            ),
            (40, 290),
            ("sans-serif", 18),
        ))?;
        root.present()?;
        return Ok(left_out);
    }
    let fp_min = shown.iter().map(|m| m.fp_rate()).fold(f64::INFINITY, f64::min) / 2.0;
    let fp_max = shown.iter().map(|m| m.fp_rate()).fold(0.0, f64::max) * 2.0;
    let bits_max = shown.iter().map(|m| m.bits_per_item()).fold(0.0, f64::max) * 1.15;

    let root = canvas(SVGBackend::new(path, SIZE))?;
    let caption =
        format!("Space vs accuracy at {} {} keys (lower left is better)", grouped(keys), report.key_type);
    let mut chart = frame(&root, caption).build_cartesian_2d((fp_min..fp_max).log_scale(), 0.0..bits_max)?;
    chart
        .configure_mesh()
        .x_desc("measured false-positive rate")
        .y_desc("bits per item")
        .x_label_formatter(&|x| percent(*x))
        .draw()?;

    // The floor: no filter can use fewer than log2(1/eps) bits per item.
    let floor: Vec<(f64, f64)> = (0..=100)
        .map(|i| fp_min * (fp_max / fp_min).powf(i as f64 / 100.0))
        .map(|e| (e, -e.log2()))
        .collect();
    chart
        .draw_series(LineSeries::new(floor, BLACK.mix(0.4).stroke_width(1)))?
        .label("log2(1/eps): information-theoretic floor")
        .legend(legend_line(BLACK.mix(0.4).into()));

    let colours = series(report);
    for (i, m) in shown.iter().enumerate() {
        let colour = colour_of(&colours, &m.name);
        // Points that nearly coincide (two Bloom filters at the same rate) get their labels
        // stacked instead of printed over each other.
        let near = shown[..i]
            .iter()
            .filter(|o| {
                (o.fp_rate().log10() - m.fp_rate().log10()).abs() < 0.15
                    && (o.bits_per_item() - m.bits_per_item()).abs() < 0.08 * bits_max
            })
            .count() as i32;
        chart.draw_series(std::iter::once(
            EmptyElement::at((m.fp_rate(), m.bits_per_item()))
                + Circle::new((0, 0), 5, colour.filled())
                + Text::new(
                    m.name.clone(),
                    (8, -14 - 16 * near),
                    ("sans-serif", 14).into_font().color(&colour),
                ),
        ))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    if !left_out.is_empty() {
        root.draw(&Text::new(
            format!("not shown (no false positive measured): {}", left_out.join(", ")),
            (90, 575),
            ("sans-serif", 13),
        ))?;
    }
    root.present()?;
    Ok(left_out)
}

/// Draws every chart into `dir`; the paths written.
pub fn draw_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let lookup = dir.join(format!("lookup-absent-{}.svg", report.key_type));
    lookup_chart(report, &lookup)?;
    written.push(lookup);
    for keys in report.sizes() {
        let path = dir.join(format!("space-accuracy-{}-{keys}.svg", report.key_type));
        space_chart(report, keys, &path)?;
        written.push(path);
    }
    Ok(written)
}
