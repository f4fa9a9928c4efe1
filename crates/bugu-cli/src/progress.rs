//! What a person at a terminal sees while a long command runs, on standard error (only when it
//! is a terminal): a bar over a long input file's bytes, a spinner with the count and rate of
//! items read from standard input (whose length is unknown), and then each step after the
//! reading (the save) as its own line, so that nothing sits at 99% while the file is written.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::input::Source;

/// Inputs shorter than this finish before a bar would be worth drawing.
const BAR_FROM_BYTES: u64 = 8 << 20;

/// How often a spinner is redrawn when nothing else moves it.
const TICK: Duration = Duration::from_millis(100);

/// A long input file: its bytes.
const FILE_BAR: &str = "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}";
/// Standard input, of unknown length: the items read and their rate.
const STDIN_SPINNER: &str = "{spinner} {human_pos} items read, {per_sec}";
/// A step after the reading.
const STEP_SPINNER: &str = "{spinner} {msg} {elapsed}";

/// What the bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Bytes,
    Items,
}

pub(crate) struct Progress {
    bar: Option<(ProgressBar, Unit)>,
    started: Instant,
    items: u64,
}

impl Progress {
    /// Starts timing a command reading `source`, with a bar or a spinner if `shown` and standard
    /// error is a terminal.
    pub(crate) fn start(source: &Source, shown: bool) -> Self {
        let visible = shown && std::io::stderr().is_terminal();
        let bar = match source {
            _ if !visible => None,
            Source::Stdin => Some((spinner(STDIN_SPINNER), Unit::Items)),
            _ => source.len_hint().filter(|&len| len >= BAR_FROM_BYTES).map(|len| {
                let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
                bar.set_style(style(FILE_BAR));
                (bar, Unit::Bytes)
            }),
        };
        Self { bar, started: Instant::now(), items: 0 }
    }

    /// A block of `items` items, `bytes` bytes of input, was processed.
    pub(crate) fn advance(&mut self, items: usize, bytes: u64) {
        self.items += items as u64;
        if let Some((bar, unit)) = &self.bar {
            bar.inc(if *unit == Unit::Bytes { bytes } else { items as u64 });
        }
    }

    /// The reading is done and `what` (saving the file, say) begins: the bar makes way for a
    /// spinner naming it.
    pub(crate) fn step(&mut self, what: &str) {
        if let Some((bar, _)) = self.bar.take() {
            bar.finish_and_clear();
            let step = spinner(STEP_SPINNER);
            step.set_message(what.to_string());
            self.bar = Some((step, Unit::Items));
        }
    }

    /// The step for saving `path`.
    pub(crate) fn saving(&mut self, path: &Path) {
        self.step(&format!("saving {}", path.display()));
    }

    /// Clears the bar; returns the items read and the seconds since the start.
    pub(crate) fn finish(self) -> (u64, f64) {
        if let Some((bar, _)) = &self.bar {
            bar.finish_and_clear();
        }
        (self.items, self.started.elapsed().as_secs_f64())
    }
}

fn style(template: &str) -> ProgressStyle {
    // The templates are this file's constants, each checked by a test.
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A spinner on standard error that redraws itself.
fn spinner(template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(style(template));
    bar.enable_steady_tick(TICK);
    bar
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_templates_parse() {
        for template in [super::FILE_BAR, super::STDIN_SPINNER, super::STEP_SPINNER] {
            assert!(indicatif::ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}
