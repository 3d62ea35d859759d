//! The JSON API (`/api/v1/…`), the CSV leaderboard and artifacts.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bundle::{BundleError, Digest};
use serde::Deserialize;
use store::{Ingested, LeaderboardFilter};
use utoipa::IntoParams;
use views::board::TaskScope;
use views::leaderboard::LeaderboardEntry;

use crate::answers::*;
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use crate::ingest::ingest_measured;
use crate::session::Reading;
use crate::state::Shared;

const GZIP_TYPES: [&str; 2] = ["application/gzip", "application/x-gzip"];

/// Verify, validate and store a bundle: whole or nothing.
#[utoipa::path(
    post,
    path = "/api/v1/submissions",
    tag = "submissions",
    request_body(content = String, content_type = "application/gzip", description = "A result bundle (`rexbench pack`), at most 256 MB compressed"),
    responses(
        (status = 201, description = "Stored", body = SubmissionAnswer),
        (status = 200, description = "Stored before; nothing changed", body = SubmissionAnswer),
        (status = 400, description = "Not a readable bundle archive", body = ErrorAnswer),
        (status = 401, description = "No trusted signature, or the signer's key is revoked", body = ErrorAnswer),
        (status = 403, description = "The agent belongs to another key, or a reproduction is not signed by a maintainer key (`reproduction_not_maintainer`)", body = ErrorAnswer),
        (status = 408, description = "The upload arrived too slowly", body = ErrorAnswer),
        (status = 409, description = "A reproduction of a run reproduced already (`run_already_reproduced`)", body = ErrorAnswer),
        (status = 413, description = "Over a size limit", body = ErrorAnswer),
        (status = 415, description = "Not sent as application/gzip", body = ErrorAnswer),
        (status = 422, description = "A rule of the bundle spec is broken, or a reproduction does not fit the submission it names (`reproduction_unknown_submission`, `reproduction_mismatch`, `reproduction_not_sampled`, `reproduction_patch_mismatch`); the code names it", body = ErrorAnswer),
        (status = 429, description = "A rate limit, or the server busy with other ingests", body = ErrorAnswer),
        (status = 500, description = "The server's fault", body = ErrorAnswer),
        (status = 503, description = "The artifact store did not answer; nothing was stored (`blob_store_unavailable`, with Retry-After)", body = ErrorAnswer),
        (status = 507, description = "No room left for the artifacts", body = ErrorAnswer),
    )
)]
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
    // Agent ids are slugs (spec §3): nothing to escape in a path.
    let links = SubmissionLinks {
        agent: format!("/agents/{agent_id}"),
        api: format!("/api/v1/agents/{agent_id}"),
        envelope: format!("/api/v1/submissions/{bundle_id}/envelope"),
        leaderboard: "/".into(),
    };
    Ok((status, Json(SubmissionAnswer { result, links })).into_response())
}

/// Narrows the leaderboard; an empty parameter narrows nothing (as the page's filter
/// form sends "any"), and each parameter may be given once.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    pub framework: Option<String>,
    pub model: Option<String>,
    /// `maintainer` or `submitter`; empty: any.
    #[param(schema_with = tier_or_any)]
    pub tier: Option<String>,
    /// `evaluated`, `imported` or `published`; empty: any.
    #[param(schema_with = provenance_or_any)]
    pub provenance: Option<String>,
    pub benchmark_version: Option<String>,
    /// A harness's name (`rexbench`, `harbor`, `rexbench-original`, …); empty: any.
    #[param(pattern = r"^([a-z0-9][a-z0-9._-]{0,63})?$")]
    pub harness: Option<String>,
    /// `all` (the default) or `public`: only the tasks anyone can run count, and every
    /// row that covers them is ranked on them.
    #[param(schema_with = tasks_or_all)]
    pub tasks: Option<String>,
    /// `reported` (the default) or `strict`: successes with an integrity finding no
    /// maintainer has dismissed count as failures, and intervals and ranks follow.
    #[param(schema_with = integrity_or_default)]
    pub integrity: Option<String>,
    /// `held`: only rows whose reproduction sample the maintainers re-ran, every re-run
    /// with the submitted final success; empty: any.
    #[param(schema_with = held_or_any)]
    pub reproduced: Option<String>,
}

fn held_or_any() -> utoipa::openapi::schema::Object {
    name_or_any([views::board::REPRODUCED_HELD])
}

/// One of a vocabulary's names, or the empty string for any.
fn name_or_any<'a>(names: impl IntoIterator<Item = &'a str>) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let values: Vec<&str> = std::iter::once("").chain(names).collect();
    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(values)).build()
}

fn tier_or_any() -> utoipa::openapi::schema::Object {
    name_or_any(store::Tier::ALL.iter().map(|t| t.as_str()))
}

fn integrity_or_default() -> utoipa::openapi::schema::Object {
    name_or_any(store::Integrity::ALL.iter().map(|i| i.as_str()))
}

fn tasks_or_all() -> utoipa::openapi::schema::Object {
    name_or_any(["all", "public"])
}

fn provenance_or_any() -> utoipa::openapi::schema::Object {
    name_or_any(store::ProvenanceKind::ALL.iter().map(|k| k.as_str()))
}

impl LeaderboardQuery {
    /// The filter it asks for and the tasks it counts. An empty parameter narrows
    /// nothing; a tier, provenance, harness or task scope that names none is refused.
    fn view(self) -> Result<(LeaderboardFilter, TaskScope), ApiError> {
        let invalid = |parameter: &str, detail: String| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                format!("query parameter `{parameter}`: {detail}"),
            )
        };
        let scope = match self.tasks.as_deref().unwrap_or("") {
            "" | "all" => TaskScope::All,
            "public" => TaskScope::Public,
            other => {
                return Err(invalid(
                    "tasks",
                    format!("unknown task scope `{other}`; expected all or public"),
                ));
            }
        };
        let harness = self.harness.clone().filter(|h| !h.is_empty());
        let reproduced = match self.reproduced.as_deref().unwrap_or("") {
            "" => false,
            views::board::REPRODUCED_HELD => true,
            other => return Err(invalid("reproduced", format!("`{other}` is not held"))),
        };
        if let Some(h) = harness.as_deref().filter(|h| !store::is_slug(h)) {
            return Err(invalid("harness", format!("`{h}` is not a harness name (a lowercase slug)")));
        }
        Ok((LeaderboardFilter { harness, reproduced, ..LeaderboardFilter::try_from(self)? }, scope))
    }
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
            harness: None,
            integrity: name("integrity", q.integrity)?.unwrap_or_default(),
            tasks: None,
            reproduced: false,
        })
    }
}

/// Each agent's current submission: rates under each hint condition, with the
/// bootstrap's intervals, rank range and tie group (see `/about`).
#[utoipa::path(
    get,
    path = "/api/v1/leaderboard",
    tag = "results",
    params(LeaderboardQuery),
    responses(
        (status = 200, body = LeaderboardAnswer),
        (status = 400, description = "An unknown tier, provenance, harness or task scope, or a parameter given twice", body = ErrorAnswer),
        (status = 500, description = "The server's fault", body = ErrorAnswer),
    )
)]
pub async fn leaderboard(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<LeaderboardQuery>,
) -> Result<Json<LeaderboardAnswer>, ApiError> {
    let (filter, scope) = q.view()?;
    let rows = views::leaderboard::entries(&app.store, &app.catalog, filter, scope).await?;
    Ok(Json(LeaderboardAnswer { rows, method: "/about".into() }))
}

/// The leaderboard as CSV: one row per agent, with its rates, coverage in valid attempts,
/// tasks short of the attempts asked and runs that ended `infra_error` under each hint
/// condition.
#[utoipa::path(
    get,
    path = "/leaderboard.csv",
    tag = "results",
    params(LeaderboardQuery),
    responses(
        (status = 200, content_type = "text/csv", body = String),
        (status = 400, description = "An unknown tier, provenance, harness or task scope, or a parameter given twice", body = ErrorAnswer),
    )
)]
pub async fn leaderboard_csv(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<LeaderboardQuery>,
) -> Result<Response, ApiError> {
    let (filter, scope) = q.view()?;
    let entries = views::leaderboard::entries(&app.store, &app.catalog, filter, scope).await?;
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

/// One agent: its submissions (newest first, superseded ones included) and, for each
/// current submission, the task × hint grid of rates.
#[utoipa::path(
    get,
    path = "/api/v1/agents/{id}",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("id" = String, Path, description = "The agent's id")),
    responses(
        (status = 200, body = AgentAnswer),
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 401, description = "Credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 429, description = "Too many refused credentials from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn agent(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<AgentAnswer>, ApiError> {
    let (agent, findings) = views::agent::answer(&app.store, &app.catalog, &reader, &id).await?;
    Ok(Json(AgentAnswer { agent, findings }))
}

/// The tasks (RExBench's and the examples), each with its results over current submissions.
#[utoipa::path(get, path = "/api/v1/tasks", tag = "results", responses((status = 200, body = TasksAnswer)))]
pub async fn tasks(State(app): State<Shared>) -> Result<Json<TasksAnswer>, ApiError> {
    let list = views::task::list(&app.store, &app.catalog).await?;
    let tasks = list
        .tasks
        .into_iter()
        .map(|(t, results)| TaskEntry {
            id: t.id,
            name: t.name,
            example: t.example,
            attempts: t.attempts,
            results,
        })
        .collect();
    Ok(Json(TasksAnswer { tasks }))
}

/// One task: its public facts and each agent's rates on it.
#[utoipa::path(
    get,
    path = "/api/v1/tasks/{id}",
    tag = "results",
    params(("id" = String, Path, description = "The task's id")),
    responses(
        (status = 200, body = TaskAnswer),
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn task(
    State(app): State<Shared>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<TaskAnswer>, ApiError> {
    let task = app.catalog.get(&id).ok_or_else(|| ApiError::not_found(format!("no task `{id}`")))?;
    let agents = app.store.task(&id).await?;
    Ok(Json(TaskAnswer {
        id: task.id.clone(),
        name: task.name.clone(),
        summary: task.summary.clone(),
        public_expected: task
            .public_expected
            .iter()
            .map(|e| ExpectedValue { metric: e.metric.clone(), value: e.value.clone() })
            .collect(),
        agents,
    }))
}

/// One run with its metrics and artifacts (their bytes at `/artifacts/{digest}`).
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}",
    tag = "results",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("id" = i64, Path, description = "The run's number")),
    responses(
        (status = 200, body = RunAnswer),
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 401, description = "Credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 429, description = "Too many refused credentials from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
    )
)]
pub async fn run(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RunAnswer>, ApiError> {
    let (run, outline) = views::run::answer(&app.store, &app.catalog, &reader, &id).await?;
    Ok(Json(RunAnswer { run, outline }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChangesQuery {
    /// At most this many (1 to 500, default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// Only changes before this sequence number (for paging; numbers start at 1).
    #[param(minimum = 1)]
    pub before: Option<i64>,
}

/// The change log, newest first: every submission stored and every one it superseded.
#[utoipa::path(
    get,
    path = "/api/v1/changes",
    tag = "results",
    params(ChangesQuery),
    responses(
        (status = 200, body = ChangesAnswer),
        (status = 400, description = "A parameter out of its range, malformed, or given twice", body = ErrorAnswer),
    )
)]
pub async fn changes(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<ChangesQuery>,
) -> Result<Json<ChangesAnswer>, ApiError> {
    let out_of_range = |name: &str, bound: &str, v: i64| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            format!("query parameter `{name}` must be {bound}, not {v}"),
        )
    };
    let (per_page, max) = (views::changes::PER_PAGE, views::changes::MAX_PER_ANSWER);
    let limit = q.limit.unwrap_or(per_page);
    if !(1..=max).contains(&limit) {
        return Err(out_of_range("limit", &format!("from 1 to {max}"), limit));
    }
    if let Some(before) = q.before.filter(|b| *b < 1) {
        return Err(out_of_range("before", "1 or more", before));
    }
    let changes = app.store.changes(limit, q.before).await?;
    Ok(Json(ChangesAnswer { changes }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ParityQuery {
    /// Side A: a submission's bundle id (superseded ones too), or an agent id (its
    /// newest current submission).
    #[param(min_length = 1)]
    pub a: String,
    /// Side B, named the same way.
    #[param(min_length = 1)]
    pub b: String,
    /// `none` (the default), `hints` or `detailed`.
    #[param(schema_with = hint_or_none)]
    pub hint: Option<String>,
}

fn hint_or_none() -> utoipa::openapi::schema::Object {
    name_or_any(bundle::Hint::ALL.iter().map(|h| h.as_str()))
}

/// Two submissions of one agent side by side under one hint condition: each side's
/// run-level rates with their mean ± SEM and range, Harbor's matching criterion (the
/// ranges overlap), a paired bootstrap interval of B − A, and which tasks each side
/// solved alone, with an exact sign test of that split (see `/parity`).
#[utoipa::path(
    get,
    path = "/api/v1/parity",
    tag = "results",
    params(ParityQuery),
    responses(
        (status = 200, body = store::parity::Parity),
        (status = 400, description = "A side missing or empty, an unknown hint condition, or a parameter given twice", body = ErrorAnswer),
        (status = 404, description = "A side names no submission and no agent with current results", body = ErrorAnswer),
    )
)]
pub async fn parity(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<ParityQuery>,
) -> Result<Json<store::parity::Parity>, ApiError> {
    let invalid = |detail: String| ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", detail);
    let hint = match q.hint.as_deref().unwrap_or("") {
        "" => bundle::Hint::None,
        h => h.parse().map_err(|e: bundle::UnknownName| invalid(format!("query parameter `hint`: {e}")))?,
    };
    for (name, value) in [("a", &q.a), ("b", &q.b)] {
        if value.is_empty() {
            return Err(invalid(format!("query parameter `{name}` must name a submission or an agent")));
        }
    }
    Ok(Json(views::parity::parity(&app.store, &app.catalog, &q.a, &q.b, hint).await?))
}

/// Every key that signs or signed results here, revoked ones included, with its
/// public key: what a reader needs to check a submission's envelope.
#[utoipa::path(get, path = "/api/v1/keys", tag = "evidence", responses((status = 200, body = KeysAnswer)))]
pub async fn keys(State(app): State<Shared>) -> Result<Json<KeysAnswer>, ApiError> {
    Ok(Json(KeysAnswer { keys: app.store.keys().await? }))
}

/// A submission's (or a reproduction's) signed DSSE envelope, byte for byte as it was
/// received: its payload is the manifest every stored number comes from. Spec §4g keeps
/// findings' words out of manifests, so every envelope is anyone's; one stored before
/// that rule whose findings quote private outputs is served only to whoever may read
/// those outputs (`envelope_withheld` to anyone else).
#[utoipa::path(
    get,
    path = "/api/v1/submissions/{bundle_id}/envelope",
    tag = "evidence",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("bundle_id" = String, Path, description = "The bundle's id (the SHA-256 of its manifest)")),
    responses(
        (status = 200, body = bundle::Envelope),
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 401, description = "A manifest stored before spec §4g whose findings quote private outputs, and no credentials (`envelope_withheld`); or credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 403, description = "Such a manifest, and outputs that are not the signed-in reader's (`envelope_withheld`)", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
        (status = 429, description = "Too many refused credentials from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn envelope(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(bundle_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let bytes = app
        .store
        .envelope(&bundle_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no submission `{bundle_id}`")))?;
    let manifest = bundle::Envelope::parse(&bytes)
        .and_then(|e| e.payload(app.limits.manifest))
        .and_then(|m| bundle::Manifest::parse(&m))
        .map_err(|e| ApiError::internal(format!("the stored envelope of {bundle_id}: {e}")))?;
    let quoting = views::access::quoting_runs(&manifest);
    let of = manifest.reproduction.as_ref().map(|r| r.of.as_str());
    let cache = if quoting.is_empty() {
        // Nothing in it can become private: it is the same bytes for ever.
        "public, max-age=31536000, immutable"
    } else {
        let access = views::access::load(&app.store, &app.catalog, &reader).await?;
        let withheld = access.withheld_quotes(&quoting, &bundle_id, of);
        if !withheld.is_empty() {
            return Err(refused_private(
                &app,
                &reader,
                "envelope_withheld",
                format!(
                    "the manifest of {bundle_id} was stored before findings' words left manifests (spec §4g), and \
                     the findings of {} run(s) ({}) quote outputs you may not read: only the bundle's submitter \
                     and the maintainers are served this envelope. Every number it signs is on the run pages",
                    withheld.len(),
                    withheld.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if access.quotes_public(&quoting, of) {
            // Anyone's today; a task made private later withholds it, so it is not kept for ever.
            "public, max-age=300"
        } else {
            // A read of private content, logged as an artifact's is (the manifest's digest).
            views::access::logged(&app.store, &access, "api", None, Some(&bundle_id)).await?;
            "private, no-store"
        }
    };
    Ok(([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, cache)], bytes).into_response())
}

/// An artifact's bytes: always as plain text a browser will not sniff into anything else.
/// An artifact is public while some run of a task whose outputs are public refers to
/// it; otherwise only a maintainer reads it (with the admin token), and anyone else is
/// told so (401): its digest and size are public on its run's page and in the signed
/// manifest, so the refusal tells no more than they do.
#[utoipa::path(
    get,
    path = "/artifacts/{digest}",
    tag = "evidence",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("digest" = String, Path, description = "The artifact's SHA-256, in hex")),
    responses(
        (status = 200, content_type = "text/plain", body = String),
        (status = 400, description = "A path that is not UTF-8", body = ErrorAnswer),
        (status = 401, description = "The outputs are private and no credentials were given (`outputs_private`), or the credentials are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 403, description = "The outputs are private and not the signed-in submitter's (`outputs_private`)", body = ErrorAnswer),
        (status = 429, description = "Too many refused credentials from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
        (status = 500, description = "A stored artifact's bytes are missing", body = ErrorAnswer),
        (status = 503, description = "The artifact store did not answer (`blob_store_unavailable`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn artifact(
    State(app): State<Shared>,
    Reading(reader): Reading,
    ApiPath(digest): ApiPath<String>,
) -> Result<Response, ApiError> {
    let not_found = || ApiError::not_found(format!("no artifact `{digest}`"));
    let d = Digest::from_hex(&digest).ok_or_else(not_found)?;
    let (size, _) = app.store.artifact(&digest).await?.ok_or_else(not_found)?;
    let access = views::access::load(&app.store, &app.catalog, &reader).await?;
    let grant = views::access::artifact(&app.store, &access, &digest).await?;
    if grant == views::access::Grant::Refused {
        return Err(refused_private(
            &app,
            &reader,
            "outputs_private",
            format!(
                "artifact {digest} is an output of a run whose task's outputs are private: only the bundle's \
                 submitter and the maintainers may read it. Its SHA-256 and size are on its run's page; \
                 check a copy you hold with `sha256sum` or `rexbench verify`"
            ),
        ));
    }
    let public = grant == views::access::Grant::Public;
    let bytes = app.store.blobs().read(&d).await.map_err(|e| {
        let error = match e.kind() {
            std::io::ErrorKind::NotFound => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "the artifact's bytes are missing",
            ),
            _ => crate::error::blob_store_unavailable(),
        };
        error.with_cause(format!("cannot read the blob of stored artifact {digest}: {e}"))
    })?;
    let body = Body::from_stream(bytes);
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'".to_owned()),
            (header::CONTENT_LENGTH, size.to_string()),
            (
                header::CACHE_CONTROL,
                // Content-addressed, but who may read it can change (a task's outputs made
                // private): never `immutable`, and a shared cache asks again within minutes.
                if public { "public, max-age=300" } else { "private, no-store" }.to_owned(),
            ),
            // Agent outputs are evidence, not pages to index, even where they are public.
            (HeaderName::from_static("x-robots-tag"), "noindex".to_owned()),
        ],
        body,
    )
        .into_response())
}

/// A refusal of private content, counted: 401 to a reader with no credentials, 403 to
/// one signed in whose content it is not.
fn refused_private(
    app: &crate::state::AppState,
    reader: &views::access::Reader,
    code: &str,
    message: String,
) -> ApiError {
    app.metrics.refused(crate::metrics::Refusal::PrivateOutputs);
    let status = if reader.is_public() { StatusCode::UNAUTHORIZED } else { StatusCode::FORBIDDEN };
    ApiError::new(status, code, message)
}

pub async fn readyz(State(app): State<Shared>) -> Response {
    if let Err(e) = app.store.ping().await {
        tracing::warn!(error = %crate::error::chain(e), "not ready");
        return (StatusCode::SERVICE_UNAVAILABLE, "database unreachable\n").into_response();
    }
    if let Err(e) = app.store.blobs().check().await {
        tracing::warn!(error = %e, "not ready");
        return (StatusCode::SERVICE_UNAVAILABLE, "blob store unreachable\n").into_response();
    }
    (StatusCode::OK, "ready\n").into_response()
}

/// Unknown `/api/…` paths answer in the API's format.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("no such API endpoint")
}
