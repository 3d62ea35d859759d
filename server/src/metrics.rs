//! `/metrics` in the Prometheus text format: requests by status class, ingests by
//! result, ingest duration, and reads refused by reason.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

const BUCKETS: [f64; 11] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
const RESULTS: [&str; 4] = ["stored", "already_stored", "refused", "failed"];

#[derive(Debug, Default)]
pub struct Metrics {
    /// By status class: 1xx … 5xx.
    requests: [AtomicU64; 5],
    ingests: [AtomicU64; 4],
    /// Cumulative counts per bucket, then +Inf.
    duration_buckets: [AtomicU64; 12],
    duration_micros: AtomicU64,
    /// Reads refused, by [`Refusal`].
    refused: [AtomicU64; 2],
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
}

impl Metrics {
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

    fn render(&self) -> String {
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

pub async fn metrics(State(metrics): State<Arc<Metrics>>) -> Response {
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], metrics.render())
        .into_response()
}
