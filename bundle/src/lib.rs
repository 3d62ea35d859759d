//! The RExBench result bundle (`docs/spec/result-bundle-v1.md`).
//!
//! A bundle is a `.tar.gz` whose first member is a DSSE envelope signing the manifest,
//! followed by content-addressed artifacts. [`Verifier`] reads one as a stream and
//! accepts it whole or refuses it with a [`BundleError`] naming the rule it breaks;
//! [`BundleBuilder`] writes one.
//!
//! Pure: no web, no database, no async.

mod badges;
mod claims;
mod digest;
mod envelope;
mod error;
mod findings_text;
mod folder;
mod keys;
mod limits;
mod manifest;
mod marks;
mod metrics_text;
mod provenance;
mod reader;
mod reproduction;
pub mod sample;
mod validate;
#[cfg(feature = "vectors")]
pub mod vectors;
mod writer;

/// A text as a reader sees it (spec §4o): the badge check's reading, and the hint check's.
pub use badges::imitated as imitates_badge;
pub use badges::owner_key;
pub use badges::seen as as_seen;
pub use claims::{AGENT_RECORD_ROLES, Bound, Claims, Expectation, TaskRule, TaskSet, check_runs};
pub use digest::{Digest, Hasher, HashingReader};
pub use envelope::{Envelope, EnvelopeSignature, PAYLOAD_TYPE, SignatureStatus, pae};
pub use error::{BundleError, ErrorClass, MAX_FINDINGS, RunRef};
pub use findings_text::{
    FINDINGS_MEDIA_TYPE, FINDINGS_ROLE, FINDINGS_SCHEMA, FindingText, FindingsText, MAX_FINDINGS_TEXT_BYTES,
    SEE_TEXT, is_text_digest, seal, text_digest, unseal,
};
pub use folder::is_task_folder;
#[cfg(feature = "keygen")]
pub use keys::fresh_salt;
pub use keys::{KeyError, KeyId, PublicKey, SecretKey};
pub use limits::{CLOCK_TOLERANCE_S, Limits};
pub use manifest::{
    Agent, ArtifactInfo, ArtifactRole, Benchmark, EXECUTORS, Finding, Hardware, HeldOut, Manifest,
    Provenance, Regraded, Reproduction, Run, RunnerInfo, SCHEMA, Tokens,
};
pub use marks::RunMarks;
pub use metrics_text::{
    MAX_METRICS_TEXT_BYTES, METRICS_MEDIA_TYPE, METRICS_ROLE, METRICS_SCHEMA, MetricsText, is_metrics_digest,
    metrics_digest, seal_metrics,
};
pub use provenance::{
    Cut, MAX_LIST, MAX_PROCESSES, MAX_PROVENANCE_BYTES, MAX_TEXT, PROVENANCE_MEDIA_TYPE, PROVENANCE_ROLE,
    PROVENANCE_SCHEMA, Process, ProvenanceRecord,
};
pub use reader::{ArtifactSink, Discard, VerifiedBundle, Verifier};
pub use validate::{MAX_RUNS, validate};
/// The vocabulary bundles are written in, so that users of bundles need only this crate.
pub use vocab::{
    BENCHMARK_ATTEMPTS, CostMark, DiffLine, Harness, Hint, Outcome, Outputs, ProvenanceKind, REXBENCH_TASKS,
    TaskId, Tier, UnknownName, is_slug,
};
pub use writer::{BundleBuilder, WriteError};
