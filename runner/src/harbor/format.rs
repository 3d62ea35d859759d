//! Harbor's files as its `JobResult`, `TrialResult` and job config and lock models write
//! them (only the fields the import reads), and how its names and times read.

use std::collections::BTreeMap;
use std::path::Path;

use bundle::{Hint, REXBENCH_TASKS};
use serde::Deserialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::policy::{Policy, PolicyOverride};
use crate::Error;

#[derive(Deserialize)]
pub(super) struct JobResult {
    #[serde(rename = "n_total_trials")]
    pub(super) _n_total_trials: u64,
    pub(super) stats: JobStats,
}

/// Older jobs count `n_trials`/`n_errors`; newer ones `n_completed_trials` and
/// `n_errored_trials` (Harbor reads the older names as the newer), and progress as well.
#[derive(Deserialize)]
pub(super) struct JobStats {
    #[serde(default)]
    pub(super) n_completed_trials: Option<u64>,
    #[serde(default)]
    pub(super) n_errored_trials: Option<u64>,
    #[serde(default)]
    pub(super) n_trials: Option<u64>,
    #[serde(default)]
    pub(super) n_errors: Option<u64>,
    #[serde(default)]
    pub(super) n_running_trials: u64,
    #[serde(default)]
    pub(super) n_pending_trials: u64,
    /// Per `agent__model__dataset`: what Harbor counted. Kept as JSON, since its shape has
    /// changed between versions and only Harbor 0.26's is compared.
    #[serde(default)]
    pub(super) evals: BTreeMap<String, serde_json::Value>,
}

impl JobStats {
    /// The trials Harbor finished, by either name (the newer first, as Harbor reads them).
    pub(super) fn completed(&self) -> Option<u64> {
        self.n_completed_trials.or(self.n_trials)
    }

    /// Of those, the trials that recorded an exception.
    pub(super) fn errored(&self) -> Option<u64> {
        self.n_errored_trials.or(self.n_errors)
    }
}

#[derive(Deserialize)]
pub(super) struct JobConfig {
    #[serde(default)]
    pub(super) job_name: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct JobLock {
    #[serde(default)]
    pub(super) harbor: Option<HarborInfo>,
}

#[derive(Deserialize)]
pub(super) struct HarborInfo {
    #[serde(default)]
    pub(super) version: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct TrialResult {
    /// Written from Harbor 0.26 on.
    #[serde(default)]
    pub(super) schema_version: Option<u64>,
    pub(super) task_name: String,
    pub(super) trial_name: String,
    /// The trial's UUID, which a regrade's `source_trial.trial_id` names.
    #[serde(default)]
    pub(super) id: Option<String>,
    /// The task folder's older digest (deprecated in 0.26 for the lock's).
    #[serde(default)]
    pub(super) task_checksum: Option<String>,
    pub(super) agent_info: AgentInfo,
    #[serde(default)]
    pub(super) agent_result: Option<AgentContext>,
    #[serde(default)]
    pub(super) verifier_result: Option<VerifierResult>,
    #[serde(default)]
    pub(super) exception_info: Option<ExceptionInfo>,
    /// Harbor 0.26: whether the job counts the reward.
    #[serde(default)]
    pub(super) reward_valid: Option<bool>,
    #[serde(default)]
    pub(super) config: Option<TrialConfig>,
    #[serde(default)]
    pub(super) step_results: Option<Vec<StepResult>>,
    #[serde(default)]
    pub(super) source: Option<String>,
    #[serde(default)]
    pub(super) started_at: Option<String>,
    #[serde(default)]
    pub(super) finished_at: Option<String>,
}

#[derive(Deserialize, Clone, PartialEq)]
pub(super) struct AgentInfo {
    pub(super) name: String,
    pub(super) version: String,
    #[serde(default)]
    pub(super) model_info: Option<ModelInfo>,
}

#[derive(Deserialize, Clone, PartialEq)]
pub(super) struct ModelInfo {
    pub(super) name: String,
    #[serde(default)]
    pub(super) provider: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct AgentContext {
    #[serde(default)]
    pub(super) cost_usd: Option<f64>,
    /// The prompt's tokens, cached ones included.
    #[serde(default)]
    pub(super) n_input_tokens: Option<u64>,
    /// Of those, the ones read from a cache.
    #[serde(default)]
    pub(super) n_cache_tokens: Option<u64>,
    #[serde(default)]
    pub(super) n_output_tokens: Option<u64>,
}

impl AgentContext {
    /// The tokens as the bundle format counts them (section 4m): the prompt's uncached
    /// tokens are `input`, its cached ones `cache_read`. None where Harbor recorded
    /// neither prompt nor output tokens.
    pub(super) fn tokens(&self) -> Option<bundle::Tokens> {
        if self.n_input_tokens.is_none() && self.n_output_tokens.is_none() {
            return None;
        }
        let prompt = self.n_input_tokens.unwrap_or(0);
        let cached = self.n_cache_tokens.unwrap_or(0).min(prompt);
        Some(bundle::Tokens {
            input: prompt - cached,
            output: self.n_output_tokens.unwrap_or(0),
            cache_read: cached,
            cache_write: 0,
        })
    }
}

#[derive(Deserialize)]
pub(super) struct VerifierResult {
    #[serde(default)]
    pub(super) rewards: Option<BTreeMap<String, f64>>,
}

#[derive(Deserialize)]
pub(super) struct ExceptionInfo {
    pub(super) exception_type: String,
    /// Harbor 0.26 writes the policy its table gives the type.
    #[serde(default)]
    pub(super) policy: Option<Policy>,
    #[serde(default)]
    pub(super) policy_override: Option<PolicyOverride>,
}

/// The trial's config: the job's error-policy overrides, and the trial a regrade
/// re-verifies.
#[derive(Deserialize, Default)]
pub(super) struct TrialConfig {
    #[serde(default)]
    pub(super) override_error_policy: BTreeMap<String, PolicyOverride>,
    #[serde(default)]
    pub(super) source_trial: Option<SourceTrial>,
}

/// Which task folder a trial ran, as its files say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ran {
    /// `task.digest` in its `lock.json` (Harbor 0.26): `sha256:<hex>`.
    Digest(String),
    /// `task_checksum` in its `result.json`, where it has no lock.
    Checksum(String),
}

impl Ran {
    /// As a run's `task_folder` says it (bundle spec §4n).
    pub(super) fn folder(&self) -> &str {
        match self {
            Ran::Digest(d) | Ran::Checksum(d) => d,
        }
    }
}

/// A 0.26 trial's `lock.json`: only the task it ran is read.
#[derive(Deserialize)]
pub(super) struct TrialLock {
    pub(super) task: TaskLock,
}

/// The task a trial ran, by the digest of its folder (`sha256:<hex>`).
#[derive(Deserialize)]
pub(super) struct TaskLock {
    pub(super) digest: String,
}

/// Harbor 0.26's `source_trial`: a trial derived from another (`action` `regrade`
/// only, today), named by its UUID and, for a local source, its folder.
#[derive(Deserialize, Clone, Debug)]
pub(super) struct SourceTrial {
    pub(super) action: String,
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) trial_id: Option<String>,
    #[serde(default)]
    pub(super) path: Option<String>,
}

/// One step of a multi-step trial: only the exception it recorded is read.
#[derive(Deserialize)]
pub(super) struct StepResult {
    #[serde(default)]
    pub(super) exception_info: Option<ExceptionInfo>,
}

impl TrialResult {
    /// The exceptions Harbor weighs for `reward_valid`: the trial's, then its steps'.
    pub(super) fn recorded_exceptions(&self) -> impl Iterator<Item = &ExceptionInfo> {
        self.exception_info
            .iter()
            .chain(self.step_results.iter().flatten().filter_map(|s| s.exception_info.as_ref()))
    }

    /// Whether it carries what only Harbor 0.26 and later write.
    pub(super) fn written_by_0_26(&self) -> bool {
        self.reward_valid.is_some()
            || self.schema_version.is_some()
            || self.recorded_exceptions().any(|e| e.policy.is_some())
    }

    /// Harbor's key for the job's per-agent counts: `agent__model__dataset`.
    pub(super) fn evals_key(&self) -> String {
        let dataset = self.source.as_deref().unwrap_or("adhoc");
        match &self.agent_info.model_info {
            Some(m) => format!("{}__{}__{dataset}", self.agent_info.name, m.name),
            None => format!("{}__{dataset}", self.agent_info.name),
        }
    }
}

/// The RExBench task a Harbor task name stands for, and the hint condition the name
/// shows, if any: `rexbench/rexbench__cogs` → cogs; `rexbench-othello-hints` → othello
/// with hints.
pub fn task_of(task_name: &str) -> Option<(String, Option<Hint>)> {
    let name = task_name.rsplit('/').next().unwrap_or(task_name);
    let name = name.strip_prefix("rexbench__").or_else(|| name.strip_prefix("rexbench-")).unwrap_or(name);
    let (name, hint) = [("-none", Hint::None), ("-hints", Hint::Hints), ("-detailed", Hint::Detailed)]
        .into_iter()
        .find_map(|(suffix, hint)| name.strip_suffix(suffix).map(|n| (n, Some(hint))))
        .unwrap_or((name, None));
    let name = if name == "implicit-instructions" { "implicit-ins" } else { name };
    REXBENCH_TASKS.contains(&name).then(|| (name.to_owned(), hint))
}

/// Python's `isoformat()`: with an offset in newer jobs, naive in older ones (read as
/// UTC; a trial's two ends share their zone, so durations and order are right).
pub(super) fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok().or_else(|| OffsetDateTime::parse(&format!("{s}Z"), &Rfc3339).ok())
}

pub(super) fn time_field(
    path: &Path,
    field: &str,
    value: &Option<String>,
) -> Result<Option<OffsetDateTime>, Error> {
    value
        .as_deref()
        .map(|s| {
            parse_time(s).ok_or_else(|| Error::Invalid {
                path: path.to_owned(),
                detail: format!("`{field}` is `{s}`, not an ISO 8601 time"),
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_names_map_to_rexbench_tasks_and_hints() {
        assert_eq!(task_of("rexbench/rexbench__cogs"), Some(("cogs".into(), None)));
        assert_eq!(task_of("rexbench-othello"), Some(("othello".into(), None)));
        assert_eq!(task_of("org/rexbench__implicit-instructions"), Some(("implicit-ins".into(), None)));
        assert_eq!(task_of("rexbench-cogs-hints"), Some(("cogs".into(), Some(Hint::Hints))));
        assert_eq!(task_of("rexbench__winodict-detailed"), Some(("winodict".into(), Some(Hint::Detailed))));
        assert_eq!(task_of("rexbench/rexbench__swe-task"), None);
    }

    #[test]
    fn times_with_and_without_an_offset() {
        let naive = parse_time("2026-02-25T10:06:58.123456").unwrap();
        let utc = parse_time("2026-02-25T10:06:58.123456+00:00").unwrap();
        assert_eq!(naive, utc);
        assert_eq!(parse_time("2026-02-25T12:06:58+02:00").unwrap().unix_timestamp(), utc.unix_timestamp());
        assert!(parse_time("yesterday").is_none());
    }
}

/// Whether `name` reads as an exception's class name (`AgentTimeoutError`,
/// `asyncio.TimeoutError`), or one of the runner's fixed words (`no reward`), at most 100
/// characters: what a manifest's `error_type` may say.
pub(super) fn is_class_name(name: &str) -> bool {
    let fixed = ["no reward", "no verifier result", "Execution Timeout"];
    (1..=100).contains(&name.chars().count())
        && (fixed.contains(&name)
            || crate::error_class::is_shell_error(name)
            || (name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')))
}

#[cfg(test)]
mod class_names {
    use super::is_class_name;

    #[test]
    fn only_a_class_name_or_a_fixed_word_is_an_error_type() {
        for kept in [
            "AgentTimeoutError",
            "asyncio.TimeoutError",
            "_Private",
            "no reward",
            "Execution Timeout",
            "cannot access",
        ] {
            assert!(is_class_name(kept), "{kept}");
        }
        for dropped in
            ["", "ValueError: expected 7.5, read 8", "echo 0.4563 > results/x", "1stError", &"E".repeat(101)]
        {
            assert!(!is_class_name(dropped), "{dropped}");
        }
    }
}
