//! A small SVG line chart: a log-scaled x axis, a linear y axis from 0, one polyline per series,
//! dashed horizontal guides (targets) and a legend. Written by hand: one chart does not need a
//! plotting crate, and the output is plain text a test can read.

use std::fmt::Write as _;

/// One line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend entry.
    pub name: String,
    /// `(x, y)` points, x > 0 (the x axis is logarithmic), in the order they are joined.
    pub points: Vec<(f64, f64)>,
}

/// A chart: titles, the series, and horizontal guides `(y, label)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Printed above the plot.
    pub title: String,
    /// Under the x axis.
    pub x_label: String,
    /// Beside the y axis.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Dashed horizontal lines, e.g. a target ratio.
    pub guides: Vec<(f64, String)>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

/// Escapes text for an SVG text node or attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A round step for about five ticks over `0..=top`.
fn tick_step(top: f64) -> f64 {
    let raw = top / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * magnitude).find(|&step| step >= raw).unwrap_or(raw)
}

impl Chart {
    /// The chart as an SVG document.
    pub fn render(&self) -> String {
        let points =
            self.series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| *x > 0.0 && y.is_finite());
        let (mut x_min, mut x_max, mut y_max) = (f64::MAX, f64::MIN, 0.0f64);
        for &(x, y) in points {
            x_min = x_min.min(x.log10());
            x_max = x_max.max(x.log10());
            y_max = y_max.max(y);
        }
        if x_min > x_max {
            (x_min, x_max) = (0.0, 1.0);
        }
        if x_max - x_min < 1e-9 {
            x_max = x_min + 1.0;
        }
        y_max = self.guides.iter().map(|g| g.0).fold(y_max, f64::max);
        let y_top = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
        let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |x: f64| LEFT + (x.log10() - x_min) / (x_max - x_min) * plot_w;
        let py = |y: f64| TOP + plot_h - y / y_top * plot_h;

        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            LEFT + plot_w / 2.0,
            escape(&self.title)
        );
        // Axes, with ticks at powers of ten (x) and round steps (y).
        let (x0, y0) = (LEFT, TOP + plot_h);
        let _ = writeln!(out, r#"<path d="M{x0},{TOP} V{y0} H{}" stroke="black" fill="none"/>"#, x0 + plot_w);
        for exponent in (x_min.ceil() as i32)..=(x_max.floor() as i32) {
            let x = px(10f64.powi(exponent));
            let _ = writeln!(
                out,
                r#"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{}" stroke="black"/><text x="{x:.1}" y="{}" text-anchor="middle">10^{exponent}</text>"#,
                y0 + 5.0,
                y0 + 18.0
            );
        }
        let step = tick_step(y_top);
        for k in 0..=((y_top / step + 1e-9).floor() as usize) {
            let tick = k as f64 * step;
            let y = py(tick);
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0,
                x0 + plot_w,
                x0 - 6.0,
                y + 4.0,
                format!("{tick:.2}").trim_end_matches('0').trim_end_matches('.')
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            HEIGHT - 15.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            out,
            r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for (y, label) in &self.guides {
            let _ = writeln!(
                out,
                r##"<line x1="{x0}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#555" stroke-dasharray="6,4"/><text x="{2}" y="{3:.1}">{4}</text>"##,
                py(*y),
                x0 + plot_w,
                x0 + plot_w + 6.0,
                py(*y) + 4.0,
                escape(label)
            );
        }
        for (i, series) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let coords: Vec<String> = series
                .points
                .iter()
                .filter(|(x, y)| *x > 0.0 && y.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                coords.join(" ")
            );
            let legend_y = TOP + 20.0 * i as f64 + 40.0;
            let _ = writeln!(
                out,
                r#"<line x1="{0}" y1="{legend_y}" x2="{1}" y2="{legend_y}" stroke="{colour}" stroke-width="2"/><text x="{2}" y="{3}">{4}</text>"#,
                x0 + plot_w + 6.0,
                x0 + plot_w + 26.0,
                x0 + plot_w + 30.0,
                legend_y + 4.0,
                escape(&series.name)
            );
        }
        out.push_str("</svg>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>) -> Chart {
        Chart {
            title: "ratio <curve> & more".into(),
            x_label: "items".into(),
            y_label: "x".into(),
            series,
            guides: vec![(2.0, "target 2x".into())],
        }
    }

    #[test]
    fn one_polyline_per_series_with_every_point() {
        let points = |k: f64| (3..=7).map(|e| (10f64.powi(e), k * e as f64 / 7.0)).collect::<Vec<_>>();
        let svg = chart(vec![
            Series { name: "absent".into(), points: points(1.0) },
            Series { name: "present".into(), points: points(1.5) },
        ])
        .render();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        for line in svg.lines().filter(|l| l.starts_with("<polyline")) {
            let coords = line.split('"').nth(1).unwrap();
            assert_eq!(coords.split(' ').count(), 5, "{line}");
            for pair in coords.split(' ') {
                let (x, y) = pair.split_once(',').unwrap();
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                assert!(
                    (LEFT..=WIDTH - RIGHT).contains(&x) && (TOP..=HEIGHT - BOTTOM).contains(&y),
                    "{pair}"
                );
            }
        }
        // The x ticks are the powers of ten in range; the title is escaped; the guide is drawn.
        for e in 3..=7 {
            assert!(svg.contains(&format!(">10^{e}</text>")), "{svg}");
        }
        assert!(svg.contains("ratio &lt;curve&gt; &amp; more"));
        assert!(svg.contains("stroke-dasharray") && svg.contains(">target 2x</text>"));
        assert!(svg.contains(">absent</text>") && svg.contains(">present</text>"));
    }

    #[test]
    fn degenerate_input_still_renders() {
        let svg =
            chart(vec![Series { name: "one".into(), points: vec![(1000.0, 1.0), (0.0, 5.0)] }]).render();
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert!(chart(Vec::new()).render().ends_with("</svg>\n"));
        assert_eq!(tick_step(2.2), 0.5);
        assert_eq!(tick_step(11.0), 2.5);
    }
}
