//! Ratios between two measured figures, and the targets a run is judged against.
//!
//! The harness only measures: which ratio a change must reach is a decision of the people who
//! ask for it, and it moves with the project, so it is not written in the code. A report prints
//! every ratio it knows, each under a short name; a target is passed on the command line as
//! `--target NAME<=LIMIT` or `--target NAME>=LIMIT` (with `:every-round` appended, the ratio must
//! also hold in each round, not only in the medians), and the ratio's row then shows the target
//! and its verdict.

use std::fmt::Write as _;
use std::str::FromStr;

/// Which side of its limit a ratio must stay on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// At most this.
    AtMost(f64),
    /// At least this.
    AtLeast(f64),
}

impl Bound {
    /// Whether `value` is on the right side of the limit.
    pub fn holds(self, value: f64) -> bool {
        match self {
            Bound::AtMost(limit) => value <= limit,
            Bound::AtLeast(limit) => value >= limit,
        }
    }

    fn describe(self) -> String {
        match self {
            Bound::AtMost(limit) => format!("<= {limit:.2}"),
            Bound::AtLeast(limit) => format!(">= {limit:.2}"),
        }
    }
}

/// `--target NAME<=LIMIT[:every-round]`: what one named ratio must be.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The ratio's short name, as the report prints it.
    pub name: String,
    /// Its limit.
    pub bound: Bound,
    /// Whether the ratio must hold in every round as well as in the medians.
    pub every_round: bool,
}

/// The suffix that asks for the ratio to hold in every round.
const EVERY_ROUND: &str = ":every-round";

impl Target {
    /// Whether the target is met by the ratio of the medians `value` and, if it asks for it, by
    /// each of the per-round ratios.
    pub fn met(&self, value: f64, per_round: &[f64]) -> bool {
        self.bound.holds(value) && (!self.every_round || per_round.iter().all(|&r| self.bound.holds(r)))
    }

    fn describe(&self) -> String {
        let rule = if self.every_round { " (and in every round)" } else { "" };
        format!("{}{rule}", self.bound.describe())
    }
}

impl FromStr for Target {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (spec, every_round) = match text.strip_suffix(EVERY_ROUND) {
            Some(spec) => (spec, true),
            None => (text, false),
        };
        let (name, limit, bound): (&str, &str, fn(f64) -> Bound) = if let Some((n, l)) = spec.split_once("<=")
        {
            (n, l, Bound::AtMost)
        } else if let Some((n, l)) = spec.split_once(">=") {
            (n, l, Bound::AtLeast)
        } else {
            return Err(format!(
                "expected NAME<=LIMIT or NAME>=LIMIT (optionally {EVERY_ROUND}), got {text:?}"
            ));
        };
        let name = name.trim();
        let limit: f64 = limit.trim().parse().map_err(|_| format!("not a number: {:?}", limit.trim()))?;
        if name.is_empty() || !limit.is_finite() {
            return Err(format!("expected NAME<=LIMIT or NAME>=LIMIT with a finite LIMIT, got {text:?}"));
        }
        Ok(Target { name: name.to_string(), bound: bound(limit), every_round })
    }
}

/// An error naming the targets whose ratio the report does not know, or `Ok` if there is none.
pub fn check_names(targets: &[Target], known: &[&str]) -> Result<(), String> {
    let unknown: Vec<&str> =
        targets.iter().map(|t| t.name.as_str()).filter(|name| !known.contains(name)).collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!("no ratio named {} (the ratios: {})", unknown.join(", "), known.join(", ")))
    }
}

/// One ratio of a report: its name, its words, the ratio of the medians (if both figures were
/// measured) and the ratio within each round that measured both.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioRow<'a> {
    /// The short name a `--target` refers to.
    pub name: &'a str,
    /// What is divided by what, in words.
    pub label: &'a str,
    /// The ratio of the medians.
    pub value: Option<f64>,
    /// The ratio in each round, in round order.
    pub per_round: Vec<f64>,
    /// Why there is no value, if there is none for a known reason ("row skipped"): printed as
    /// `n/a (reason)` in the value cell and as the verdict of a target naming the ratio, which
    /// then counts as neither met nor missed. Without a reason such a target is "not measured".
    pub unmeasured: Option<&'a str>,
}

impl RatioRow<'_> {
    /// What the value cell and, under a target, the verdict say of a ratio without a value.
    fn absent(&self) -> String {
        self.unmeasured.map_or_else(|| "n/a".to_string(), |reason| format!("n/a ({reason})"))
    }
}

/// The verdict of one row: `words[0]` (met) or `words[1]` (missed) where a target names it and
/// it was measured; "n/a (reason)" or "not measured" where a target names it and it was not.
fn verdict(row: &RatioRow<'_>, target: Option<&Target>, words: [&str; 2]) -> String {
    match (target, row.value) {
        (None, _) => String::new(),
        (Some(_), None) if row.unmeasured.is_some() => row.absent(),
        (Some(_), None) => "not measured".to_string(),
        (Some(target), Some(value)) => {
            if target.met(value, &row.per_round) { words[0] } else { words[1] }.to_string()
        }
    }
}

/// The ratios as a markdown table — ratio, value, per round, target, verdict — with the targets
/// that name them; rows can follow (same five columns). Also returns how many targets were met.
pub fn table(rows: &[RatioRow<'_>], targets: &[Target]) -> (String, usize) {
    table_worded(rows, targets, ["pass", "FAIL"])
}

/// [`table`] with its own words for a target met and missed (e.g. `["met", "missed"]`).
pub fn table_worded(rows: &[RatioRow<'_>], targets: &[Target], words: [&str; 2]) -> (String, usize) {
    let mut out = String::from("| ratio | value (of the medians) | per round | target | verdict |\n");
    out.push_str("|---|---:|---|---:|---|\n");
    let mut met = 0;
    for row in rows {
        let target = targets.iter().find(|t| t.name == row.name);
        let verdict = verdict(row, target, words);
        met += usize::from(verdict == words[0]);
        let value = row.value.map_or_else(|| row.absent(), |v| format!("{v:.2}"));
        let per_round: Vec<String> = row.per_round.iter().map(|r| format!("{r:.2}")).collect();
        let _ = writeln!(
            out,
            "| {} (`{}`) | {value} | {} | {} | {verdict} |",
            row.label,
            row.name,
            per_round.join(", "),
            target.map_or_else(String::new, Target::describe)
        );
    }
    (out, met)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_parsed() {
        let at_most: Target = "lookups<=0.85".parse().unwrap();
        assert_eq!(
            at_most,
            Target { name: "lookups".into(), bound: Bound::AtMost(0.85), every_round: false }
        );
        let at_least: Target = " scaling >= 1.8:every-round".parse().unwrap();
        assert_eq!(
            at_least,
            Target { name: "scaling".into(), bound: Bound::AtLeast(1.8), every_round: true }
        );
        for bad in ["lookups", "lookups<0.5", "<=0.5", "x<=y", "x>=inf", "x<=0.5:sometimes"] {
            assert!(bad.parse::<Target>().is_err(), "{bad:?} accepted");
        }
        assert!(check_names(std::slice::from_ref(&at_most), &["lookups", "scaling"]).is_ok());
        let error = check_names(&[at_most, at_least], &["lookups"]).unwrap_err();
        assert!(error.starts_with("no ratio named scaling"), "{error}");
    }

    #[test]
    fn verdicts_follow_the_medians_and_if_asked_every_round() {
        let row = |name, value| RatioRow {
            name,
            label: "a / b",
            value,
            per_round: vec![0.4, 0.6],
            unmeasured: None,
        };
        let targets: Vec<Target> =
            ["x<=0.5", "y<=0.5:every-round", "z>=2"].iter().map(|t| t.parse().unwrap()).collect();
        let (text, met) =
            table(&[row("x", Some(0.5)), row("y", Some(0.5)), row("z", None), row("w", Some(1.0))], &targets);
        assert_eq!(met, 1);
        assert!(text.contains("| a / b (`x`) | 0.50 | 0.40, 0.60 | <= 0.50 | pass |"), "{text}");
        assert!(
            text.contains("| a / b (`y`) | 0.50 | 0.40, 0.60 | <= 0.50 (and in every round) | FAIL |"),
            "{text}"
        );
        assert!(text.contains("| a / b (`z`) | n/a | 0.40, 0.60 | >= 2.00 | not measured |"), "{text}");
        assert!(text.contains("| a / b (`w`) | 1.00 | 0.40, 0.60 |  |  |"), "{text}");
        let skipped = |name| RatioRow { unmeasured: Some("row skipped"), ..row(name, None) };
        let (text, met) = table_worded(
            &[row("x", Some(0.5)), row("y", Some(0.5)), skipped("z"), skipped("w")],
            &targets,
            ["met", "missed"],
        );
        assert_eq!(met, 1);
        assert!(
            text.contains("| <= 0.50 | met |") && text.contains("(and in every round) | missed |"),
            "{text}"
        );
        // A ratio without a value for a stated reason says so, and is neither met nor missed.
        assert!(
            text.contains("(`z`) | n/a (row skipped) | 0.40, 0.60 | >= 2.00 | n/a (row skipped) |"),
            "{text}"
        );
        assert!(text.contains("(`w`) | n/a (row skipped) | 0.40, 0.60 |  |  |"), "{text}");
    }
}
