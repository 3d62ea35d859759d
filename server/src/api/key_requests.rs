//! Key requests over HTTP: a key not yet registered asks for a challenge, signs it and
//! files its request (`rexbench register`); anyone reads a request's status, its key's
//! holder and the maintainers its private part; the maintainers list the requests and
//! approve (choosing the tier) or decline (with a reason) each. The desk's forms call
//! [`approve`] and [`decline`], the same rule the API answers with.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use store::{ChallengeUse, Tier};
use utoipa::ToSchema;
use views::access::Reader;
use views::key_requests::{BadField, KeyRequestAnswer, KeyRequestView, KeyRequestsAnswer, RequestsParams};

use crate::api::extract::{ApiJson, ApiPath, ApiQuery};
use crate::api::responses::{AdminOff, AdminRefusals, ErrorAnswer, JsonBodyRefusals, ReaderRefusals};
use crate::api::sessions::ChallengeAnswer;
use crate::auth::sessions::{CHALLENGE_TTL, unix_now};
use crate::auth::{Admin, ClientParts, Reading};
use crate::error::ApiError;
use crate::metrics::Refusal;
use crate::state::{AppState, Shared};

/// What a key signs to request registration: this, the challenge and the key id, one a
/// line (another domain than sign-in's: neither signature serves as the other).
pub const REQUEST_DOMAIN: &str = "rexbench-key-request/v1";

/// The bytes a key signs to answer a request challenge.
pub fn request_message(challenge: &str, keyid: &str) -> String {
    format!("{REQUEST_DOMAIN}\n{challenge}\n{keyid}\n")
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestChallenge {
    /// SubjectPublicKeyInfo PEM of the Ed25519 key to register.
    public_key: String,
}

/// A key request: who asks, how to reach them, and the signed challenge that proves they
/// hold the key.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRequest {
    /// SubjectPublicKeyInfo PEM of the Ed25519 key.
    public_key: String,
    /// Who holds the key, as results will show it: 1 to 200 characters, reading as
    /// none of the board's badge words and as no other owner.
    #[schema(min_length = 1, max_length = 200)]
    owner: String,
    /// An e-mail address or an https:// address: for the maintainers only.
    #[schema(min_length = 1, max_length = 200)]
    contact: String,
    /// The team's page, shown with the request.
    #[schema(max_length = 300)]
    url: Option<String>,
    /// A word for the maintainers (what the agent is, who runs it): for them only.
    #[schema(max_length = 2000)]
    note: Option<String>,
    /// The challenge issued for this key.
    challenge: String,
    /// Ed25519 signature of `rexbench-key-request/v1`, the challenge and the key id
    /// (each followed by a newline), in standard base64.
    signature: String,
}

fn field(e: BadField) -> ApiError {
    ApiError::unprocessable(e.code, e.message)
}

fn public_key(pem: &str) -> Result<bundle::PublicKey, ApiError> {
    bundle::PublicKey::from_pem(pem).map_err(|e| ApiError::unprocessable("invalid_public_key", e.to_string()))
}

/// Whether a key may request registration at all: not registered, not requested before.
async fn requestable(app: &AppState, keyid: &str) -> Result<(), ApiError> {
    if let Some(request) = app.store.key_request_of(keyid).await? {
        return Err(store::StoreError::Refused {
            code: "key_requested",
            message: format!(
                "key {keyid} was requested before (request {}, {}): one request per key",
                request.id, request.status
            ),
        }
        .into());
    }
    match app.store.key(keyid).await {
        Ok(_) => Err(store::StoreError::Refused {
            code: "key_registered",
            message: format!("key {keyid} is registered already"),
        }
        .into()),
        Err(store::StoreError::UnknownKey(_)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Step one of a key request: a challenge for the key to sign.
#[utoipa::path(
    post,
    path = "/api/v1/key-requests/challenge",
    tag = "key requests",
    request_body = RequestChallenge,
    responses(
        (status = 201, body = ChallengeAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        (status = 409, description = "The key is registered already (`key_registered`) or was requested before (`key_requested`)", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a challenge request, or a key that is not an Ed25519 public key (`invalid_public_key`)", body = ErrorAnswer),
        (status = 429, description = "Too many sign-in attempts from this address (`rate_limited`, with Retry-After)", body = ErrorAnswer),
    )
)]
pub async fn request_challenge(
    State(app): State<Shared>,
    parts: ClientParts,
    ApiJson(request): ApiJson<RequestChallenge>,
) -> Result<(StatusCode, Json<ChallengeAnswer>), ApiError> {
    app.guard.admit_sign_in(parts.client)?;
    let key = public_key(&request.public_key)?;
    let keyid = key.keyid().to_hex();
    requestable(&app, &keyid).await?;
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    let challenge: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let now = unix_now();
    app.store.add_request_challenge(&challenge, &keyid, now, now + CHALLENGE_TTL).await?;
    let message = request_message(&challenge, &keyid);
    Ok((StatusCode::CREATED, Json(ChallengeAnswer { challenge, message, expires_at: now + CHALLENGE_TTL })))
}

/// Step two: the signed challenge files the request. Its key is pending at once: it may
/// sign in and submit (its bundles are held, for it and the maintainers to see) until
/// the maintainers decide.
#[utoipa::path(
    post,
    path = "/api/v1/key-requests",
    tag = "key requests",
    request_body = NewRequest,
    responses(
        (status = 201, body = KeyRequestAnswer),
        (status = 400, description = "A body that is not JSON", body = ErrorAnswer),
        (status = 401, description = "The signature does not verify (`bad_signature`), or the challenge is unknown, another key's, expired or answered before (`bad_challenge`)", body = ErrorAnswer),
        (status = 409, description = "The key is registered already (`key_registered`) or was requested before (`key_requested`)", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a key request; a bad key (`invalid_public_key`), owner (`invalid_owner`), contact (`invalid_contact`), URL (`invalid_url`) or note (`invalid_note`); an owner that reads as the board's badges (`owner_imitates_badge`) or as another owner (`owner_taken`)", body = ErrorAnswer),
        (status = 429, description = "Too many sign-in attempts from this address (`rate_limited`, with Retry-After), its key requests for the day filed (`too_many_key_requests`), or the most requests pending (`key_requests_full`)", body = ErrorAnswer),
    )
)]
pub async fn file_request(
    State(app): State<Shared>,
    parts: ClientParts,
    ApiJson(request): ApiJson<NewRequest>,
) -> Result<(StatusCode, Json<KeyRequestAnswer>), ApiError> {
    app.guard.admit_sign_in(parts.client)?;
    let key = public_key(&request.public_key)?;
    let keyid = key.keyid().to_hex();
    let owner = request.owner.trim();
    views::key_requests::check_owner(&request.owner).map_err(field)?;
    views::key_requests::check_contact(&request.contact).map_err(field)?;
    let url = request.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
    if let Some(url) = url {
        views::key_requests::check_url(url).map_err(field)?;
    }
    let note = request.note.as_deref().filter(|n| !n.trim().is_empty());
    if let Some(note) = note {
        views::key_requests::check_note(note).map_err(field)?;
    }
    let fail = |e: ApiError| {
        app.metrics.refused(Refusal::InvalidCredentials);
        e
    };
    let signature: [u8; 64] = base64::engine::general_purpose::STANDARD
        .decode(request.signature.trim())
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| {
            fail(ApiError::unauthorized("bad_signature", "`signature` is not 64 bytes of standard base64"))
        })?;
    if !key.verify(request_message(&request.challenge, &keyid).as_bytes(), &signature) {
        return Err(fail(ApiError::unauthorized(
            "bad_signature",
            format!("the signature does not verify with key {keyid} over the request challenge's message"),
        )));
    }
    requestable(&app, &keyid).await?;
    let why = match app.store.use_request_challenge(&request.challenge, &keyid, unix_now()).await? {
        ChallengeUse::Accepted => None,
        ChallengeUse::Unknown => Some("this server issued no such request challenge"),
        ChallengeUse::OtherKey => Some("the challenge was issued to another key"),
        ChallengeUse::Expired => Some("the challenge expired: ask for another"),
        ChallengeUse::Used => Some("the challenge was answered before: ask for another"),
    };
    if let Some(why) = why {
        return Err(fail(ApiError::unauthorized("bad_challenge", why)));
    }
    let address = parts.client.to_string();
    let seen = bundle::owner_key(owner);
    let new = store::NewKeyRequest {
        keyid: &keyid,
        public_key: &key.to_pem(),
        owner,
        owner_seen: &seen,
        url,
        contact: request.contact.trim(),
        note,
        address: &address,
        now_unix: unix_now(),
    };
    let record = app.store.request_key(&new, app.guard.key_requests()).await?;
    crate::ingest::refresh_pages(&app).await;
    let reader = Reader::Submitter { keyid: keyid.clone(), owner: record.owner.clone() };
    Ok((StatusCode::CREATED, Json(views::key_requests::request(&app.store, record.id, &reader).await?)))
}

/// A request by its id: its status for anyone; its contact, note and held bundles for
/// its key's holder (signed in) and the maintainers.
#[utoipa::path(
    get,
    path = "/api/v1/key-requests/{id}",
    tag = "key requests",
    security((), ("session_token" = []), ("admin_token" = [])),
    params(RequestRef),
    responses(
        (status = 200, body = KeyRequestAnswer),
        (status = 400, description = "Neither a request id nor a key id (`invalid_path`)", body = ErrorAnswer),
        ReaderRefusals,
        (status = 404, description = "No such request", body = ErrorAnswer),
    )
)]
pub async fn request_status(
    State(app): State<Shared>,
    ApiPath(RequestRef { id }): ApiPath<RequestRef>,
    Reading(reader): Reading,
) -> Result<Json<KeyRequestAnswer>, ApiError> {
    let id = if id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        match app.store.key_request_of(&id.to_ascii_lowercase()).await? {
            Some(r) => r.id,
            None => return Err(ApiError::not_found(format!("no key request for key {id}"))),
        }
    } else {
        request_id(&id)?
    };
    Ok(Json(views::key_requests::request(&app.store, id, &reader).await?))
}

/// A request named in a path: its id, or its key's id.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct RequestRef {
    /// The request's id, as `rexbench register` prints it, or its key's id (64 hex digits).
    #[param(pattern = r"^([1-9][0-9]{0,17}|[0-9a-fA-F]{64})$")]
    pub id: String,
}

/// A request named by its id in a path.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct RequestId {
    /// The request's id.
    #[param(minimum = 1, maximum = 999_999_999_999_999_999_i64)]
    pub id: i64,
}

/// A request id from a path: a positive whole number.
pub(crate) fn request_id(given: &str) -> Result<i64, ApiError> {
    given.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
        ApiError::invalid_path(format!("`{given}` is not a request id (a whole number from 1)"))
    })
}

/// Key requests, newest first, a page at a time: the pending ones, or all.
#[utoipa::path(
    get,
    path = "/api/v1/admin/key-requests",
    tag = "admin",
    security(("admin_token" = [])),
    params(RequestsParams),
    responses(
        (status = 200, body = KeyRequestsAnswer),
        (status = 400, description = "An unknown status, a page or size out of range, or a parameter given twice", body = ErrorAnswer),
        AdminRefusals,
        AdminOff,
    )
)]
pub async fn list_requests(
    State(app): State<Shared>,
    ApiQuery(q): ApiQuery<RequestsParams>,
    _: Admin,
) -> Result<Json<KeyRequestsAnswer>, ApiError> {
    let reader = Reader::Maintainer { who: "admin token".into(), keyid: None };
    Ok(Json(views::key_requests::requests(&app.store, q.view()?, &reader).await?))
}

/// The tier an approved key gets.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    #[schema(value_type = store::Tier)]
    tier: String,
}

/// Why a request is declined.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Decline {
    /// Shown to the requester with the request's status: 1 to 1000 characters.
    #[schema(min_length = 1, max_length = 1000, pattern = r"\S")]
    reason: String,
}

/// A decision on a request, and what became of the bundles it held.
#[derive(Debug, Serialize, ToSchema)]
pub struct DecisionAnswer {
    pub request: KeyRequestView,
    /// Held bundles now recorded on the board (approved), by bundle id.
    pub recorded: Vec<String>,
    /// Held bundles the board refused when they were recorded at approval, each with
    /// the refusal's code and sentence.
    pub refused: Vec<HeldRefusal>,
    /// Held bundles removed (declined).
    pub removed: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeldRefusal {
    pub bundle_id: String,
    pub code: String,
    pub message: String,
}

/// Approve a pending request: its key joins the registry with the tier chosen, and the
/// bundles it held are recorded on the board as any submission is.
#[utoipa::path(
    post,
    path = "/api/v1/admin/key-requests/{id}/approve",
    tag = "admin",
    security(("admin_token" = [])),
    params(RequestId),
    request_body = Approval,
    responses(
        (status = 200, body = DecisionAnswer),
        (status = 400, description = "A body that is not JSON, or an id that is not a number", body = ErrorAnswer),
        AdminRefusals,
        (status = 404, description = "No such request, or admin over HTTP is off", body = ErrorAnswer),
        (status = 409, description = "The request was decided already (`request_decided`)", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not an approval, or an unknown tier (`invalid_tier`)", body = ErrorAnswer),
    )
)]
pub async fn approve_request(
    State(app): State<Shared>,
    ApiPath(RequestId { id }): ApiPath<RequestId>,
    _: Admin,
    ApiJson(approval): ApiJson<Approval>,
) -> Result<Json<DecisionAnswer>, ApiError> {
    let id = request_id(&id.to_string())?;
    Ok(Json(approve(&app, id, &approval.tier).await?))
}

/// Decline a pending request with a reason: its key leaves the registry and the bundles
/// it held are removed; the change log says so.
#[utoipa::path(
    post,
    path = "/api/v1/admin/key-requests/{id}/decline",
    tag = "admin",
    security(("admin_token" = [])),
    params(RequestId),
    request_body = Decline,
    responses(
        (status = 200, body = DecisionAnswer),
        (status = 400, description = "A body that is not JSON, or an id that is not a number", body = ErrorAnswer),
        AdminRefusals,
        (status = 404, description = "No such request, or admin over HTTP is off", body = ErrorAnswer),
        (status = 409, description = "The request was decided already (`request_decided`)", body = ErrorAnswer),
        JsonBodyRefusals,
        (status = 422, description = "A body that is not a decline, or a bad reason (`invalid_reason`)", body = ErrorAnswer),
    )
)]
pub async fn decline_request(
    State(app): State<Shared>,
    ApiPath(RequestId { id }): ApiPath<RequestId>,
    _: Admin,
    ApiJson(decline_body): ApiJson<Decline>,
) -> Result<Json<DecisionAnswer>, ApiError> {
    let id = request_id(&id.to_string())?;
    Ok(Json(decline(&app, id, &decline_body.reason).await?))
}

/// The approval rule, for the API and the desk alike: the tier read, the request
/// approved, then each held bundle recorded through the one ingest path (its blob read
/// back whole and verified again, now against the registered key).
pub(crate) async fn approve(app: &AppState, id: i64, tier: &str) -> Result<DecisionAnswer, ApiError> {
    let tier: Tier = tier
        .parse()
        .map_err(|e: bundle::UnknownName| ApiError::unprocessable("invalid_tier", e.to_string()))?;
    let record = app.store.approve_key_request(id, tier).await?;
    let (mut recorded, mut refused) = (Vec::new(), Vec::new());
    for (held, blob) in app.store.held_bundles(id).await? {
        match record_held(app, &blob).await {
            Ok(()) => recorded.push(held.bundle_id.clone()),
            Err(e) => refused.push(HeldRefusal {
                bundle_id: held.bundle_id.clone(),
                code: e.code,
                message: e.message,
            }),
        }
        app.store.release_held(id, &held.bundle_id).await?;
        // Recorded, its artifacts are stored on their own; refused, it is kept for nothing.
        app.store.drop_unheld_blobs(std::slice::from_ref(&blob)).await?;
    }
    crate::ingest::refresh_pages(app).await;
    let reader = Reader::Maintainer { who: "admin".into(), keyid: None };
    let request = views::key_requests::view(record, Vec::new(), &reader);
    Ok(DecisionAnswer { request, recorded, refused, removed: 0 })
}

/// A held bundle, read back from its blob and ingested as any submission.
async fn record_held(app: &AppState, blob: &str) -> Result<(), ApiError> {
    use futures::StreamExt as _;
    let digest =
        bundle::Digest::from_hex(blob).ok_or_else(|| ApiError::internal(format!("held blob {blob}")))?;
    let mut stream = app
        .store
        .blobs()
        .read(&digest)
        .await
        .map_err(|e| ApiError::internal(format!("reading held bundle: {e}")))?;
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.map_err(|e| ApiError::internal(format!("reading held bundle: {e}")))?);
        if bytes.len() as u64 > app.limits.compressed {
            return Err(bundle::BundleError::CompressedTooLarge { limit: app.limits.compressed }.into());
        }
    }
    crate::ingest::ingest(app, std::io::Cursor::new(bytes)).await.map(drop)
}

/// The decline rule, for the API and the desk alike.
pub(crate) async fn decline(app: &AppState, id: i64, reason: &str) -> Result<DecisionAnswer, ApiError> {
    views::key_requests::check_reason(reason).map_err(field)?;
    let (record, removed) = app.store.decline_key_request(id, reason.trim()).await?;
    crate::ingest::refresh_pages(app).await;
    let reader = Reader::Maintainer { who: "admin".into(), keyid: None };
    let request = views::key_requests::view(record, Vec::new(), &reader);
    Ok(DecisionAnswer { request, recorded: Vec::new(), refused: Vec::new(), removed })
}
