//! Every way a bundle can be refused: one variant per rule of the spec, each with a
//! stable machine code and a sentence that names the offending run or member.

use std::fmt;
use vocab::ProvenanceKind;

/// Which run a manifest error is about: its position, and its key where it parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    pub index: usize,
    pub key: Option<(String, String, u32)>,
}

impl RunRef {
    pub fn at(index: usize) -> RunRef {
        RunRef { index, key: None }
    }
}

impl fmt::Display for RunRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "runs[{}]", self.index)?;
        if let Some((task, hint, attempt)) = &self.key {
            write!(f, " (task {task}, hint {hint}, attempt {attempt})")?;
        }
        Ok(())
    }
}

/// The broad class of a refusal, for callers that map errors to responses
/// (an HTTP status, an exit code) without listing every variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Reading the input failed; the bundle itself may be fine.
    Io,
    /// Over one of the size limits of spec §7.
    Limit,
    /// Not a well-formed archive of the shape spec §1 prescribes.
    Archive,
    /// No trusted signature, or a trusted signature that does not verify (spec §2).
    Signature,
    /// The envelope or manifest breaks a rule of spec §2–§3, or an artifact does not
    /// match what the manifest says of it.
    Content,
}

/// Why a bundle was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleError {
    // --- reading ---
    #[error("reading the bundle failed: {0}")]
    Io(String),
    #[error("storing artifact {digest} failed: {detail}")]
    ArtifactStore { digest: String, detail: String },
    #[error("storing artifact {digest} failed: the artifact store is full")]
    ArtifactStoreFull { digest: String },

    // --- limits (spec §7) ---
    #[error("the bundle is larger than the limit of {limit} compressed bytes")]
    CompressedTooLarge { limit: u64 },
    #[error("the bundle's members add up to more than the limit of {limit} uncompressed bytes")]
    UncompressedTooLarge { limit: u64 },
    #[error("the archive holds more data than its envelope and manifest account for (over {limit} bytes)")]
    UnaccountedData { limit: u64 },
    #[error("the bundle has more than the limit of {limit} members")]
    TooManyMembers { limit: u64 },
    #[error("artifact {digest} is larger than the limit of {limit} bytes")]
    ArtifactTooLarge { digest: String, limit: u64 },
    #[error("envelope.json is larger than the limit of {limit} bytes")]
    EnvelopeTooLarge { limit: u64 },
    #[error("the manifest is {size} bytes, over the limit of {limit} bytes")]
    ManifestTooLarge { size: u64, limit: u64 },

    // --- archive (spec §1) ---
    #[error("the bundle is not a gzip stream (it must be a .tar.gz)")]
    NotGzip,
    #[error("the bundle archive is damaged: {0}")]
    CorruptArchive(String),
    #[error("the bundle is empty: it has no envelope.json")]
    EnvelopeMissing,
    #[error("envelope.json must be the first member, but the first member is `{first}`")]
    EnvelopeNotFirst { first: String },
    #[error("member `{path}` has an unsafe path (`..` or a leading `/`)")]
    UnsafePath { path: String },
    #[error("member `{path}` is a {kind}; only regular files are allowed")]
    NonRegularMember { path: String, kind: String },
    #[error("member `{path}` is not allowed: members are envelope.json and artifacts/<sha256>")]
    UnexpectedMember { path: String },
    #[error("member `{path}` appears more than once")]
    DuplicateMember { path: String },
    #[error("artifact {digest} is in the archive but the manifest does not list it")]
    ArtifactUnlisted { digest: String },
    #[error("artifact {digest} is listed in the manifest but missing from the archive")]
    ArtifactMissing { digest: String },
    #[error("artifact {digest} holds {found} bytes, but the manifest lists {listed}")]
    ArtifactSizeMismatch { digest: String, listed: u64, found: u64 },
    #[error("artifact {digest}'s bytes hash to {actual}, not to its name")]
    ArtifactDigestMismatch { digest: String, actual: String },

    // --- envelope and signatures (spec §2) ---
    #[error("envelope.json is not a valid DSSE envelope: {0}")]
    EnvelopeMalformed(String),
    #[error("payloadType is `{found}`, expected `application/vnd.rexbench.manifest.v1+json`")]
    PayloadTypeMismatch { found: String },
    #[error("the envelope's payload is not standard base64 with padding")]
    PayloadNotBase64,
    #[error("no signature is by a trusted key (signed by: {})", signers(keyids))]
    NoTrustedSignature { keyids: Vec<String> },
    #[error("the signature by trusted key {keyid} does not verify: the bundle was altered after signing")]
    SignatureInvalid { keyid: String },

    // --- manifest (spec §3) ---
    #[error("the manifest is not valid JSON of the v1 schema at `{path}`: {detail}")]
    ManifestMalformed { path: String, detail: String },
    #[error("the manifest has a field `{path}` that schema v1 does not define")]
    UnknownField { path: String },
    #[error("schema is `{found}`, expected `rexbench.manifest/v1`")]
    UnsupportedSchema { found: String },
    #[error("created_at `{value}` is not an RFC 3339 timestamp")]
    InvalidCreatedAt { value: String },
    #[error(
        "created_at `{value}` is later than the verifier's clock by more than the {} s it allows for clocks that differ: a bundle cannot have been made in the future",
        crate::limits::CLOCK_TOLERANCE_S
    )]
    CreatedAtInFuture { value: String },
    #[error("benchmark.{field} {detail}")]
    InvalidBenchmark { field: &'static str, detail: String },
    #[error("benchmark.task_set_digest `{value}` is not 64 lowercase hex characters")]
    InvalidTaskSetDigest { value: String },
    #[error("runner.{field} {detail}")]
    InvalidRunner { field: &'static str, detail: String },
    #[error("provenance.kind is invalid: {detail}")]
    InvalidProvenance { detail: String },
    #[error(
        "provenance.kind is `{kind}`, which requires provenance.source ({})",
        if *kind == ProvenanceKind::Published { "a citation" } else { "the harness, its version and the job" }
    )]
    ProvenanceSourceMissing { kind: ProvenanceKind },
    #[error("{run} carries artifacts, but a published bundle has none")]
    PublishedRunHasArtifacts { run: RunRef },
    #[error(
        "agent.id `{value}` is not a slug (lowercase letters, digits, `.`, `_`, `-`; at most 64; starts with a letter or digit)"
    )]
    InvalidAgentId { value: String },
    #[error("agent.{field} {detail}")]
    InvalidAgentField { field: &'static str, detail: String },
    #[error(
        "{field} writes `{found}`, which is the board's own badge (its tier, provenance or reproduction marks): a \
         bundle's names and words may not imitate them, however spelt"
    )]
    AgentBadgeWords { field: String, found: String },
    #[error("agent.url `{value}` is not an http or https URL")]
    InvalidAgentUrl { value: String },
    #[error("the manifest has {count} runs; a bundle has 1 to 100000")]
    RunCountOutOfRange { count: usize },
    #[error("{run} repeats the task, hint and attempt of runs[{first}]")]
    DuplicateRun { run: RunRef, first: usize },
    #[error(
        "task {task}, hint {hint}: attempt {missing} is missing, but attempt {highest} is there: a bundle's attempts of a task and hint condition are numbered 1, 2, … without a gap (an attempt left out is not a run that did not happen)"
    )]
    AttemptGap { task: String, hint: String, missing: u32, highest: u32 },
    #[error("{run} names task `{task}`, which is not a task of this benchmark version")]
    UnknownTask { run: RunRef, task: String },
    #[error("{run}: hint is invalid: {detail}")]
    InvalidHint { run: RunRef, detail: String },
    #[error("{run}: attempt is invalid: {detail}")]
    InvalidAttempt { run: RunRef, detail: String },
    #[error("{run}: outcome is invalid: {detail}")]
    InvalidOutcome { run: RunRef, detail: String },
    #[error(
        "{run}: regraded is invalid: {detail} (section 4i: {{\"from\": <the outcome before the regrade>}})"
    )]
    InvalidRegrade { run: RunRef, detail: String },
    #[error("{run}: error_type must be 1 to 100 characters")]
    InvalidErrorType { run: RunRef },
    #[error("{run}: file_recall {value} is outside [0, 1]")]
    InvalidFileRecall { run: RunRef, value: f64 },
    #[error("{run}: files_changed entry `{path}` is not a relative path inside the repository")]
    InvalidFilesChanged { run: RunRef, path: String },
    #[error("{run}: {field} {value} must be {range}")]
    InvalidNumber { run: RunRef, field: &'static str, value: f64, range: &'static str },
    #[error("{run}: metric name `{name}` must be 1 to 200 characters")]
    InvalidMetric { run: RunRef, name: String },
    #[error(
        "{run}: artifact role `{role}` is not one of patch, agent_log, stdout, stderr, checker_log or x-<name>"
    )]
    InvalidArtifactRole { run: RunRef, role: String },
    #[error("{location}: `{value}` is not a SHA-256 digest (64 lowercase hex characters)")]
    InvalidDigest { location: String, value: String },
    #[error("{run}: artifact {role} = {digest} is not listed in the manifest's artifacts")]
    ArtifactNotListed { run: RunRef, role: String, digest: String },
    #[error("artifact {digest} is listed in the manifest but no run uses it")]
    ArtifactUnused { digest: String },
    #[error("artifacts.{digest}: media_type `{media_type}` is not a type/subtype media type")]
    InvalidMediaType { digest: String, media_type: String },
    #[error("{run} has {count} findings; a run has at most {MAX_FINDINGS}")]
    TooManyFindings { run: RunRef, count: usize },
    #[error("{run}.findings[{index}]: check `{value}` is not a slug (^[a-z0-9][a-z0-9-]{{0,63}}$)")]
    InvalidFindingCheck { run: RunRef, index: usize, value: String },
    #[error("{run}.findings[{index}]: message must be 1 to 500 characters")]
    InvalidFindingMessage { run: RunRef, index: usize },
    #[error("{run}.findings[{index}]: artifact `{role}` is not a role of this run's artifacts")]
    FindingUnknownArtifact { run: RunRef, index: usize, role: String },
    #[error("{run}.findings[{index}]: line {detail}")]
    InvalidFindingLine { run: RunRef, index: usize, detail: &'static str },
    #[error("{run}.findings[{index}] repeats the check, artifact and line of findings[{first}]")]
    DuplicateFinding { run: RunRef, index: usize, first: usize },
    #[error(
        "{run} was {kind} and got past applying its patch ({outcome}), but carries no `{role}` artifact: the evidence its result rests on"
    )]
    EvidenceMissing { run: RunRef, kind: ProvenanceKind, outcome: String, role: &'static str },
    #[error("{run}: its provenance record (artifact x-provenance) is invalid: {detail}")]
    InvalidProvenanceRecord { run: RunRef, detail: String },
    #[error("reproduction: {detail}")]
    InvalidReproduction { detail: String },
    #[error(
        "{run}.findings[{index}]: {detail}; a finding's words quote the run's outputs and belong in its x-findings artifact, not in the public manifest (its message says `see x-findings`, its text_digest names the words)"
    )]
    FindingTextInManifest { run: RunRef, index: usize, detail: &'static str },
    #[error("{run}: its findings' words (artifact x-findings) {detail}")]
    InvalidFindingText { run: RunRef, detail: String },
    #[error("{run}: its sealed metrics (metrics_digest and artifact x-metrics, spec §4j) {detail}")]
    InvalidMetricsText { run: RunRef, detail: String },
    #[error(
        "{run} states its metrics in the manifest, which anyone may read, but the check of task `{task}` is private: its metrics are its gold, and travel sealed in the run's x-metrics artifact (spec §4j; `rexbench pack` seals them)"
    )]
    PrivateMetricsInManifest { run: RunRef, task: String },
    #[error(
        "benchmark names the task set {digest} as {name} {version}, which this board does not know{}: results rank only on a task set the board's cards give or its maintainers registered (spec §5a)",
        known.as_ref().map(|k| format!(" (that digest is {k})")).unwrap_or_default()
    )]
    UnknownTaskSet { digest: String, name: String, version: String, known: Option<String> },
    #[error(
        "task {task}, hint {hint}: {valid} valid attempts, but its card asks {asked}: a bundle has exactly the attempts the benchmark asks per task and hint condition (spec §4f; an infra_error attempt may come in addition)"
    )]
    TooManyAttempts { task: String, hint: String, valid: u32, asked: u32 },
    #[error(
        "task {task}: its runs ran two task folders, {first} and {second}: one task, one folder in a bundle (spec §4n); import the results of each folder apart"
    )]
    TaskFolderSplit { task: String, first: String, second: String },
    #[error(
        "{run} is a success of a {kind} bundle but carries neither an `agent_log` nor an `x-trajectory` artifact, or only an empty one: a success carries the agent's own record of the work as well as its patch (spec §5a)"
    )]
    AgentRecordMissing { run: RunRef, kind: ProvenanceKind },
    #[error(
        "{run} is a success, but its own signed metric `{metric}` is {value}, and its task's check holds it to {bound}: the outcome contradicts the numbers it rests on (spec §5a)"
    )]
    SuccessAgainstCheck { run: RunRef, metric: String, value: f64, bound: String },
}

/// The most findings one run may carry.
pub const MAX_FINDINGS: usize = 32;

impl BundleError {
    /// Every code [`BundleError::code`] can return.
    pub const CODES: &[&str] = &[
        "io_error",
        "artifact_store_failed",
        "storage_full",
        "bundle_too_large",
        "uncompressed_too_large",
        "unaccounted_data",
        "too_many_members",
        "artifact_too_large",
        "envelope_too_large",
        "manifest_too_large",
        "not_gzip",
        "corrupt_archive",
        "envelope_missing",
        "envelope_not_first",
        "unsafe_path",
        "non_regular_member",
        "unexpected_member",
        "duplicate_member",
        "artifact_unlisted",
        "artifact_missing",
        "artifact_size_mismatch",
        "artifact_digest_mismatch",
        "envelope_malformed",
        "payload_type_mismatch",
        "payload_not_base64",
        "no_trusted_signature",
        "signature_invalid",
        "manifest_malformed",
        "unknown_field",
        "unsupported_schema",
        "invalid_created_at",
        "created_at_in_future",
        "invalid_benchmark",
        "invalid_task_set_digest",
        "invalid_runner",
        "invalid_provenance",
        "provenance_source_missing",
        "published_run_has_artifacts",
        "invalid_agent_id",
        "invalid_agent_field",
        "agent_badge_words",
        "invalid_agent_url",
        "run_count_out_of_range",
        "duplicate_run",
        "attempt_gap",
        "unknown_task",
        "invalid_hint",
        "invalid_attempt",
        "invalid_outcome",
        "invalid_regrade",
        "invalid_error_type",
        "invalid_file_recall",
        "invalid_files_changed",
        "invalid_number",
        "invalid_metric",
        "invalid_artifact_role",
        "invalid_digest",
        "artifact_not_listed",
        "artifact_unused",
        "invalid_media_type",
        "too_many_findings",
        "invalid_finding_check",
        "invalid_finding_message",
        "finding_unknown_artifact",
        "invalid_finding_line",
        "duplicate_finding",
        "evidence_missing",
        "invalid_provenance_record",
        "invalid_reproduction",
        "finding_text_in_manifest",
        "invalid_finding_text",
        "invalid_metrics_text",
        "private_metrics_in_manifest",
        "unknown_task_set",
        "too_many_attempts",
        "task_folder_split",
        "agent_record_missing",
        "success_against_check",
    ];

    /// The stable machine code of the rule this error breaks.
    pub fn code(&self) -> &'static str {
        use BundleError::*;
        match self {
            Io(_) => "io_error",
            ArtifactStore { .. } => "artifact_store_failed",
            ArtifactStoreFull { .. } => "storage_full",
            CompressedTooLarge { .. } => "bundle_too_large",
            UncompressedTooLarge { .. } => "uncompressed_too_large",
            UnaccountedData { .. } => "unaccounted_data",
            TooManyMembers { .. } => "too_many_members",
            ArtifactTooLarge { .. } => "artifact_too_large",
            EnvelopeTooLarge { .. } => "envelope_too_large",
            ManifestTooLarge { .. } => "manifest_too_large",
            NotGzip => "not_gzip",
            CorruptArchive(_) => "corrupt_archive",
            EnvelopeMissing => "envelope_missing",
            EnvelopeNotFirst { .. } => "envelope_not_first",
            UnsafePath { .. } => "unsafe_path",
            NonRegularMember { .. } => "non_regular_member",
            UnexpectedMember { .. } => "unexpected_member",
            DuplicateMember { .. } => "duplicate_member",
            ArtifactUnlisted { .. } => "artifact_unlisted",
            ArtifactMissing { .. } => "artifact_missing",
            ArtifactSizeMismatch { .. } => "artifact_size_mismatch",
            ArtifactDigestMismatch { .. } => "artifact_digest_mismatch",
            EnvelopeMalformed(_) => "envelope_malformed",
            PayloadTypeMismatch { .. } => "payload_type_mismatch",
            PayloadNotBase64 => "payload_not_base64",
            NoTrustedSignature { .. } => "no_trusted_signature",
            SignatureInvalid { .. } => "signature_invalid",
            ManifestMalformed { .. } => "manifest_malformed",
            UnknownField { .. } => "unknown_field",
            UnsupportedSchema { .. } => "unsupported_schema",
            InvalidCreatedAt { .. } => "invalid_created_at",
            CreatedAtInFuture { .. } => "created_at_in_future",
            InvalidBenchmark { .. } => "invalid_benchmark",
            InvalidTaskSetDigest { .. } => "invalid_task_set_digest",
            InvalidRunner { .. } => "invalid_runner",
            InvalidProvenance { .. } => "invalid_provenance",
            ProvenanceSourceMissing { .. } => "provenance_source_missing",
            PublishedRunHasArtifacts { .. } => "published_run_has_artifacts",
            InvalidAgentId { .. } => "invalid_agent_id",
            InvalidAgentField { .. } => "invalid_agent_field",
            AgentBadgeWords { .. } => "agent_badge_words",
            InvalidAgentUrl { .. } => "invalid_agent_url",
            RunCountOutOfRange { .. } => "run_count_out_of_range",
            DuplicateRun { .. } => "duplicate_run",
            AttemptGap { .. } => "attempt_gap",
            UnknownTask { .. } => "unknown_task",
            InvalidHint { .. } => "invalid_hint",
            InvalidAttempt { .. } => "invalid_attempt",
            InvalidOutcome { .. } => "invalid_outcome",
            InvalidRegrade { .. } => "invalid_regrade",
            InvalidErrorType { .. } => "invalid_error_type",
            InvalidFileRecall { .. } => "invalid_file_recall",
            InvalidFilesChanged { .. } => "invalid_files_changed",
            InvalidNumber { .. } => "invalid_number",
            InvalidMetric { .. } => "invalid_metric",
            InvalidArtifactRole { .. } => "invalid_artifact_role",
            InvalidDigest { .. } => "invalid_digest",
            ArtifactNotListed { .. } => "artifact_not_listed",
            ArtifactUnused { .. } => "artifact_unused",
            InvalidMediaType { .. } => "invalid_media_type",
            TooManyFindings { .. } => "too_many_findings",
            InvalidFindingCheck { .. } => "invalid_finding_check",
            InvalidFindingMessage { .. } => "invalid_finding_message",
            FindingUnknownArtifact { .. } => "finding_unknown_artifact",
            InvalidFindingLine { .. } => "invalid_finding_line",
            DuplicateFinding { .. } => "duplicate_finding",
            EvidenceMissing { .. } => "evidence_missing",
            InvalidProvenanceRecord { .. } => "invalid_provenance_record",
            InvalidReproduction { .. } => "invalid_reproduction",
            FindingTextInManifest { .. } => "finding_text_in_manifest",
            InvalidFindingText { .. } => "invalid_finding_text",
            InvalidMetricsText { .. } => "invalid_metrics_text",
            PrivateMetricsInManifest { .. } => "private_metrics_in_manifest",
            UnknownTaskSet { .. } => "unknown_task_set",
            TooManyAttempts { .. } => "too_many_attempts",
            TaskFolderSplit { .. } => "task_folder_split",
            AgentRecordMissing { .. } => "agent_record_missing",
            SuccessAgainstCheck { .. } => "success_against_check",
        }
    }

    pub fn class(&self) -> ErrorClass {
        use BundleError::*;
        match self {
            Io(_) | ArtifactStore { .. } | ArtifactStoreFull { .. } => ErrorClass::Io,
            CompressedTooLarge { .. }
            | UncompressedTooLarge { .. }
            | UnaccountedData { .. }
            | TooManyMembers { .. }
            | ArtifactTooLarge { .. }
            | EnvelopeTooLarge { .. }
            | ManifestTooLarge { .. } => ErrorClass::Limit,
            NotGzip
            | CorruptArchive(_)
            | EnvelopeMissing
            | EnvelopeNotFirst { .. }
            | UnsafePath { .. }
            | NonRegularMember { .. }
            | UnexpectedMember { .. }
            | DuplicateMember { .. } => ErrorClass::Archive,
            NoTrustedSignature { .. } | SignatureInvalid { .. } => ErrorClass::Signature,
            _ => ErrorClass::Content,
        }
    }
}

fn signers(keyids: &[String]) -> String {
    if keyids.is_empty() { "nobody".to_owned() } else { keyids.join(", ") }
}

impl From<std::io::Error> for BundleError {
    fn from(e: std::io::Error) -> Self {
        BundleError::Io(e.to_string())
    }
}
