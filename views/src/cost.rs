//! What a page says of cost (bundle spec §4m) and of the task folder a run ran (§4n):
//! tokens, a run's stated and computed cost, how much of a row's cost was checked.

use crate::format::{short, usd};

/// How much of a row's cost the board checked (spec §4m), in a few words under the
/// figure, over all its runs: "checked" (every run priced from its tokens), "checked
/// 2/5", "unchecked", and "2 of 5 runs" where some runs state no cost at all (the mean
/// is over those that do). None without a cost, and for a published row, whose cost is
/// its source's average (its badge says where it comes from, and the table's notes what
/// that means for its cost: a word per cell would weigh on each row).
pub fn cost_checked(rates: &store::Rates, provenance: store::ProvenanceKind) -> Option<String> {
    if rates.cost_runs == 0 || provenance == store::ProvenanceKind::Published {
        return None;
    }
    Some(match (rates.cost_checked, rates.cost_runs, rates.runs) {
        (k, c, n) if c < n => format!("{c} of {n} runs, {k} checked"),
        (0, _, _) => "unchecked".to_owned(),
        (k, _, n) if k == n => "checked".to_owned(),
        (k, _, n) => format!("checked {k}/{n}"),
    })
}

/// A run's tokens in a line: "2,920 in · 360 out · 6,400 cache read".
pub fn tokens(tokens: &store::Tokens) -> String {
    let mut parts = vec![format!("{} in", count(tokens.input)), format!("{} out", count(tokens.output))];
    if tokens.cache_read > 0 {
        parts.push(format!("{} cache read", count(tokens.cache_read)));
    }
    if tokens.cache_write > 0 {
        parts.push(format!("{} cache write", count(tokens.cache_write)));
    }
    parts.join(" · ")
}

/// A whole number with thousands separated: 12,400.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the board made of a run's cost (spec §4m), in a sentence: the cost stated and
/// the price of its tokens, or why there is nothing to compare.
pub fn run_cost(run: &store::RunDetail) -> String {
    let usd = |a: f64| usd(Some(a));
    if run.provenance == store::ProvenanceKind::Published {
        return match run.cost_usd {
            Some(c) => format!("{}: the paper's average cost per run of this agent, as published", usd(c)),
            None => "–".to_owned(),
        };
    }
    match (run.cost_usd, run.cost_computed_usd, run.tokens.is_some()) {
        (None, None, false) => "–".to_owned(),
        (Some(s), Some(c), _) => {
            format!("{} stated; its tokens cost {} at its model's price of its day", usd(s), usd(c))
        }
        (None, Some(c), _) => {
            format!("{}: its tokens at its model's price of its day (it states no cost)", usd(c))
        }
        (Some(s), None, true) => {
            format!(
                "{} stated; unchecked: the board's price table has no price for its model on its day",
                usd(s)
            )
        }
        (None, None, true) => {
            "none stated; the board's price table has no price for its model on its day".to_owned()
        }
        (Some(s), None, false) => format!("{} stated", usd(s)),
    }
}

/// A task folder (spec §4n) as a page names it: a Harbor digest's first 12 hex digits,
/// `sha256:` kept; a checksum whole up to 12.
pub fn task_folder(folder: &str) -> String {
    match folder.strip_prefix("sha256:") {
        Some(hex) => format!("sha256:{}", short(hex)),
        None => short(folder).to_owned(),
    }
}
