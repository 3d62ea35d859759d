//! The benchmark's vocabulary: task ids, hint conditions, outcomes, provenance and
//! trust tiers, from the bundle through the store to the pages and the API.
//!
//! Each name serialises as the string the bundle spec (`result-bundle-v1.md`) and the
//! JSON API use. Plain data: no I/O and no randomness, so a browser build can use it.

pub mod paper;

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `Display`, `FromStr` and `TryFrom<String>` for a closed set of names with `ALL` and
/// `as_str` (the store reads them back from text columns through `TryFrom`).
macro_rules! names {
    ($ty:ident, $what:literal, $expected:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $ty::ALL
                    .into_iter()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| UnknownName::new($what, s, $expected))
            }
        }

        impl TryFrom<String> for $ty {
            type Error = UnknownName;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                s.parse()
            }
        }
    };
}

/// The task ids of RExBench 1.0, as the paper (arXiv 2506.22598 v3) names them.
pub const REXBENCH_TASKS: [&str; 12] = [
    "checkeval",
    "cogs",
    "entity-tracking-multimodal",
    "explain-then-translate",
    "implicit-ins",
    "mission-impossible",
    "othello",
    "re-reading",
    "reasoning-or-reciting",
    "tree-of-thoughts",
    "varierr-nli",
    "winodict",
];

/// The attempts RExBench asks per task and hint condition (the paper runs every task 5
/// times per agent and condition): what a task card's `attempts` says unless it says
/// otherwise, and what a task no card names is held to (spec §4f).
pub const BENCHMARK_ATTEMPTS: u32 = 5;

/// What a line of a unified diff is, read by its hunks' counts (`benchmark::diff`): a
/// page draws each line by its kind, never by its first characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiffLine {
    /// The first header line of a file's change (`diff --git`, or `---` without one):
    /// where a reader's fold of that file starts.
    FileStart,
    /// Another header line of the file (`index`, `new file mode`, `---`, `+++`, …).
    FileHeader,
    /// A hunk's `@@ … @@` line.
    Hunk,
    /// A line the hunk adds, whatever text follows its `+` (`++ x` included).
    Added,
    /// A line the hunk removes.
    Removed,
    /// A line the hunk keeps, or its `\ No newline at end of file`.
    Context,
    /// Text outside any file's change (a commit message, a note).
    Text,
}

/// The artifact role a run's findings' words travel under (the bundle format's §4g):
/// private with the run's outputs.
pub const FINDINGS_ROLE: &str = "x-findings";

/// How much guidance the agent was given (spec §3, `hint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Hint {
    /// No hints: the main experiment.
    None,
    /// Level 1: where to look.
    Hints,
    /// Level 2: step-by-step guidance; includes level 1.
    Detailed,
}

impl Hint {
    pub const ALL: [Hint; 3] = [Hint::None, Hint::Hints, Hint::Detailed];

    pub fn as_str(self) -> &'static str {
        match self {
            Hint::None => "none",
            Hint::Hints => "hints",
            Hint::Detailed => "detailed",
        }
    }

    /// The name people read on a page.
    pub fn label(self) -> &'static str {
        match self {
            Hint::None => "No hints",
            Hint::Hints => "Hints",
            Hint::Detailed => "Detailed hints",
        }
    }

    /// The level names RExBench's own output files use (`<agent>_<level>_run<N>.patch`).
    pub fn from_rexbench_level(level: &str) -> Option<Hint> {
        match level {
            "default" => Some(Hint::None),
            "hints" => Some(Hint::Hints),
            "more_detailed_hints" => Some(Hint::Detailed),
            _ => None,
        }
    }
}

names!(Hint, "hint", "none, hints, detailed");

/// What happened when a run was evaluated (spec §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    WrongResult,
    ExecutionFailed,
    Timeout,
    PatchFailed,
    EmptyPatch,
    InfraError,
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Success,
        Outcome::WrongResult,
        Outcome::ExecutionFailed,
        Outcome::Timeout,
        Outcome::PatchFailed,
        Outcome::EmptyPatch,
        Outcome::InfraError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::WrongResult => "wrong_result",
            Outcome::ExecutionFailed => "execution_failed",
            Outcome::Timeout => "timeout",
            Outcome::PatchFailed => "patch_failed",
            Outcome::EmptyPatch => "empty_patch",
            Outcome::InfraError => "infra_error",
        }
    }

    /// Whether the run's patch applied and its experiment was started: the outcomes
    /// a checker reaches only by running the agent's code.
    pub fn got_past_applying(self) -> bool {
        matches!(self, Outcome::Success | Outcome::WrongResult | Outcome::ExecutionFailed | Outcome::Timeout)
    }

    /// Whether the run counts towards any rate: an infrastructure failure is not the
    /// agent's doing and is excluded everywhere.
    pub fn is_counted(self) -> bool {
        self != Outcome::InfraError
    }

    /// Execution success: the agent's code ran without error. `None` for `infra_error`.
    pub fn executed(self) -> Option<bool> {
        self.is_counted().then_some(matches!(self, Outcome::Success | Outcome::WrongResult))
    }

    /// Final success: the results matched the gold results. `None` for `infra_error`.
    /// Derived from the same outcome as [`Outcome::executed`], so a success that did
    /// not execute cannot be expressed.
    pub fn succeeded(self) -> Option<bool> {
        self.is_counted().then_some(self == Outcome::Success)
    }
}

names!(
    Outcome,
    "outcome",
    "success, wrong_result, execution_failed, timeout, patch_failed, empty_patch, infra_error"
);

/// Where a bundle's numbers come from (spec §3, `provenance.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ProvenanceKind {
    /// The runner executed the agent's outputs.
    Evaluated,
    /// Another harness executed and judged them (e.g. Harbor's RExBench adapter);
    /// `provenance.source` names the harness, its version and the job.
    Imported,
    /// Reconstructed from numbers a paper reported.
    Published,
}

impl ProvenanceKind {
    pub const ALL: [ProvenanceKind; 3] =
        [ProvenanceKind::Evaluated, ProvenanceKind::Imported, ProvenanceKind::Published];

    pub fn as_str(self) -> &'static str {
        match self {
            ProvenanceKind::Evaluated => "evaluated",
            ProvenanceKind::Imported => "imported",
            ProvenanceKind::Published => "published",
        }
    }

    /// What a bundle of this kind claims, and so who may sign it and what the board holds
    /// it to: the one statement of each kind's rule (spec §5a, docs/method.md).
    pub const fn rule(self) -> KindRule {
        match self {
            ProvenanceKind::Evaluated | ProvenanceKind::Imported => KindRule {
                maintainers_only: false,
                carries_evidence: true,
                sampled: true,
                held_to_attempts: true,
            },
            // A paper's numbers have no runs behind them to carry or re-run, and keep
            // their source's design: only the maintainers vouch for them.
            ProvenanceKind::Published => KindRule {
                maintainers_only: true,
                carries_evidence: false,
                sampled: false,
                held_to_attempts: false,
            },
        }
    }
}

/// A provenance kind's rule ([`ProvenanceKind::rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRule {
    /// Only a maintainer key may sign a bundle of this kind: it skips evidence, sampling
    /// or the attempts rule, which hold a submitter's claims to account.
    pub maintainers_only: bool,
    /// Its runs carry their artifacts (a success its patch and the agent's record); a
    /// kind without evidence carries none at all.
    pub carries_evidence: bool,
    /// A submitter's bundle of this kind gets a reproduction sample (spec §4e).
    pub sampled: bool,
    /// Each task and hint condition has exactly the card's attempts (spec §4f).
    pub held_to_attempts: bool,
}

names!(ProvenanceKind, "provenance", "evaluated, imported, published");

/// Whose key signed a bundle, and so how far its results are trusted (spec §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The benchmark's maintainers evaluated the runs: shown as verified.
    Maintainer,
    /// A submitter evaluated its own agent with the public runner: shown as self-reported.
    Submitter,
}

impl Tier {
    pub const ALL: [Tier; 2] = [Tier::Maintainer, Tier::Submitter];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Maintainer => "maintainer",
            Tier::Submitter => "submitter",
        }
    }

    /// What a page calls results of this tier.
    pub fn label(self) -> &'static str {
        match self {
            Tier::Maintainer => "Verified",
            Tier::Submitter => "Self-reported",
        }
    }
}

names!(Tier, "tier", "maintainer, submitter");

/// Who may read a task's runs' outputs (their patches, logs and trajectories): anyone,
/// or only the bundle's submitter and the maintainers. RExBench's dataset terms forbid
/// making agent outputs public, so its tasks are private; every number about a private
/// run stays public, with each artifact's SHA-256 as the signed manifest commits to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Outputs {
    Public,
    /// What a card that does not say is: a task's outputs are published only on purpose.
    #[default]
    Private,
}

impl Outputs {
    pub const ALL: [Outputs; 2] = [Outputs::Public, Outputs::Private];

    pub fn as_str(self) -> &'static str {
        match self {
            Outputs::Public => "public",
            Outputs::Private => "private",
        }
    }
}

names!(Outputs, "outputs", "public, private");

/// How a view counts successes that carry integrity findings (the bundle format's
/// section 4a): as their runs reported them, or strictly, where a flagged success (one
/// with a finding no maintainer has dismissed) counts as a failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Integrity {
    #[default]
    Reported,
    Strict,
}

impl Integrity {
    pub const ALL: [Integrity; 2] = [Integrity::Reported, Integrity::Strict];

    pub fn as_str(self) -> &'static str {
        match self {
            Integrity::Reported => "reported",
            Integrity::Strict => "strict",
        }
    }
}

names!(Integrity, "integrity", "reported, strict");

/// A maintainer's verdict on an integrity finding: the evidence holds (the success is
/// not earned), or it does not (the finding no longer flags the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Review {
    Confirmed,
    Dismissed,
}

impl Review {
    pub const ALL: [Review; 2] = [Review::Confirmed, Review::Dismissed];

    pub fn as_str(self) -> &'static str {
        match self {
            Review::Confirmed => "confirmed",
            Review::Dismissed => "dismissed",
        }
    }
}

names!(Review, "review", "confirmed, dismissed");

/// Where a key request stands: waiting for the maintainers, approved (its key is in the
/// registry with the tier they chose) or declined (with their reason; its held bundles
/// are gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum RequestStatus {
    Pending,
    Approved,
    Declined,
}

impl RequestStatus {
    pub const ALL: [RequestStatus; 3] =
        [RequestStatus::Pending, RequestStatus::Approved, RequestStatus::Declined];

    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Pending => "pending",
            RequestStatus::Approved => "approved",
            RequestStatus::Declined => "declined",
        }
    }
}

names!(RequestStatus, "request status", "pending, approved, declined");

/// Who found an integrity finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// The submitter's runner or importer: signed in the bundle.
    Submitter,
    /// This server's own checks, repeated at ingest from the bundle alone.
    Server,
}

impl FoundBy {
    pub const ALL: [FoundBy; 2] = [FoundBy::Submitter, FoundBy::Server];

    pub fn as_str(self) -> &'static str {
        match self {
            FoundBy::Submitter => "submitter",
            FoundBy::Server => "server",
        }
    }
}

names!(FoundBy, "finder", "submitter, server");

/// A run's tokens by how they are billed (the bundle format's section 4m): `input` read at the input price
/// (neither read from a prompt cache nor written to one), `output` written by the model,
/// `cache_read` read from a cache, `cache_write` written to one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write: u64,
}

impl Tokens {
    /// More than any run could use (a trillion of one kind): a larger count is a mistake
    /// or a lie, refused.
    pub const MOST: u64 = 1_000_000_000_000;

    /// Every kind, named as the manifest names it.
    pub fn kinds(&self) -> [(&'static str, u64); 4] {
        [
            ("input", self.input),
            ("output", self.output),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ]
    }

    /// Every kind, named as a field of the run (`tokens.input`, …).
    pub fn fields(&self) -> [(&'static str, u64); 4] {
        [
            ("tokens.input", self.input),
            ("tokens.output", self.output),
            ("tokens.cache_read", self.cache_read),
            ("tokens.cache_write", self.cache_write),
        ]
    }

    pub fn total(&self) -> u64 {
        self.kinds().iter().map(|(_, n)| n).fold(0u64, |a, n| a.saturating_add(*n))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Why a run's stated cost is not borne out by what the board can price (never a finding
/// about its success: it is about cost alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CostMark {
    /// The stated cost is off its tokens' price by more than the tolerance.
    Differs,
    /// A cost is stated with no tokens to price.
    NoTokens,
    /// The run's tokens differ from those its own trajectory counts.
    TrajectoryDisagrees,
    /// The run wrote a patch, yet states that its model wrote no token.
    ImplausibleTokens,
    /// The run states tokens of a model the board's price table does not price.
    Unpriced,
}

impl CostMark {
    pub const ALL: [CostMark; 5] = [
        CostMark::Differs,
        CostMark::NoTokens,
        CostMark::TrajectoryDisagrees,
        CostMark::ImplausibleTokens,
        CostMark::Unpriced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CostMark::Differs => "differs",
            CostMark::NoTokens => "no-tokens",
            CostMark::TrajectoryDisagrees => "trajectory-disagrees",
            CostMark::ImplausibleTokens => "implausible-tokens",
            CostMark::Unpriced => "unpriced",
        }
    }

    /// What it says, in a sentence a reader sees beside the cost.
    pub fn sentence(self) -> &'static str {
        match self {
            CostMark::Differs => "the stated cost is not what its tokens cost at its model's price",
            CostMark::NoTokens => "a cost is stated with no tokens to price",
            CostMark::TrajectoryDisagrees => "its tokens are not those its own trajectory counts",
            CostMark::ImplausibleTokens => "it wrote a patch, yet states that its model wrote no token",
            CostMark::Unpriced => "its tokens are of a model the board's price table does not price",
        }
    }
}

names!(CostMark, "cost mark", "differs, no-tokens, trajectory-disagrees, implausible-tokens, unpriced");

/// The harness that executed a submission's runs and judged them: this project's runner
/// (`rexbench`), another harness a result was imported from (`harbor`, …), or RExBench's
/// own original harness (`rexbench-original`), which ran the paper's experiments. The
/// server reads it from the manifest (`bundle::Manifest::harness`); the bundle format's
/// section 3 says how.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Harness {
    /// A slug: `rexbench`, `harbor`, `rexbench-original`, or the first word an imported
    /// result's source names.
    pub name: String,
    pub version: Option<String>,
}

impl Harness {
    /// This project's runner.
    pub const RUNNER: &str = "rexbench";
    /// Harbor, with its RExBench adapter.
    pub const HARBOR: &str = "harbor";
    /// The harness RExBench's authors ran the paper's experiments with.
    pub const ORIGINAL: &str = "rexbench-original";

    pub fn new(name: impl Into<String>, version: Option<String>) -> Harness {
        Harness { name: name.into(), version }
    }

    /// The harness without its version, in words.
    pub fn title(&self) -> String {
        match self.name.as_str() {
            Harness::RUNNER => "rexbench runner".to_owned(),
            Harness::HARBOR => "Harbor".to_owned(),
            Harness::ORIGINAL => "RExBench original harness".to_owned(),
            other => other.to_owned(),
        }
    }

    /// The harness with its version, as a badge says it: `Harbor 0.3.1`.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", self.title()),
            None => self.title(),
        }
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A task's id, as task cards, bundles and URLs name it (`cogs`, `othello`, …).
///
/// Which ids exist depends on the task set a bundle names, so this type does not
/// check membership: bundle validation does, against the known tasks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    pub fn new(id: impl Into<String>) -> TaskId {
        TaskId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for TaskId {
    fn from(id: String) -> TaskId {
        TaskId(id)
    }
}

impl From<&str> for TaskId {
    fn from(id: &str) -> TaskId {
        TaskId(id.to_owned())
    }
}

impl From<TaskId> for String {
    fn from(id: TaskId) -> String {
        id.0
    }
}

/// So maps keyed by task id can be read with a `&str`.
impl Borrow<str> for TaskId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for TaskId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for TaskId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A name that is not one of a closed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; expected one of: {expected}")]
pub struct UnknownName {
    what: &'static str,
    value: String,
    expected: &'static str,
}

impl UnknownName {
    fn new(what: &'static str, value: &str, expected: &'static str) -> Self {
        UnknownName { what, value: value.to_owned(), expected }
    }
}

/// Whether `s` is a slug as agent ids and task ids are (`^[a-z0-9][a-z0-9._-]{0,63}$`).
pub fn is_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_and_final_success_never_contradict() {
        for o in Outcome::ALL {
            match (o.executed(), o.succeeded()) {
                (Some(false), Some(true)) => panic!("{o} succeeds without executing"),
                (None, None) => assert_eq!(o, Outcome::InfraError),
                (Some(_), Some(_)) => {}
                other => panic!("{o}: inconsistent {other:?}"),
            }
        }
        assert_eq!(Outcome::WrongResult.executed(), Some(true));
        assert_eq!(Outcome::WrongResult.succeeded(), Some(false));
        assert_eq!(Outcome::Timeout.executed(), Some(false));
    }

    #[test]
    fn names_round_trip() {
        for h in Hint::ALL {
            assert_eq!(h.as_str().parse::<Hint>(), Ok(h));
        }
        for o in Outcome::ALL {
            assert_eq!(o.as_str().parse::<Outcome>(), Ok(o));
        }
        for p in ProvenanceKind::ALL {
            assert_eq!(p.as_str().parse::<ProvenanceKind>(), Ok(p));
        }
        for t in Tier::ALL {
            assert_eq!(t.as_str().parse::<Tier>(), Ok(t));
        }
        let err = "level1".parse::<Hint>().unwrap_err().to_string();
        assert!(err.contains("`level1`") && err.contains("detailed"), "{err}");
    }

    #[test]
    fn names_serialise_as_their_strings() {
        let json = |v: serde_json::Value, s: &str| assert_eq!(v, serde_json::json!(s));
        Hint::ALL.into_iter().for_each(|v| json(serde_json::to_value(v).unwrap(), v.as_str()));
        Outcome::ALL.into_iter().for_each(|v| json(serde_json::to_value(v).unwrap(), v.as_str()));
        ProvenanceKind::ALL.into_iter().for_each(|v| json(serde_json::to_value(v).unwrap(), v.as_str()));
        Tier::ALL.into_iter().for_each(|v| json(serde_json::to_value(v).unwrap(), v.as_str()));
        json(serde_json::to_value(TaskId::from("cogs")).unwrap(), "cogs");
        // Maps keyed by a name are JSON objects keyed by the same strings.
        let by_hint: std::collections::BTreeMap<Hint, u8> = [(Hint::Detailed, 1)].into();
        assert_eq!(serde_json::to_string(&by_hint).unwrap(), r#"{"detailed":1}"#);
    }

    #[test]
    fn rexbench_level_names() {
        assert_eq!(Hint::from_rexbench_level("default"), Some(Hint::None));
        assert_eq!(Hint::from_rexbench_level("hints"), Some(Hint::Hints));
        assert_eq!(Hint::from_rexbench_level("more_detailed_hints"), Some(Hint::Detailed));
        assert_eq!(Hint::from_rexbench_level("detailed"), None);
    }

    #[test]
    fn slugs() {
        for ok in ["cogs", "openhands-claude-4.5-opus", "a", "0_x", &"a".repeat(64)] {
            assert!(is_slug(ok), "{ok}");
        }
        for bad in ["", "-a", ".a", "A", "a b", "a/b", "é", &"a".repeat(65)] {
            assert!(!is_slug(bad), "{bad}");
        }
    }
}
