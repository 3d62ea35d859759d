//! Whether Harbor counts a trial's reward: the rule Harbor 0.26 added. A trial is graded
//! even after some errors, and `reward_valid` then says whether its reward counts; the
//! job's mean and pass@k leave out the trials whose reward does not. Harbor decides by the
//! type of each exception the trial recorded (its own and its steps'), through a table of
//! error policies that a job may override per type (`override_error_policy`).
//!
//! Jobs of Harbor 0.25 and before carry no such field: every reward counts there, and the
//! import judges by the reward alone.

use std::collections::BTreeMap;

use serde::Deserialize;

/// What Harbor does with a trial that raised an exception of some type.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Policy {
    pub(super) should_retry: bool,
    pub(super) should_grade: bool,
    pub(super) has_valid_reward: bool,
}

/// A job's change to the policy of one exception type; a field left out keeps Harbor's.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct PolicyOverride {
    #[serde(default)]
    pub(super) should_retry: Option<bool>,
    #[serde(default)]
    pub(super) should_grade: Option<bool>,
    #[serde(default)]
    pub(super) has_valid_reward: Option<bool>,
}

impl PolicyOverride {
    fn apply(&self, p: Policy) -> Policy {
        Policy {
            should_retry: self.should_retry.unwrap_or(p.should_retry),
            should_grade: self.should_grade.unwrap_or(p.should_grade),
            has_valid_reward: self.has_valid_reward.unwrap_or(p.has_valid_reward),
        }
    }
}

const fn policy(should_retry: bool, should_grade: bool, has_valid_reward: bool) -> Policy {
    Policy { should_retry, should_grade, has_valid_reward }
}

/// An exception type the table does not name: retried, graded, its reward valid.
const UNKNOWN: Policy = policy(true, true, true);

/// Harbor 0.26.0's table (`harbor/models/trial/error_policy.py`), as facts: the policy of
/// each exception type it names.
const HARBOR_0_26: &[(Policy, &[&str])] = &[
    (
        policy(true, false, false),
        &[
            "EnvironmentStartTimeoutError",
            "SandboxBuildFailedError",
            "AgentSetupTimeoutError",
            "HealthcheckError",
            "SandboxLikelyOutOfMemoryError",
            "MemoryLimitExceededError",
            "SSHAccessError",
            "GKEExecStreamClosedError",
            "GKEPodNotFoundError",
            "RuntimeRequestError",
            "AddTestsDirError",
            "DownloadVerifierDirError",
        ],
    ),
    (
        policy(true, true, false),
        &[
            "ApiError",
            "ApiRateLimitError",
            "ApiInternalServerError",
            "ApiOverloadedError",
            "ApiConnectionClosedError",
            "ApiResponseStalledError",
            "UnknownApiError",
            "NetworkConnectionError",
            "ApiConnectionError",
            "ApiUsageLimitError",
            "RateLimitError",
            "InternalServerError",
            "ServiceUnavailableError",
            "APIConnectionError",
            "APIError",
            "Timeout",
        ],
    ),
    (
        policy(false, true, false),
        &[
            "UnsupportedModelParametersError",
            "BadRequestError",
            "UnprocessableEntityError",
            "UnsupportedParamsError",
            "APIResponseValidationError",
            "BudgetExceededError",
            "VerifierTimeoutError",
            "RewardFileNotFoundError",
            "RewardFileEmptyError",
            "VerifierOutputParseError",
        ],
    ),
    (
        policy(false, false, false),
        &[
            "AgentAuthenticationError",
            "ModelNotFoundError",
            "ApiProviderResourceNotFoundError",
            "AuthenticationError",
            "PermissionDeniedError",
            "NotFoundError",
            "ServiceOperationsUnsupportedError",
            "VercelScopeError",
            "DspyImportError",
            "MissingExtraError",
            "RegradeError",
            "CancelledError",
        ],
    ),
    (
        policy(false, true, true),
        &[
            "NonZeroAgentExitCodeError",
            "AgentTimeoutError",
            "ContextWindowExceededError",
            "OutputTokenExceededError",
            "ContextLengthExceededError",
            "OutputLengthExceededError",
            "AgentSafetyRefusalError",
            "ContentPolicyViolationError",
        ],
    ),
];

/// Harbor 0.26's policy for an exception type, with the job's override applied.
pub(super) fn policy_for(exception_type: &str, over: Option<&PolicyOverride>) -> Policy {
    let base = HARBOR_0_26
        .iter()
        .find(|(_, names)| names.contains(&exception_type))
        .map(|(p, _)| *p)
        .unwrap_or(UNKNOWN);
    over.map(|o| o.apply(base)).unwrap_or(base)
}

/// A Harbor version's major and minor numbers: `0.26.0` → (0, 26).
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim_start_matches('v').split(['.', '-', '+']).map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??))
}

/// Whether a job's trials are judged by Harbor 0.26's rule: its trial results say so
/// (`reward_valid`, `schema_version`, an exception's `policy`) or its lock names 0.26 or later.
pub(super) fn graded_by_validity(version: Option<&str>) -> bool {
    version.and_then(major_minor).is_some_and(|(major, minor)| major > 0 || minor >= 26)
}

/// Whether Harbor 0.26's table is the one a job with this Harbor version wrote by: yes for
/// 0.26.x and where the version was not recorded; a later Harbor's written policies are its own.
pub(super) fn table_applies(version: Option<&str>) -> bool {
    version.is_none_or(|v| major_minor(v) == Some((0, 26)))
}

/// One exception a trial recorded, as the validity rule reads it.
pub(super) struct Recorded<'a> {
    pub(super) exception_type: &'a str,
    /// The policy written beside it (Harbor 0.26 writes it), if any.
    pub(super) written: Option<Policy>,
    /// The override written beside it, if any.
    pub(super) override_written: Option<PolicyOverride>,
}

/// Whether the reward counts, and if not, why.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Validity {
    Valid,
    /// Not counted because of this exception type (Harbor's policy gives it no valid reward).
    InvalidAfter(String),
    /// Not counted because the verifier gave no reward.
    NoReward,
}

/// Harbor's `TrialResult.reward_valid`: a reward was given and every exception the trial
/// recorded leaves it valid. Where the job's Harbor is 0.26 (or not recorded), each
/// written policy must be Harbor 0.26's for its type with the trial's override, and the
/// written `reward_valid` must follow: a job changed to count a reward Harbor would not
/// is refused, naming the field. Newer Harbors' own written policies are taken as written.
pub(super) fn validity(
    has_reward: bool,
    recorded: &[Recorded<'_>],
    overrides: &BTreeMap<String, PolicyOverride>,
    written_valid: Option<bool>,
    table_applies: bool,
) -> Result<Validity, String> {
    let mut verdict = if has_reward { Validity::Valid } else { Validity::NoReward };
    for (i, e) in recorded.iter().enumerate() {
        let at = if i == 0 { "exception_info".to_owned() } else { format!("exception #{}", i + 1) };
        let configured = overrides.get(e.exception_type);
        if let Some(o) = e.override_written
            && configured != Some(&o)
        {
            return Err(format!(
                "`{at}.policy_override` for `{}` is {o:?}, but the trial's config overrides {}",
                e.exception_type,
                configured.map(|c| format!("{c:?}")).unwrap_or_else(|| "nothing".into())
            ));
        }
        let expected = policy_for(e.exception_type, configured);
        let effective = match e.written {
            Some(w) if table_applies && w != expected => {
                return Err(format!(
                    "`{at}.policy` for `{}` says has_valid_reward {}, should_grade {}, should_retry {}, \
                     but Harbor 0.26's policy for it{} is has_valid_reward {}, should_grade {}, should_retry {}",
                    e.exception_type,
                    w.has_valid_reward,
                    w.should_grade,
                    w.should_retry,
                    if configured.is_some() { " with the trial's override" } else { "" },
                    expected.has_valid_reward,
                    expected.should_grade,
                    expected.should_retry
                ));
            }
            Some(w) => w,
            None => expected,
        };
        if !effective.has_valid_reward && verdict == Validity::Valid {
            verdict = Validity::InvalidAfter(e.exception_type.to_owned());
        }
    }
    if let Some(w) = written_valid
        && w != (verdict == Validity::Valid)
    {
        let why = match &verdict {
            Validity::Valid => "a reward was given and no recorded exception makes it invalid".to_owned(),
            Validity::InvalidAfter(t) => format!("Harbor's policy for `{t}` gives no valid reward"),
            Validity::NoReward => "`verifier_result.rewards` holds no reward".to_owned(),
        };
        return Err(format!("`reward_valid` is {w}, but {why}"));
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: &str) -> Recorded<'_> {
        Recorded { exception_type: t, written: None, override_written: None }
    }

    #[test]
    fn harbor_0_26_table_decides_which_rewards_count() {
        let none = BTreeMap::new();
        let v = |r: &[Recorded<'_>]| validity(true, r, &none, None, true).unwrap();
        assert_eq!(v(&[]), Validity::Valid);
        assert_eq!(v(&[rec("AgentTimeoutError")]), Validity::Valid);
        assert_eq!(v(&[rec("SomethingHarborDoesNotName")]), Validity::Valid);
        assert_eq!(v(&[rec("ApiRateLimitError")]), Validity::InvalidAfter("ApiRateLimitError".into()));
        assert_eq!(
            v(&[rec("AgentTimeoutError"), rec("VerifierTimeoutError")]),
            Validity::InvalidAfter("VerifierTimeoutError".into())
        );
        assert_eq!(validity(false, &[], &none, None, true).unwrap(), Validity::NoReward);
        let over = BTreeMap::from([(
            "ApiError".to_owned(),
            PolicyOverride { has_valid_reward: Some(true), ..Default::default() },
        )]);
        assert_eq!(validity(true, &[rec("ApiError")], &over, Some(true), true).unwrap(), Validity::Valid);
    }

    #[test]
    fn a_written_field_that_disagrees_with_harbors_rule_is_refused() {
        let none = BTreeMap::new();
        let err = validity(true, &[rec("ApiRateLimitError")], &none, Some(true), true).unwrap_err();
        assert!(err.contains("`reward_valid` is true") && err.contains("ApiRateLimitError"), "{err}");
        let flipped = Recorded {
            exception_type: "ApiRateLimitError",
            written: Some(policy(true, true, true)),
            override_written: None,
        };
        let err = validity(true, &[flipped], &none, Some(true), true).unwrap_err();
        assert!(err.contains("`exception_info.policy`") && err.contains("Harbor 0.26's policy"), "{err}");
        let unconfigured = Recorded {
            exception_type: "ApiRateLimitError",
            written: None,
            override_written: Some(PolicyOverride { has_valid_reward: Some(true), ..Default::default() }),
        };
        let err = validity(true, &[unconfigured], &none, None, true).unwrap_err();
        assert!(err.contains("policy_override") && err.contains("overrides nothing"), "{err}");
        // A newer Harbor's written policy is its own.
        let newer = Recorded {
            exception_type: "ApiRateLimitError",
            written: Some(policy(true, true, true)),
            override_written: None,
        };
        assert_eq!(validity(true, &[newer], &none, Some(true), false).unwrap(), Validity::Valid);
    }

    #[test]
    fn versions_from_0_26_on_are_graded_by_validity() {
        assert!(graded_by_validity(Some("0.26.0")));
        assert!(graded_by_validity(Some("0.27.1.dev202612010101")));
        assert!(graded_by_validity(Some("1.0.0")));
        assert!(!graded_by_validity(Some("0.25.0")));
        assert!(!graded_by_validity(Some("0.3.1")));
        assert!(!graded_by_validity(None));
        assert!(table_applies(Some("0.26.0")) && table_applies(None));
        assert!(!table_applies(Some("0.27.0")) && !table_applies(Some("0.2.6")));
    }
}
