//! A run's marks as a board gives them from the bundle alone (spec §4m's cost marks and
//! §5b's `copied-attempt` among the bundle's own successes): the wire shape of the
//! server's answer to an upload, `rexbench verify --json` and the conformance vectors'
//! `expected.json`. Which marks a run earns is `benchmark::marks`'s to say.

use serde::{Deserialize, Serialize};
use vocab::Hint;

/// One marked run: which run (its task, hint and attempt) and its marks, each a slug
/// (its cost mark first, then `copied-attempt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RunMarks {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    /// `no-tokens`, `implausible-tokens`, `unpriced`, `differs`, `trajectory-disagrees`
    /// (spec §4m), `copied-attempt` (§5b).
    pub marks: Vec<String>,
}
