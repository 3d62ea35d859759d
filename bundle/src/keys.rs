//! Ed25519 keys in the PEM formats openssl uses: PKCS#8 for secret keys,
//! SubjectPublicKeyInfo for public keys. A key's id is the SHA-256 of its raw 32 bytes.

use std::fmt;

use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};

use crate::digest::Digest;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("not an Ed25519 secret key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----): {0}")]
    Secret(String),
    #[error("not an Ed25519 public key in SubjectPublicKeyInfo PEM (-----BEGIN PUBLIC KEY-----): {0}")]
    Public(String),
}

/// A key's id: lowercase hex SHA-256 of the raw public key (spec §2).
pub type KeyId = Digest;

/// A secret signing key.
pub struct SecretKey(SigningKey);

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({})", self.public_key().keyid())
    }
}

/// 16 bytes from the operating system's random number generator: a salt nobody else
/// can guess (spec §4k).
#[cfg(feature = "keygen")]
pub fn fresh_salt() -> [u8; 16] {
    use rand_core::RngCore as _;
    let mut salt = [0u8; 16];
    rand_core::OsRng.fill_bytes(&mut salt);
    salt
}

impl SecretKey {
    /// A new key from the operating system's random number generator.
    #[cfg(feature = "keygen")]
    pub fn generate() -> SecretKey {
        SecretKey(SigningKey::generate(&mut rand_core::OsRng))
    }

    pub fn from_pem(pem: &str) -> Result<SecretKey, KeyError> {
        SigningKey::from_pkcs8_pem(pem).map(SecretKey).map_err(|e| KeyError::Secret(e.to_string()))
    }

    /// PKCS#8 PEM, readable by `openssl pkey`.
    pub fn to_pem(&self) -> String {
        // A v1 PKCS#8 document (no embedded public key), as `openssl genpkey` writes.
        let der = ed25519_dalek::pkcs8::KeypairBytes { secret_key: self.0.to_bytes(), public_key: None }
            .to_pkcs8_der()
            .expect("an Ed25519 key always encodes");
        der.to_pem("PRIVATE KEY", LineEnding::LF).expect("PEM encoding cannot fail").to_string()
    }

    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// 16 bytes no one without this key can guess, the same each time for the same
    /// `context`: HMAC-SHA-256 keyed by the key's seed, cut. The salts of findings' words
    /// (spec §4g) are made so, so that packing the same results again gives the same bundle.
    pub fn salt(&self, context: &[u8]) -> [u8; 16] {
        use hmac::{Hmac, Mac};
        let mut mac =
            Hmac::<sha2::Sha256>::new_from_slice(self.0.as_bytes()).expect("HMAC takes a key of any length");
        mac.update(b"rexbench-findings-salt/v1\n");
        mac.update(context);
        let full = mac.finalize().into_bytes();
        let mut salt = [0u8; 16];
        salt.copy_from_slice(&full[..16]);
        salt
    }

    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

/// A public verifying key.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.keyid())
    }
}

impl PublicKey {
    pub fn from_pem(pem: &str) -> Result<PublicKey, KeyError> {
        VerifyingKey::from_public_key_pem(pem).map(PublicKey).map_err(|e| KeyError::Public(e.to_string()))
    }

    pub fn to_pem(&self) -> String {
        self.0.to_public_key_pem(LineEnding::LF).expect("an Ed25519 key always encodes")
    }

    pub fn keyid(&self) -> KeyId {
        Digest::of(self.0.as_bytes())
    }

    /// Strict verification: refuses weak keys and non-canonical signatures, so that
    /// one message has one valid signature per key.
    pub fn verify(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        let sig = ed25519_dalek::Signature::from_bytes(signature);
        self.0.verify_strict(message, &sig).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_round_trip_and_sign() {
        let sk = SecretKey::generate();
        let pem = sk.to_pem();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{pem}");
        let again = SecretKey::from_pem(&pem).unwrap();
        let pk = PublicKey::from_pem(&again.public_key().to_pem()).unwrap();
        assert_eq!(pk, sk.public_key());
        let sig = again.sign(b"message");
        assert!(pk.verify(b"message", &sig));
        assert!(!pk.verify(b"messagf", &sig));
    }

    #[test]
    fn rejects_the_wrong_kind_of_pem() {
        let sk = SecretKey::generate();
        assert!(matches!(PublicKey::from_pem(&sk.to_pem()), Err(KeyError::Public(_))));
        assert!(matches!(SecretKey::from_pem(&sk.public_key().to_pem()), Err(KeyError::Secret(_))));
        assert!(SecretKey::from_pem("garbage").is_err());
    }
}
