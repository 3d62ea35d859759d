//! The maintainers' desk's forms (`POST /desk/…`): each action a form that works without
//! JavaScript, for a signed-in maintainer's browser only, from this site's own page
//! (`Sec-Fetch-Site`, else `Origin`), carrying its session's form token. Each calls the
//! rule the admin API answers with (`crate::api::key_requests`, `admin`, `variants`,
//! `task_sets`): no second implementation. Done, it goes back to `/desk` saying what was
//! done; refused, the desk is shown again with the refusal and its status. The change
//! log records what each rule changes; the access log records who acted.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use store::SessionKind;
use views::access::Reader;

use crate::auth::{form_token_holds, same_site};
use crate::error::ApiError;
use crate::state::{AppState, Shared};

/// The maintainer a desk form comes from, or why it is refused: a cross-site form, a
/// browser that is no maintainer's session, a missing or wrong form token.
async fn maintainer(app: &AppState, headers: &HeaderMap, token: Option<&str>) -> Result<Reader, ApiError> {
    if !same_site(headers) {
        return Err(ApiError::forbidden(
            "cross_site",
            "the desk's forms are sent from this site's own desk page",
        ));
    }
    let Some(secret) = crate::credentials::cookie(headers) else {
        return Err(ApiError::forbidden(
            "not_maintainer",
            "the desk is for a signed-in maintainer: sign in with `rexbench-server sign-in-link` or a maintainer key",
        ));
    };
    let reader =
        crate::auth::sessions::session_reader(app, &secret, SessionKind::Browser).await.map_err(|_| {
            ApiError::forbidden(
                "not_maintainer",
                "this browser's session ended or expired: sign in again as a maintainer",
            )
        })?;
    if !matches!(reader, Reader::Maintainer { .. }) {
        return Err(ApiError::forbidden(
            "not_maintainer",
            "the desk is for a signed-in maintainer; this session reads as a submitter",
        ));
    }
    if !token.is_some_and(|t| form_token_holds(headers, t)) {
        return Err(ApiError::forbidden(
            "bad_form_token",
            "the form does not carry this session's token: reload the desk and send it again",
        ));
    }
    Ok(reader)
}

/// After an action: back to the desk, saying what was done (one of the desk's own
/// sentences, chosen by `done`), at its section.
fn done(done: &str, section: &str) -> Response {
    Redirect::to(&format!("/desk?done={done}#{section}")).into_response()
}

/// Runs `act` for the maintainer the form comes from, recorded in the access log as
/// `action`; refused, the desk again with the refusal.
async fn act<F>(app: &Shared, headers: &HeaderMap, token: Option<&str>, action: String, act: F) -> Response
where
    F: Future<Output = Result<Response, ApiError>>,
{
    let outcome = async {
        let reader = maintainer(app, headers, token).await?;
        let response = act.await?;
        app.store.log_desk_action(&reader.who(), reader.keyid(), &action).await?;
        Ok::<_, ApiError>(response)
    }
    .await;
    match outcome {
        Ok(response) => response,
        Err(e) => crate::pages::desk_refused(app, headers, e).await,
    }
}

#[derive(Debug, Deserialize)]
pub struct ApproveForm {
    /// The session's form token.
    token: Option<String>,
    tier: Option<String>,
}

/// `POST /desk/requests/{id}/approve`.
pub(crate) async fn approve(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ApproveForm>,
) -> Response {
    let tier = form.tier.unwrap_or_default();
    let work = async {
        let id = crate::api::key_requests::request_id(&id)?;
        crate::api::key_requests::approve(&app, id, &tier).await?;
        Ok(done("approved", "requests"))
    };
    act(&app, &headers, form.token.as_deref(), format!("approve key request {id} ({tier})"), work).await
}

#[derive(Debug, Deserialize)]
pub struct DeclineForm {
    /// The session's form token.
    token: Option<String>,
    reason: Option<String>,
}

/// `POST /desk/requests/{id}/decline`.
pub(crate) async fn decline(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DeclineForm>,
) -> Response {
    let reason = form.reason.unwrap_or_default();
    let work = async {
        let id = crate::api::key_requests::request_id(&id)?;
        crate::api::key_requests::decline(&app, id, &reason).await?;
        Ok(done("declined", "requests"))
    };
    act(&app, &headers, form.token.as_deref(), format!("decline key request {id}"), work).await
}

#[derive(Debug, Deserialize)]
pub struct ReviewForm {
    /// The session's form token.
    token: Option<String>,
    verdict: Option<String>,
    note: Option<String>,
}

/// `POST /desk/findings/{id}/review`.
pub(crate) async fn review(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ReviewForm>,
) -> Response {
    let verdict = form.verdict.unwrap_or_default();
    let note = form.note.unwrap_or_default();
    let work = async {
        crate::api::admin::review_rule(&app, &id, &verdict, &note).await?;
        Ok(done(if verdict == "confirmed" { "confirmed" } else { "dismissed" }, "findings"))
    };
    act(&app, &headers, form.token.as_deref(), format!("review finding {id}: {verdict}"), work).await
}

#[derive(Debug, Deserialize)]
pub struct VariantForm {
    /// The session's form token.
    token: Option<String>,
    task: Option<String>,
    digest: Option<String>,
    note: Option<String>,
}

impl VariantForm {
    fn change(self) -> (Option<String>, crate::api::variants::VariantChange) {
        let change = crate::api::variants::VariantChange {
            task: self.task.unwrap_or_default(),
            digest: self.digest.unwrap_or_default().trim().to_owned(),
            note: self.note.unwrap_or_default(),
        };
        (self.token, change)
    }
}

/// `POST /desk/variants`: register a held-out variant.
pub(crate) async fn add_variant(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<VariantForm>,
) -> Response {
    let (token, change) = form.change();
    let action = format!("register variant {} of {}", change.digest, change.task);
    let work = async {
        let answer = crate::api::variants::register(&app, &change).await?;
        Ok(done(if answer.changed { "variant-registered" } else { "variant-known" }, "variants"))
    };
    act(&app, &headers, token.as_deref(), action, work).await
}

/// `POST /desk/variants/retire`: retire a held-out variant.
pub(crate) async fn retire_variant(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<VariantForm>,
) -> Response {
    let (token, change) = form.change();
    let action = format!("retire variant {} of {}", change.digest, change.task);
    let work = async {
        let answer = crate::api::variants::retire(&app, &change).await?;
        Ok(done(if answer.changed { "variant-retired" } else { "variant-was-retired" }, "variants"))
    };
    act(&app, &headers, token.as_deref(), action, work).await
}

#[derive(Debug, Deserialize)]
pub struct TaskSetForm {
    /// The session's form token.
    token: Option<String>,
    digest: Option<String>,
    name: Option<String>,
    version: Option<String>,
    note: Option<String>,
}

/// `POST /desk/task-sets`: register a task set.
pub(crate) async fn add_task_set(
    State(app): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<TaskSetForm>,
) -> Response {
    let set = crate::api::task_sets::NewTaskSet {
        digest: form.digest.unwrap_or_default().trim().to_owned(),
        name: form.name.unwrap_or_default(),
        version: form.version.unwrap_or_default(),
        note: form.note.unwrap_or_default(),
    };
    let action = format!("register task set {} {} ({})", set.name, set.version, set.digest);
    let work = async {
        let answer = crate::api::task_sets::register(&app, &set).await?;
        Ok(done(if answer.changed { "task-set-registered" } else { "task-set-known" }, "task-sets"))
    };
    act(&app, &headers, form.token.as_deref(), action, work).await
}
