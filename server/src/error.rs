//! API errors: a status and `{"error": {"code": "…", "message": "…"}}`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bundle::{BundleError, ErrorClass};
use store::StoreError;

use serde::Serialize;
use utoipa::ToSchema;

/// Every error: a stable code and a sentence naming what is at fault.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorAnswer {
    pub error: ErrorBody,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// e.g. `artifact_digest_mismatch`, `not_found`, `invalid_query`.
    pub code: String,
    pub message: String,
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    /// Seconds to wait before trying again (`Retry-After`), for limits that lift.
    pub retry_after: Option<u64>,
    /// What went wrong inside, for the log only: the client learns the code and message.
    pub cause: Option<String>,
}

/// One constructor per kind of refusal: a handler names what is wrong (its code and
/// sentence), never a status; the status follows from the kind, here.
impl ApiError {
    fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError { status, code: code.to_owned(), message: message.into(), retry_after: None, cause: None }
    }

    /// 400 `invalid_query`: a query parameter that names nothing, is out of range or given twice.
    pub fn invalid_query(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", message)
    }

    /// 400 `invalid_path`: a path segment that is not what the route takes.
    pub fn invalid_path(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_path", message)
    }

    /// 400: a request that cannot be read at all (`invalid_json`, `bad_form`).
    pub fn unreadable(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401: credentials missing or not valid (the code says which).
    pub fn unauthorized(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, code, message)
    }

    /// 403: credentials that hold, for something they do not cover.
    pub fn forbidden(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, code, message)
    }

    /// 404 `not_found`.
    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", what)
    }

    /// 404 with a code of its own (`unknown_key`, `admin_disabled`).
    pub fn absent(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 408 `request_timeout`: the body arrived too slowly (`upload_too_slow` for its rate,
    /// with [`ApiError::with_code`]).
    pub fn too_slow(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", message)
    }

    /// 415 `unsupported_media_type`.
    pub fn unsupported_media_type(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", message)
    }

    /// 422: a well-formed body that breaks a rule (the code names it).
    pub fn unprocessable(code: &str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    /// 429 `rate_limited`, with the seconds to wait.
    pub fn rate_limited(message: impl Into<String>, wait_seconds: u64) -> ApiError {
        ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message).with_retry_after(wait_seconds)
    }

    /// 503 `blob_store_unavailable`: the object store holding the artifacts refused or did
    /// not answer: the operator must act (or the store come back), the client may try
    /// again; nothing was stored.
    pub fn blob_store_unavailable() -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "blob_store_unavailable",
            "the server's artifact store did not answer; nothing was stored or served. Try again later.",
        )
        .with_retry_after(60)
    }

    /// 507 `storage_full`: the blob store has no room: the operator must act, the
    /// submitter may try later.
    pub fn storage_full() -> ApiError {
        ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "storage_full",
            "the server has no room left for the bundle's artifacts; nothing was stored. Try again later.",
        )
    }

    /// The server's fault, with its cause for the log.
    pub fn internal(cause: impl std::fmt::Display) -> ApiError {
        ApiError {
            cause: Some(cause.to_string()),
            ..ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "the server could not complete the request; try again later",
            )
        }
    }

    /// The server's fault, in the words the client is told (the cause added with
    /// [`ApiError::with_cause`]).
    pub fn internal_saying(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", message)
    }

    pub fn with_cause(self, cause: impl std::fmt::Display) -> ApiError {
        ApiError { cause: Some(cause.to_string()), ..self }
    }

    /// Logs a failure of the server's own, once, where the error becomes an answer.
    pub fn log(&self) {
        if self.status.is_server_error() {
            tracing::error!(code = %self.code, message = %self.message, cause = ?self.cause, "request failed");
        }
    }

    pub fn with_retry_after(self, seconds: u64) -> ApiError {
        ApiError { retry_after: Some(seconds), ..self }
    }

    pub fn with_code(self, code: &str) -> ApiError {
        ApiError { code: code.to_owned(), ..self }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The 401s that credentials would lift (a bundle's missing signature is no matter of
/// HTTP authentication).
const BEARER_CODES: [&str; 3] = ["admin_unauthorized", "invalid_credentials", "outputs_private"];

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.log();
        let bearer = self.status == StatusCode::UNAUTHORIZED && BEARER_CODES.contains(&self.code.as_str());
        let body = Json(ErrorAnswer { error: ErrorBody { code: self.code, message: self.message } });
        let mut response = (self.status, body).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        // A refusal for want of credentials says which scheme would do (RFC 9110 §11.6.1).
        if bearer {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"rexbench\""));
        }
        response
    }
}

impl From<BundleError> for ApiError {
    fn from(e: BundleError) -> ApiError {
        let status = match (&e, e.class()) {
            (BundleError::ArtifactStore { .. }, _) => StatusCode::INTERNAL_SERVER_ERROR,
            (BundleError::ArtifactStoreFull { .. }, _) => return ApiError::storage_full().with_cause(&e),
            (_, ErrorClass::Io) => StatusCode::BAD_REQUEST,
            (_, ErrorClass::Limit) => StatusCode::PAYLOAD_TOO_LARGE,
            (_, ErrorClass::Archive) => StatusCode::BAD_REQUEST,
            (_, ErrorClass::Signature) => StatusCode::UNAUTHORIZED,
            (_, ErrorClass::Content) => StatusCode::UNPROCESSABLE_ENTITY,
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::AgentOwnedByOther { .. } => {
                ApiError::new(StatusCode::FORBIDDEN, "agent_owned_by_other_key", e.to_string())
            }
            StoreError::RevokedKey(..) => {
                ApiError::new(StatusCode::UNAUTHORIZED, "key_revoked", e.to_string())
            }
            StoreError::UnknownKey(_) => {
                ApiError::new(StatusCode::UNAUTHORIZED, "no_trusted_signature", e.to_string())
            }
            StoreError::UnknownFinding(_) | StoreError::UnknownSession(_) | StoreError::UnknownRequest(_) => {
                ApiError::not_found(e.to_string())
            }
            StoreError::KeyExists(_) => ApiError::new(StatusCode::CONFLICT, "key_exists", e.to_string()),
            StoreError::Refused { code, .. } => {
                let status = match code {
                    "reproduction_not_maintainer" | "provenance_not_maintainer" => StatusCode::FORBIDDEN,
                    "run_already_reproduced" | "key_requested" | "key_registered" | "request_decided" => {
                        StatusCode::CONFLICT
                    }
                    "too_many_key_requests" | "key_requests_full" | "too_many_held_bundles" => {
                        StatusCode::TOO_MANY_REQUESTS
                    }
                    _ => StatusCode::UNPROCESSABLE_ENTITY,
                };
                ApiError::new(status, code, e.to_string())
            }
            StoreError::StorageFull(_) => ApiError::storage_full().with_cause(chain(e)),
            StoreError::BlobStore(_) => ApiError::blob_store_unavailable().with_cause(chain(e)),
            // Internals stay in the log; the client learns that it was not its fault.
            StoreError::Database(_)
            | StoreError::Migrate(_)
            | StoreError::BrokenReferences(_)
            | StoreError::Io { .. }
            | StoreError::Background { .. }
            | StoreError::BadKey(_)
            | StoreError::Unreadable(_) => ApiError::internal(chain(e)),
        }
    }
}

/// What a view could not answer, in the API's words.
impl From<views::ViewError> for ApiError {
    fn from(e: views::ViewError) -> ApiError {
        use views::{Missing, ViewError};
        match e {
            ViewError::NotFound(Missing::Agent(id)) => ApiError::not_found(format!("no agent `{id}`")),
            ViewError::NotFound(Missing::Task(id)) => ApiError::not_found(format!("no task `{id}`")),
            ViewError::NotFound(Missing::Run(id)) => ApiError::not_found(format!("no run `{id}`")),
            ViewError::NotFound(Missing::Submission(id)) => {
                ApiError::not_found(format!("no submission `{id}`"))
            }
            ViewError::NotFound(Missing::ParitySide { side, named }) => ApiError::not_found(format!(
                "side `{side}` names no submission and no agent with current results: `{named}`"
            )),
            ViewError::Store(e) => e.into(),
            e @ ViewError::Artifact { .. } => ApiError::internal(chain(e)),
        }
    }
}

/// A query parameter the API refuses (`views::query`'s strict reading).
impl From<views::query::BadQuery> for ApiError {
    fn from(e: views::query::BadQuery) -> ApiError {
        ApiError::invalid_query(e.message)
    }
}

/// An error and every error that caused it, on one line (anyhow's alternate form:
/// `outer: cause: cause's cause`), for the log.
pub(crate) fn chain(e: impl Into<anyhow::Error>) -> String {
    format!("{:#}", e.into())
}

/// A handler that panicked: a 500 in the JSON error format rather than a connection
/// closed without a word. What panicked stays in the log.
pub fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    ApiError::internal(format!("a request handler panicked: {what}")).into_response()
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use axum::routing::get;
    use tower::ServiceExt;
    use tower_http::catch_panic::CatchPanicLayer;

    use super::*;

    #[tokio::test]
    async fn a_panicking_handler_is_a_json_500() {
        async fn buggy() -> &'static str {
            panic!("a bug")
        }
        let app = Router::new().route("/", get(buggy)).layer(CatchPanicLayer::custom(panicked));
        let response = app.oneshot(Request::get("/").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal_error");
        assert!(!body.to_string().contains("a bug"), "the panic stays in the log");
    }
}
