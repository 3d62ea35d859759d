//! The pages, rendered on the server.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

use crate::harness::app_on_sqlite;

async fn get(path: &str) -> (StatusCode, String, String) {
    let (app, _dir) = app_on_sqlite().await;
    let response = app.oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
    (status, content_type, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn home_page_is_rendered_on_the_server_without_scripts() {
    let (status, ty, body) = get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(ty.starts_with("text/html"), "{ty}");
    assert!(body.starts_with("<!DOCTYPE html>"), "{body}");
    assert!(body.contains("<h1>RExBench leaderboard</h1>"), "{body}");
    assert!(body.contains("<title>RExBench leaderboard</title>"), "{body}");
    assert!(body.contains(r#"<meta name="description""#), "{body}");
    assert!(body.contains(r#"href="/style/main.css""#), "{body}");
    assert!(body.contains(r#"<a href="/leaderboard.csv">CSV</a>"#), "{body}");
    assert!(!body.contains("<script"), "pages must not need JavaScript: {body}");
}

#[tokio::test]
async fn unknown_paths_get_a_real_404_page() {
    let (status, ty, body) = get("/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(ty.starts_with("text/html"), "{ty}");
    assert!(body.contains("<h1>Not found</h1>"), "{body}");
    assert!(body.contains("<title>Not found · RExBench leaderboard</title>"), "{body}");
}

#[tokio::test]
async fn health_and_assets() {
    assert_eq!(get("/healthz").await.0, StatusCode::OK);
    let (status, ty, css) = get("/style/main.css").await;
    assert_eq!((status, ty.as_str()), (StatusCode::OK, "text/css; charset=utf-8"));
    assert!(css.contains("prefers-color-scheme: dark"));
    let (status, ty, _) = get("/favicon.svg").await;
    assert_eq!((status, ty.as_str()), (StatusCode::OK, "image/svg+xml"));
    assert_eq!(get("/robots.txt").await.0, StatusCode::OK);
}

#[tokio::test]
async fn serves_over_a_real_socket() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (app, _dir) = app_on_sqlite().await;
    let server = tokio::spawn(axum::serve(listener, app).into_future());
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nok\n"), "{response}");
    server.abort();
}
