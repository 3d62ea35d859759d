//! Integrity findings: one, its review, and the overview.

use serde::{Deserialize, Serialize};
use vocab::{FoundBy, Hint, Outcome, Review, TaskId};

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
