//! Reproductions over HTTP (spec §4d, §4e): the sampling epochs anyone may check a
//! sample against, a submission's sample as far as anyone may know it, and the
//! maintainers' queue of sampled runs, a page at a time. The answers are
//! `views::reproductions`'s. A reproduction itself arrives as any bundle does
//! (`POST /api/v1/submissions`).

use axum::Json;
use axum::extract::State;

use views::reproductions::{self, QueueAnswer, QueueParams, SampleAnswer, SamplingAnswer};

use crate::api::extract::{ApiPath, ApiQuery};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, PathRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::Shared;

/// The sampling epochs (spec §4e): each one's key commitment, published from its start,
/// and its key once the maintainers have ended it. With a revealed key and a
/// submission's envelope, anyone can recompute that submission's sample.
#[utoipa::path(get, path = "/api/v1/sampling", tag = "reproductions", responses((status = 200, body = SamplingAnswer)))]
pub async fn sampling(State(app): State<Shared>) -> Result<Json<SamplingAnswer>, ApiError> {
    Ok(Json(reproductions::sampling(&app.store).await?))
}

/// A submission's reproduction sample: how many runs were sampled, re-run and found
/// different, and which, as far as anyone may know before the key is revealed.
#[utoipa::path(
    get,
    path = "/api/v1/submissions/{bundle_id}/sample",
    tag = "reproductions",
    params(("bundle_id" = String, Path, description = "The bundle's id (the SHA-256 of its manifest)")),
    responses(
        (status = 200, body = SampleAnswer),
        PathRefusals,
        (status = 404, description = "No such submission", body = ErrorAnswer),
    )
)]
pub async fn sample(
    State(app): State<Shared>,
    ApiPath(bundle_id): ApiPath<String>,
) -> Result<Json<SampleAnswer>, ApiError> {
    Ok(Json(reproductions::sample(&app.store, &bundle_id).await?))
}

/// The maintainers' queue: the sampled runs, oldest sample first, a page at a time, with
/// the patch a reproduction must re-run (`rexbench reproduce` reads every page).
#[utoipa::path(
    get,
    path = "/api/v1/admin/reproductions",
    tag = "admin",
    security(("admin_token" = [])),
    params(QueueParams),
    responses(
        (status = 200, body = QueueAnswer),
        (status = 400, description = "An unknown status, a page or page size out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn queue(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<QueueParams>,
    _: Admin,
) -> Result<Json<QueueAnswer>, ApiError> {
    Ok(Json(reproductions::queue(&app.store, q.view()?).await?))
}
