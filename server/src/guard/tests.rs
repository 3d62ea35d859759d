//! The guard's rules, each on its own: allowances, uploads and ingests at once, the
//! client's address, and a body's pauses, deadline and rate.

use axum::http::StatusCode;

use super::*;

#[test]
fn an_address_gets_a_quarter_of_its_hour_at_once_then_waits() {
    let g = Guard::new(Limits { per_address_hourly: 8, ..Limits::default() });
    let a: IpAddr = "192.0.2.1".parse().unwrap();
    assert!(g.admit_address(a).is_ok() && g.admit_address(a).is_ok());
    let refused = g.admit_address(a).unwrap_err();
    assert_eq!((refused.status, refused.code.as_str()), (StatusCode::TOO_MANY_REQUESTS, "rate_limited"));
    assert!(refused.message.contains("192.0.2.1: at most 8 an hour"), "{}", refused.message);
    assert!((1..=450).contains(&refused.retry_after.unwrap()), "{:?}", refused.retry_after);
    assert!(g.admit_address("192.0.2.2".parse().unwrap()).is_ok(), "another address has its own");
}

#[test]
fn a_key_is_limited_wherever_it_submits_from() {
    let g = Guard::new(Limits { per_key_hourly: 4, ..Limits::default() });
    assert!(g.admit_keys(["k1"]).is_ok());
    let refused = g.admit_keys(["k2", "k1"]).unwrap_err();
    assert!(refused.message.contains("signed by key k1"), "{}", refused.message);
}

#[test]
fn ingests_beyond_the_cap_wait_their_turn() {
    let g = Guard::new(Limits { concurrent_ingests: 2, ..Limits::default() });
    let ingests = g.ingests();
    let (one, _two) = (ingests.place().unwrap(), g.ingests().place().unwrap());
    assert_eq!(ingests.place().unwrap_err().code, "too_many_ingests");
    drop(one);
    assert!(ingests.place().is_ok());
}

#[test]
fn the_client_is_the_connection_unless_a_proxy_is_trusted() {
    let mut headers = HeaderMap::new();
    headers.insert("x-forwarded-for", "203.0.113.9, 198.51.100.7".parse().unwrap());
    let mut extensions = Extensions::new();
    extensions.insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 4000))));
    let g = Guard::new(Limits::default());
    assert_eq!(g.client(&headers, &extensions).to_string(), "127.0.0.1");
    let g = Guard::new(Limits { trust_forwarded: true, ..Limits::default() });
    assert_eq!(g.client(&headers, &extensions).to_string(), "198.51.100.7");
    assert_eq!(g.client(&HeaderMap::new(), &extensions).to_string(), "127.0.0.1");
}

#[tokio::test(start_paused = true)]
async fn a_body_that_stops_arriving_is_cut_off() {
    let g = Guard::new(Limits { body_idle: Duration::from_secs(2), ..Limits::default() });
    let stalls = futures::stream::iter([Ok::<_, io::Error>(Bytes::from_static(b"abc"))])
        .chain(futures::stream::pending());
    let (mut body, clock) = g.timed(Box::pin(stalls));
    assert_eq!(body.next().await.unwrap().unwrap(), "abc");
    assert_eq!(body.next().await.unwrap().unwrap_err().kind(), io::ErrorKind::TimedOut);
    assert!(body.next().await.is_none());
    assert_eq!(clock.judge::<()>(Ok(())).unwrap_err().status, StatusCode::REQUEST_TIMEOUT);
}

#[tokio::test(start_paused = true)]
async fn a_body_that_trickles_past_the_deadline_is_cut_off() {
    let g = Guard::new(Limits {
        body_idle: Duration::from_secs(5),
        body_total: Duration::from_secs(12),
        ..Limits::default()
    });
    let trickle = futures::stream::unfold(0, |n| async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        Some((Ok::<_, io::Error>(Bytes::from(vec![b'x'; n + 1])), n + 1))
    });
    let (body, clock) = g.timed(Box::pin(trickle));
    let got: Vec<_> = body.collect().await;
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 3, "three chunks in 12 s, then cut");
    assert!(got.last().unwrap().is_err());
    assert_eq!(clock.judge::<()>(Ok(())).unwrap_err().code, "request_timeout");
}

#[test]
fn an_address_has_its_most_uploads_at_once_and_no_more() {
    let g = Guard::new(Limits { per_address_concurrent: 2, ..Limits::default() });
    let a: IpAddr = "192.0.2.1".parse().unwrap();
    let (one, _two) = (g.admit_upload(a).unwrap(), g.admit_upload(a).unwrap());
    let refused = g.admit_upload(a).unwrap_err();
    assert_eq!((refused.status, refused.code.as_str()), (StatusCode::TOO_MANY_REQUESTS, "too_many_uploads"));
    assert!(refused.message.contains("192.0.2.1 is already sending 2 bundles"), "{}", refused.message);
    assert_eq!(refused.retry_after, Some(10));
    assert!(g.admit_upload("192.0.2.2".parse().unwrap()).is_ok(), "another address has its own");
    drop(one);
    let _three = g.admit_upload(a).unwrap();
    assert!(g.admit_upload(a).is_err(), "a refusal took no place");
}

#[test]
fn the_pace_forgives_its_first_window_and_judges_each_after() {
    let s = Duration::from_secs;
    // 100 bytes a second over 2 s windows.
    let mut pace = Pace::new(100, s(2));
    assert_eq!(pace.until_judged(), Some(s(2)));
    // The grace: one byte in its first 2 s is not judged.
    assert_eq!(pace.passed(s(1), 1), Ok(()));
    assert_eq!(pace.passed(s(1), 0), Ok(()));
    assert_eq!(pace.until_judged(), Some(s(2)));
    // 200 bytes in the next window is the minimum: it passes.
    assert_eq!(pace.passed(Duration::from_millis(1500), 150), Ok(()));
    assert_eq!(pace.until_judged(), Some(Duration::from_millis(500)));
    assert_eq!(pace.passed(Duration::from_millis(500), 50), Ok(()));
    // 199 in the one after is short: its rate is the answer.
    assert_eq!(pace.passed(s(1), 199), Ok(()));
    assert_eq!(pace.passed(s(1), 0), Err(99));
}

#[test]
fn a_long_wait_judges_every_window_it_spans_and_no_minimum_judges_none() {
    let s = Duration::from_secs;
    // Bytes after a wait count in the last window it ends, which they may fill...
    let mut pace = Pace::new(10, s(1));
    assert_eq!(pace.passed(s(2), 1000), Ok(()));
    // ...but a wait that spans a whole judged window had nothing in that one.
    let mut pace = Pace::new(10, s(1));
    assert_eq!(pace.passed(s(3), 1000), Err(0));
    let mut none = Pace::new(0, s(1));
    assert_eq!(none.until_judged(), None);
    assert_eq!(none.passed(s(3600), 0), Ok(()));
}

/// A body whose chunk comes after each `gap`, `size` bytes each.
fn every(gap: Duration, size: usize) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + Unpin {
    Box::pin(futures::stream::unfold((), move |()| async move {
        tokio::time::sleep(gap).await;
        Some((Ok(Bytes::from(vec![b'x'; size])), ()))
    }))
}

#[tokio::test(start_paused = true)]
async fn a_trickle_within_the_pause_rule_is_cut_for_its_rate() {
    let g = Guard::new(Limits {
        body_idle: Duration::from_secs(20),
        body_min_rate: 100,
        body_rate_window: Duration::from_secs(2),
        ..Limits::default()
    });
    // A byte a second: never a pause of 20 s, and 1 byte/s against 100.
    let started = Instant::now();
    let (body, clock) = g.timed(every(Duration::from_secs(1), 1));
    let got: Vec<_> = body.collect().await;
    assert_eq!(started.elapsed(), Duration::from_secs(4), "the grace and one judged window");
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 3, "the fourth byte ends the judged window short");
    assert_eq!(got.last().unwrap().as_ref().unwrap_err().kind(), io::ErrorKind::TimedOut);
    let refused = clock.judge::<()>(Ok(())).unwrap_err();
    assert_eq!((refused.status, refused.code.as_str()), (StatusCode::REQUEST_TIMEOUT, "upload_too_slow"));
    assert!(
        refused.message.contains(" bytes/s over 2 s, under the minimum of 100 bytes/s"),
        "{}",
        refused.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_body_over_the_minimum_passes_and_the_servers_own_time_is_not_the_clients() {
    let g = Guard::new(Limits {
        body_min_rate: 100,
        body_rate_window: Duration::from_secs(2),
        ..Limits::default()
    });
    // 110 bytes/s for 20 s.
    let (body, clock) = g.timed(every(Duration::from_millis(500), 55));
    let got: Vec<_> = body.take(40).collect().await;
    assert!(got.iter().all(|r| r.is_ok()), "{got:?}");
    assert!(clock.judge(Ok(())).is_ok());
    // Bytes that were waiting while the server worked (a second between reads) arrive
    // at once: no time of waiting for the client, nothing to judge.
    let (mut body, clock) =
        g.timed(futures::stream::iter((0..10).map(|_| Ok::<_, io::Error>(Bytes::from("x")))));
    while let Some(chunk) = body.next().await {
        chunk.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert!(clock.judge(Ok(())).is_ok());
}
