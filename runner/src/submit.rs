//! `runner submit`: send a bundle to a leaderboard server.

use std::fs::File;
use std::path::Path;

use serde_json::Value;

/// What the server said.
#[derive(Debug)]
pub enum Verdict {
    /// 201: stored now. 200: it was already stored.
    Accepted { status: u16, body: Value },
    /// 4xx: the server refused the bundle, with its error code and message.
    Refused { status: u16, code: String, message: String },
}

/// Streams the bundle at `path` to `<server>/api/v1/submissions`.
pub fn submit(path: &Path, server: &str) -> Result<Verdict, String> {
    let url = format!("{}/api/v1/submissions", server.trim_end_matches('/'));
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut response = agent
        .post(&url)
        .content_type("application/gzip")
        .send(file)
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    let status = response.status().as_u16();
    let text =
        response.body_mut().read_to_string().map_err(|e| format!("reading the answer of {url}: {e}"))?;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    match status {
        200 | 201 => Ok(Verdict::Accepted { status, body }),
        400..=499 => {
            let error = &body["error"];
            Ok(Verdict::Refused {
                status,
                code: error["code"].as_str().unwrap_or("unknown").to_owned(),
                message: error["message"].as_str().map_or_else(|| body.to_string(), str::to_owned),
            })
        }
        _ => Err(format!("{url} answered {status}: {body}")),
    }
}
