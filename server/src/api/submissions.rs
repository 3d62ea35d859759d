//! Submissions: a bundle in, verified, validated and stored whole or not at all.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bundle::{BundleError, RunMarks};
use serde::Serialize;
use store::Ingested;
use utoipa::ToSchema;

use crate::api::responses::ErrorAnswer;
use crate::error::ApiError;
use crate::ingest::{Received, ingest_measured};
use crate::state::Shared;

/// A bundle was stored (201) or had been stored before (200).
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmissionAnswer {
    #[serde(flatten)]
    pub result: Ingested,
    pub links: SubmissionLinks,
    /// On 201 for a submission: its runs that the board marks from the bundle alone, each
    /// with its marks (bundle spec §4m's cost marks, then §5b's `copied-attempt` for a
    /// success whose patch is another success's of the task, however written), in the
    /// bundle's order; an unmarked run is not listed, so `[]` is a bundle with none. Marks
    /// that need the board's records (an agent record stored before under another agent)
    /// are shown on the run's page. Absent on 200 and for a reproduction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marks: Option<Vec<RunMarks>>,
}

/// A bundle held (202): signed by a key whose request is pending. It is verified and
/// kept, shown to its submitter (signed in) and the maintainers only, and recorded on the
/// board as any submission once the key is approved; declined, it is removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldAnswer {
    /// `held`.
    pub status: String,
    /// The key request it waits on.
    pub request: i64,
    pub bundle: store::HeldBundle,
    /// False if the same bundle was held before.
    pub new: bool,
    /// The runs the board marks from the bundle alone, as for a stored submission.
    pub marks: Vec<RunMarks>,
    /// The request's page and its API answer.
    pub links: HeldLinks,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeldLinks {
    pub request: String,
    pub api: String,
}

/// Where the stored results are shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmissionLinks {
    pub agent: String,
    pub api: String,
    pub envelope: String,
    pub leaderboard: String,
}

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
        (status = 202, description = "Held: signed by a key whose request is pending (`rexbench register`); shown to its submitter and the maintainers only until the key is approved", body = HeldAnswer),
        (status = 400, description = "Not a readable bundle archive", body = ErrorAnswer),
        (status = 401, description = "No trusted signature, or the signer's key is revoked", body = ErrorAnswer),
        (status = 403, description = "The agent belongs to another key, a reproduction is not signed by a maintainer key (`reproduction_not_maintainer`), or a kind only the maintainers may sign (`published`) is not (`provenance_not_maintainer`)", body = ErrorAnswer),
        (status = 408, description = "The upload arrived too slowly: it paused too long or did not end in time (`request_timeout`), or a window of it came under the minimum rate (`upload_too_slow`, naming its rate and the minimum)", body = ErrorAnswer),
        (status = 409, description = "A reproduction of a run reproduced already (`run_already_reproduced`)", body = ErrorAnswer),
        (status = 413, description = "Over a size limit", body = ErrorAnswer),
        (status = 415, description = "Not sent as application/gzip", body = ErrorAnswer),
        (status = 422, description = "A rule of the bundle spec is broken (its claims held to the board's rules too, spec §5a: `unknown_task_set`, `too_many_attempts`, `agent_record_missing`, `success_against_check`), or a reproduction does not fit the submission it names (`reproduction_unknown_submission`, `reproduction_mismatch`, `reproduction_not_sampled`, `reproduction_patch_mismatch`, `reproduction_heldout_mismatch`); the code names it", body = ErrorAnswer),
        (status = 429, description = "The client address's or the signing key's hourly allowance spent (`rate_limited`), the address already sending its most uploads at once (`too_many_uploads`), the server busy with other ingests once the envelope was read (`too_many_ingests`), each with Retry-After; or a pending key holding its most bundles (`too_many_held_bundles`)", body = ErrorAnswer),
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
        return Err(ApiError::unsupported_media_type(format!(
            "a bundle is sent as application/gzip, not `{content_type}`"
        )));
    }
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > app.limits.compressed) {
        return Err(BundleError::CompressedTooLarge { limit: app.limits.compressed }.into());
    }

    let client = app.guard.client(&headers, &extensions);
    let (stream, clock) = app.guard.timed(body.into_data_stream());
    let reader = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(stream));
    let (result, marks) =
        match clock.judge(ingest_measured(&app, Some(client), async { Ok(reader) }).await)? {
            Received::Recorded(result, marks) => (result, marks),
            Received::Held(held) => {
                let answer = HeldAnswer {
                    status: "held".into(),
                    request: held.request,
                    links: HeldLinks {
                        request: views::key_requests::page_of(held.request),
                        api: format!("/api/v1/key-requests/{}", held.request),
                    },
                    bundle: held.bundle,
                    new: held.new,
                    marks: held.marks.unwrap_or_default(),
                };
                return Ok((StatusCode::ACCEPTED, Json(answer)).into_response());
            }
        };
    let (status, marks) = match result {
        Ingested::Stored { .. } => (StatusCode::CREATED, marks),
        Ingested::AlreadyStored { .. } => (StatusCode::OK, None),
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
    Ok((status, Json(SubmissionAnswer { result, links, marks })).into_response())
}
