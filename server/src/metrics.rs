//! `/metrics` in the Prometheus text format: requests by status class, ingests by
//! result, ingest duration, reads refused by reason, and the board's reads made ready
//! ahead of requests ([`crate::warm`]).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

const BUCKETS: [f64; 11] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
const RESULTS: [&str; 5] = ["stored", "already_stored", "refused", "failed", "held"];

#[derive(Debug)]
pub struct Metrics {
    /// By status class: 1xx … 5xx.
    requests: [AtomicU64; 5],
    ingests: [AtomicU64; 5],
    /// Cumulative counts per bucket, then +Inf.
    duration_buckets: [AtomicU64; 12],
    duration_micros: AtomicU64,
    /// Reads refused, by [`Refusal`].
    refused: [AtomicU64; 2],
    /// The change-log position the board's reads were last made ready at (-1: never),
    /// and how long that took.
    ready_generation: AtomicI64,
    ready_micros: AtomicU64,
    /// The start's first round of making them is under way: `/readyz` says not yet.
    starting: AtomicBool,
    /// The start's collection of blobs left by unfinished ingests has not ended.
    collecting: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: Default::default(),
            ingests: Default::default(),
            duration_buckets: Default::default(),
            duration_micros: Default::default(),
            refused: Default::default(),
            ready_generation: AtomicI64::new(-1),
            ready_micros: Default::default(),
            starting: AtomicBool::new(false),
            collecting: AtomicBool::new(false),
        }
    }
}

/// Why a read was refused.
#[derive(Debug, Clone, Copy)]
pub enum Refusal {
    /// The request's credentials are not valid.
    InvalidCredentials,
    /// A reader asked for outputs that are private to them.
    PrivateOutputs,
}

const REFUSALS: [&str; 2] = ["invalid_credentials", "private_outputs"];

/// How an ingest ended.
#[derive(Debug, Clone, Copy)]
pub enum IngestResult {
    Stored,
    AlreadyStored,
    /// The bundle or its signer was refused (4xx).
    Refused,
    /// The server failed (5xx).
    Failed,
    /// Held for its key's pending request.
    Held,
}

impl Metrics {
    /// The board's reads were made ready at change-log position `generation`, in `took`.
    pub fn made_ready(&self, generation: i64, took: Duration) {
        self.ready_micros.store(took.as_micros() as u64, Ordering::Relaxed);
        self.ready_generation.store(generation, Ordering::Relaxed);
    }

    /// Whether the start's first round of making the board's reads is under way (set by
    /// the server's start, cleared when the round ends, well or not).
    pub fn set_starting(&self, starting: bool) {
        self.starting.store(starting, Ordering::Relaxed);
    }

    pub fn starting(&self) -> bool {
        self.starting.load(Ordering::Relaxed)
    }

    /// Whether the start's garbage collection has yet to end (set by the server's start).
    pub fn set_collecting(&self, collecting: bool) {
        self.collecting.store(collecting, Ordering::Relaxed);
    }

    pub fn refused(&self, why: Refusal) {
        self.refused[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn ingest(&self, result: IngestResult, took: Duration) {
        self.ingests[result as usize].fetch_add(1, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                self.duration_buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.duration_buckets[BUCKETS.len()].fetch_add(1, Ordering::Relaxed);
        self.duration_micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// The text `/metrics` answers; `made`: the board's reads the store has made rather
    /// than found kept.
    pub fn render(&self, made: u64) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP rexbench_http_requests_total HTTP requests answered, by status class.");
        let _ = writeln!(out, "# TYPE rexbench_http_requests_total counter");
        for (i, n) in self.requests.iter().enumerate() {
            let _ = writeln!(
                out,
                "rexbench_http_requests_total{{status=\"{}xx\"}} {}",
                i + 1,
                n.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(out, "# HELP rexbench_ingests_total Bundles submitted, by result.");
        let _ = writeln!(out, "# TYPE rexbench_ingests_total counter");
        for (name, n) in RESULTS.iter().zip(&self.ingests) {
            let _ =
                writeln!(out, "rexbench_ingests_total{{result=\"{name}\"}} {}", n.load(Ordering::Relaxed));
        }
        let _ = writeln!(out, "# HELP rexbench_refused_reads_total Reads refused, by reason.");
        let _ = writeln!(out, "# TYPE rexbench_refused_reads_total counter");
        for (name, n) in REFUSALS.iter().zip(&self.refused) {
            let _ = writeln!(
                out,
                "rexbench_refused_reads_total{{reason=\"{name}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(out, "# HELP rexbench_ingest_duration_seconds Time to verify and record a bundle.");
        let _ = writeln!(out, "# TYPE rexbench_ingest_duration_seconds histogram");
        for (bound, n) in BUCKETS.iter().zip(&self.duration_buckets) {
            let _ = writeln!(
                out,
                "rexbench_ingest_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                n.load(Ordering::Relaxed)
            );
        }
        let count = self.duration_buckets[BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(out, "rexbench_ingest_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.duration_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "rexbench_ingest_duration_seconds_sum {sum}");
        let _ = writeln!(out, "rexbench_ingest_duration_seconds_count {count}");
        let ready = self.ready_generation.load(Ordering::Relaxed);
        let ready_seconds = self.ready_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let pending = u8::from(self.collecting.load(Ordering::Relaxed));
        for (name, kind, help, value) in [
            (
                "rexbench_board_ready_generation",
                "gauge",
                "The change-log position the board's reads were last made ready at, before any request asked \
                 (-1: not yet).",
                ready.to_string(),
            ),
            (
                "rexbench_board_ready_seconds",
                "gauge",
                "How long making the board's reads ready took, the last time.",
                ready_seconds.to_string(),
            ),
            (
                "rexbench_board_reads_made_total",
                "counter",
                "Reads of the whole board (rows, statistics, task sets) made rather than found kept: a request \
                 answered from what was made ready adds none.",
                made.to_string(),
            ),
            (
                "rexbench_start_collection_pending",
                "gauge",
                "1 until the start's collection of blobs left by unfinished ingests has ended (it lists every \
                 blob: minutes, for millions).",
                pending.to_string(),
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        out
    }
}

/// Counts every answered request by its status class.
pub async fn count_requests(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let class = (response.status().as_u16() / 100).clamp(1, 5) as usize - 1;
    metrics.requests[class].fetch_add(1, Ordering::Relaxed);
    response
}
