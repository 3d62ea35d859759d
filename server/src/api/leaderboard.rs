//! The leaderboard as JSON and as CSV: every current row the query keeps, of any task
//! set. What the query means is `views::board`'s (read strictly here).

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use views::board::LeaderboardParams;
use views::leaderboard::LeaderboardAnswer;
use views::query::PageParams;

use crate::api::extract::ApiQuery;
use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::state::Shared;

/// Each agent's current submission: rates under each hint condition, with the
/// bootstrap's intervals, rank range and tie group (see `/about`). A page at a time
/// (`page`, `per_page`); a page past the last has no rows.
#[utoipa::path(
    get,
    path = "/api/v1/leaderboard",
    tag = "results",
    params(LeaderboardParams, PageParams),
    responses(
        (status = 200, body = LeaderboardAnswer),
        (status = 400, description = "An unknown tier, provenance, harness or task scope, a page or page size out of range, or a parameter given twice", body = ErrorAnswer),
        (status = 500, description = "The server's fault", body = ErrorAnswer),
    )
)]
pub async fn leaderboard(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<LeaderboardParams>,
    ApiQuery(pages): ApiQuery<PageParams>,
) -> Result<Json<LeaderboardAnswer>, ApiError> {
    Ok(Json(views::leaderboard::answer(&app.store, &app.catalog, &q.view()?, pages.window()?).await?))
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
    let mut bytes = views::leaderboard::csv::head().map_err(ApiError::internal)?;
    // The rows (4.3 MB at 10,000 agents) are written in as many parts as there are cores,
    // off the async workers, and joined: the same bytes as one writer's.
    let parts = tokio::task::spawn_blocking(move || {
        let total = entries.total();
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let parts = cores.min(total.div_ceil(views::leaderboard::csv::ROWS_A_PART)).max(1);
        let each = total.div_ceil(parts);
        std::thread::scope(|scope| {
            let written: Vec<_> = (0..parts)
                .map(|p| {
                    let entries = &entries;
                    scope.spawn(move || {
                        views::leaderboard::csv::rows(entries.those(p * each..(p + 1) * each), each)
                    })
                })
                .collect();
            written
                .into_iter()
                .map(|w| w.join().expect("a CSV part's thread panicked"))
                .collect::<Result<Vec<_>, _>>()
        })
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?;
    for part in parts {
        bytes.extend_from_slice(&part);
    }
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], bytes).into_response())
}
