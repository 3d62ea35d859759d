//! Checks a bundle in the browser exactly as the server's ingest does, before any byte
//! is sent: the bundle crate's [`Verifier`] over the file, read in 1 MiB slices
//! through `FileReaderSync` (so it runs in a worker, never on the page's thread, and
//! holds one slice at a time whatever the file's size).
//!
//! `verify-worker.js` loads this module and calls [`verify`] for each file posted to
//! it; what comes back is JSON the submit island reads.

use std::io::{self, Read};

use bundle::{BundleError, Limits, PublicKey, Verifier};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::{Blob, FileReaderSync};

/// Bytes read at a time.
const SLICE: f64 = (1 << 20) as f64;
/// Progress is reported at most this often, in bytes.
const REPORT_EVERY: f64 = 4.0 * SLICE;

/// What the page sends: the server's trust and limits (the app's `SubmitSetup`).
#[derive(Debug, Deserialize)]
struct Setup {
    trusted: Vec<String>,
    revoked: Vec<(String, String)>,
    tasks: Vec<String>,
    #[serde(default)]
    private_checks: Vec<String>,
    /// What the server holds a bundle's claims to (spec §5a).
    claims: bundle::Claims,
    limits: Limits,
}

/// What goes back to the page.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Progress { done: f64, total: f64 },
    Valid { runs: u64, agent: String },
    Invalid { code: String, message: String },
}

/// Verifies `file` against `setup` (JSON), calling `progress` with JSON progress
/// messages as it reads; returns the verdict as JSON.
#[wasm_bindgen]
pub fn verify(file: Blob, setup: &str, progress: &js_sys::Function) -> String {
    let answer = match serde_json::from_str::<Setup>(setup) {
        Ok(setup) => check(file, &setup, progress),
        Err(e) => {
            Answer::Invalid { code: "browser_check_failed".into(), message: format!("the page's setup: {e}") }
        }
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

fn check(file: Blob, setup: &Setup, progress: &js_sys::Function) -> Answer {
    let mut trusted = Vec::new();
    for pem in &setup.trusted {
        match PublicKey::from_pem(pem) {
            Ok(k) => trusted.push(k),
            Err(e) => {
                return Answer::Invalid {
                    code: "browser_check_failed".into(),
                    message: format!("a trusted key: {e}"),
                };
            }
        }
    }
    let reader = match FileReaderSync::new() {
        Ok(r) => r,
        Err(_) => {
            return Answer::Invalid {
                code: "browser_check_failed".into(),
                message: "this browser cannot read files in a worker".into(),
            };
        }
    };
    let total = file.size();
    let source = Slices { file, reader, at: 0.0, total, chunk: Vec::new(), pos: 0, reported: 0.0, progress };
    // The page's clock, which the WebAssembly cannot read by itself: a bundle dated
    // later than it is refused here as the server would refuse it.
    let now = time::OffsetDateTime::from_unix_timestamp_nanos(js_sys::Date::now() as i128 * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let verifier = Verifier::new(trusted, setup.tasks.iter().cloned())
        .with_private_checks(setup.private_checks.iter().cloned())
        .holding(setup.claims.clone())
        .with_limits(setup.limits)
        .at(now);
    match verifier.verify(source) {
        Ok(v) => Answer::Valid { runs: v.manifest.runs.len() as u64, agent: v.manifest.agent.name() },
        Err(e) => invalid(&e, &setup.revoked),
    }
}

/// The code and sentence the server answers for `e`: a bundle signed only by keys the
/// registry revoked is told so, as the server's ingest does.
fn invalid(e: &BundleError, revoked: &[(String, String)]) -> Answer {
    if let BundleError::NoTrustedSignature { keyids } = e
        && let Some((keyid, at)) = revoked.iter().find(|(k, _)| keyids.contains(k))
    {
        return Answer::Invalid {
            code: "key_revoked".into(),
            message: format!("key {keyid} was revoked at {at}"),
        };
    }
    Answer::Invalid { code: e.code().to_owned(), message: e.to_string() }
}

/// The file as a stream: one slice of it at a time in memory, in `chunk`.
struct Slices<'a> {
    file: Blob,
    reader: FileReaderSync,
    /// Where the next slice starts in the file.
    at: f64,
    total: f64,
    chunk: Vec<u8>,
    /// How much of `chunk` has been read.
    pos: usize,
    reported: f64,
    progress: &'a js_sys::Function,
}

impl Slices<'_> {
    /// Reads the next slice into `chunk` (one JavaScript buffer a mebibyte: few for the
    /// collector to find).
    fn fill(&mut self) -> io::Result<()> {
        let end = (self.at + SLICE).min(self.total);
        let slice = self
            .file
            .slice_with_f64_and_f64(self.at, end)
            .map_err(|_| io::Error::other("slicing the file"))?;
        let bytes = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|_| io::Error::other("the file could not be read (was it changed or removed?)"))?;
        let view = js_sys::Uint8Array::new(&bytes);
        self.chunk.resize(view.length() as usize, 0);
        view.copy_to(&mut self.chunk);
        self.pos = 0;
        self.at += self.chunk.len() as f64;
        if self.at - self.reported >= REPORT_EVERY || self.at >= self.total {
            self.reported = self.at;
            let message = Answer::Progress { done: self.at, total: self.total };
            let _ = self.progress.call1(
                &wasm_bindgen::JsValue::NULL,
                &serde_json::to_string(&message).unwrap_or_default().into(),
            );
        }
        Ok(())
    }
}

impl Read for Slices<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.chunk.len() {
            if self.at >= self.total {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = buf.len().min(self.chunk.len() - self.pos);
        buf[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
