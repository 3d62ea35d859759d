//! What the store answers with: plain data for the pages and the API, without the
//! database (so the app can name these types in a build without one).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vocab::{FoundBy, Harness, Hint, Integrity, Outcome, ProvenanceKind, Review, TaskId, Tier};

/// Counts for one agent (or task) under one hint condition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rates {
    /// All runs, infrastructure failures included.
    pub runs: i64,
    /// Runs that count towards the rates (not `infra_error`).
    pub counted: i64,
    /// Runs that ended `infra_error` (`runs - counted`): shown beside every rate, since
    /// they leave it unseen (spec §4f).
    pub infra_errors: i64,
    /// Their share of all runs.
    pub infra_error_share: Option<f64>,
    pub successes: i64,
    /// Runs that executed, of the `exec_counted` counted runs whose execution is known
    /// (a source may publish only whether each run succeeded).
    pub executed: i64,
    pub exec_counted: i64,
    pub final_success: Option<f64>,
    pub execution_success: Option<f64>,
    pub file_recall: Option<f64>,
    /// Runs that report what they cost (infrastructure failures included: they cost
    /// too), and the mean and sum of it in US dollars.
    pub cost_runs: i64,
    pub mean_cost_usd: Option<f64>,
    pub total_cost_usd: Option<f64>,
    /// Runs that report how long they took, and the mean and sum in seconds.
    pub duration_runs: i64,
    pub mean_duration_s: Option<f64>,
    pub total_duration_s: Option<f64>,
    /// Successes with an integrity finding no maintainer has dismissed: in the strict
    /// view these count as failures (and `successes` leaves them out).
    pub flagged: i64,
    /// Runs that ended `infra_error` but whose re-run by the maintainers ended in a
    /// counted outcome (a `not-reproduced` finding no maintainer has dismissed): in the
    /// strict view these count as failures (and `counted` takes them in).
    pub refuted: i64,
}

/// The sums a [`Rates`] is made of, as kept at ingest.
#[cfg(feature = "db")]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sums {
    pub runs: i64,
    pub counted: i64,
    pub successes: i64,
    pub executed: i64,
    pub recall_sum: f64,
    pub recall_runs: i64,
    pub cost_sum: f64,
    pub cost_runs: i64,
    pub duration_sum: f64,
    pub duration_runs: i64,
    pub flagged: i64,
    pub exec_counted: i64,
    pub refuted: i64,
}

#[cfg(feature = "db")]
impl Sums {
    /// The columns kept for each of them (in `aggregates` and `totals`).
    pub const COLUMNS: [&str; 13] = [
        "runs",
        "counted",
        "successes",
        "executed",
        "recall_sum",
        "recall_runs",
        "cost_sum",
        "cost_runs",
        "duration_sum",
        "duration_runs",
        "flagged",
        "exec_counted",
        "refuted",
    ];

    pub fn add(&mut self, other: &Sums) {
        self.runs += other.runs;
        self.counted += other.counted;
        self.successes += other.successes;
        self.executed += other.executed;
        self.recall_sum += other.recall_sum;
        self.recall_runs += other.recall_runs;
        self.cost_sum += other.cost_sum;
        self.cost_runs += other.cost_runs;
        self.duration_sum += other.duration_sum;
        self.duration_runs += other.duration_runs;
        self.flagged += other.flagged;
        self.exec_counted += other.exec_counted;
        self.refuted += other.refuted;
    }

    /// The rates as `integrity` counts them: strictly, flagged successes are failures,
    /// and so are `infra_error` runs whose re-run ended in a counted outcome.
    pub fn rates(&self, integrity: Integrity) -> Rates {
        let (successes, counted) = match integrity {
            Integrity::Reported => (self.successes, self.counted),
            Integrity::Strict => (self.successes - self.flagged, self.counted + self.refuted),
        };
        let ratio = |n: i64, d: i64| (d > 0).then(|| n as f64 / d as f64);
        let mean = |sum: f64, n: i64| (n > 0).then(|| sum / n as f64);
        Rates {
            runs: self.runs,
            counted,
            infra_errors: self.runs - self.counted,
            infra_error_share: ratio(self.runs - self.counted, self.runs),
            successes,
            executed: self.executed,
            exec_counted: self.exec_counted,
            final_success: ratio(successes, counted),
            execution_success: ratio(self.executed, self.exec_counted),
            file_recall: mean(self.recall_sum, self.recall_runs),
            cost_runs: self.cost_runs,
            mean_cost_usd: mean(self.cost_sum, self.cost_runs),
            total_cost_usd: (self.cost_runs > 0).then_some(self.cost_sum),
            duration_runs: self.duration_runs,
            mean_duration_s: mean(self.duration_sum, self.duration_runs),
            total_duration_s: (self.duration_runs > 0).then_some(self.duration_sum),
            flagged: self.flagged,
            refuted: self.refuted,
        }
    }
}

/// One row of the leaderboard: an agent's current submission for a benchmark version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardRow {
    pub agent_id: String,
    pub display_name: String,
    pub framework: String,
    pub model: String,
    pub url: Option<String>,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    /// What `imported` and `published` results name as their source.
    pub provenance_source: Option<String>,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub bundle_id: String,
    /// The harness that executed its runs.
    pub harness: Harness,
    pub by_hint: BTreeMap<Hint, Rates>,
    /// What it covers under each hint condition it has runs under.
    pub coverage: BTreeMap<Hint, Coverage>,
    /// Its reproduction sample at a glance.
    pub sample: SampleCounts,
    /// The agent's earlier submission whose re-run runs did not reproduce, no maintainer
    /// having dismissed the finding (spec §6a): it follows the agent.
    pub not_reproduced_before: Option<String>,
}

/// What a submission covers under one hint condition, in valid attempts (runs whose
/// outcome the rates count, not `infra_error`; spec §4f): the tasks with one, the fewest
/// and most on one of them, and the tasks it has runs on with fewer valid attempts than
/// the benchmark asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Coverage {
    pub tasks: i64,
    pub fewest_attempts: i64,
    pub most_attempts: i64,
    /// Tasks with runs under this condition but fewer valid attempts than the benchmark
    /// asks (always 0 for published results, which keep their source's design).
    pub short_tasks: i64,
}

impl LeaderboardRow {
    /// Whether it covers all `of` tasks of its set under `hint`.
    pub fn covers(&self, hint: Hint, of: usize) -> bool {
        self.coverage.get(&hint).is_some_and(|c| c.tasks as usize >= of)
    }

    /// Whether every task it has runs on, under every condition, has the valid attempts
    /// the benchmark asks.
    pub fn has_every_attempt(&self) -> bool {
        self.coverage.values().all(|c| c.short_tasks == 0)
    }

    /// Whether it is ranked on a set of `of` tasks: it covers them all without hints,
    /// with the attempts the benchmark asks wherever it has runs.
    pub fn ranked(&self, of: usize) -> bool {
        self.covers(Hint::None, of) && self.has_every_attempt()
    }
}

/// A key of the registry: who signs with it, how far their results are trusted, and
/// its public key (SubjectPublicKeyInfo PEM) for anyone to check their signatures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct KeyRecord {
    pub keyid: String,
    pub owner: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub tier: Tier,
    pub added_at: String,
    pub revoked_at: Option<String>,
    pub public_key: String,
}

/// Narrows the leaderboard; every field is optional.
#[derive(Debug, Clone, Default)]
pub struct LeaderboardFilter {
    pub framework: Option<String>,
    pub model: Option<String>,
    pub tier: Option<Tier>,
    pub provenance: Option<ProvenanceKind>,
    pub benchmark_version: Option<String>,
    pub task_set_digest: Option<String>,
    /// The harness's name (`harbor`, `rexbench`, …).
    pub harness: Option<String>,
    /// How the rows' successes are counted (this does not narrow).
    pub integrity: Integrity,
    /// Only these tasks count (the public-tasks view), and only submissions with runs
    /// on them without hints are kept; every task when none.
    pub tasks: Option<Vec<TaskId>>,
    /// Only submissions whose sample the maintainers re-ran, every re-run holding.
    pub reproduced: bool,
}

/// A number a leaderboard row can be ordered by, computed in the query from the kept
/// counts exactly as [`Rates`] computes it (a ratio of the same integers and sums).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKey {
    Final(Hint),
    Execution(Hint),
    Recall(Hint),
    Cost(Hint),
    /// Final success with hints minus without.
    Uplift,
}

/// What a leaderboard row is ordered by: its bundle, its name and the value of a
/// [`RateKey`] (`None` where there is none).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct RowKey {
    pub bundle_id: String,
    pub display_name: String,
    pub value: Option<f64>,
    /// The tasks it has valid attempts on without hints, or 0 where some task it has
    /// runs on falls short of the attempts asked: it is ranked if they are all of its
    /// set's.
    pub ranked_tasks: i64,
    /// Its runs that ended `infra_error`, over the tasks the view counts.
    pub infra_errors: i64,
}

/// A task set current submissions were evaluated on (results on different sets are
/// never ranked together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSetSummary {
    pub digest: String,
    pub benchmark_name: String,
    pub benchmark_version: String,
    /// Agents with a current submission on it.
    pub agents: i64,
    /// Its tasks, in id order: those the server knows the set by, else those its
    /// results ran.
    pub tasks: Vec<TaskId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubmissionRecord {
    pub bundle_id: String,
    pub agent_id: String,
    pub keyid: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub provenance_source: Option<String>,
    /// The harness that executed its runs.
    pub harness: Harness,
    /// False when its source publishes only whether each run succeeded.
    pub execution_known: bool,
    pub benchmark_name: String,
    pub benchmark_version: String,
    pub task_set_digest: String,
    pub runner: String,
    pub created_at: String,
    pub received_at: String,
    pub superseded_by: Option<String>,
    pub run_count: i64,
    pub artifact_bytes: i64,
    /// Its reproduction sample (spec §4e) at a glance.
    pub sample: SampleCounts,
}

/// A submission's reproduction sample at a glance: how many of its runs were sampled,
/// how many of those the maintainers have re-run, and how many of those ended with
/// another final success than submitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct SampleCounts {
    pub sampled: i64,
    pub reproduced: i64,
    pub differed: i64,
}

impl SampleCounts {
    /// Re-run, and every re-run held.
    pub fn held(&self) -> bool {
        self.reproduced > 0 && self.differed == 0
    }
}

/// A sampling epoch (spec §4e): the commitment to its key, public from its start, and
/// the key once the epoch has ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SamplingEpoch {
    pub epoch: i64,
    /// Lowercase hex SHA-256 of the key's 32 bytes.
    pub commitment: String,
    pub committed_at: String,
    /// The key (64 hex digits), once revealed.
    pub key: Option<String>,
    pub revealed_at: Option<String>,
}

/// A sampled run in the maintainers' queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueuedRun {
    pub run_id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub benchmark_name: String,
    pub task_set_digest: String,
    /// Its submission has been superseded (its sample is re-run all the same).
    pub superseded: bool,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub outcome: Outcome,
    pub duration_s: Option<f64>,
    /// The submitted patch's digest: the one a reproduction must re-run.
    pub patch: Option<String>,
    pub epoch: i64,
    pub sampled_at: String,
    /// How its reproduction ended, once there is one.
    pub reproduced: Option<Outcome>,
    /// Whether that reproduction had the same final success.
    pub held: Option<bool>,
}

/// A sampled run's reproduction: how the maintainers' re-run of its patch ended, where,
/// and its own evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunReproduction {
    /// The reproduction bundle's id.
    pub bundle_id: String,
    pub outcome: Outcome,
    pub error_type: Option<String>,
    pub duration_s: f64,
    pub metrics: BTreeMap<String, f64>,
    /// The same final success as submitted.
    pub held: bool,
    pub executor: String,
    /// The hardware in words.
    pub hardware: String,
    pub gpus: i64,
    pub received_at: String,
    pub artifacts: Vec<ArtifactRef>,
}

/// Task → hint → rates.
pub type TaskGrid = BTreeMap<TaskId, BTreeMap<Hint, Rates>>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentDetail {
    pub id: String,
    pub display_name: String,
    pub framework: String,
    pub framework_version: Option<String>,
    pub model: String,
    pub model_id: Option<String>,
    pub url: Option<String>,
    pub first_seen_at: String,
    /// Newest first, superseded ones included.
    pub submissions: Vec<SubmissionRecord>,
    /// For each current submission (one per benchmark version), by bundle id: task →
    /// hint → rates.
    pub current: BTreeMap<String, TaskGrid>,
    /// Its runs the maintainers re-ran, of every submission, newest reproduction first.
    pub reproduced: Vec<ReproducedRun>,
}

/// A run the maintainers re-ran, as an agent's page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReproducedRun {
    pub run_id: i64,
    pub bundle_id: String,
    /// The reproduction bundle that re-ran it.
    pub reproduction: String,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub submitted: Outcome,
    pub reproduced: Outcome,
    pub held: bool,
    pub duration_s: f64,
    pub received_at: String,
}

impl AgentDetail {
    /// The newest current submission and its grid: the one the agent's page shows.
    pub fn newest_current(&self) -> Option<(&str, &TaskGrid)> {
        let newest = self.submissions.iter().find(|s| s.superseded_by.is_none())?;
        self.current.get_key_value(&newest.bundle_id).map(|(b, g)| (b.as_str(), g))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct RunSummary {
    pub id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub task: TaskId,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub hint: Hint,
    pub attempt: i64,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    pub error_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunDetail {
    pub id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub agent_name: String,
    pub benchmark_version: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub provenance_source: Option<String>,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub outcome: Outcome,
    /// The outcome is a Harbor regrade's verdict on the agent run's outputs; what the
    /// run was judged before the regrade (bundle spec section 4i).
    pub regraded_from: Option<Outcome>,
    pub error_type: Option<String>,
    pub file_recall: Option<f64>,
    pub files_changed: Option<Vec<String>>,
    pub duration_s: Option<f64>,
    pub cost_usd: Option<f64>,
    pub metrics: BTreeMap<String, f64>,
    pub artifacts: Vec<ArtifactRef>,
    /// Why a reader should doubt the outcome, the submitter's findings first.
    pub findings: Vec<RunFinding>,
    /// In its submission's reproduction sample, as far as anyone may know (spec §4e):
    /// reproduced, or sampled under a key since revealed.
    pub sampled: bool,
    /// The maintainers' re-run of it, if there is one.
    pub reproduction: Option<RunReproduction>,
}

/// Which finding: its run, who found it and its place in their list for the run,
/// written `1234-server-0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FindingId {
    pub run_id: i64,
    pub found_by: FoundBy,
    pub position: i64,
}

impl std::fmt::Display for FindingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.run_id, self.found_by.as_str(), self.position)
    }
}

impl std::str::FromStr for FindingId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "`{s}` is not a finding id (a run id, `submitter` or `server`, a position: `12-server-0`)"
            )
        };
        let mut parts = s.splitn(3, '-');
        let (Some(run), Some(by), Some(position)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        let number =
            |t: &str| t.parse::<i64>().ok().filter(|n| *n >= 0 && t.bytes().all(|b| b.is_ascii_digit()));
        Ok(FindingId {
            run_id: number(run).ok_or_else(bad)?,
            found_by: by.parse().map_err(|_| bad())?,
            position: number(position).ok_or_else(bad)?,
        })
    }
}

/// A maintainer's review of a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FindingReview {
    pub verdict: Review,
    /// Why, in the maintainer's words.
    pub note: String,
    pub at: String,
}

/// An integrity finding about a run (the bundle format's section 4a): which check, what
/// it saw, and where the evidence is (a role of the run's artifacts, a line from 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunFinding {
    /// The finding's id (`1234-server-0`), as the review API names it.
    pub id: String,
    pub found_by: FoundBy,
    pub check: String,
    pub message: String,
    pub artifact: Option<String>,
    pub line: Option<i64>,
    /// A maintainer's review, once there is one. A dismissed finding no longer flags
    /// its run.
    pub review: Option<FindingReview>,
    /// The run's outputs are private to this reader, so `message` (which quotes them)
    /// is a fixed sentence instead of the finding's text.
    #[serde(default)]
    pub withheld: bool,
}

impl RunFinding {
    /// Whether the finding still casts doubt on its run (it is not dismissed).
    pub fn flags(&self) -> bool {
        self.review.as_ref().is_none_or(|r| r.verdict != Review::Dismissed)
    }
}

/// A finding with the run it is about, as the review list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FindingRecord {
    pub finding: RunFinding,
    pub run_id: i64,
    pub bundle_id: String,
    pub agent_id: String,
    pub agent_name: String,
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: i64,
    pub outcome: Outcome,
    /// Whether the run's submission is the agent's current one.
    pub current: bool,
}

/// Integrity over the current submissions: flagged successes by check and by agent,
/// and the newest flagged successes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegrityOverview {
    /// Successes with a finding not dismissed, over all current submissions.
    pub flagged: i64,
    /// Of them, those with a confirmed finding.
    pub confirmed: i64,
    /// Per check: the flagged successes it found (a run counts once per check).
    pub by_check: Vec<(String, i64)>,
    /// The agents with most flagged successes: (agent id, name, flagged successes).
    pub agents: Vec<(String, String, i64)>,
    /// The newest flagged successes, with their findings.
    pub runs: Vec<FindingRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct ArtifactRef {
    pub role: String,
    pub digest: String,
    pub size: i64,
    pub media_type: String,
    /// It shows the task's success criteria (a private check's log, the words of a
    /// maintainers' re-run's findings): only the maintainers read it, whoever ran it.
    #[serde(default)]
    #[cfg_attr(feature = "db", sqlx(default))]
    pub maintainers_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskRow {
    pub task: TaskId,
    /// Agents with a current submission that ran the task.
    pub agents: i64,
    pub by_hint: BTreeMap<Hint, Rates>,
}

/// What places an agent on a task's page, read for every agent before the page's rows
/// are: its no-hint final success on the task, and whether it succeeded only with hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPlace {
    pub bundle_id: String,
    pub agent_id: String,
    pub display_name: String,
    /// Final success without hints, where it ran without hints.
    pub final_success: Option<f64>,
    /// No successful run without hints, at least one with hints or detailed hints.
    pub hinted_only: bool,
    /// The conditions under which every counted run succeeded (pass^n = 1).
    pub every_time: Vec<Hint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskAgentRow {
    pub agent_id: String,
    pub display_name: String,
    pub tier: Tier,
    pub provenance: ProvenanceKind,
    pub bundle_id: String,
    pub by_hint: BTreeMap<Hint, Rates>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct Change {
    pub seq: i64,
    pub at: String,
    /// `accepted`, `superseded`, `retracted`, `reviewed`, `reproduced` (a submission's),
    /// `outputs` (a task's outputs published or made private), or `sampling` (a sampling
    /// epoch began, or its key was revealed).
    pub kind: String,
    /// The submission it is about; none for a task's outputs.
    pub bundle_id: Option<String>,
    pub agent_id: Option<String>,
    /// The task it is about, for a change of a task's outputs.
    pub task: Option<String>,
    pub detail: String,
}

/// Runs of an agent's current submission that ended one way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct FailureCount {
    pub agent_id: String,
    pub display_name: String,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    /// `None` where the runs carry no error type.
    pub error_type: Option<String>,
    pub runs: i64,
}

/// The failure explorer's view of every current submission (see
/// [`crate::Store::failure_overview`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureOverview {
    /// Agents with failed runs.
    pub agents: i64,
    /// The failed runs of the agents with the most, by outcome and error type.
    pub by_agent: Vec<FailureCount>,
    /// Error types, alphabetically.
    pub error_types: Vec<ErrorTypeCount>,
}

/// Failed runs that carry one error type, over current submissions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorTypeCount {
    pub error_type: String,
    pub runs: i64,
    pub agents: i64,
    /// The agents with the most such runs (name, runs), most first.
    pub most: Vec<(String, i64)>,
}

/// One way of failing a task, across the agents' current submissions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "db", derive(sqlx::FromRow))]
pub struct FailurePattern {
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub task: TaskId,
    #[cfg_attr(feature = "db", sqlx(try_from = "String"))]
    pub outcome: Outcome,
    pub error_type: Option<String>,
    /// How many current submissions (one per agent and benchmark version) had at least
    /// one run end this way.
    pub agents: i64,
    pub runs: i64,
}

/// The bootstrap's findings for every current submission, by bundle id
/// (see [`crate::stats`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BoardStats {
    pub by_bundle: BTreeMap<String, crate::stats::AgentStats>,
}

/// One way a run refers to an artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactUse {
    pub task: TaskId,
    /// The run's bundle (for a re-run's evidence, the reproduced run's).
    pub bundle: String,
    /// The role the artifact plays there.
    pub role: String,
    /// Evidence of a maintainers' re-run (spec §4d), not the submitted run's own.
    pub reproduction: bool,
}
