//! Random damage to a valid bundle never panics the verifier, and never yields a bundle
//! that verifies as anything but the original: same id (so the same signed manifest)
//! and the same artifacts (each checked against its digest).

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::OnceLock;

use bundle::{ArtifactInfo, ArtifactSink, Digest, VerifiedBundle, Verifier};
use proptest::prelude::*;

use crate::common::{Sample, gunzip, gzip, sample};

pub struct Base {
    pub sample: Sample,
    pub gz: Vec<u8>,
    pub tar: Vec<u8>,
    pub verified: VerifiedBundle,
    received: Received,
}

/// What the sink was handed: each artifact's name → the hash of its bytes.
#[derive(Debug, Default, PartialEq)]
struct Received(BTreeMap<Digest, Digest>);

impl ArtifactSink for Received {
    fn artifact(&mut self, digest: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> std::io::Result<()> {
        self.0.insert(*digest, Digest::of_reader(content)?.0);
        Ok(())
    }
}

pub fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let sample = sample();
        let gz = sample.bundle();
        let tar = gunzip(&gz);
        let mut received = Received::default();
        let verified = sample.verifier().verify_into(gz.as_slice(), &mut received).unwrap();
        Base { sample, gz, tar, verified, received }
    })
}

fn verifier() -> Verifier {
    base().sample.verifier()
}

/// Either refused, or exactly the original.
pub fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut received = Received::default();
    if let Ok(v) = verifier().verify_into(bytes, &mut received) {
        let b = &base().verified;
        prop_assert_eq!(v.id, b.id);
        prop_assert_eq!(&v.manifest_bytes, &b.manifest_bytes);
        prop_assert_eq!(v.artifact_bytes, b.artifact_bytes);
        prop_assert_eq!(&received, &base().received);
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub enum Damage {
    Flip {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        byte: u8,
    },
    Overwrite {
        at: usize,
        bytes: Vec<u8>,
    },
    /// Copies one 512-byte block over another: duplicated and reordered headers.
    CopyBlock {
        from: usize,
        to: usize,
    },
    SwapBlocks {
        a: usize,
        b: usize,
    },
    /// Inserts a copy of a block: a member appears twice.
    DuplicateBlocks {
        from: usize,
        len: usize,
        to: usize,
    },
}

pub fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Damage::Flip { at, bit }),
        any::<usize>().prop_map(|at| Damage::Truncate { at }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Damage::Insert { at, byte }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..64))
            .prop_map(|(at, bytes)| Damage::Overwrite { at, bytes }),
        (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Damage::CopyBlock { from, to }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::SwapBlocks { a, b }),
        (any::<usize>(), 1usize..4, any::<usize>()).prop_map(|(from, len, to)| Damage::DuplicateBlocks {
            from,
            len,
            to
        }),
    ]
}

pub fn apply(mut bytes: Vec<u8>, d: &Damage) -> Vec<u8> {
    let n = bytes.len();
    let blocks = n / 512;
    if n == 0
        || (blocks == 0
            && matches!(
                d,
                Damage::CopyBlock { .. } | Damage::SwapBlocks { .. } | Damage::DuplicateBlocks { .. }
            ))
    {
        return bytes;
    }
    match d {
        Damage::Flip { at, bit } => bytes[at % n] ^= 1 << bit,
        Damage::Truncate { at } => bytes.truncate(at % n),
        Damage::Insert { at, byte } => bytes.insert(at % (n + 1), *byte),
        Damage::Overwrite { at, bytes: with } => {
            let at = at % n;
            let end = (at + with.len()).min(n);
            bytes[at..end].copy_from_slice(&with[..end - at]);
        }
        Damage::CopyBlock { from, to } => {
            let (from, to) = (from % blocks * 512, to % blocks * 512);
            let block = bytes[from..from + 512].to_vec();
            bytes[to..to + 512].copy_from_slice(&block);
        }
        Damage::SwapBlocks { a, b } => {
            let (a, b) = (a % blocks * 512, b % blocks * 512);
            let block_a = bytes[a..a + 512].to_vec();
            let block_b = bytes[b..b + 512].to_vec();
            bytes[a..a + 512].copy_from_slice(&block_b);
            bytes[b..b + 512].copy_from_slice(&block_a);
        }
        Damage::DuplicateBlocks { from, len, to } => {
            let from = from % blocks * 512;
            let end = (from + len * 512).min(n);
            let copy = bytes[from..end].to_vec();
            let to = to % blocks * 512;
            bytes.splice(to..to, copy);
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn damaged_compressed_bytes(d in damage(), more in prop::option::of(damage())) {
        let mut bytes = apply(base().gz.clone(), &d);
        if let Some(more) = more
            && !bytes.is_empty() { bytes = apply(bytes, &more); }
        check(&bytes)?;
    }

    #[test]
    fn damaged_archive_recompressed(d in damage(), more in prop::option::of(damage())) {
        let mut tar = apply(base().tar.clone(), &d);
        if let Some(more) = more
            && tar.len() >= 512 { tar = apply(tar, &more); }
        check(&gzip(&tar))?;
    }
}

#[test]
fn the_base_bundle_is_valid() {
    check(&base().gz).unwrap();
    assert!(verifier().verify(base().gz.as_slice()).is_ok());
}
