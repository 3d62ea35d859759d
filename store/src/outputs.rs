//! Who may read each task's runs' outputs, where a maintainer has changed what the
//! task's card says, and which tasks' runs refer to an artifact. The rule that decides
//! a read from these facts is `views::access`; the store only keeps them.

use std::collections::BTreeMap;

use sqlx::Row;
use vocab::{Outputs, TaskId};

use crate::db;
use crate::error::StoreError;
use crate::reads::name;
use crate::{Store, now};

/// A maintainer's change of a task's outputs, as the change log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputsChange {
    /// The change log's sequence number of the change; `None` where the task's outputs
    /// already were so and nothing was written.
    pub seq: Option<i64>,
    pub task: TaskId,
    pub outputs: Outputs,
}

impl Store {
    /// The tasks whose outputs a maintainer has published or made private, with what
    /// they are now. A task missing here is as its card says.
    pub async fn outputs_overrides(&self) -> Result<BTreeMap<TaskId, Outputs>, StoreError> {
        let rows = db::query("SELECT task, outputs FROM task_outputs").fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| Ok((TaskId::new(row.try_get::<String, _>("task")?), name(row, "outputs")?)))
            .collect()
    }

    /// Makes `task`'s outputs `outputs` (where they are `card` without a maintainer's
    /// change) and records it in the change log with `reason`, in one transaction. Asking
    /// for what already holds writes nothing.
    pub async fn set_outputs(
        &self,
        task: &TaskId,
        outputs: Outputs,
        card: Outputs,
        reason: &str,
    ) -> Result<OutputsChange, StoreError> {
        let _one_writer = self.write_lock.lock().await;
        let mut tx = self.pool.begin().await?;
        let row = db::query("SELECT outputs FROM task_outputs WHERE task = $1")
            .bind(task.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let now_is = match row {
            Some(row) => name(&row, "outputs")?,
            None => card,
        };
        let unchanged = OutputsChange { seq: None, task: task.clone(), outputs };
        if now_is == outputs {
            return Ok(unchanged);
        }
        let at = now();
        db::query(
            "INSERT INTO task_outputs (task, outputs, changed_at) VALUES ($1, $2, $3) \
             ON CONFLICT (task) DO UPDATE SET outputs = excluded.outputs, changed_at = excluded.changed_at",
        )
        .bind(task.as_str())
        .bind(outputs.as_str())
        .bind(&at)
        .execute(&mut *tx)
        .await?;
        let detail = match outputs {
            Outputs::Public => format!("a maintainer published the outputs of task {task}'s runs: {reason}"),
            Outputs::Private => {
                format!("a maintainer made the outputs of task {task}'s runs private: {reason}")
            }
        };
        let (seq,): (i64,) = db::query_as(
            "INSERT INTO changes (at, kind, task, detail) VALUES ($1, 'outputs', $2, $3) RETURNING seq",
        )
        .bind(&at)
        .bind(task.as_str())
        .bind(&detail)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(OutputsChange { seq: Some(seq), ..unchanged })
    }

    /// The runs that refer to the artifact `digest` and how (none: no run does). A
    /// reproduction's evidence (a try's too, spec §4d) counts as its reproduced run's: whoever may read a run's
    /// outputs may read its re-run's (`views::access` keeps what shows the success
    /// criteria for the maintainers).
    pub async fn artifact_uses(&self, digest: &str) -> Result<Vec<crate::model::ArtifactUse>, StoreError> {
        let rows: Vec<(String, String, String, i64)> = db::query_as(
            "SELECT r.task, r.bundle_id, ra.role, 0 FROM run_artifacts ra JOIN runs r ON r.id = ra.run_id \
             WHERE ra.digest = $1 \
             UNION SELECT r.task, r.bundle_id, ra.role, 1 FROM reproduced_artifacts ra JOIN runs r ON r.id = ra.run_id \
             WHERE ra.digest = $1 \
             UNION SELECT r.task, r.bundle_id, ta.role, 1 FROM reproduction_try_artifacts ta JOIN runs r ON r.id = ta.run_id \
             WHERE ta.digest = $1 ORDER BY 1, 2, 3, 4",
        )
        .bind(digest)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(t, b, role, r)| crate::model::ArtifactUse {
                task: TaskId::from(t),
                bundle: b,
                role,
                reproduction: r == 1,
            })
            .collect())
    }
}
