//! The evidence behind every number: each submission's signed envelope and artifacts'
//! bytes, each served only to whoever may read it (the one visibility rule,
//! `views::access`). The key registry, the rest of the evidence, is `crate::api::keys`'s.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderName, header};
use axum::response::{IntoResponse, Response};
use bundle::Digest;

use crate::api::extract::ApiPath;
use crate::api::responses::{ErrorAnswer, PathRefusals, TOO_MANY_REFUSED};
use crate::auth::Reading;
use crate::error::ApiError;
use crate::state::Shared;

/// A submission's (or a reproduction's) signed DSSE envelope, byte for byte as it was
/// received: its payload is the manifest every stored number comes from. Spec §4g keeps
/// findings' words out of manifests, so every submission's envelope is anyone's; one
/// stored before that rule whose findings quote private outputs is served only to
/// whoever may read those outputs, and a reproduction that re-ran a task whose check is
/// private only to the maintainers (spec §4j: its durations and its outputs' sizes are a
/// channel a patch could shape); `envelope_withheld` to anyone else.
#[utoipa::path(
    get,
    path = "/api/v1/submissions/{bundle_id}/envelope",
    tag = "evidence",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(("bundle_id" = String, Path, description = "The bundle's id (the SHA-256 of its manifest)")),
    responses(
        (status = 200, body = bundle::Envelope),
        PathRefusals,
        (status = 401, description = "A manifest stored before spec §4g and §4j whose findings quote private outputs or whose runs state a private check's metrics, or a reproduction that re-ran a task whose check is private, and no credentials (`envelope_withheld`); or credentials that are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 403, description = "Such a manifest, and outputs that are not the signed-in reader's, or such a reproduction and a reader who is not a maintainer (`envelope_withheld`)", body = ErrorAnswer),
        (status = 404, body = ErrorAnswer),
        (status = 429, description = TOO_MANY_REFUSED, body = ErrorAnswer),
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
    let private_check =
        |task: &str| app.catalog.tasks.iter().any(|t| t.check_private && t.id.as_str() == task);
    let quoting = views::access::quoting_runs(&manifest, private_check);
    let of = manifest.reproduction.as_ref().map(|r| r.of.as_str());
    // Spec §4j: a maintainers' re-run of a task whose check is private is theirs beside its
    // verdict; its manifest states its durations and its outputs' sizes and digests, which a
    // patch could shape to signal what it read on their machine.
    let rerun_private: Vec<String> = match of {
        None => Vec::new(),
        Some(_) => manifest
            .runs
            .iter()
            .filter(|r| private_check(r.task.as_str()))
            .map(|r| format!("{}/{}/{}", r.task, r.hint, r.attempt))
            .collect(),
    };
    let cache = if !rerun_private.is_empty() {
        let access = views::access::load(&app.store, &app.catalog, &reader).await?;
        let gold_task = manifest.runs.iter().map(|r| r.task.as_str()).find(|t| private_check(t));
        if gold_task.is_some_and(|task| !access.may_know_rerun(task)) {
            return Err(refused_private(
                &app,
                &reader,
                "envelope_withheld",
                format!(
                    "{bundle_id} is a maintainers' reproduction that re-ran {} run(s) of a task whose check is private \
                     ({}): beside their verdicts, which the run pages show, what those re-runs made (their durations, \
                     their outputs' sizes and digests) is the maintainers' to read (spec §4j), so only they are \
                     served this envelope",
                    rerun_private.len(),
                    rerun_private.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        views::access::logged(&app.store, &access, "api", None, Some(&bundle_id)).await?;
        "private, no-store"
    } else if quoting.is_empty() {
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
                    "the manifest of {bundle_id} was stored before findings' words and private checks' metrics left \
                     manifests (spec §4g, §4j), and {} of its run(s) ({}) say what you may not read (their \
                     findings quote private outputs, or their metrics are a private check's): only the bundle's \
                     submitter and the maintainers are served this envelope. Every public number it signs is on \
                     the run pages",
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
        PathRefusals,
        (status = 401, description = "The outputs are private and no credentials were given (`outputs_private`), or the credentials are not valid (`invalid_credentials`, `session_expired`, `session_ended`, `key_revoked`)", body = ErrorAnswer),
        (status = 403, description = "The outputs are private and not the signed-in submitter's (`outputs_private`)", body = ErrorAnswer),
        (status = 429, description = TOO_MANY_REFUSED, body = ErrorAnswer),
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
            std::io::ErrorKind::NotFound => ApiError::internal_saying("the artifact's bytes are missing"),
            _ => ApiError::blob_store_unavailable(),
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
    if reader.is_public() {
        ApiError::unauthorized(code, message)
    } else {
        ApiError::forbidden(code, message)
    }
}
