//! The JSON API (`/api/v1/…`), the CSV leaderboard and artifacts.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{Extensions, HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bundle::{BundleError, Digest};
use serde::Deserialize;
use serde_json::{Value, json};
use store::{Ingested, LeaderboardFilter};

use crate::error::ApiError;
use crate::ingest::ingest_measured;
use crate::state::Shared;

const GZIP_TYPES: [&str; 2] = ["application/gzip", "application/x-gzip"];

/// `POST /api/v1/submissions`: verify, validate, store; whole or nothing.
pub async fn submit(
    State(app): State<Shared>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Body,
) -> Result<Response, ApiError> {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if !GZIP_TYPES.contains(&media.as_str()) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("a bundle is sent as application/gzip, not `{content_type}`"),
        ));
    }
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > app.limits.compressed) {
        return Err(BundleError::CompressedTooLarge { limit: app.limits.compressed }.into());
    }

    let client = app.guard.client(&headers, &extensions);
    let (stream, clock) = app.guard.timed(body.into_data_stream());
    let reader = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(stream));
    let result = clock.judge(ingest_measured(&app, Some(client), async { Ok(reader) }).await)?;
    let status = match result {
        Ingested::Stored { .. } => StatusCode::CREATED,
        Ingested::AlreadyStored { .. } => StatusCode::OK,
    };
    let (bundle_id, agent_id) = match &result {
        Ingested::Stored { bundle_id, agent_id, .. } | Ingested::AlreadyStored { bundle_id, agent_id } => {
            (bundle_id.clone(), agent_id.clone())
        }
    };
    let mut body = serde_json::to_value(&result).expect("serializes");
    body["links"] = json!({
        "agent": format!("/agents/{agent_id}"),
        "api": format!("/api/v1/agents/{agent_id}"),
        "leaderboard": "/",
    });
    body["bundle_id"] = json!(bundle_id);
    Ok((status, Json(body)).into_response())
}

#[derive(Debug, Default, Deserialize)]
pub struct LeaderboardQuery {
    pub framework: Option<String>,
    pub model: Option<String>,
    pub tier: Option<String>,
    pub provenance: Option<String>,
    pub benchmark_version: Option<String>,
}

impl TryFrom<LeaderboardQuery> for LeaderboardFilter {
    type Error = ApiError;
    /// An empty parameter narrows nothing; a tier or provenance that names none is refused.
    fn try_from(q: LeaderboardQuery) -> Result<LeaderboardFilter, ApiError> {
        let keep = |v: Option<String>| v.filter(|s| !s.is_empty());
        fn name<T: std::str::FromStr<Err = bundle::UnknownName>>(
            parameter: &str,
            value: Option<String>,
        ) -> Result<Option<T>, ApiError> {
            value.filter(|s| !s.is_empty()).map(|v| v.parse()).transpose().map_err(|e| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_query",
                    format!("query parameter `{parameter}`: {e}"),
                )
            })
        }
        Ok(LeaderboardFilter {
            framework: keep(q.framework),
            model: keep(q.model),
            tier: name("tier", q.tier)?,
            provenance: name("provenance", q.provenance)?,
            benchmark_version: keep(q.benchmark_version),
            task_set_digest: None,
        })
    }
}

pub async fn leaderboard(
    State(app): State<Shared>,
    Query(q): Query<LeaderboardQuery>,
) -> Result<Json<Value>, ApiError> {
    let rows = app.store.leaderboard(&q.try_into()?).await?;
    let stats = app.store.board_stats().await?;
    // Each row with its statistics (intervals by hint condition in the order none,
    // hints, detailed; see /about).
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|row| {
            let s = stats.by_bundle.get(&row.bundle_id);
            let mut v = serde_json::to_value(&row).expect("serializes");
            v["stats"] = serde_json::to_value(s).expect("serializes");
            v
        })
        .collect();
    Ok(Json(json!({ "rows": rows, "method": "/about" })))
}

pub async fn leaderboard_csv(
    State(app): State<Shared>,
    Query(q): Query<LeaderboardQuery>,
) -> Result<Response, ApiError> {
    let rows = app.store.leaderboard(&q.try_into()?).await?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = [
        "agent_id",
        "display_name",
        "framework",
        "model",
        "tier",
        "provenance",
        "benchmark",
        "benchmark_version",
        "task_set_digest",
        "bundle_id",
    ]
    .map(str::to_owned)
    .to_vec();
    for hint in bundle::Hint::ALL {
        for m in ["final_success", "execution_success", "file_recall", "runs_counted"] {
            head.push(format!("{m}_{hint}"));
        }
    }
    let internal = ApiError::internal;
    w.write_record(&head).map_err(internal)?;
    let num = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_default();
    for r in rows {
        let mut rec = vec![
            r.agent_id,
            r.display_name,
            r.framework,
            r.model,
            r.tier.to_string(),
            r.provenance.to_string(),
            r.benchmark_name,
            r.benchmark_version,
            r.task_set_digest,
            r.bundle_id,
        ];
        for hint in bundle::Hint::ALL {
            let rates = r.by_hint.get(&hint).copied().unwrap_or_default();
            rec.extend([
                num(rates.final_success),
                num(rates.execution_success),
                num(rates.file_recall),
                rates.counted.to_string(),
            ]);
        }
        w.write_record(&rec).map_err(internal)?;
    }
    let bytes = w.into_inner().map_err(ApiError::internal)?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], bytes).into_response())
}

pub async fn agent(State(app): State<Shared>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let agent = app.store.agent(&id).await?.ok_or_else(|| ApiError::not_found(format!("no agent `{id}`")))?;
    Ok(Json(serde_json::to_value(agent).expect("serializes")))
}

pub async fn tasks(State(app): State<Shared>) -> Result<Json<Value>, ApiError> {
    let stats: BTreeMap<store::TaskId, store::TaskRow> =
        app.store.tasks().await?.into_iter().map(|t| (t.task.clone(), t)).collect();
    let tasks: Vec<Value> = app
        .catalog
        .tasks
        .iter()
        .map(|t| json!({"id": t.id, "name": t.name, "example": t.example, "results": stats.get(&t.id)}))
        .collect();
    Ok(Json(json!({ "tasks": tasks })))
}

pub async fn task(State(app): State<Shared>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let task = app.catalog.get(&id).ok_or_else(|| ApiError::not_found(format!("no task `{id}`")))?;
    let agents = app.store.task(&id).await?;
    Ok(Json(json!({
        "id": id,
        "name": task.name,
        "summary": task.summary,
        "public_expected": task.public_expected,
        "agents": agents,
    })))
}

pub async fn run(State(app): State<Shared>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let not_found = || ApiError::not_found(format!("no run `{id}`"));
    let n: i64 = id.parse().map_err(|_| not_found())?;
    let run = app.store.run(n).await?.ok_or_else(not_found)?;
    Ok(Json(serde_json::to_value(run).expect("serializes")))
}

#[derive(Debug, Deserialize)]
pub struct ChangesQuery {
    pub limit: Option<i64>,
    pub before: Option<i64>,
}

pub async fn changes(
    State(app): State<Shared>,
    Query(q): Query<ChangesQuery>,
) -> Result<Json<Value>, ApiError> {
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let changes = app.store.changes(limit, q.before).await?;
    Ok(Json(json!({ "changes": changes })))
}

/// `GET /artifacts/{digest}`: the raw bytes, always as plain text a browser will not
/// sniff into anything else.
pub async fn artifact(State(app): State<Shared>, Path(digest): Path<String>) -> Result<Response, ApiError> {
    let not_found = || ApiError::not_found(format!("no artifact `{digest}`"));
    let d = Digest::from_hex(&digest).ok_or_else(not_found)?;
    let (size, _) = app.store.artifact(&digest).await?.ok_or_else(not_found)?;
    let bytes = app.store.blobs().read(&d).await.map_err(|e| {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "the artifact's bytes are missing")
            .with_cause(format!("cannot read the blob of stored artifact {digest}: {e}"))
    })?;
    let body = Body::from_stream(bytes);
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'".to_owned()),
            (header::CONTENT_LENGTH, size.to_string()),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable".to_owned()),
        ],
        body,
    )
        .into_response())
}

pub async fn readyz(State(app): State<Shared>) -> Response {
    match app.store.ping().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "not ready");
            (StatusCode::SERVICE_UNAVAILABLE, "database unreachable\n").into_response()
        }
    }
}

/// Unknown `/api/…` paths answer in the API's format.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("no such API endpoint")
}
