//! What one client may make the server do: submissions per address and per key, a
//! body that must keep arriving, and how many bundles are ingested at once. Each limit
//! refused is an answer in the JSON error format (429 or 408), never a dropped
//! connection.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap};
use futures::{Stream, StreamExt};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// The limits, from the environment (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Submissions an hour from one client address; a quarter of it may come at once.
    pub per_address_hourly: u32,
    /// Submissions an hour signed by one key, from wherever they come.
    pub per_key_hourly: u32,
    /// Bundles being received and ingested at once, over all clients.
    pub concurrent_ingests: usize,
    /// A request body that sends nothing for this long is cut off.
    pub body_idle: Duration,
    /// A request body must have arrived whole within this.
    pub body_total: Duration,
    /// Request headers must have arrived whole within this.
    pub headers: Duration,
    /// Take the client's address from the last `X-Forwarded-For` entry (behind a
    /// reverse proxy that sets it) rather than from the connection.
    pub trust_forwarded: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            per_address_hourly: 60,
            per_key_hourly: 120,
            concurrent_ingests: 4,
            body_idle: Duration::from_secs(20),
            body_total: Duration::from_secs(600),
            headers: Duration::from_secs(10),
            trust_forwarded: false,
        }
    }
}

#[derive(Debug)]
pub struct Guard {
    limits: Limits,
    per_address: DefaultKeyedRateLimiter<IpAddr>,
    per_key: DefaultKeyedRateLimiter<String>,
    /// Sign-in attempts and refused credentials, per address, held to the submissions'
    /// allowance.
    sign_in: DefaultKeyedRateLimiter<IpAddr>,
    /// Addresses whose sign-in allowance ran out, until when: every credential they send
    /// meanwhile (the right one too) is answered 429, so the limit slows guessing.
    locked: std::sync::Mutex<std::collections::HashMap<IpAddr, std::time::Instant>>,
    ingests: Arc<Semaphore>,
}

/// The most addresses held locked at once; past it, those whose lock has ended go.
const MAX_LOCKED: usize = 100_000;

/// A place among the ingests running at once, held until the ingest ends.
#[derive(Debug)]
pub struct Permit {
    _place: OwnedSemaphorePermit,
}

impl Guard {
    pub fn new(limits: Limits) -> Guard {
        let quota = |hourly: u32| {
            let hourly = NonZeroU32::new(hourly.max(1)).expect("at least one");
            let burst = NonZeroU32::new((hourly.get() / 4).max(1)).expect("at least one");
            Quota::per_hour(hourly).allow_burst(burst)
        };
        Guard {
            limits,
            per_address: RateLimiter::keyed(quota(limits.per_address_hourly)),
            per_key: RateLimiter::keyed(quota(limits.per_key_hourly)),
            sign_in: RateLimiter::keyed(quota(limits.per_address_hourly)),
            locked: Default::default(),
            ingests: Arc::new(Semaphore::new(limits.concurrent_ingests.max(1))),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The address a request came from: the connection's, or the proxy's word for it.
    pub fn client(&self, headers: &HeaderMap, extensions: &Extensions) -> IpAddr {
        let forwarded = || {
            headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .next_back()
                .and_then(|a| a.trim().parse::<IpAddr>().ok())
        };
        let connected = || extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
        (if self.limits.trust_forwarded { forwarded() } else { None })
            .or_else(connected)
            .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
    }

    /// One more submission from `client`, if its allowance has room.
    pub fn admit_address(&self, client: IpAddr) -> Result<(), ApiError> {
        self.per_address.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            rate_limited(
                format!(
                    "too many submissions from {client}: at most {} an hour; try again in {} s",
                    self.limits.per_address_hourly,
                    wait.as_secs().max(1)
                ),
                wait,
            )
        })
    }

    /// One more sign-in attempt (or refused credential) from `client`, if its allowance
    /// (the submissions' per address) has room.
    pub fn admit_sign_in(&self, client: IpAddr) -> Result<(), ApiError> {
        self.locked_out(client)?;
        self.sign_in.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let mut locked = self.locked.lock().expect("not poisoned");
            if locked.len() >= MAX_LOCKED {
                let now = std::time::Instant::now();
                locked.retain(|_, until| *until > now);
            }
            if locked.len() < MAX_LOCKED {
                locked.insert(client, std::time::Instant::now() + wait);
            }
            rate_limited(
                format!(
                    "too many sign-in attempts from {client}: at most {} an hour; try again in {} s",
                    self.limits.per_address_hourly,
                    wait.as_secs().max(1)
                ),
                wait,
            )
        })
    }

    /// A 429 while `client` is locked out (its sign-in allowance ran out and the wait is
    /// not over): asked before any credential it sends is looked at, the right one
    /// included. Spends nothing.
    pub fn locked_out(&self, client: IpAddr) -> Result<(), ApiError> {
        let mut locked = self.locked.lock().expect("not poisoned");
        let Some(&until) = locked.get(&client) else { return Ok(()) };
        let now = std::time::Instant::now();
        if until <= now {
            locked.remove(&client);
            return Ok(());
        }
        let wait = until - now;
        Err(rate_limited(
            format!(
                "too many refused credentials or sign-in attempts from {client}: every credential from it is refused \
                 for {} s more",
                wait.as_secs().max(1)
            ),
            wait,
        ))
    }

    /// One more submission signed by each of `keyids`, if every one has room.
    pub fn admit_keys<'a>(&self, keyids: impl IntoIterator<Item = &'a str>) -> Result<(), ApiError> {
        for keyid in keyids {
            if let Err(not_until) = self.per_key.check_key(&keyid.to_owned()) {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                return Err(rate_limited(
                    format!(
                        "too many submissions signed by key {keyid}: at most {} an hour; try again in {} s",
                        self.limits.per_key_hourly,
                        wait.as_secs().max(1)
                    ),
                    wait,
                ));
            }
        }
        Ok(())
    }

    /// A place among the ingests running at once, or a 429 when all are taken.
    pub fn ingest_permit(&self) -> Result<Permit, ApiError> {
        self.ingests.clone().try_acquire_owned().map(|place| Permit { _place: place }).map_err(|_| {
            rate_limited(
                format!(
                    "the server is already ingesting {} bundles, its most at once; try again in a few seconds",
                    self.limits.concurrent_ingests
                ),
                Duration::from_secs(1),
            )
            .with_code("too_many_ingests")
        })
    }

    /// `body`, cut off when it sends nothing for [`Limits::body_idle`] or has not ended
    /// by [`Limits::body_total`]; the flag says it was.
    pub fn timed<S, E>(
        &self,
        body: S,
    ) -> (impl Stream<Item = io::Result<Bytes>> + Send + use<S, E>, BodyClock)
    where
        S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let clock = BodyClock { expired: Arc::new(AtomicBool::new(false)), limits: self.limits };
        let expired = clock.expired.clone();
        let (idle, deadline) = (self.limits.body_idle, tokio::time::Instant::now() + self.limits.body_total);
        let stream = futures::stream::unfold(Some(body), move |body| {
            let expired = expired.clone();
            async move {
                let mut body = body?;
                let wait = idle.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
                match tokio::time::timeout(wait, body.next()).await {
                    Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(body))),
                    Ok(Some(Err(e))) => Some((Err(io::Error::other(e)), None)),
                    Ok(None) => None,
                    Err(_) => {
                        expired.store(true, Ordering::Release);
                        Some((
                            Err(io::Error::new(io::ErrorKind::TimedOut, "the body stopped arriving")),
                            None,
                        ))
                    }
                }
            }
        });
        (Box::pin(stream), clock)
    }
}

/// Whether a body given to [`Guard::timed`] was cut off for arriving too slowly.
#[derive(Debug, Clone)]
pub struct BodyClock {
    expired: Arc<AtomicBool>,
    limits: Limits,
}

impl BodyClock {
    /// `outcome`, unless the body was cut off: then a 408 saying so, whatever error
    /// the truncated body caused further on.
    pub fn judge<T>(&self, outcome: Result<T, ApiError>) -> Result<T, ApiError> {
        if !self.expired.load(Ordering::Acquire) {
            return outcome;
        }
        Err(ApiError::too_slow(format!(
            "the upload arrived too slowly: a body must not pause for {} s and must arrive within {} s; nothing was stored",
            self.limits.body_idle.as_secs(),
            self.limits.body_total.as_secs()
        )))
    }
}

fn rate_limited(message: String, wait: Duration) -> ApiError {
    ApiError::rate_limited(message, wait.as_secs().max(1))
}

#[cfg(test)]
mod tests {
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
        let (one, _two) = (g.ingest_permit().unwrap(), g.ingest_permit().unwrap());
        assert_eq!(g.ingest_permit().unwrap_err().code, "too_many_ingests");
        drop(one);
        assert!(g.ingest_permit().is_ok());
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
}
