//! The DSSE v1 envelope (spec §2) that carries and signs the manifest.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::error::BundleError;
use crate::keys::{PublicKey, SecretKey};

pub const PAYLOAD_TYPE: &str = "application/vnd.rexbench.manifest.v1+json";

/// A DSSE envelope: any DSSE implementation verifies it against the signer's Ed25519 key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// Standard base64 (with padding) of the manifest's exact bytes.
    pub payload: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSignature {
    pub keyid: String,
    pub sig: String,
}

/// What became of one signature when the envelope was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureStatus {
    /// By a trusted key, and it verifies.
    Verified,
    /// By a key the verifier does not know: ignored.
    Unknown,
    /// Not checked (inspecting without trust).
    Unchecked,
}

/// DSSE's pre-authentication encoding: what is actually signed.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

impl Envelope {
    /// Signs `manifest` (its exact bytes) with every key given.
    pub fn sign(manifest: &[u8], keys: &[&SecretKey]) -> Envelope {
        let message = pae(PAYLOAD_TYPE, manifest);
        Envelope {
            payload_type: PAYLOAD_TYPE.to_owned(),
            payload: STANDARD.encode(manifest),
            signatures: keys
                .iter()
                .map(|k| EnvelopeSignature {
                    keyid: k.public_key().keyid().to_hex(),
                    sig: STANDARD.encode(k.sign(&message)),
                })
                .collect(),
        }
    }

    pub fn parse(bytes: &[u8]) -> Result<Envelope, BundleError> {
        serde_json::from_slice(bytes).map_err(|e| BundleError::EnvelopeMalformed(e.to_string()))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("an envelope always serializes")
    }

    /// Checks the payload type and returns the manifest bytes.
    pub fn payload(&self, max: u64) -> Result<Vec<u8>, BundleError> {
        if self.payload_type != PAYLOAD_TYPE {
            return Err(BundleError::PayloadTypeMismatch { found: self.payload_type.clone() });
        }
        let decoded_len = (self.payload.len() as u64 / 4) * 3;
        if decoded_len > max + 2 {
            return Err(BundleError::ManifestTooLarge { size: decoded_len, limit: max });
        }
        let bytes = STANDARD.decode(&self.payload).map_err(|_| BundleError::PayloadNotBase64)?;
        if bytes.len() as u64 > max {
            return Err(BundleError::ManifestTooLarge { size: bytes.len() as u64, limit: max });
        }
        Ok(bytes)
    }

    /// Applies spec §2: at least one signature by a trusted key must verify, and every
    /// signature that names a trusted key must verify; unknown signers are ignored.
    pub fn check_signatures(
        &self,
        manifest: &[u8],
        trusted: &[PublicKey],
    ) -> Result<Vec<SignatureStatus>, BundleError> {
        let message = pae(&self.payload_type, manifest);
        let mut statuses = Vec::with_capacity(self.signatures.len());
        for s in &self.signatures {
            let key = Digest::from_hex(&s.keyid).and_then(|id| trusted.iter().find(|k| k.keyid() == id));
            let Some(key) = key else {
                statuses.push(SignatureStatus::Unknown);
                continue;
            };
            let sig: Option<[u8; 64]> = STANDARD.decode(&s.sig).ok().and_then(|b| b.try_into().ok());
            match sig {
                Some(sig) if key.verify(&message, &sig) => statuses.push(SignatureStatus::Verified),
                _ => {
                    return Err(BundleError::SignatureInvalid { keyid: s.keyid.clone() });
                }
            }
        }
        if !statuses.contains(&SignatureStatus::Verified) {
            let keyids = self.signatures.iter().map(|s| s.keyid.clone()).collect();
            return Err(BundleError::NoTrustedSignature { keyids });
        }
        Ok(statuses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_dsse_spec_example() {
        // From the DSSE protocol description.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ");
    }

    #[test]
    fn sign_then_check() {
        let (a, b) = (SecretKey::generate(), SecretKey::generate());
        let env = Envelope::sign(b"{}", &[&a, &b]);
        let bytes = env.payload(100).unwrap();
        assert_eq!(bytes, b"{}");
        assert_eq!(
            env.check_signatures(&bytes, &[b.public_key()]).unwrap(),
            vec![SignatureStatus::Unknown, SignatureStatus::Verified]
        );
        let err = env.check_signatures(b"{ }", &[a.public_key()]).unwrap_err();
        assert_eq!(err.code(), "signature_invalid");
        let err = env.check_signatures(&bytes, &[SecretKey::generate().public_key()]).unwrap_err();
        assert_eq!(err.code(), "no_trusted_signature");
    }
}
