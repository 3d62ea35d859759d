//! The leaderboard's API as the audit reads it, over HTTP: its own narrow types of only
//! what it checks (as any outside client would read the API: a field the server adds
//! never breaks it, one it drops shows as an answer that does not read), and the client
//! that fetches answers, envelopes and artifacts with their sizes bounded.

use std::collections::BTreeMap;

use bundle::{Digest, Hint, Limits, Tier};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::Error;

/// The counts one rate is made of, under one hint condition (of one task, or all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub(super) struct Rates {
    pub(super) runs: i64,
    pub(super) counted: i64,
    pub(super) successes: i64,
    pub(super) executed: i64,
    /// Counted runs whose execution the server knows (none, for published results
    /// that tell only successes).
    #[serde(default)]
    pub(super) exec_counted: Option<i64>,
    pub(super) final_success: Option<f64>,
    pub(super) execution_success: Option<f64>,
    pub(super) file_recall: Option<f64>,
    pub(super) cost_runs: i64,
    pub(super) mean_cost_usd: Option<f64>,
    pub(super) duration_runs: i64,
    pub(super) mean_duration_s: Option<f64>,
    /// Successes with an integrity finding not dismissed.
    #[serde(default)]
    pub(super) flagged: i64,
}

#[derive(Debug, Deserialize)]
pub(super) struct AgentAnswer {
    pub(super) submissions: Vec<SubmissionAnswer>,
    pub(super) current: BTreeMap<String, BTreeMap<String, BTreeMap<Hint, Rates>>>,
    /// Every finding about the runs of the current submissions.
    #[serde(default)]
    pub(super) findings: Vec<FindingRecordAnswer>,
}

#[derive(Debug, Deserialize)]
pub(super) struct FindingRecordAnswer {
    pub(super) finding: FindingAnswer,
    pub(super) bundle_id: String,
    pub(super) task: String,
    pub(super) hint: Hint,
    pub(super) attempt: u32,
}

#[derive(Debug, Deserialize)]
pub(super) struct FindingAnswer {
    pub(super) found_by: String,
    pub(super) check: String,
    pub(super) message: String,
    pub(super) artifact: Option<String>,
    pub(super) line: Option<u64>,
    pub(super) review: Option<ReviewAnswer>,
    /// The server withholds the text: the run's outputs are private to this reader.
    #[serde(default)]
    pub(super) withheld: bool,
}

#[derive(Debug, Deserialize)]
pub(super) struct ReviewAnswer {
    pub(super) verdict: String,
}

/// A run, as a manifest and the API name it.
pub(super) type RunKey = (String, Hint, u32);

#[derive(Debug, Deserialize)]
pub(super) struct SubmissionAnswer {
    pub(super) bundle_id: String,
    pub(super) keyid: String,
    pub(super) superseded_by: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct KeysAnswer {
    pub(super) keys: Vec<KeyAnswer>,
}

#[derive(Debug, Deserialize)]
pub(super) struct KeyAnswer {
    pub(super) keyid: String,
    pub(super) owner: String,
    pub(super) tier: Tier,
    pub(super) revoked_at: Option<String>,
    pub(super) public_key: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct LeaderboardAnswer {
    pub(super) rows: Vec<RowAnswer>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RowAnswer {
    pub(super) bundle_id: String,
    pub(super) by_hint: BTreeMap<Hint, Rates>,
    pub(super) harness: HarnessAnswer,
    #[serde(default)]
    pub(super) coverage: BTreeMap<Hint, CoverageAnswer>,
    pub(super) stats: Option<StatsAnswer>,
}

#[derive(Debug, PartialEq, Deserialize)]
pub(super) struct HarnessAnswer {
    pub(super) name: String,
    pub(super) version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(super) struct CoverageAnswer {
    pub(super) tasks: i64,
    pub(super) fewest_attempts: i64,
    pub(super) most_attempts: i64,
}

#[derive(Debug, Deserialize)]
pub(super) struct StatsAnswer {
    pub(super) reliability: BTreeMap<Hint, Option<ReliabilityAnswer>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ReliabilityAnswer {
    pub(super) pass_at: Vec<Estimate>,
    pub(super) pass_all: Vec<Estimate>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Estimate {
    pub(super) estimate: f64,
}

/// The server's API, read over HTTP.
pub(super) struct Api {
    pub(super) base: String,
    pub(super) agent: ureq::Agent,
    /// Sent as `Authorization: Bearer …`: a maintainer's or a signed-in submitter's
    /// token, which private outputs are served to.
    pub(super) token: Option<String>,
}

impl Api {
    fn get(&self, url: &str) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        let request = self.agent.get(url);
        match &self.token {
            Some(token) => request.header("authorization", &format!("Bearer {token}")),
            None => request,
        }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(super) fn bytes(&self, path: &str) -> Result<Vec<u8>, Error> {
        let url = self.url(path);
        let fetch = |reason: String| Error::Fetch { url: url.clone(), reason };
        let mut response = self.get(&url).call().map_err(|e| fetch(e.to_string()))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(Limits::default().compressed)
            .read_to_vec()
            .map_err(|e| fetch(e.to_string()))?;
        if status != 200 {
            let text = String::from_utf8_lossy(&body);
            return Err(fetch(format!("answered {status}: {}", text.chars().take(300).collect::<String>())));
        }
        Ok(body)
    }

    pub(super) fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let bytes = self.bytes(path)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::Answer { url: self.url(path), reason: e.to_string() })
    }

    /// An artifact's digest, hashed as it streams in; `None` where it is a private
    /// output the server does not serve to this reader (401 `outputs_private`).
    pub(super) fn digest_of(&self, digest: &str) -> Result<Option<Digest>, Error> {
        let url = self.url(&format!("/artifacts/{digest}"));
        let fetch = |reason: String| Error::Fetch { url: url.clone(), reason };
        let mut response = self.get(&url).call().map_err(|e| fetch(e.to_string()))?;
        if response.status() == 401 {
            let body = response.body_mut().with_config().limit(64 << 10).read_to_vec().unwrap_or_default();
            let code = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"]["code"].as_str().map(str::to_owned));
            if code.as_deref() == Some("outputs_private") {
                return Ok(None);
            }
            return Err(fetch(format!("answered 401 ({})", code.unwrap_or_default())));
        }
        if response.status() != 200 {
            return Err(fetch(format!("answered {}", response.status().as_u16())));
        }
        let reader = response.body_mut().with_config().limit(Limits::default().uncompressed).reader();
        Digest::of_reader(reader).map(|(d, _)| Some(d)).map_err(|e| fetch(e.to_string()))
    }
}
