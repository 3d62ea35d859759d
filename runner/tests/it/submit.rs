//! `rexbench submit` speaks HTTP to the server. The server's side is tested where the
//! ingest endpoint lives; here a listener on 127.0.0.1 records what arrives and answers
//! as the API does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread;

use crate::{runner, stderr, stdout};

/// The request line, the headers (lower-cased) and the body of a request.
type Received = (String, Vec<String>, Vec<u8>);

/// Serves one request with `status` and `body`; returns the address and what arrived.
fn one_request(status: &'static str, body: &'static str) -> (String, thread::JoinHandle<Received>) {
    let (addr, handle) = requests(vec![(status, "", body)]);
    (addr, thread::spawn(move || handle.join().unwrap().pop().unwrap()))
}

/// Serves one request per answer (status, extra header lines, body), in turn.
fn requests(
    answers: Vec<(&'static str, &'static str, &'static str)>,
) -> (String, thread::JoinHandle<Vec<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        answers.into_iter().map(|(status, extra, body)| answer(&listener, status, extra, body)).collect()
    });
    (addr, handle)
}

fn answer(listener: &TcpListener, status: &str, extra: &str, body: &str) -> Received {
    {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            headers.push(line.trim().to_lowercase());
        }
        let length: usize = headers
            .iter()
            .find_map(|h| h.strip_prefix("content-length: ").map(|v| v.parse().unwrap()))
            .expect("a content-length");
        let mut received = vec![0; length];
        reader.read_exact(&mut received).unwrap();
        let mut stream = stream;
        write!(stream, "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{body}", body.len()).unwrap();
        (request_line.trim().to_owned(), headers, received)
    }
}

#[test]
fn a_busy_server_is_asked_again_and_a_rate_limit_is_the_verdict() {
    let vectors = crate::repo().join("vectors");
    let bundle = vectors.join("valid-basic.tar.gz");
    let busy =
        r#"{"error": {"code": "too_many_ingests", "message": "the server is already ingesting 4 bundles"}}"#;
    let (server, handle) = requests(vec![
        ("429 Too Many Requests", "retry-after: 1\r\n", busy),
        ("201 Created", "", r#"{"bundle_id": "5de2", "links": {}}"#),
    ]);
    let started = std::time::Instant::now();
    let out = runner(&["submit", bundle.to_str().unwrap(), "--server", &server], &vectors);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= std::time::Duration::from_secs(1), "it waited as told");
    let received = handle.join().unwrap();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].2, received[1].2, "the same bundle, sent again whole");

    let limited = r#"{"error": {"code": "rate_limited", "message": "too many submissions from 127.0.0.1"}}"#;
    let (server, handle) = requests(vec![("429 Too Many Requests", "retry-after: 900\r\n", limited)]);
    let out = runner(&["submit", bundle.to_str().unwrap(), "--server", &server], &vectors);
    assert_eq!(handle.join().unwrap().len(), 1);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).trim(), "REFUSED (429)  rate_limited: too many submissions from 127.0.0.1");
}

#[test]
fn submit_posts_the_bundle_and_reports_the_verdict() {
    let vectors = crate::repo().join("vectors");
    let bundle = vectors.join("valid-basic.tar.gz");
    let (server, handle) = one_request("201 Created", r#"{"bundle_id": "5de2", "links": {}}"#);
    let out = runner(&["submit", bundle.to_str().unwrap(), "--server", &format!("{server}/")], &vectors);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("accepted: "), "{}", stdout(&out));
    let (line, headers, body) = handle.join().unwrap();
    assert_eq!(line, "POST /api/v1/submissions HTTP/1.1");
    assert!(headers.contains(&"content-type: application/gzip".to_owned()), "{headers:?}");
    assert_eq!(body, std::fs::read(&bundle).unwrap());

    let (server, handle) = one_request(
        "422 Unprocessable Entity",
        r#"{"error": {"code": "duplicate_run", "message": "runs[12] repeats runs[0]"}}"#,
    );
    let out = runner(&["submit", bundle.to_str().unwrap(), "--server", &server], &vectors);
    handle.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).trim(), "REFUSED (422)  duplicate_run: runs[12] repeats runs[0]");

    // Nobody listening: a usage-level failure, exit 2.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = runner(
        &["submit", bundle.to_str().unwrap(), "--server", &format!("http://127.0.0.1:{port}")],
        &vectors,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot reach"), "{}", stderr(&out));
}
