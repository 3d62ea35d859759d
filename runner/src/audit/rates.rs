//! The audit's numbers: the leaderboard row's rates, harness, coverage and reliability,
//! and the agent's task × hint grid, each against what the signed manifest gives (spec
//! §4's definitions, recomputed here, not with the server's code).

use std::collections::BTreeMap;

use bundle::{Hint, Manifest};

use super::api::*;
use super::tally::{Tally, reliability};

/// The leaderboard row's rates under each hint condition, and its harness, against the
/// signed manifest's.
pub(super) fn row_rates(
    row: &RowAnswer,
    manifest: &Manifest,
    totals: &BTreeMap<Hint, Tally>,
    check: &mut impl FnMut(bool, String),
) {
    let mut found = Vec::new();
    for hint in Hint::ALL {
        let served = row.by_hint.get(&hint).copied().unwrap_or_default();
        let signed = totals.get(&hint).copied().unwrap_or_default();
        found.extend(signed.differences(&served).into_iter().map(|d| format!("{}: {d}", hint.label())));
    }
    check(
        found.is_empty(),
        if found.is_empty() {
            "leaderboard: final success, execution success and file recall under each hint condition equal the signed manifest's".into()
        } else {
            format!("leaderboard: {}", found.join("; "))
        },
    );
    let harness = manifest.harness();
    check(
        row.harness == HarnessAnswer { name: harness.name.clone(), version: harness.version.clone() },
        format!("harness: the row names {}, the signed manifest {harness}", row.harness.name),
    );
}

/// What the row's coverage in valid attempts (spec §4f, each cell held to the attempts
/// its task asks, as the server's task list says them; published results keep their
/// source's design) and its pass@k and pass^k (from the counts as reported: the strict
/// view moves them with the reviews) differ by from the signed manifest's.
pub(super) fn coverage_and_reliability(
    row: &RowAnswer,
    manifest: &Manifest,
    cells: &BTreeMap<(String, Hint), Tally>,
    tasks: &TasksAnswer,
) -> Vec<String> {
    let asked = |task: &str| {
        tasks
            .tasks
            .iter()
            .find(|t| t.id == task)
            .map_or(i64::from(bundle::BENCHMARK_ATTEMPTS), |t| i64::from(t.attempts))
    };
    let published = manifest.provenance.kind == bundle::ProvenanceKind::Published;
    let mut found = Vec::new();
    for hint in Hint::ALL {
        let signed: Vec<(&str, i64)> = cells
            .iter()
            .filter(|((_, h), t)| *h == hint && t.runs > 0)
            .map(|((task, _), t)| (task.as_str(), t.counted))
            .collect();
        let valid: Vec<i64> = signed.iter().map(|(_, n)| *n).filter(|n| *n > 0).collect();
        let served = row.coverage.get(&hint).copied();
        let expected = (!signed.is_empty()).then(|| CoverageAnswer {
            tasks: valid.len() as i64,
            fewest_attempts: valid.iter().copied().min().unwrap_or(0),
            most_attempts: signed.iter().map(|(_, n)| *n).max().unwrap_or(0),
            short_tasks: if published {
                0
            } else {
                signed.iter().filter(|(task, n)| *n < asked(task)).count() as i64
            },
        });
        if served != expected {
            found.push(format!(
                "{}: coverage {served:?}, the signed manifest gives {expected:?}",
                hint.label()
            ));
        }
        let counts: Vec<(i64, i64)> = cells
            .iter()
            .filter(|((_, h), t)| *h == hint && t.counted > 0)
            .map(|(_, t)| (t.counted, t.successes))
            .collect();
        let shown = row.stats.as_ref().and_then(|s| s.reliability.get(&hint)).and_then(Option::as_ref);
        match (shown, counts.is_empty()) {
            (None, true) => {}
            (None, false) => found.push(format!("{}: no pass@k or pass^k shown", hint.label())),
            (Some(_), true) => found.push(format!("{}: pass@k shown without counted runs", hint.label())),
            (Some(r), false) => {
                let (at, all) = reliability(&counts);
                let same = |served: &[Estimate], mine: &[f64]| {
                    served.len() == mine.len()
                        && served.iter().zip(mine).all(|(s, m)| (s.estimate - m).abs() <= 1e-9)
                };
                if !same(&r.pass_at, &at) || !same(&r.pass_all, &all) {
                    found.push(format!("{}: pass@k or pass^k differ from the signed counts", hint.label()));
                }
            }
        }
    }
    found
}

/// The agent's task × hint grid as the server shows it, cell by cell, against the signed
/// manifest's: every cell shown equals its tally, and every cell with runs is shown.
pub(super) fn task_grid(
    detail: &AgentAnswer,
    bundle_id: &str,
    cells: &BTreeMap<(String, Hint), Tally>,
    check: &mut impl FnMut(bool, String),
) {
    let grid = detail.current.get(bundle_id);
    let mut found = Vec::new();
    let served_cells: Vec<(String, Hint, Rates)> = grid
        .into_iter()
        .flatten()
        .flat_map(|(task, by_hint)| by_hint.iter().map(move |(h, r)| (task.clone(), *h, *r)))
        .collect();
    for (task, hint, served) in &served_cells {
        let signed = cells.get(&(task.clone(), *hint)).copied().unwrap_or_default();
        found.extend(
            signed.differences(served).into_iter().map(|d| format!("{task} / {}: {d}", hint.label())),
        );
    }
    for (task, hint) in cells.keys() {
        if !served_cells.iter().any(|(t, h, _)| t == task && h == hint) {
            found.push(format!(
                "{task} / {}: the signed manifest has runs the server does not show",
                hint.label()
            ));
        }
    }
    check(
        found.is_empty(),
        if found.is_empty() {
            format!("per task: all {} task × hint cells equal the signed manifest's", cells.len())
        } else {
            format!("per task: {}", found.join("; "))
        },
    );
}
