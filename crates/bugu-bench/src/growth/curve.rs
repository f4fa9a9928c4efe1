//! The ratio curve: at sizes from 10^3 to 10^7, an `ExpandingFilter` grown from its initial
//! capacity to that size against a `CuckooFilter` pre-sized for it, absent and present lookups
//! one by one, medians of interleaved repeats; a table and an SVG chart of the ratios.

use std::error::Error;
use std::fmt::Write as _;
use std::hint::black_box;

use plotters::prelude::*;

use bugu::{Filter, FilterMut};

use super::rows::{expanding, pre_sized};
use crate::contender::grouped;
use crate::report::charts::{COLOURS, SIZE, canvas, frame, legend, legend_line};
use crate::timing::{Clock, median, ns_per_op};
use crate::workload::{Workload, u64_keys};

/// `count` sizes from `low` to `high`, evenly spaced on a log scale, rounded.
pub fn log_sizes(low: usize, high: usize, count: usize) -> Vec<usize> {
    let (a, b) = ((low.max(1) as f64).ln(), (high.max(low).max(1) as f64).ln());
    let steps = count.saturating_sub(1).max(1) as f64;
    (0..count).map(|i| (a + (b - a) * i as f64 / steps).exp().round() as usize).collect()
}

/// What the curve settings are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurveSettings {
    /// The expanding filter's initial capacity.
    pub initial: usize,
    /// Target false-positive rate.
    pub fpr: f64,
    /// The expanding filter's declared maximum.
    pub max_items: usize,
    /// At most this many keys per lookup mix.
    pub max_lookups: usize,
    /// Each timed sample covers at least this many lookups (small filters repeat their lookup
    /// loop), so a sample is never a handful of microseconds.
    pub min_sample: usize,
    /// Timed repeats (interleaved); medians are kept.
    pub repeats: usize,
    /// The clock.
    pub clock: Clock,
    /// Seed of the keys.
    pub seed: u64,
}

/// One size of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// Items inserted.
    pub size: usize,
    /// Median ns per lookup, expanding filter: `[absent, present]`.
    pub expanding_ns: [f64; 2],
    /// Median ns per lookup, pre-sized filter: `[absent, present]`.
    pub pre_sized_ns: [f64; 2],
    /// Present keys either filter reported absent (must be 0), and failed inserts.
    pub lost: usize,
}

impl CurvePoint {
    /// Expanding over pre-sized: `[absent, present]`.
    pub fn ratios(&self) -> [f64; 2] {
        [0, 1].map(|i| self.expanding_ns[i] / self.pre_sized_ns[i])
    }
}

/// `(ns per lookup, hits per pass)` of `passes` passes over `keys`, timed as one loop.
fn time_lookups<F: Filter>(filter: &F, keys: &[u64], passes: usize, clock: Clock) -> (f64, usize) {
    let (elapsed, hits) = clock.time(|| {
        let mut hits = 0;
        for _ in 0..passes {
            for key in keys {
                hits += black_box(filter.contains(key)) as usize;
            }
        }
        hits
    });
    (ns_per_op(elapsed, keys.len() * passes), hits / passes.max(1))
}

/// Measures one size.
pub fn measure(size: usize, settings: &CurveSettings) -> CurvePoint {
    let lookups = settings.max_lookups.min(size).max(1);
    let keys = u64_keys(settings.seed, 0, size);
    let absent = u64_keys(settings.seed, size as u64, lookups);
    let workload = Workload::new(keys, &absent, lookups, settings.seed);
    let mut grown = expanding(settings.initial, settings.fpr, settings.max_items);
    let mut fixed = pre_sized(size, settings.fpr);
    let mut lost = 0;
    for key in &workload.present {
        lost += usize::from(grown.insert(key).is_err()) + usize::from(fixed.insert(key).is_err());
    }
    let mixes = [&workload.lookups[0], &workload.lookups[2]];
    let passes = (settings.min_sample / lookups).max(1);
    let mut times: [[Vec<f64>; 2]; 2] = Default::default();
    for _ in 0..settings.repeats.max(1) {
        for (m, keys) in mixes.iter().enumerate() {
            let (ns, hits) = time_lookups(&grown, keys, passes, settings.clock);
            times[0][m].push(ns);
            lost += if m == 1 { keys.len() - hits } else { 0 };
            let (ns, hits) = time_lookups(&fixed, keys, passes, settings.clock);
            times[1][m].push(ns);
            lost += if m == 1 { keys.len() - hits } else { 0 };
        }
    }
    CurvePoint {
        size,
        expanding_ns: [median(&times[0][0]), median(&times[0][1])],
        pre_sized_ns: [median(&times[1][0]), median(&times[1][1])],
        lost,
    }
}

/// The curve as a markdown table.
pub fn table(points: &[CurvePoint]) -> String {
    let mut out = String::from(
        "| items | expanding absent ns | pre-sized absent ns | absent ratio | expanding present ns | \
         pre-sized present ns | present ratio | lost keys |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in points {
        let [absent, present] = p.ratios();
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {absent:.2} | {:.1} | {:.1} | {present:.2} | {} |",
            p.size, p.expanding_ns[0], p.pre_sized_ns[0], p.expanding_ns[1], p.pre_sized_ns[1], p.lost
        );
    }
    out
}

/// The curve as an SVG chart: the absent and present lookups' ratios against the size (log
/// scale), with a dashed line at each `(limit, label)` guide.
pub fn chart(
    points: &[CurvePoint],
    initial: usize,
    guides: &[(f64, String)],
) -> Result<String, Box<dyn Error>> {
    let series = |i: usize| -> Vec<(f64, f64)> {
        points
            .iter()
            .map(|p| (p.size as f64, p.ratios()[i]))
            .filter(|&(x, y)| x > 0.0 && y.is_finite())
            .collect()
    };
    let lines = [("absent lookups", series(0)), ("present lookups", series(1))];
    let xs = lines.iter().flat_map(|(_, line)| line.iter().map(|p| p.0));
    let (x_min, x_max) = xs.fold((f64::INFINITY, 0.0f64), |(low, high), x| (low.min(x), high.max(x)));
    let (x_min, x_max) = if x_min <= x_max { (x_min / 1.5, x_max * 1.5) } else { (1.0, 10.0) };
    let ys = lines.iter().flat_map(|(_, line)| line.iter().map(|p| p.1)).chain(guides.iter().map(|g| g.0));
    let y_max = ys.fold(0.0, f64::max);
    let y_top = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };

    let mut svg = String::new();
    {
        let root = canvas(SVGBackend::with_string(&mut svg, SIZE))?;
        let caption = format!("ExpandingFilter grown from {initial} / CuckooFilter pre-sized: lookup time");
        let mut chart = frame(&root, caption).build_cartesian_2d((x_min..x_max).log_scale(), 0.0..y_top)?;
        chart
            .configure_mesh()
            .x_desc("items inserted (log scale)")
            .y_desc("time ratio (expanding / pre-sized)")
            .x_labels(6)
            .x_label_formatter(&|x| grouped(x.round() as usize))
            .draw()?;
        for ((name, line), colour) in lines.into_iter().zip(COLOURS) {
            let style = colour.stroke_width(2);
            chart.draw_series(LineSeries::new(line, style))?.label(name).legend(legend_line(style));
        }
        let guide_style = RGBColor(85, 85, 85).stroke_width(1);
        for (limit, label) in guides {
            let dashed = DashedLineSeries::new([(x_min, *limit), (x_max, *limit)], 6, 4, guide_style);
            chart.draw_series(dashed)?.label(label).legend(legend_line(guide_style));
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_log_spaced_sizes() {
        let sizes = log_sizes(1_000, 10_000_000, 8);
        assert_eq!(sizes, [1_000, 3_728, 13_895, 51_795, 193_070, 719_686, 2_682_696, 10_000_000]);
        assert_eq!(log_sizes(1_000, 1_000, 1), [1_000]);
        assert_eq!(log_sizes(10, 1_000, 3), [10, 100, 1_000]);
    }

    #[test]
    fn a_chart_of_no_points_still_renders() {
        let svg = chart(&[], 100, &[]).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn a_small_curve_point_loses_nothing() {
        let settings = CurveSettings {
            initial: 100,
            fpr: 0.001,
            max_items: 1 << 20,
            max_lookups: 1_000,
            min_sample: 2_000,
            repeats: 1,
            clock: Clock::Wall,
            seed: 7,
        };
        let point = measure(5_000, &settings);
        assert_eq!(point.lost, 0);
        assert!(point.ratios().iter().all(|r| r.is_finite() && *r > 0.0), "{point:?}");
        let text = table(std::slice::from_ref(&point));
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(2).unwrap().starts_with("| 5000 |"), "{text}");
        let svg = chart(&[point], 100, &[(2.0, "target".into())]).unwrap();
        let texts: Vec<&str> =
            svg.split("</text>").filter_map(|t| t.rsplit_once('>')).map(|(_, t)| t.trim()).collect();
        for label in ["absent lookups", "present lookups", "target"] {
            assert!(texts.contains(&label), "{label}: {svg}");
        }
    }
}
