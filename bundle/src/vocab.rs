//! The benchmark's vocabulary: task ids, hint conditions, outcomes, provenance.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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

/// How much guidance the agent was given (spec §3, `hint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Hint {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Hint::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| UnknownName::new("hint", s, "none, hints, detailed"))
    }
}

/// What happened when a run was evaluated (spec §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Outcome {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s).ok_or_else(|| {
            UnknownName::new(
                "outcome",
                s,
                "success, wrong_result, execution_failed, timeout, patch_failed, empty_patch, infra_error",
            )
        })
    }
}

/// Where a bundle's numbers come from (spec §3, `provenance.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    pub fn as_str(self) -> &'static str {
        match self {
            ProvenanceKind::Evaluated => "evaluated",
            ProvenanceKind::Imported => "imported",
            ProvenanceKind::Published => "published",
        }
    }
}

impl fmt::Display for ProvenanceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
        let err = "level1".parse::<Hint>().unwrap_err().to_string();
        assert!(err.contains("`level1`") && err.contains("detailed"), "{err}");
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
