//! Harness parity: two submissions side by side under one hint condition (see
//! [`crate::parity`]), with the run-level rates of each side's attempts.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Hint, ProvenanceKind, TaskId};

use super::{harness, name};
use crate::parity::{self, Parity, ParitySide, ParityTask, RunRatesFrom, Solved, TaskCount};
use crate::stats::{self, AgentCells, Cell};
use crate::{Store, StoreError, db};

/// A condition's place in the cells (`Hint::ALL`'s order).
fn hint_index(hint: Hint) -> usize {
    Hint::ALL.iter().position(|h| *h == hint).expect("every condition is in Hint::ALL")
}

impl Store {
    /// Two submissions (current or not) side by side under `hint` (see
    /// [`crate::parity`]); none if either is not stored. `published_runs` gives the
    /// run-level rates a published source reports for a submission, which its
    /// reconstructed attempts cannot.
    pub async fn parity(
        &self,
        a: &str,
        b: &str,
        hint: Hint,
        published_runs: impl Fn(&ParitySide) -> Option<Vec<f64>>,
    ) -> Result<Option<Parity>, StoreError> {
        let (Some(mut side_a), Some(mut side_b)) =
            (self.parity_side(a, hint).await?, self.parity_side(b, hint).await?)
        else {
            return Ok(None);
        };
        for (side, bundle) in [(&mut side_a, a), (&mut side_b, b)] {
            if side.provenance == ProvenanceKind::Published {
                match published_runs(side) {
                    Some(runs) => {
                        side.run_rates = runs;
                        side.run_rates_from = RunRatesFrom::Published;
                    }
                    None => {
                        side.run_rates.clear();
                        side.run_rates_from = RunRatesFrom::NotPublished;
                    }
                }
            } else {
                side.run_rates = self.attempt_rates(bundle, hint).await?;
            }
            (side.mean, side.sem, side.low, side.high) = parity::summary(&side.run_rates);
        }
        let (counts_a, counts_b) = (self.task_counts(a, hint).await?, self.task_counts(b, hint).await?);
        let mut names: Vec<&TaskId> = counts_a.keys().chain(counts_b.keys()).collect();
        names.sort();
        names.dedup();
        let mut tasks = Vec::with_capacity(names.len());
        let (mut only_a, mut only_b, mut both, mut neither) = (vec![], vec![], vec![], vec![]);
        for task in names {
            let (x, y) = (counts_a.get(task).copied(), counts_b.get(task).copied());
            let solved = x.zip(y).map(|(x, y)| parity::solved(x, y));
            match solved {
                Some(Solved::OnlyA) => only_a.push(task.clone()),
                Some(Solved::OnlyB) => only_b.push(task.clone()),
                Some(Solved::Both) => both.push(task.clone()),
                Some(Solved::Neither) => neither.push(task.clone()),
                None => {}
            }
            tasks.push(ParityTask { task: task.clone(), a: x, b: y, solved });
        }
        // The paired bootstrap over the tasks both ran, as the comparison page does.
        let cells = |counts: &BTreeMap<TaskId, TaskCount>, id: &str| AgentCells {
            id: id.to_owned(),
            cells: tasks
                .iter()
                .map(|t| {
                    let mut by_hint = [None; 3];
                    by_hint[hint_index(hint)] = counts.get(&t.task).map(|c| Cell {
                        successes: c.successes as u32,
                        executed: 0,
                        counted: c.runs as u32,
                        exec_counted: 0,
                        short: false,
                    });
                    by_hint
                })
                .collect(),
        };
        let (cells_a, cells_b) = (cells(&counts_a, a), cells(&counts_b, b));
        let comparison = tokio::task::spawn_blocking(move || {
            stats::compare(&cells_a, &cells_b, stats::REPLICATES, stats::SEED)
        })
        .await
        .map_err(|source| StoreError::Background { task: "computing the parity", source })?;
        let sign_test_p = stats::sign_test(only_a.len(), only_b.len());
        Ok(Some(Parity {
            hint,
            same_agent: (&side_a.framework, &side_a.framework_version, &side_a.model)
                == (&side_b.framework, &side_b.framework_version, &side_b.model),
            ranges_overlap: parity::ranges_overlap(&side_a.run_rates, &side_b.run_rates),
            difference: comparison.difference.get(hint),
            shared_tasks: comparison.shared_tasks,
            a: side_a,
            b: side_b,
            tasks,
            only_a,
            only_b,
            both,
            neither,
            sign_test_p,
            lopsided: sign_test_p < parity::LOPSIDED_BELOW,
        }))
    }

    /// A submission's side: who, which harness, and its successes under `hint`.
    async fn parity_side(&self, bundle: &str, hint: Hint) -> Result<Option<ParitySide>, StoreError> {
        let Some(row) = db::query(
            "SELECT s.bundle_id, s.agent_id, a.display_name, a.framework, a.framework_version, a.model, s.harness, \
             s.harness_version, s.provenance, s.superseded_by, t.successes, t.counted \
             FROM submissions s JOIN agents a ON a.id = s.agent_id \
             LEFT JOIN totals t ON t.bundle_id = s.bundle_id AND t.hint = $2 WHERE s.bundle_id = $1",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let successes = row.try_get::<Option<i64>, _>("successes")?.unwrap_or(0);
        let runs = row.try_get::<Option<i64>, _>("counted")?.unwrap_or(0);
        // Who: the query's first six columns, in their order.
        let (bundle_id, agent_id, display_name, framework, framework_version, model) =
            sqlx::FromRow::from_row(&row)?;
        Ok(Some(ParitySide {
            bundle_id,
            agent_id,
            display_name,
            framework,
            framework_version,
            model,
            harness: harness(&row)?,
            provenance: name(&row, "provenance")?,
            current: row.try_get::<Option<String>, _>("superseded_by")?.is_none(),
            successes,
            runs,
            final_success: (runs > 0).then(|| successes as f64 / runs as f64),
            run_rates: Vec::new(),
            run_rates_from: RunRatesFrom::Attempts,
            mean: None,
            sem: None,
            low: None,
            high: None,
        }))
    }

    /// Final success of each attempt number over the tasks that have it counted.
    async fn attempt_rates(&self, bundle: &str, hint: Hint) -> Result<Vec<f64>, StoreError> {
        let rows: Vec<(i64, i64)> = db::query_as(
            "SELECT CAST(SUM(CASE WHEN outcome = $3 THEN 1 ELSE 0 END) AS BIGINT) AS won, \
             CAST(COUNT(*) AS BIGINT) AS n FROM runs WHERE bundle_id = $1 AND hint = $2 AND outcome <> $4 \
             GROUP BY attempt ORDER BY attempt",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .bind(vocab::Outcome::Success.as_str())
        .bind(vocab::Outcome::InfraError.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|(won, n)| won as f64 / n as f64).collect())
    }

    /// A submission's successes and counted runs per task under `hint`.
    async fn task_counts(&self, bundle: &str, hint: Hint) -> Result<BTreeMap<TaskId, TaskCount>, StoreError> {
        let rows: Vec<(String, i64, i64)> = db::query_as(
            "SELECT task, successes, counted FROM aggregates WHERE bundle_id = $1 AND hint = $2 AND counted > 0",
        )
        .bind(bundle)
        .bind(hint.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(task, successes, runs)| (TaskId::new(task), TaskCount { successes, runs }))
            .collect())
    }
}
