//! The manifest (spec §3): the signed description of every run in a bundle.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::{BundleError, RunRef};
use vocab::{Harness, Hint, Outcome, ProvenanceKind, TaskId};

pub const SCHEMA: &str = "rexbench.manifest/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub schema: String,
    /// RFC 3339; kept as signed so that the bytes and the value never drift apart.
    pub created_at: String,
    pub benchmark: Benchmark,
    pub runner: RunnerInfo,
    pub provenance: Provenance,
    pub agent: Agent,
    pub runs: Vec<Run>,
    /// Present only in a reproduction (spec §4d): the maintainers re-ran sampled runs
    /// of another bundle, which this names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduction: Option<Reproduction>,
    /// digest → what it is. Keys are validated digests (see [`crate::Digest`]).
    #[serde(default, deserialize_with = "unique_map")]
    pub artifacts: BTreeMap<String, ArtifactInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    pub name: String,
    pub version: String,
    pub task_set_digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub kind: ProvenanceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Provenance {
    pub fn new(kind: ProvenanceKind, source: Option<String>) -> Provenance {
        Provenance { kind, source }
    }
}

/// What a reproduction re-ran, where and on what (spec §4d).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reproduction {
    /// The id of the bundle whose runs were re-run (64 lowercase hex).
    pub of: String,
    /// How the runs were executed: `local`, `container` or `slurm`.
    pub executor: String,
    pub hardware: Hardware,
    /// The runs re-run a second time on a held-out variant of their task (spec §4l).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heldout: Vec<HeldOut>,
}

/// A run re-run on a held-out variant of its task: files the submitter never saw in
/// place of the codebase's, checked by the variant's own gold (spec §4l). One bit of it
/// is told, with the variant's digest: whether it was a success there. Its outcome,
/// duration, files, gold and logs stay the maintainers' (anything more would let a
/// patch signal what it read on the variant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOut {
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
    /// The variant's digest (64 lowercase hex): SHA-256 of its folder.
    pub variant: String,
    /// Whether the run was a success on the variant.
    pub generalised: bool,
}

/// The executor's hardware, as a reproduction records it: what its runs cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// CPUs a run had (≥ 1).
    pub cpus: u32,
    /// Memory a run had, in bytes.
    pub memory_bytes: u64,
    /// GPUs a run had.
    pub gpus: u32,
    /// The GPUs' model, where there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// In words, e.g. `AMD EPYC 7763, 2 CPUs, 24 GiB` (1 to 200 characters).
    pub description: String,
}

/// The executors a reproduction may name.
pub const EXECUTORS: [&str; 3] = ["local", "container", "slurm"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    pub id: String,
    pub framework: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework_version: Option<String>,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Agent {
    /// The name to show: the display name, or framework + model.
    pub fn name(&self) -> String {
        self.display_name.clone().unwrap_or_else(|| format!("{} + {}", self.framework, self.model))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub task: TaskId,
    pub hint: Hint,
    pub attempt: u32,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_recall: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Section 4m: the tokens the agent's model read and wrote in this run, as the agent
    /// recorded them; the board prices them to check `cost_usd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// Section 4n: the task folder the harness ran, as it recorded it (a Harbor lock's
    /// `sha256:` digest, or a trial's `task_checksum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_folder: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub metrics: BTreeMap<String, f64>,
    /// Section 4j: where the task's check is private, the salted SHA-256 of the run's
    /// metrics, which travel in its `x-metrics` artifact instead of `metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_digest: Option<String>,
    /// role → digest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub artifacts: BTreeMap<String, String>,
    /// Why a reader should doubt this run's outcome (section 4a), as the runner or the
    /// importer found it. Never changes the outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Section 4i: the outcome is a regrade's verdict on the outputs of an agent run
    /// Harbor had judged before; this says what it judged then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regraded: Option<Regraded>,
}

/// A run's tokens (section 4m): one vocabulary from the manifest to the API.
pub use vocab::Tokens;

/// A regrade's earlier verdict (section 4i).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regraded {
    /// The source trial's outcome.
    pub from: Outcome,
}

/// An integrity finding: which check found it, what it saw, and where the evidence is
/// (a role of the run's artifacts, and a line in it counted from 1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub check: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Spec §4g: the salted SHA-256 of the finding's words, which travel in the run's
    /// `x-findings` artifact (the manifest's `message` then says only `see x-findings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_digest: Option<String>,
}

impl Run {
    pub fn key(&self) -> (&str, Hint, u32) {
        (self.task.as_str(), self.hint, self.attempt)
    }

    /// Whether a regrade changed its verdict (section 4i): always sampled (section 4e).
    pub fn regrade_changed(&self) -> bool {
        self.regraded.is_some_and(|g| g.from != self.outcome)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactInfo {
    pub media_type: String,
    pub size: u64,
}

/// The roles an artifact can play in a run (spec §3, run `artifacts`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArtifactRole {
    Patch,
    AgentLog,
    Stdout,
    Stderr,
    CheckerLog,
    /// `x-<name>`: anything else a runner wants to keep.
    Extension(String),
}

impl ArtifactRole {
    pub fn parse(s: &str) -> Option<ArtifactRole> {
        Some(match s {
            "patch" => ArtifactRole::Patch,
            "agent_log" => ArtifactRole::AgentLog,
            "stdout" => ArtifactRole::Stdout,
            "stderr" => ArtifactRole::Stderr,
            "checker_log" => ArtifactRole::CheckerLog,
            _ => {
                let name = s.strip_prefix("x-")?;
                if !vocab::is_slug(name) {
                    return None;
                }
                ArtifactRole::Extension(name.to_owned())
            }
        })
    }

    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        match self {
            ArtifactRole::Patch => "patch".into(),
            ArtifactRole::AgentLog => "agent_log".into(),
            ArtifactRole::Stdout => "stdout".into(),
            ArtifactRole::Stderr => "stderr".into(),
            ArtifactRole::CheckerLog => "checker_log".into(),
            ArtifactRole::Extension(name) => format!("x-{name}").into(),
        }
    }
}

impl fmt::Display for ArtifactRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl Manifest {
    /// The harness that executed the runs (spec §3): the runner for `evaluated`
    /// results; for `imported` ones, the harness the source names first, with the
    /// version after it (`harbor 0.3.1, job …`); for `published` ones, Harbor if the
    /// source begins with it, else RExBench's original harness, which ran the paper's.
    pub fn harness(&self) -> Harness {
        let named = || {
            let source = self.provenance.source.as_deref().unwrap_or("");
            let head = source.split(',').next().unwrap_or("");
            let mut words = head.split_whitespace();
            let name = words.next().unwrap_or("").to_lowercase();
            let version = words.next().filter(|v| v.starts_with(|c: char| c.is_ascii_digit()));
            (name, version.map(str::to_owned))
        };
        match self.provenance.kind {
            ProvenanceKind::Evaluated => Harness::new(Harness::RUNNER, Some(self.runner.version.clone())),
            ProvenanceKind::Imported => match named() {
                (name, version) if vocab::is_slug(&name) => Harness::new(name, version),
                _ => Harness::new("unnamed", None),
            },
            ProvenanceKind::Published => match named() {
                (name, version) if name == Harness::HARBOR => Harness::new(name, version),
                _ => Harness::new(Harness::ORIGINAL, None),
            },
        }
    }

    /// Parses manifest bytes into the v1 types. Only the shape is checked here; the
    /// field rules are [`crate::validate::validate`]'s.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, BundleError> {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let manifest = serde_path_to_error::deserialize(de).map_err(shape_error)?;
        Ok(manifest)
    }

    /// The manifest as bytes to sign: pretty JSON, so that a person can read it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a manifest always serializes");
        out.push(b'\n');
        out
    }
}

/// Turns a serde error into the rule it breaks, naming the field by its path.
fn shape_error(err: serde_path_to_error::Error<serde_json::Error>) -> BundleError {
    let path = err.path().to_string();
    let inner = err.into_inner();
    let detail = strip_position(&inner.to_string());
    if detail.starts_with("unknown field") {
        // The path already ends with the unknown field, except at the top level.
        let path = match detail.split('`').nth(1) {
            Some(field) if path == "." || path.is_empty() => field.to_owned(),
            _ => path,
        };
        return BundleError::UnknownField { path };
    }
    if let Some(run) = run_index(&path) {
        let run = RunRef::at(run);
        match path.rsplit('.').next() {
            Some("hint") => return BundleError::InvalidHint { run, detail },
            Some("outcome") => return BundleError::InvalidOutcome { run, detail },
            Some("attempt") => return BundleError::InvalidAttempt { run, detail },
            Some(_) if path.contains(".regraded") => return BundleError::InvalidRegrade { run, detail },
            _ => {}
        }
    }
    if path == "provenance.kind" {
        return BundleError::InvalidProvenance { detail };
    }
    BundleError::ManifestMalformed { path, detail }
}

/// `runs[12].hint` → 12.
fn run_index(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("runs[")?;
    rest[..rest.find(']')?].parse().ok()
}

/// serde_json appends " at line L column C"; the path already says where.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// Deserializes a JSON object into a map, refusing a key that appears twice: a
/// signed manifest must mean one thing to every parser that reads it.
fn unique_map<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct UniqueMap<V>(PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for UniqueMap<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
            let mut map = BTreeMap::new();
            while let Some((key, value)) = access.next_entry::<String, V>()? {
                if map.contains_key(&key) {
                    return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
                }
                map.insert(key, value);
            }
            Ok(map)
        }
    }
    d.deserialize_map(UniqueMap(PhantomData))
}

/// A manifest's text field: 1 to `max` characters, or the error's words.
pub(crate) fn text(name: &str, value: &str, max: usize) -> Result<(), String> {
    let n = value.chars().count();
    if n == 0 || n > max {
        return Err(format!("{name} must be 1 to {max} characters"));
    }
    Ok(())
}
