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
pub(crate) struct Rates {
    pub(crate) runs: i64,
    pub(crate) counted: i64,
    pub(crate) successes: i64,
    pub(crate) executed: i64,
    /// Counted runs whose execution the server knows (none, for published results
    /// that tell only successes).
    #[serde(default)]
    pub(crate) exec_counted: Option<i64>,
    pub(crate) final_success: Option<f64>,
    pub(crate) execution_success: Option<f64>,
    pub(crate) file_recall: Option<f64>,
    pub(crate) cost_runs: i64,
    pub(crate) mean_cost_usd: Option<f64>,
    /// Of the runs with a cost, those priced from their tokens (spec §4m).
    #[serde(default)]
    pub(crate) cost_checked: i64,
    /// Runs whose stated cost carries a mark.
    #[serde(default)]
    pub(crate) cost_marked: i64,
    pub(crate) duration_runs: i64,
    pub(crate) mean_duration_s: Option<f64>,
    /// Successes with an integrity finding not dismissed.
    #[serde(default)]
    pub(crate) flagged: i64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct AgentAnswer {
    pub(crate) submissions: Vec<SubmissionAnswer>,
    pub(crate) current: BTreeMap<String, BTreeMap<String, BTreeMap<Hint, Rates>>>,
    /// Every finding about the runs of the current submissions.
    #[serde(default)]
    pub(crate) findings: Vec<FindingRecordAnswer>,
    /// The agent's runs the maintainers re-ran.
    #[serde(default)]
    pub(crate) reproduced: Vec<ReproducedAnswer>,
    /// Its current submissions' runs whose stated cost carries a mark (spec §4m).
    #[serde(default)]
    pub(crate) cost_marked: Vec<CostMarkedAnswer>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CostMarkedAnswer {
    pub(crate) bundle_id: String,
    pub(crate) task: String,
    pub(crate) hint: Hint,
    pub(crate) attempt: u32,
    pub(crate) mark: bundle::CostMark,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReproducedAnswer {
    #[serde(default)]
    pub(crate) run_id: i64,
    pub(crate) bundle_id: String,
    pub(crate) reproduction: String,
    pub(crate) task: String,
    pub(crate) hint: Hint,
    pub(crate) attempt: u32,
    pub(crate) reproduced: bundle::Outcome,
    pub(crate) held: bool,
    /// Its re-run on a held-out variant (spec §4l).
    #[serde(default)]
    pub(crate) heldout: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct SamplingAnswer {
    pub(crate) epochs: Vec<EpochAnswer>,
    /// The held-out variants registered (spec §4l).
    #[serde(default)]
    pub(crate) variants: Vec<VariantAnswer>,
    /// Every sample rule the server has used, from when (spec §4e).
    #[serde(default)]
    pub(crate) sizing_history: Vec<RuleInForceAnswer>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct RuleInForceAnswer {
    pub(crate) since: String,
    pub(crate) rule: bundle::sample::Rule,
}

#[derive(Debug, Deserialize)]
pub(crate) struct VariantAnswer {
    pub(crate) task: String,
    pub(crate) digest: String,
    pub(crate) registered_at: String,
    #[serde(default)]
    pub(crate) retired_at: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct EpochAnswer {
    pub(crate) epoch: i64,
    pub(crate) commitment: String,
    pub(crate) committed_at: String,
    pub(crate) key: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct SampleAnswer {
    pub(crate) epoch: Option<i64>,
    pub(crate) revealed: bool,
    pub(crate) counts: SampleCounts,
    /// The rule its sample of successes was sized by (spec §4e); none for one sampled
    /// before sizing (one success per condition).
    #[serde(default)]
    pub(crate) sizing: Option<bundle::sample::Rule>,
    pub(crate) runs: Vec<SampledRunAnswer>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct SampleCounts {
    pub(crate) sampled: i64,
    pub(crate) reproduced: i64,
    pub(crate) differed: i64,
    #[serde(default)]
    pub(crate) heldout: i64,
    #[serde(default)]
    pub(crate) generalised: i64,
    /// What its sample of successes catches, as the server says (spec §4e).
    #[serde(default)]
    pub(crate) catches: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct SampledRunAnswer {
    pub(crate) task: String,
    pub(crate) hint: Hint,
    pub(crate) attempt: u32,
    /// The agent's earlier submission whose same run did not reproduce (spec §4e).
    #[serde(default)]
    pub(crate) carried_from: Option<String>,
    /// The run of this submission whose refutation queued it (a caught lie costs the
    /// submission).
    #[serde(default)]
    pub(crate) escalated_by: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FindingRecordAnswer {
    pub(crate) finding: FindingAnswer,
    pub(crate) bundle_id: String,
    pub(crate) task: String,
    pub(crate) hint: Hint,
    pub(crate) attempt: u32,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FindingAnswer {
    pub(crate) found_by: String,
    pub(crate) check: String,
    pub(crate) message: String,
    pub(crate) artifact: Option<String>,
    pub(crate) line: Option<u64>,
    pub(crate) review: Option<ReviewAnswer>,
    /// The server withholds the text: the run's outputs are private to this reader.
    #[serde(default)]
    pub(crate) withheld: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReviewAnswer {
    pub(crate) verdict: String,
}

/// A run, as a manifest and the API name it.
pub(crate) type RunKey = (String, Hint, u32);

#[derive(Debug, Deserialize)]
pub(crate) struct SubmissionAnswer {
    pub(crate) bundle_id: String,
    pub(crate) keyid: String,
    pub(crate) received_at: String,
    pub(crate) superseded_by: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct KeysAnswer {
    pub(crate) keys: Vec<KeyAnswer>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct KeyAnswer {
    pub(crate) keyid: String,
    pub(crate) owner: String,
    pub(crate) tier: Tier,
    pub(crate) revoked_at: Option<String>,
    pub(crate) public_key: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TasksAnswer {
    pub(crate) tasks: Vec<TaskAnswer>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TaskAnswer {
    pub(crate) id: String,
    /// The attempts per hint condition asked (spec §4f).
    pub(crate) attempts: u32,
}

/// The leaderboard's rows, of every page.
#[derive(Debug, Deserialize)]
pub(crate) struct LeaderboardAnswer {
    pub(crate) rows: Vec<RowAnswer>,
}

/// One page of the leaderboard as the API gives it.
#[derive(Debug, Deserialize)]
struct LeaderboardPage {
    rows: Vec<RowAnswer>,
    total: usize,
}

/// Rows asked for in each page of the leaderboard: the most the API gives.
const LEADERBOARD_PER_PAGE: usize = 500;
/// Pages an audit reads at most (a million rows): a server's word bounds no loop.
const LEADERBOARD_MOST_PAGES: usize = 2_000;

#[derive(Debug, Deserialize)]
pub(crate) struct RowAnswer {
    pub(crate) bundle_id: String,
    pub(crate) by_hint: BTreeMap<Hint, Rates>,
    pub(crate) harness: HarnessAnswer,
    #[serde(default)]
    pub(crate) coverage: BTreeMap<Hint, CoverageAnswer>,
    pub(crate) stats: Option<StatsAnswer>,
}

#[derive(Debug, PartialEq, Deserialize)]
pub(crate) struct HarnessAnswer {
    pub(crate) name: String,
    pub(crate) version: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(crate) struct CoverageAnswer {
    pub(crate) tasks: i64,
    pub(crate) fewest_attempts: i64,
    pub(crate) most_attempts: i64,
    #[serde(default)]
    pub(crate) short_tasks: i64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct StatsAnswer {
    pub(crate) reliability: BTreeMap<Hint, Option<ReliabilityAnswer>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReliabilityAnswer {
    pub(crate) pass_at: Vec<Estimate>,
    pub(crate) pass_all: Vec<Estimate>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Estimate {
    pub(crate) estimate: f64,
}

/// The server's API, read over HTTP.
pub(crate) struct Api {
    pub(crate) base: String,
    pub(crate) agent: ureq::Agent,
    /// Sent as `Authorization: Bearer …`: a maintainer's or a signed-in submitter's
    /// token, which private outputs are served to.
    pub(crate) token: Option<String>,
}

impl Api {
    /// The API of the leaderboard at `server`, read with `token` where one is given.
    pub(crate) fn new(server: &str, token: Option<&str>) -> Api {
        Api {
            base: server.trim_end_matches('/').to_owned(),
            agent: ureq::Agent::config_builder().http_status_as_error(false).build().into(),
            token: token.map(str::to_owned),
        }
    }

    fn get(&self, url: &str) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
        let request = self.agent.get(url);
        match &self.token {
            Some(token) => request.header("authorization", &format!("Bearer {token}")),
            None => request,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) fn bytes(&self, path: &str) -> Result<Vec<u8>, Error> {
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

    /// Every row of the leaderboard `query` asks for (`""` or `"integrity=strict"`), page
    /// by page: as many pages as the first says there are, and no more.
    pub(crate) fn leaderboard(&self, query: &str) -> Result<LeaderboardAnswer, Error> {
        let page = |n: usize| -> Result<LeaderboardPage, Error> {
            let and = if query.is_empty() { "" } else { "&" };
            self.json(&format!("/api/v1/leaderboard?{query}{and}page={n}&per_page={LEADERBOARD_PER_PAGE}"))
        };
        let first = page(1)?;
        let pages = first.total.div_ceil(LEADERBOARD_PER_PAGE);
        if pages > LEADERBOARD_MOST_PAGES {
            return Err(Error::Answer {
                url: self.url("/api/v1/leaderboard"),
                reason: format!("says it has {} rows: more than an audit reads", first.total),
            });
        }
        let mut rows = first.rows;
        for n in 2..=pages {
            rows.extend(page(n)?.rows);
        }
        Ok(LeaderboardAnswer { rows })
    }

    pub(crate) fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let bytes = self.bytes(path)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::Answer { url: self.url(path), reason: e.to_string() })
    }

    /// An artifact's bytes (bounded); `None` where it is a private output the server
    /// does not serve to this reader (401 `outputs_private`).
    pub(crate) fn artifact(&self, digest: &str) -> Result<Option<Vec<u8>>, Error> {
        let url = self.url(&format!("/artifacts/{digest}"));
        let fetch = |reason: String| Error::Fetch { url: url.clone(), reason };
        let mut response = self.get(&url).call().map_err(|e| fetch(e.to_string()))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(Limits::default().artifact)
            .read_to_vec()
            .map_err(|e| fetch(e.to_string()))?;
        match status {
            200 => Ok(Some(body)),
            401 if serde_json::from_slice::<serde_json::Value>(&body)
                .is_ok_and(|v| v["error"]["code"] == "outputs_private") =>
            {
                Ok(None)
            }
            _ => Err(fetch(format!("answered {status}"))),
        }
    }

    /// An artifact's digest, hashed as it streams in; `None` where it is a private
    /// output the server does not serve to this reader (401 `outputs_private`).
    pub(crate) fn digest_of(&self, digest: &str) -> Result<Option<Digest>, Error> {
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
