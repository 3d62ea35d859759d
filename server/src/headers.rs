//! Headers every answer carries, so that a browser treats whatever a bundle put on a
//! page as text: no script runs but this site's own files and Leptos's loader (the
//! policy is [`crate::islands`]'), nothing is sniffed into another type, no page is
//! framed by another site, and links out do not leak the page's address.

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::Response;

const HEADERS: [(HeaderName, &str); 3] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// Adds the headers an answer does not set itself (artifacts keep their stricter
/// `sandbox` policy).
pub async fn secure(State(policy): State<HeaderValue>, mut response: Response) -> Response {
    let headers = response.headers_mut();
    // A clone of the value made once: no parsing per answer.
    headers.entry(header::CONTENT_SECURITY_POLICY).or_insert(policy);
    for (name, value) in HEADERS {
        headers.entry(name).or_insert(HeaderValue::from_static(value));
    }
    response
}
