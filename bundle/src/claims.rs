//! What a bundle claims that the board checks against the benchmark's rules as its task
//! cards give them (spec §5a): that its task set is one the board knows, that each task
//! and hint condition has no more valid attempts than the card asks, that every success
//! carries the agent's own record, and that a success agrees with its own signed metrics
//! wherever the task's check is on its card.
//!
//! None of these is a property of the bytes alone: a verifier holds a bundle to them only
//! when told the board's [`Claims`] ([`crate::Verifier::holding`]). The server, `rexbench
//! verify`, `rexbench pack` and the browser's check on `/submit` are told; a verifier that
//! only knows the format (the spec's own conformance vectors) is not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{BundleError, RunRef};
use crate::manifest::Manifest;
use crate::metrics_text::MetricsText;
use vocab::{Hint, Outcome};

/// The roles that hold the agent's own record of a run: its log, or its trajectory.
pub const AGENT_RECORD_ROLES: [&str; 2] = ["agent_log", "x-trajectory"];

/// What a value must be for a task's check to pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    Equals(f64),
    Within { expected: f64, tolerance: f64 },
    Range { min: f64, max: f64 },
}

impl Expectation {
    /// Compared as the official evaluators compare, in double precision:
    /// `expected - tolerance <= v <= expected + tolerance`, not `|v - expected| <= tolerance`,
    /// which rounds differently at the edges.
    pub fn accepts(self, v: f64) -> bool {
        match self {
            Expectation::Equals(e) => v == e,
            Expectation::Within { expected, tolerance } => {
                expected - tolerance <= v && v <= expected + tolerance
            }
            Expectation::Range { min, max } => min <= v && v <= max,
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Equals(e) => write!(f, "exactly {e}"),
            Expectation::Within { expected, tolerance } => write!(f, "{expected} ± {tolerance}"),
            Expectation::Range { min, max } => write!(f, "within [{min}, {max}]"),
        }
    }
}

/// One metric a task's public check holds to an expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub metric: String,
    pub expectation: Expectation,
}

/// What the board knows of one task from its card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRule {
    /// The valid attempts per hint condition the card asks (spec §4f).
    pub attempts: u32,
    /// The metrics its check holds to a bound, where the check is on the card; empty
    /// where it is private (the bounds are its gold) or reads no metric (a command).
    #[serde(default)]
    pub bounds: Vec<Bound>,
}

/// A task set the board ranks: its digest with the benchmark's name and version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskSet {
    pub digest: String,
    pub name: String,
    pub version: String,
}

impl fmt::Display for TaskSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ({})", self.name, self.version, self.digest)
    }
}

/// The board's rules a bundle's claims are held to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// The task sets a bundle may name.
    pub task_sets: BTreeSet<TaskSet>,
    /// Each task's rule, by id; a task not here is held to no attempts or bounds.
    pub tasks: BTreeMap<String, TaskRule>,
}

/// Holds `m` to `claims` (its field rules passed already); `sealed` holds the metrics a
/// run sealed into its `x-metrics` (spec §4j), by run index, which are judged as if stated.
pub fn check(
    m: &Manifest,
    claims: &Claims,
    sealed: &BTreeMap<usize, MetricsText>,
) -> Result<(), BundleError> {
    let b = &m.benchmark;
    if !claims
        .task_sets
        .iter()
        .any(|s| s.digest == b.task_set_digest && s.name == b.name && s.version == b.version)
    {
        let same_digest = claims.task_sets.iter().find(|s| s.digest == b.task_set_digest);
        return Err(BundleError::UnknownTaskSet {
            digest: b.task_set_digest.clone(),
            name: b.name.clone(),
            version: b.version.clone(),
            known: same_digest.map(ToString::to_string),
        });
    }
    check_runs(m, &claims.tasks, sealed)
}

/// The rules of [`check`] that the task cards alone give (all but the task set's): what
/// `rexbench pack` holds results to before it signs them.
pub fn check_runs(
    m: &Manifest,
    tasks: &BTreeMap<String, TaskRule>,
    sealed: &BTreeMap<usize, MetricsText>,
) -> Result<(), BundleError> {
    let rule = m.provenance.kind.rule();
    // A reproduction re-runs a sample by its patches: no agent, and attempts by design few.
    let submission = m.reproduction.is_none();
    let mut valid: BTreeMap<(&str, Hint), u32> = BTreeMap::new();
    for (index, run) in m.runs.iter().enumerate() {
        let at = || RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
        if run.outcome.is_counted() {
            *valid.entry((run.task.as_str(), run.hint)).or_default() += 1;
        }
        if run.outcome != Outcome::Success {
            continue;
        }
        // A record is the agent's own words: an empty artifact is none.
        let recorded = |role: &&str| {
            run.artifacts.get(*role).and_then(|d| m.artifacts.get(d)).is_some_and(|info| info.size > 0)
        };
        if submission && rule.carries_evidence && !AGENT_RECORD_ROLES.iter().any(recorded) {
            return Err(BundleError::AgentRecordMissing { run: at(), kind: m.provenance.kind });
        }
        if let Some(task) = tasks.get(run.task.as_str()) {
            let metrics = sealed.get(&index).map_or(&run.metrics, |t| &t.metrics);
            agrees_with_check(metrics, task, at)?;
        }
    }
    if submission && rule.held_to_attempts {
        for ((task, hint), count) in valid {
            if let Some(rule) = tasks.get(task)
                && count > rule.attempts
            {
                return Err(BundleError::TooManyAttempts {
                    task: task.to_owned(),
                    hint: hint.as_str().to_owned(),
                    valid: count,
                    asked: rule.attempts,
                });
            }
        }
    }
    Ok(())
}

/// A success whose own signed metrics (stated, or sealed) fail its task's public check
/// is not one.
fn agrees_with_check(
    metrics: &BTreeMap<String, f64>,
    task: &TaskRule,
    at: impl Fn() -> RunRef,
) -> Result<(), BundleError> {
    for bound in &task.bounds {
        if let Some(&value) = metrics.get(&bound.metric)
            && !bound.expectation.accepts(value)
        {
            return Err(BundleError::SuccessAgainstCheck {
                run: at(),
                metric: bound.metric.clone(),
                value,
                bound: bound.expectation.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_compare_as_the_evaluators_do() {
        let tol = Expectation::Within { expected: 0.88211, tolerance: 0.002 };
        assert!(tol.accepts(0.88411) && tol.accepts(0.88011) && !tol.accepts(0.8842));
        assert!(Expectation::Equals(1.0).accepts(1.0) && !Expectation::Equals(1.0).accepts(0.5));
        assert!(Expectation::Range { min: 0.0, max: 1.0 }.accepts(1.0));
        let json = serde_json::to_string(&tol).unwrap();
        assert_eq!(json, r#"{"within":{"expected":0.88211,"tolerance":0.002}}"#);
        assert_eq!(serde_json::from_str::<Expectation>(&json).unwrap(), tol);
    }
}
