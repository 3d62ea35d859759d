//! The leaderboard as JSON and as CSV: every current row the query keeps, of any task
//! set. What the query means is `views::board`'s (read strictly here).

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use views::board::LeaderboardParams;
use views::leaderboard::LeaderboardEntry;

use crate::api::extract::ApiQuery;
use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::state::Shared;

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaderboardAnswer {
    pub rows: Vec<LeaderboardEntry>,
    /// Where the statistics are explained.
    pub method: String,
}

/// Each agent's current submission: rates under each hint condition, with the
/// bootstrap's intervals, rank range and tie group (see `/about`).
#[utoipa::path(
    get,
    path = "/api/v1/leaderboard",
    tag = "results",
    params(LeaderboardParams),
    responses(
        (status = 200, body = LeaderboardAnswer),
        (status = 400, description = "An unknown tier, provenance, harness or task scope, or a parameter given twice", body = ErrorAnswer),
        (status = 500, description = "The server's fault", body = ErrorAnswer),
    )
)]
pub async fn leaderboard(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<LeaderboardParams>,
) -> Result<Json<LeaderboardAnswer>, ApiError> {
    let rows = views::leaderboard::entries(&app.store, &app.catalog, &q.view()?).await?;
    Ok(Json(LeaderboardAnswer { rows, method: "/about".into() }))
}

/// The leaderboard as CSV: one row per agent, with its rates, coverage in valid attempts,
/// tasks short of the attempts asked and runs that ended `infra_error` under each hint
/// condition.
#[utoipa::path(
    get,
    path = "/leaderboard.csv",
    tag = "results",
    params(LeaderboardParams),
    responses(
        (status = 200, content_type = "text/csv", body = String),
        (status = 400, description = "An unknown tier, provenance, harness or task scope, or a parameter given twice", body = ErrorAnswer),
    )
)]
pub async fn leaderboard_csv(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<LeaderboardParams>,
) -> Result<Response, ApiError> {
    let entries = views::leaderboard::entries(&app.store, &app.catalog, &q.view()?).await?;
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
        ] {
            head.push(format!("{m}_{hint}"));
        }
    }
    let internal = ApiError::internal;
    w.write_record(&head).map_err(internal)?;
    let num = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_default();
    for LeaderboardEntry { row: r, stats, tasks, ranked } in entries {
        let mut rec = vec![
            r.agent_id.clone(),
            r.display_name.clone(),
            r.framework.clone(),
            r.model.clone(),
            r.tier.to_string(),
            r.provenance.to_string(),
            r.harness.name.clone(),
            r.harness.version.clone().unwrap_or_default(),
            ranked.to_string(),
            tasks.len().to_string(),
            r.benchmark_name,
            r.benchmark_version,
            r.task_set_digest,
            r.bundle_id.clone(),
            r.sample.sampled.to_string(),
            r.sample.reproduced.to_string(),
            r.sample.differed.to_string(),
        ];
        for hint in bundle::Hint::ALL {
            let rates = r.by_hint.get(&hint).copied().unwrap_or_default();
            rec.extend([
                num(rates.final_success),
                num(rates.execution_success),
                num(rates.file_recall),
                rates.counted.to_string(),
                rates.flagged.to_string(),
            ]);
            let coverage = r.coverage.get(&hint).copied().unwrap_or_default();
            rec.extend(
                [coverage.tasks, coverage.fewest_attempts, coverage.most_attempts].map(|n| n.to_string()),
            );
            let every_time = stats.as_ref().and_then(|s| s.reliability.get(hint)?.every_time());
            rec.push(num(every_time.map(|i| i.estimate)));
            rec.extend([
                rates.infra_errors.to_string(),
                num(rates.infra_error_share),
                coverage.short_tasks.to_string(),
            ]);
        }
        w.write_record(&rec).map_err(internal)?;
    }
    let bytes = w.into_inner().map_err(ApiError::internal)?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], bytes).into_response())
}
