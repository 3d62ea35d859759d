//! API errors: a status and `{"error": {"code": "…", "message": "…"}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bundle::{BundleError, ErrorClass};
use serde_json::json;
use store::StoreError;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError { status, code: code.to_owned(), message: message.into() }
    }

    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", what)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(code = %self.code, message = %self.message, "request failed");
        }
        let body = Json(json!({"error": {"code": self.code, "message": self.message}}));
        (self.status, body).into_response()
    }
}

impl From<BundleError> for ApiError {
    fn from(e: BundleError) -> ApiError {
        let status = match (&e, e.class()) {
            (BundleError::ArtifactStore { .. }, _) => StatusCode::INTERNAL_SERVER_ERROR,
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
        match &e {
            StoreError::AgentOwnedByOther { .. } => {
                ApiError::new(StatusCode::FORBIDDEN, "agent_owned_by_other_key", e.to_string())
            }
            StoreError::RevokedKey(..) => {
                ApiError::new(StatusCode::UNAUTHORIZED, "key_revoked", e.to_string())
            }
            StoreError::UnknownKey(_) => {
                ApiError::new(StatusCode::UNAUTHORIZED, "no_trusted_signature", e.to_string())
            }
            StoreError::KeyExists(_) => ApiError::new(StatusCode::CONFLICT, "key_exists", e.to_string()),
            // Internals stay in the log; the client learns that it was not its fault.
            StoreError::Database(_) | StoreError::Migrate(_) | StoreError::Io(_) | StoreError::BadKey(_) => {
                tracing::error!(error = %e, "store failure");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "the server could not complete the request; try again later",
                )
            }
        }
    }
}
