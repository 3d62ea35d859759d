//! `rexbench submit`: send a bundle to a leaderboard server.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::Error;

/// What the server said.
#[derive(Debug)]
pub enum Verdict {
    /// 201: stored now. 200: it was already stored. 202: held, its key's request
    /// pending (`rexbench register`): shown to its submitter and the maintainers until
    /// the key is approved.
    Accepted { status: u16, body: Value },
    /// 4xx: the server refused the bundle, with its error code and message.
    Refused { status: u16, code: String, message: String },
}

/// Times a busy server (`too_many_ingests`, or this address's uploads at once,
/// `too_many_uploads`) is asked again before giving up.
const BUSY_RETRIES: u32 = 5;
/// The longest wait for a busy server this side will accept from `Retry-After`.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// Streams the bundle at `path` to `<server>/api/v1/submissions`. A server busy with
/// other ingests is asked again after the wait it names; any other refusal, a rate
/// limit included, is the verdict.
pub fn submit(path: &Path, server: &str) -> Result<Verdict, Error> {
    let mut tries = 0;
    loop {
        match submit_once(path, server)? {
            (Verdict::Refused { status: 429, code, .. }, Some(wait))
                if (code == "too_many_ingests" || code == "too_many_uploads") && tries < BUSY_RETRIES =>
            {
                tries += 1;
                std::thread::sleep(wait.min(MAX_WAIT));
            }
            (verdict, _) => return Ok(verdict),
        }
    }
}

/// One request: the verdict and the `Retry-After` the server gave, if any.
fn submit_once(path: &Path, server: &str) -> Result<(Verdict, Option<Duration>), Error> {
    let url = format!("{}/api/v1/submissions", server.trim_end_matches('/'));
    let file = File::open(path).map_err(|source| Error::Open { path: path.to_owned(), source })?;
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut response = agent.post(&url).content_type("application/gzip").send(file).map_err(|e| {
        // A server refuses a bundle over its limit before reading it all, and the
        // connection ends under the upload: say so rather than that it cannot be reached.
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let limit = bundle::Limits::default().compressed;
        if size > limit {
            Error::Fetch {
                url: url.clone(),
                reason: format!(
                    "{} is {size} bytes, more than the {limit} a server takes by default (the bundle spec's \
                         section 7): it ended the upload ({e})",
                    path.display()
                ),
            }
        } else {
            Error::Reach { url: url.clone(), source: e.into() }
        }
    })?;
    let status = response.status().as_u16();
    let wait = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| Error::Fetch { url: url.clone(), reason: format!("reading the answer: {e}") })?;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    match status {
        200..=202 => Ok((Verdict::Accepted { status, body }, wait)),
        400..=499 => {
            let error = &body["error"];
            let verdict = Verdict::Refused {
                status,
                code: error["code"].as_str().unwrap_or("unknown").to_owned(),
                message: error["message"].as_str().map_or_else(|| body.to_string(), str::to_owned),
            };
            Ok((verdict, wait))
        }
        _ => Err(Error::Fetch { url, reason: format!("answered {status}: {body}") }),
    }
}
