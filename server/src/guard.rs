//! What one client may make the server do: submissions per address and per key, uploads
//! per address at once, a body that must keep arriving (never pausing long, never
//! slower than a minimum rate), and how many bundles are ingested at once, a place an
//! upload takes only once its envelope has been read. Each limit refused is an answer in
//! the JSON error format (429 or 408), never a dropped connection.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::ConnectInfo;
use axum::http::{Extensions, HeaderMap};
use futures::{Stream, StreamExt};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::error::ApiError;

/// The limits, from the environment (see [`crate::Config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Submissions an hour from one client address; a quarter of it may come at once.
    pub per_address_hourly: u32,
    /// Submissions an hour signed by one key, from wherever they come.
    pub per_key_hourly: u32,
    /// Uploads from one client address being received or ingested at once.
    pub per_address_concurrent: usize,
    /// Bundles being ingested at once, over all clients: an upload takes a place once
    /// its envelope has been read (its signatures checked), and holds it to the end.
    pub concurrent_ingests: usize,
    /// A request body that sends nothing for this long is cut off.
    pub body_idle: Duration,
    /// A request body must have arrived whole within this.
    pub body_total: Duration,
    /// The slowest a request body may arrive, in bytes a second averaged over each
    /// [`Limits::body_rate_window`] after the first (its grace); 0: no minimum.
    pub body_min_rate: u64,
    /// The window a body's rate is averaged over, counted in the time spent waiting for
    /// the client (the server's own work between reads is not the client's).
    pub body_rate_window: Duration,
    /// Request headers must have arrived whole within this.
    pub headers: Duration,
    /// Take the client's address from the last `X-Forwarded-For` entry (behind a
    /// reverse proxy that sets it) rather than from the connection.
    pub trust_forwarded: bool,
    /// Key requests: per address and day, pending at once, and bundles a pending key
    /// may have held (`REXBENCH_KEY_REQUESTS_PER_DAY`, `REXBENCH_PENDING_KEY_REQUESTS`,
    /// `REXBENCH_HELD_BUNDLES`).
    pub key_requests: store::RequestLimits,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            per_address_hourly: 60,
            per_key_hourly: 120,
            per_address_concurrent: 2,
            concurrent_ingests: 4,
            body_idle: Duration::from_secs(20),
            body_total: Duration::from_secs(600),
            body_min_rate: 16 * 1024,
            body_rate_window: Duration::from_secs(10),
            headers: Duration::from_secs(10),
            trust_forwarded: false,
            key_requests: store::RequestLimits::default(),
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
    locked: Mutex<HashMap<IpAddr, std::time::Instant>>,
    /// Each address's uploads under way, while there are any.
    uploads: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ingests: Ingests,
}

/// The most addresses held locked at once; past it, those whose lock has ended go.
const MAX_LOCKED: usize = 100_000;

/// The `Retry-After` of an address over its uploads at once: how long one may take is
/// not known, so a guess at a small bundle's.
const UPLOAD_RETRY: Duration = Duration::from_secs(10);

/// A place among the ingests running at once, held until the ingest ends.
#[derive(Debug)]
pub struct Permit {
    _place: OwnedSemaphorePermit,
}

/// The places among the ingests running at once, over all clients: a handle the ingest
/// takes its place from once the envelope it is reading has been read.
#[derive(Debug, Clone)]
pub struct Ingests {
    places: Arc<Semaphore>,
    most: usize,
}

impl Ingests {
    /// A place, or a 429 `too_many_ingests` when all are taken.
    pub fn place(&self) -> Result<Permit, ApiError> {
        self.places.clone().try_acquire_owned().map(|place| Permit { _place: place }).map_err(|_| {
            rate_limited(
                format!(
                    "the server is already ingesting {} bundles, its most at once; try again in a few seconds",
                    self.most
                ),
                Duration::from_secs(1),
            )
            .with_code("too_many_ingests")
        })
    }
}

/// One of an address's uploads at once, given back when dropped.
#[derive(Debug)]
pub struct Upload {
    client: IpAddr,
    uploads: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for Upload {
    fn drop(&mut self) {
        let mut uploads = self.uploads.lock().expect("not poisoned");
        if let Some(n) = uploads.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                uploads.remove(&self.client);
            }
        }
    }
}

impl Guard {
    /// What key requests are held to.
    pub fn key_requests(&self) -> store::RequestLimits {
        self.limits.key_requests
    }

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
            uploads: Default::default(),
            ingests: Ingests {
                places: Arc::new(Semaphore::new(limits.concurrent_ingests.max(1))),
                most: limits.concurrent_ingests.max(1),
            },
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

    /// One more upload under way from `client`, if it has fewer than its most at once;
    /// asked before anything is read, and spends nothing when refused.
    pub fn admit_upload(&self, client: IpAddr) -> Result<Upload, ApiError> {
        let most = self.limits.per_address_concurrent.max(1);
        let mut uploads = self.uploads.lock().expect("not poisoned");
        let under_way = uploads.entry(client).or_default();
        if *under_way >= most {
            return Err(rate_limited(
                format!(
                    "{client} is already sending {most} bundles, its most at once; try again when one has \
                     been answered"
                ),
                UPLOAD_RETRY,
            )
            .with_code("too_many_uploads"));
        }
        *under_way += 1;
        Ok(Upload { client, uploads: self.uploads.clone() })
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

    /// The places among the ingests at once, to take one from when an envelope is read.
    pub fn ingests(&self) -> Ingests {
        self.ingests.clone()
    }

    /// `body`, cut off when it sends nothing for [`Limits::body_idle`], has not ended by
    /// [`Limits::body_total`], or arrives slower than [`Limits::body_min_rate`] (see
    /// [`Pace`]); the clock says which.
    pub fn timed<S, E>(
        &self,
        body: S,
    ) -> (impl Stream<Item = io::Result<Bytes>> + Send + use<S, E>, BodyClock)
    where
        S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let clock = BodyClock { cut: Arc::new(OnceLock::new()), limits: self.limits };
        let cut = clock.cut.clone();
        let reading = PacedBody {
            body,
            pace: Pace::new(self.limits.body_min_rate, self.limits.body_rate_window),
            last: Instant::now(),
            idle: self.limits.body_idle,
            deadline: Instant::now() + self.limits.body_total,
        };
        let stream = futures::stream::unfold(Some(reading), move |reading| {
            let cut = cut.clone();
            async move {
                let mut reading = reading?;
                match reading.next().await {
                    Ok(Some(bytes)) => Some((Ok(bytes), Some(reading))),
                    Ok(None) => None,
                    Err(Stop::Body(e)) => Some((Err(io::Error::other(e)), None)),
                    Err(Stop::Cut(why)) => {
                        let _ = cut.set(why);
                        let e = io::Error::new(io::ErrorKind::TimedOut, "the body arrived too slowly");
                        Some((Err(e), None))
                    }
                }
            }
        });
        (Box::pin(stream), clock)
    }
}

/// Why a body was cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// It paused for [`Limits::body_idle`], or had not ended by [`Limits::body_total`].
    Stalled,
    /// A window of it arrived at `rate` bytes a second, under [`Limits::body_min_rate`].
    TooSlow { rate: u64 },
}

enum Stop<E> {
    Body(E),
    Cut(Cut),
}

/// A body being read under [`Guard::timed`]'s rules.
struct PacedBody<S> {
    body: S,
    pace: Pace,
    /// When the last bytes arrived (or the reading began).
    last: Instant,
    idle: Duration,
    deadline: Instant,
}

impl<S, E> PacedBody<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    /// The body's next bytes, or why it was cut off: each wait ends at the pause rule's
    /// or the deadline's limit, or at the end of the pace's window, to judge it.
    async fn next(&mut self) -> Result<Option<Bytes>, Stop<E>> {
        loop {
            let started = Instant::now();
            let stalls = (self.last + self.idle).min(self.deadline);
            let mut wait = stalls.saturating_duration_since(started);
            if let Some(judged) = self.pace.until_judged() {
                wait = wait.min(judged);
            }
            let arrived = tokio::time::timeout(wait, self.body.next()).await;
            let waited = started.elapsed();
            let bytes = match arrived {
                Ok(Some(Ok(bytes))) => bytes,
                Ok(Some(Err(e))) => return Err(Stop::Body(e)),
                Ok(None) => return Ok(None),
                Err(_) => {
                    self.pace.passed(waited, 0).map_err(|rate| Stop::Cut(Cut::TooSlow { rate }))?;
                    if Instant::now() >= stalls {
                        return Err(Stop::Cut(Cut::Stalled));
                    }
                    continue;
                }
            };
            self.pace.passed(waited, bytes.len() as u64).map_err(|rate| Stop::Cut(Cut::TooSlow { rate }))?;
            self.last = Instant::now();
            return Ok(Some(bytes));
        }
    }
}

/// The minimum-rate rule, on the time spent waiting for the client's bytes: the first
/// window is the body's grace, and each window after must bring at least the minimum
/// rate's worth. A trickle (a byte every few seconds, each within the pause rule) is cut
/// at the end of its first judged window; a slow honest link passes, and a server slow
/// to read (its own work between reads) does not count against the client.
#[derive(Debug, Clone)]
pub struct Pace {
    /// Bytes a second; 0: no minimum.
    min: u64,
    window: Duration,
    /// The time spent waiting for the body so far.
    waited: Duration,
    /// When (in `waited`) the current window ends.
    window_end: Duration,
    /// The bytes of the current window.
    in_window: u64,
    /// Whether the current window is judged (every one but the first).
    judged: bool,
}

impl Pace {
    pub fn new(min_bytes_per_sec: u64, window: Duration) -> Pace {
        let window = window.max(Duration::from_millis(1));
        Pace {
            min: min_bytes_per_sec,
            window,
            waited: Duration::ZERO,
            window_end: window,
            in_window: 0,
            judged: false,
        }
    }

    /// How much longer the body may be waited on before the current window is judged;
    /// `None` with no minimum.
    pub fn until_judged(&self) -> Option<Duration> {
        (self.min > 0).then(|| self.window_end.saturating_sub(self.waited))
    }

    /// `bytes` arrived after a wait of `waited` (none: the wait ended with nothing).
    /// Each window that has ended by now is judged: one short of the minimum is the
    /// `Err`, its rate in bytes a second.
    pub fn passed(&mut self, waited: Duration, bytes: u64) -> Result<(), u64> {
        if self.min == 0 {
            return Ok(());
        }
        self.waited += waited;
        let mut arrived = bytes;
        while self.waited >= self.window_end {
            // The bytes came at the end of the wait: they count in the last window it ends.
            if self.waited < self.window_end + self.window {
                self.in_window += std::mem::take(&mut arrived);
            }
            let millis = self.window.as_millis();
            if self.judged && u128::from(self.in_window) * 1000 < u128::from(self.min) * millis {
                return Err(u64::try_from(u128::from(self.in_window) * 1000 / millis).unwrap_or(u64::MAX));
            }
            (self.judged, self.in_window, self.window_end) = (true, 0, self.window_end + self.window);
        }
        self.in_window += arrived;
        Ok(())
    }
}

/// Whether a body given to [`Guard::timed`] was cut off for arriving too slowly, and why.
#[derive(Debug, Clone)]
pub struct BodyClock {
    cut: Arc<OnceLock<Cut>>,
    limits: Limits,
}

impl BodyClock {
    /// `outcome`, unless the body was cut off: then a 408 saying so (`request_timeout`
    /// for a pause or the deadline, `upload_too_slow` for the rate), whatever error the
    /// truncated body caused further on.
    pub fn judge<T>(&self, outcome: Result<T, ApiError>) -> Result<T, ApiError> {
        let limits = &self.limits;
        match self.cut.get() {
            None => outcome,
            Some(Cut::Stalled) => Err(ApiError::too_slow(format!(
                "the upload arrived too slowly: a body must not pause for {} s and must arrive within {} s; nothing \
                 was stored",
                limits.body_idle.as_secs(),
                limits.body_total.as_secs()
            ))),
            Some(Cut::TooSlow { rate }) => Err(ApiError::too_slow(format!(
                "the upload arrived too slowly: {rate} bytes/s over {} s, under the minimum of {} bytes/s; nothing \
                 was stored",
                limits.body_rate_window.as_secs_f64(),
                limits.body_min_rate
            ))
            .with_code("upload_too_slow")),
        }
    }
}

fn rate_limited(message: String, wait: Duration) -> ApiError {
    ApiError::rate_limited(message, wait.as_secs().max(1))
}

#[cfg(test)]
mod tests;
