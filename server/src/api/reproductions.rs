//! Reproductions over HTTP (spec §4d, §4e): the sampling epochs anyone may check a
//! sample against, a submission's sample as far as anyone may know it, and the
//! maintainers' queue of sampled runs. A reproduction itself arrives as any bundle does
//! (`POST /api/v1/submissions`).

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use store::{Hint, QueuedRun, RegisteredVariant, SampleCounts, SamplingEpoch};
use views::admin::{QueueParams, Status};

use crate::api::extract::{ApiPath, ApiQuery};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, PathRefusals};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::state::Shared;

/// The sampling epochs, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct SamplingAnswer {
    /// Where the rule is written: the keyed hash, and what it picks.
    pub rule: String,
    pub epochs: Vec<SamplingEpoch>,
    /// The held-out variants registered (spec §4l), oldest first: a sampled success is
    /// re-run on the key's choice among its task's variants registered before its
    /// submission arrived. Their digests only.
    pub variants: Vec<RegisteredVariant>,
    /// How many re-runs of a sampled run may end `infra_error` (each a try the
    /// maintainers' runner could not complete) before the run counts as not reproduced
    /// (spec §4d; `REXBENCH_REPRODUCTION_TRIES`).
    pub tries: u32,
    /// How many successes each submission sampled from now on takes (spec §4e): enough
    /// to catch `share` of fakes with `probability`, at most `cap` per submission
    /// (`REXBENCH_SAMPLE_SHARE`, `REXBENCH_SAMPLE_PROBABILITY`, `REXBENCH_SAMPLE_CAP`). A
    /// submitter one of whose submissions did not reproduce is sampled by its enlarged
    /// form (half the share, twice the cap). Each submission keeps the rule it was
    /// sampled by (`/api/v1/submissions/{id}/sample`).
    pub sizing: bundle::sample::Rule,
    /// Every rule the server has used, oldest first, with when it came into force: a
    /// submission's `sizing` is the one in force when it arrived, or its enlarged form.
    pub sizing_history: Vec<RuleInForce>,
}

/// A sample rule, from when.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleInForce {
    pub since: String,
    pub rule: bundle::sample::Rule,
}

/// The sampling epochs (spec §4e): each one's key commitment, published from its start,
/// and its key once the maintainers have ended it. With a revealed key and a
/// submission's envelope, anyone can recompute that submission's sample.
#[utoipa::path(get, path = "/api/v1/sampling", tag = "reproductions", responses((status = 200, body = SamplingAnswer)))]
pub async fn sampling(State(app): State<Shared>) -> Result<Json<SamplingAnswer>, ApiError> {
    Ok(Json(SamplingAnswer {
        rule: RULE.into(),
        epochs: app.store.sampling_epochs().await?,
        variants: app.store.registered_variants().await?,
        tries: app.store.reproduction_tries(),
        sizing: app.store.sample_rule(),
        sizing_history: app
            .store
            .sample_rules()
            .await?
            .into_iter()
            .map(|(since, rule)| RuleInForce { since, rule })
            .collect(),
    }))
}

pub const RULE: &str = "/about#reproductions";

/// A run of a sample.
#[derive(Debug, Serialize, ToSchema)]
pub struct SampledRun {
    pub task: String,
    pub hint: Hint,
    pub attempt: i64,
    /// Where it was sampled because the same run of this agent's earlier submission
    /// did not reproduce (spec §4e), that submission; otherwise the keyed rule chose it.
    pub carried_from: Option<String>,
    /// Where it was queued because a re-run refuted another run of its submission (a
    /// caught lie costs the submission: every success not itself re-run and held is
    /// re-run), that run's number.
    pub escalated_by: Option<i64>,
}

/// A submission's reproduction sample, as far as anyone may know it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SampleAnswer {
    pub bundle_id: String,
    pub agent_id: String,
    /// The epoch whose key chose the sample (none: the submission is not sampled, as a
    /// maintainer's or a paper's is not).
    pub epoch: Option<i64>,
    /// Whether that epoch's key has been revealed: then `runs` is the whole sample.
    pub revealed: bool,
    pub counts: SampleCounts,
    /// The rule its sample of successes was sized by (spec §4e): with the revealed key
    /// it recomputes the sample. `null` for a submission sampled before sizing (one
    /// success per condition) or not sampled.
    pub sizing: Option<bundle::sample::Rule>,
    /// The sampled runs anyone may know of: those reproduced, and every one once the
    /// key is revealed.
    pub runs: Vec<SampledRun>,
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
    let submission = app
        .store
        .submission(&bundle_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no submission `{bundle_id}`")))?;
    let epoch = app.store.sample_epoch(&bundle_id).await?;
    let epochs = app.store.sampling_epochs().await?;
    let revealed = epoch.is_some_and(|e| epochs.iter().any(|x| x.epoch == e && x.key.is_some()));
    let runs = app.store.public_sample(&bundle_id).await?;
    let sizing = app.store.sample_rule_of(&bundle_id).await?;
    Ok(Json(SampleAnswer {
        bundle_id,
        agent_id: submission.agent_id,
        epoch,
        revealed,
        counts: submission.sample,
        sizing,
        runs: runs
            .into_iter()
            .map(|r| SampledRun {
                task: r.task,
                hint: r.hint,
                attempt: r.attempt,
                carried_from: r.carried_from,
                escalated_by: r.escalated_by,
            })
            .collect(),
    }))
}

/// The sampled runs.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueAnswer {
    pub runs: Vec<QueuedRun>,
    /// What the reproductions so far took, in hours of runs (on GPUs where they had any).
    pub hours: ReproductionHours,
}

/// What the reproductions so far cost the maintainers.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ReproductionHours {
    pub runs: i64,
    pub hours: f64,
    pub gpu_hours: f64,
}

/// The maintainers' queue: every sampled run, oldest sample first, with the patch a
/// reproduction must re-run (`rexbench reproduce` reads it).
#[utoipa::path(
    get,
    path = "/api/v1/admin/reproductions",
    tag = "admin",
    security(("admin_token" = [])),
    params(QueueParams),
    responses(
        (status = 200, body = QueueAnswer),
        (status = 400, description = "An unknown status, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn queue(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<QueueParams>,
    _: Admin,
) -> Result<Json<QueueAnswer>, ApiError> {
    let pending = q.view()? == Status::Pending;
    let (runs, hours, gpu_hours) = app.store.reproduction_hours().await?;
    Ok(Json(QueueAnswer {
        runs: app.store.reproduction_queue(pending).await?,
        hours: ReproductionHours { runs, hours, gpu_hours },
    }))
}
