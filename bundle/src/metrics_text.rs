//! A run's metrics where its task's check is private (spec §4j, this project's
//! addition). What a private check reads is what it compares with the gold: a success's
//! metrics are the gold's expected values, and a failure's narrow them. The manifest is
//! public, so such a run's values leave it: the manifest's run carries a salted SHA-256
//! of them (`metrics_digest`), and the values travel in the run's `x-metrics` artifact,
//! private with the run's outputs. The salt (16 bytes nobody else can guess) makes the
//! digest reveal nothing: without it, the few values a check could accept could be
//! confirmed one guess at a time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The artifact role a run's sealed metrics travel under.
pub const METRICS_ROLE: &str = "x-metrics";
/// Its media type.
pub const METRICS_MEDIA_TYPE: &str = "application/json";
/// Its `schema`.
pub const METRICS_SCHEMA: &str = "rexbench.metrics/v1";
/// The largest such artifact, in bytes.
pub const MAX_METRICS_TEXT_BYTES: u64 = 64 * 1024;

/// A run's metrics and the salt their digest was made with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsText {
    pub schema: String,
    /// 32 lowercase hex digits.
    pub salt: String,
    /// Name → finite number, as a manifest's `metrics`.
    pub metrics: BTreeMap<String, f64>,
}

/// The digest a manifest's run names its metrics by: SHA-256 of the salt's 32 hex
/// digits followed by the metrics as JSON (an object, keys in byte order, numbers as
/// the shortest text that reads back as the same double, no spaces), in lowercase hex.
pub fn metrics_digest(salt: &str, metrics: &BTreeMap<String, f64>) -> String {
    let mut bytes = salt.as_bytes().to_vec();
    bytes.extend_from_slice(&canonical(metrics));
    crate::Digest::of(&bytes).to_hex()
}

/// The metrics as the digest reads them.
fn canonical(metrics: &BTreeMap<String, f64>) -> Vec<u8> {
    serde_json::to_vec(metrics).expect("finite numbers serialize")
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl MetricsText {
    /// Reads an `x-metrics` artifact, or says what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<MetricsText, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed: MetricsText = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| format!("not a metrics text: {} (at {})", e.inner(), e.path()))?;
        de.end().map_err(|e| format!("not a metrics text: {e}"))?;
        if parsed.schema != METRICS_SCHEMA {
            return Err(format!("schema is `{}`, not `{METRICS_SCHEMA}`", parsed.schema));
        }
        if !is_hex(&parsed.salt, 32) {
            return Err("its salt is not 32 lowercase hex digits".into());
        }
        if parsed.metrics.is_empty() {
            return Err("it holds no metrics".into());
        }
        if let Some((name, _)) = parsed.metrics.iter().find(|(n, v)| !v.is_finite() || n.is_empty()) {
            return Err(format!("the metric `{name}` is not named, or not a finite number"));
        }
        Ok(parsed)
    }

    /// The artifact's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("finite numbers serialize");
        bytes.push(b'\n');
        bytes
    }

    /// Whether these are the metrics `digest` names; else what differs.
    pub fn check(&self, digest: &str) -> Result<(), String> {
        let actual = metrics_digest(&self.salt, &self.metrics);
        if actual == digest {
            Ok(())
        } else {
            Err(format!("they hash to {actual}, not to the run's metrics_digest"))
        }
    }
}

/// Whether `s` is a digest as a run names its metrics by: 64 lowercase hex digits.
pub fn is_metrics_digest(s: &str) -> bool {
    is_hex(s, 64)
}

/// A run's metrics sealed with `salt`: the digest the manifest carries, and the
/// artifact that holds the values.
pub fn seal_metrics(metrics: BTreeMap<String, f64>, salt: [u8; 16]) -> (String, MetricsText) {
    let salt = hex::encode(salt);
    let digest = metrics_digest(&salt, &metrics);
    (digest, MetricsText { schema: METRICS_SCHEMA.to_owned(), salt, metrics })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_metrics_read_back_and_name_their_digest_only() {
        let metrics = BTreeMap::from([("mean".to_owned(), 7.5), ("count".to_owned(), 4.0)]);
        let (digest, text) = seal_metrics(metrics.clone(), [7; 16]);
        assert!(is_metrics_digest(&digest));
        let read = MetricsText::parse(&text.to_bytes()).unwrap();
        assert_eq!(read.metrics, metrics);
        read.check(&digest).unwrap();
        // Another salt, the same values: another digest, so a guess cannot be confirmed.
        let (other, _) = seal_metrics(metrics.clone(), [8; 16]);
        assert_ne!(digest, other);
        // Changed values do not hash to the digest.
        let mut changed = read.clone();
        changed.metrics.insert("mean".into(), 7.0);
        assert!(changed.check(&digest).unwrap_err().contains("not to the run's metrics_digest"));
        for bad in [
            r#"{"schema":"rexbench.metrics/v1","salt":"00","metrics":{"a":1}}"#,
            r#"{"schema":"x","salt":"00000000000000000000000000000000","metrics":{"a":1}}"#,
            r#"{"schema":"rexbench.metrics/v1","salt":"00000000000000000000000000000000","metrics":{}}"#,
            r#"{"schema":"rexbench.metrics/v1","salt":"00000000000000000000000000000000","metrics":{"a":1},"b":2}"#,
        ] {
            assert!(MetricsText::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
