//! The API's own extractors for query strings and path segments: axum's refuse with a
//! plain-text body, and every refusal here is the API's JSON error with a status the
//! OpenAPI document lists (400, `invalid_query` or `invalid_path`), whatever is wrong:
//! a number out of its type's range, a field twice, bytes that are not UTF-8.

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A query string, deserialized into `T`.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| ApiQuery(q))
            .map_err(|e| ApiError::invalid_query(e.body_text()))
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
            .map_err(|e| ApiError::invalid_path(e.body_text()))
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
            Err(e) => Err(match &e {
                JsonRejection::MissingJsonContentType(_) => ApiError::unsupported_media_type(e.body_text()),
                JsonRejection::JsonDataError(_) => ApiError::unprocessable("invalid_body", e.body_text()),
                _ => ApiError::unreadable("invalid_json", e.body_text()),
            }),
        }
    }
}
