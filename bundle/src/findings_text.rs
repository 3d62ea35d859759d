//! What a finding says, kept out of the signed manifest (spec §4g, this project's
//! addition). A finding's words quote the run's outputs (a patch line, a trajectory's
//! command, a process's arguments), and a task's outputs may be private, while the
//! manifest is public: every envelope is served to anyone. So the manifest's finding
//! keeps its check, its place (artifact and line) and a salted SHA-256 of its words,
//! and says [`SEE_TEXT`] where the words were; the words travel in the run's
//! `x-findings` artifact, which is private with the run's other outputs.
//!
//! The salt (16 random bytes per finding) is there because the words are often
//! guessable: "the patch writes 0.4563, an expected value" could otherwise be confirmed
//! value by value against a public digest, and reveal the value.

use serde::{Deserialize, Serialize};

use crate::manifest::Finding;

pub use vocab::FINDINGS_ROLE;
/// Its media type.
pub const FINDINGS_MEDIA_TYPE: &str = "application/json";
/// Its `schema`.
pub const FINDINGS_SCHEMA: &str = "rexbench.findings/v1";
/// The largest such artifact, in bytes: 32 texts of 500 characters, four bytes each, and room.
pub const MAX_FINDINGS_TEXT_BYTES: u64 = 128 * 1024;
/// What a finding's `message` says in the manifest: its words are elsewhere.
pub const SEE_TEXT: &str = "see x-findings";

/// A run's finding texts, one per finding of the manifest, in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingsText {
    pub schema: String,
    pub texts: Vec<FindingText>,
}

/// One finding's words and the salt its digest was made with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingText {
    /// 32 lowercase hex digits.
    pub salt: String,
    /// 1 to 500 characters.
    pub text: String,
}

/// The digest a manifest's finding names its words by: SHA-256 of the salt's 32 hex
/// digits followed by the words (UTF-8), in lowercase hex.
pub fn text_digest(salt: &str, text: &str) -> String {
    let mut bytes = Vec::with_capacity(salt.len() + text.len());
    bytes.extend_from_slice(salt.as_bytes());
    bytes.extend_from_slice(text.as_bytes());
    crate::Digest::of(&bytes).to_hex()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` is a digest as findings name their words by: 64 lowercase hex digits.
pub fn is_text_digest(s: &str) -> bool {
    is_hex(s, 64)
}

impl FindingsText {
    /// Reads an `x-findings` artifact, or says what is wrong with it.
    pub fn parse(bytes: &[u8]) -> Result<FindingsText, String> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let parsed: FindingsText = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| format!("not a findings text: {} (at {})", e.inner(), e.path()))?;
        de.end().map_err(|e| format!("not a findings text: {e}"))?;
        if parsed.schema != FINDINGS_SCHEMA {
            return Err(format!("schema is `{}`, not `{FINDINGS_SCHEMA}`", parsed.schema));
        }
        for (i, t) in parsed.texts.iter().enumerate() {
            if !is_hex(&t.salt, 32) {
                return Err(format!("texts[{i}].salt is not 32 lowercase hex digits"));
            }
            let n = t.text.chars().count();
            if n == 0 || n > 500 {
                return Err(format!("texts[{i}].text must be 1 to 500 characters"));
            }
        }
        Ok(parsed)
    }

    /// The artifact's bytes: one text a line, so that each can be pointed at.
    pub fn to_bytes(&self) -> Vec<u8> {
        let schema = serde_json::to_string(&self.schema).expect("strings serialize");
        let mut out = format!("{{\"schema\":{schema},\"texts\":[");
        for (i, t) in self.texts.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(&serde_json::to_string(t).expect("strings serialize"));
        }
        out.push_str("\n]}\n");
        out.into_bytes()
    }

    /// Whether these texts are the words of `findings`, one for one and in order;
    /// else what differs.
    pub fn check(&self, findings: &[Finding]) -> Result<(), String> {
        if self.texts.len() != findings.len() {
            return Err(format!(
                "it holds {} texts for the run's {} findings",
                self.texts.len(),
                findings.len()
            ));
        }
        for (i, (t, f)) in self.texts.iter().zip(findings).enumerate() {
            let digest = text_digest(&t.salt, &t.text);
            if f.text_digest.as_deref() != Some(digest.as_str()) {
                return Err(format!("texts[{i}] hashes to {digest}, not to findings[{i}].text_digest"));
            }
        }
        Ok(())
    }
}

/// A run's findings as the manifest carries them, and the artifact with their words:
/// each finding's `message` moves into the texts, salted by `salt` (16 random bytes
/// each, from the caller's generator).
pub fn seal(findings: Vec<Finding>, mut salt: impl FnMut() -> [u8; 16]) -> (Vec<Finding>, FindingsText) {
    let mut texts = Vec::with_capacity(findings.len());
    let public = findings
        .into_iter()
        .map(|f| {
            let salt: String = salt().iter().map(|b| format!("{b:02x}")).collect();
            let digest = text_digest(&salt, &f.message);
            texts.push(FindingText { salt, text: f.message });
            Finding { message: SEE_TEXT.to_owned(), text_digest: Some(digest), ..f }
        })
        .collect();
    (public, FindingsText { schema: FINDINGS_SCHEMA.to_owned(), texts })
}

/// The manifest's findings with their words put back from `texts` (which
/// [`FindingsText::check`] has matched to them).
pub fn unseal(findings: &[Finding], texts: &FindingsText) -> Vec<Finding> {
    findings.iter().zip(&texts.texts).map(|(f, t)| Finding { message: t.text.clone(), ..f.clone() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(check: &str, message: &str) -> Finding {
        Finding {
            check: check.into(),
            message: message.into(),
            artifact: Some("patch".into()),
            line: Some(3),
            text_digest: None,
        }
    }

    #[test]
    fn sealed_findings_say_nothing_and_their_texts_check_and_unseal() {
        let mut n = 0u8;
        let (public, texts) =
            seal(vec![finding("a", "prints `acc: 0.4563`"), finding("b", "writes results/x")], || {
                n += 1;
                [n; 16]
            });
        assert!(
            public
                .iter()
                .all(|f| f.message == SEE_TEXT && f.text_digest.as_deref().is_some_and(is_text_digest))
        );
        assert!(!serde_json::to_string(&public).unwrap().contains("0.4563"));
        let bytes = texts.to_bytes();
        let back = FindingsText::parse(&bytes).unwrap();
        assert_eq!(back, texts);
        back.check(&public).unwrap();
        assert_eq!(unseal(&public, &back)[0].message, "prints `acc: 0.4563`");
        assert_ne!(public[0].text_digest, public[1].text_digest);
    }

    #[test]
    fn texts_that_are_not_the_findings_words_are_refused() {
        let (public, mut texts) = seal(vec![finding("a", "x")], || [7; 16]);
        texts.texts[0].text = "y".into();
        assert!(texts.check(&public).unwrap_err().contains("texts[0] hashes to"));
        let (_, two) = seal(vec![finding("a", "x"), finding("b", "y")], || [7; 16]);
        assert!(two.check(&public).unwrap_err().contains("2 texts for the run's 1 findings"));
        for bad in [
            &br#"{"schema":"rexbench.findings/v1","texts":[{"salt":"00","text":"x"}]}"#[..],
            br#"{"schema":"other","texts":[]}"#,
            br#"{"schema":"rexbench.findings/v1","texts":[],"extra":1}"#,
            br#"{"schema":"rexbench.findings/v1","texts":[{"salt":"0123456789abcdef0123456789abcdef","text":""}]}"#,
        ] {
            assert!(FindingsText::parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn the_same_words_under_two_salts_have_two_digests() {
        assert_ne!(text_digest(&"0".repeat(32), "x"), text_digest(&"1".repeat(32), "x"));
    }
}
