//! The leaderboard as CSV (`/leaderboard.csv`): which columns, in which order, and how
//! each field is written. One row per current submission the query keeps, with its rates,
//! coverage in valid attempts, tasks short of the attempts asked and runs that ended
//! `infra_error` under each hint condition. Every text a submitter chose is written as no
//! spreadsheet runs it. The server writes the rows in parts, in parallel (`ROWS_A_PART`).

use super::EntryRef;
use crate::format::spreadsheet_text;

/// The CSV's header line.
pub fn head() -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = [
        "agent_id",
        "display_name",
        "framework",
        "model",
        "tier",
        "provenance",
        "harness",
        "harness_version",
        "ranked",
        "tasks_counted",
        "benchmark",
        "benchmark_version",
        "task_set_digest",
        "bundle_id",
        "runs_sampled",
        "runs_reproduced",
        "runs_not_reproduced",
        "runs_heldout",
        "runs_generalised",
        "submitter",
        "submitter_keyid",
        "submitter_rows_same_model",
        "submitter_runs_reproduced",
        "submitter_runs_not_reproduced",
    ]
    .map(str::to_owned)
    .to_vec();
    for hint in bundle::Hint::ALL {
        for m in [
            "final_success",
            "execution_success",
            "file_recall",
            "runs_counted",
            "flagged_successes",
            "tasks",
            "fewest_attempts",
            "most_attempts",
            "solved_every_time",
            "infra_errors",
            "infra_error_share",
            "short_tasks",
            "mean_cost_usd",
            "cost_per_success_usd",
            "cost_runs",
            "cost_checked_runs",
            "cost_marked_runs",
        ] {
            head.push(format!("{m}_{hint}"));
        }
    }
    // The board's Δ, paired over the tasks both conditions cover (issue 75), the tasks it
    // is over, and whether that is fewer than no hints covers.
    head.extend(["uplift_hints", "uplift_hints_tasks", "uplift_hints_partial"].map(str::to_owned));
    w.write_record(&head)?;
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The fewest rows of the CSV worth a thread of their own (a row takes about 5 µs).
pub const ROWS_A_PART: usize = 64;

/// The CSV's rows for `entries` (about `rows` of them), without the header.
pub fn rows<'a>(entries: impl Iterator<Item = EntryRef<'a>>, rows: usize) -> Result<Vec<u8>, csv::Error> {
    // About 500 bytes a row.
    let mut w = csv::Writer::from_writer(Vec::with_capacity(576 * rows));
    // Each field is written as it is made, through one buffer: no row is built, and no
    // number goes through the formatting machinery (4.3 MB at 10,000 agents).
    let mut field = String::new();
    let mut num = |w: &mut csv::Writer<Vec<u8>>, x: Option<f64>| {
        field.clear();
        if let Some(v) = x {
            crate::format::fixed4(v, &mut field);
        }
        w.write_field(&field)
    };
    let mut int = itoa::Buffer::new();
    let mut count = |w: &mut csv::Writer<Vec<u8>>, n: i64| w.write_field(int.format(n));
    for EntryRef { row: r, submitted_by: by, stats, tasks, ranked } in entries {
        // Every text a submitter chose, as no spreadsheet runs it.
        let text = |w: &mut csv::Writer<Vec<u8>>, t: &str| w.write_field(spreadsheet_text(t).as_bytes());
        for t in [&r.agent_id, &r.display_name, &r.framework, &r.model] {
            text(&mut w, t)?;
        }
        w.write_field(r.tier.as_str())?;
        w.write_field(r.provenance.as_str())?;
        text(&mut w, &r.harness.name)?;
        text(&mut w, r.harness.version.as_deref().unwrap_or_default())?;
        w.write_field(if ranked { "true" } else { "false" })?;
        count(&mut w, tasks.len() as i64)?;
        for t in [&r.benchmark_name, &r.benchmark_version, &r.task_set_digest, &r.bundle_id] {
            text(&mut w, t)?;
        }
        for n in
            [r.sample.sampled, r.sample.reproduced, r.sample.differed, r.sample.heldout, r.sample.generalised]
        {
            count(&mut w, n)?;
        }
        text(&mut w, &by.owner)?;
        w.write_field(&by.keyid)?;
        count(&mut w, by.rows_with_model() as i64)?;
        for n in [by.sample.reproduced, by.sample.differed] {
            count(&mut w, n)?;
        }
        for hint in bundle::Hint::ALL {
            let rates = r.by_hint.get(&hint).copied().unwrap_or_default();
            let coverage = r.coverage.get(&hint).copied().unwrap_or_default();
            let every_time = stats.and_then(|s| s.reliability.get(hint)?.every_time());
            for value in [rates.final_success, rates.execution_success, rates.file_recall] {
                num(&mut w, value)?;
            }
            count(&mut w, rates.counted)?;
            count(&mut w, rates.flagged)?;
            for n in [coverage.tasks, coverage.fewest_attempts, coverage.most_attempts] {
                count(&mut w, n)?;
            }
            num(&mut w, every_time.map(|i| i.estimate))?;
            count(&mut w, rates.infra_errors)?;
            num(&mut w, rates.infra_error_share)?;
            count(&mut w, coverage.short_tasks)?;
            num(&mut w, rates.mean_cost_usd)?;
            num(&mut w, rates.cost_per_success_usd)?;
            for n in [rates.cost_runs, rates.cost_checked, rates.cost_marked] {
                count(&mut w, n)?;
            }
        }
        num(&mut w, r.uplift.delta)?;
        count(&mut w, r.uplift.tasks)?;
        w.write_field(if r.uplift.partial() { "true" } else { "false" })?;
        w.write_record(None::<&[u8]>)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}
