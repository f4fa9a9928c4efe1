//! A progress bar on standard error while a long input is read (only when standard error is a
//! terminal), and the summary line printed at the end.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::input::Source;

/// Inputs shorter than this finish before a bar would be worth drawing.
const BAR_FROM_BYTES: u64 = 8 << 20;

pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    items: u64,
    /// Print the summary line.
    summary: bool,
}

impl Progress {
    /// Starts timing a command reading `source`; `summary` says whether it ends with a summary.
    pub(crate) fn start(source: &Source, summary: bool) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bar = source.len_hint().filter(|&len| terminal && len >= BAR_FROM_BYTES).map(|len| {
            let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .expect("a valid template");
            bar.set_style(style);
            bar
        });
        Self { bar, started: Instant::now(), items: 0, summary }
    }

    /// A block of `items` items, `bytes` bytes of input, was processed.
    pub(crate) fn advance(&mut self, items: usize, bytes: u64) {
        self.items += items as u64;
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    /// Clears the bar and prints `bugu: <what> in <time> (<rate> items/s)`.
    pub(crate) fn finish(self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if self.summary {
            let seconds = self.started.elapsed().as_secs_f64();
            let rate = self.items as f64 / seconds.max(1e-9);
            eprintln!("bugu: {what} in {seconds:.2} s ({} items/s)", human(rate));
        }
    }
}

/// 1234567.0 -> "1.23 M".
fn human(rate: f64) -> String {
    match rate {
        r if r >= 1e6 => format!("{:.2} M", r / 1e6),
        r if r >= 1e3 => format!("{:.1} k", r / 1e3),
        r => format!("{r:.0}"),
    }
}
