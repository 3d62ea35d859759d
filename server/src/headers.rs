//! Headers every answer carries, so that a browser treats whatever a bundle put on a
//! page as text: no script runs (the pages have none of their own), nothing is
//! sniffed into another type, no page is framed by another site, and links out do
//! not leak the page's address.

use axum::http::{HeaderName, HeaderValue, header};
use axum::response::Response;

/// No scripts from anywhere; styles, images and forms of this site only.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const HEADERS: [(HeaderName, &str); 4] = [
    (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// Adds the headers an answer does not set itself (artifacts keep their stricter
/// `sandbox` policy).
pub async fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in HEADERS {
        headers.entry(name).or_insert(HeaderValue::from_static(value));
    }
    response
}
