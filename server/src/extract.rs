//! The API's own extractors for query strings and path segments: axum's refuse with a
//! plain-text body, and every refusal here is the API's JSON error with a status the
//! OpenAPI document lists (400, `invalid_query` or `invalid_path`), whatever is wrong:
//! a number out of its type's range, a field twice, bytes that are not UTF-8.

use axum::extract::{FromRef, FromRequestParts, Path, Query};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::state::Shared;

/// A query string, deserialized into `T`.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| ApiQuery(q))
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", e.body_text()))
    }
}

/// A path's parameters, deserialized into `T`.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(p)| ApiPath(p))
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_path", e.body_text()))
    }
}

/// A JSON request body, deserialized into `T`: 415 without `application/json`, 400 for
/// what is not JSON, 422 for JSON that is not a `T` (a field missing, unknown or of
/// another type), each with the API's JSON error.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        use axum::extract::rejection::JsonRejection;
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(e) => {
                let (status, code) = match &e {
                    JsonRejection::MissingJsonContentType(_) => {
                        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
                    }
                    JsonRejection::JsonDataError(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
                    _ => (StatusCode::BAD_REQUEST, "invalid_json"),
                };
                Err(ApiError::new(status, code, e.body_text()))
            }
        }
    }
}

/// An admin: the request carries `Authorization: Bearer <REXBENCH_ADMIN_TOKEN>`,
/// compared in constant time. Without a token configured, admin over HTTP is off (404).
#[derive(Debug)]
pub struct Admin;

impl<S: Send + Sync> FromRequestParts<S> for Admin
where
    Shared: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let app = Shared::from_ref(state);
        if app.admin_token.is_none() {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "admin_disabled",
                "admin over HTTP is off: no REXBENCH_ADMIN_TOKEN is configured",
            ));
        }
        if is_admin_token(&app, crate::credentials::bearer(&parts.headers).unwrap_or("")) {
            Ok(Admin)
        } else {
            // Counted and held to the address's sign-in allowance like every refused
            // credential: guessing the token is as slow as guessing a session.
            app.metrics.refused(crate::metrics::Refusal::InvalidCredentials);
            let client = app.guard.client(&parts.headers, &parts.extensions);
            app.guard.admit_sign_in(client)?;
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "admin_unauthorized",
                "a valid admin token is needed (Authorization: Bearer …)",
            ))
        }
    }
}

/// Whether `given` is the admin token (compared in constant time); never without one set.
pub(crate) fn is_admin_token(app: &crate::state::AppState, given: &str) -> bool {
    app.admin_token.as_ref().is_some_and(|expected| bool::from(given.as_bytes().ct_eq(expected.as_bytes())))
}
