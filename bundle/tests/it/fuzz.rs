//! Fuzzing for a time budget: hostile bundles made from a valid one, by damaging its
//! bytes and its archive, by editing tar headers, by duplicating, dropping and
//! reordering members, and by signing manifests a parser could choke on (deep
//! nesting, huge numbers, invalid UTF-8, oversized fields, repeated keys). No input
//! may panic the verifier; none may verify but the original, byte for byte.
//!
//! `REXBENCH_FUZZ_SECONDS` sets the budget (default 60; `scripts/fuzz SECONDS` runs
//! it longer), `REXBENCH_FUZZ_SEED` replays a run (the seed is printed).

use std::time::{Duration, Instant};

use bundle::Envelope;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde_json::Value;

use crate::common::{gzip, tar_of};
use crate::mutations::{Damage, apply, base, check, damage};

/// A manifest no parser should accept, whatever else it holds.
#[derive(Debug, Clone)]
enum Poison {
    /// Metrics nested this deep.
    Nesting(usize),
    /// A metric that is no finite number.
    Metric(&'static str),
    /// An attempt that is no number from 1 to 2^32 - 1.
    Attempt(&'static str),
    /// These bytes, never UTF-8, inside a string.
    Bytes(Vec<u8>),
    /// A field this many bytes long.
    Oversized(usize),
    /// A key given twice.
    RepeatedKey,
    /// A field the schema does not have.
    UnknownField,
}

fn poison() -> impl Strategy<Value = Poison> {
    prop_oneof![
        (129usize..20_000).prop_map(Poison::Nesting),
        prop::sample::select(vec!["1e400", "-1e999", "1.5e308e3", "NaN", "Infinity", "0x10", "1.", "--1"])
            .prop_map(Poison::Metric),
        prop::sample::select(vec!["123456789012345678901234567890", "4294967296", "-1", "1.5", "1e3", "0"])
            .prop_map(Poison::Attempt),
        // A byte no UTF-8 character starts with, then anything.
        (prop_oneof![0x80u8..=0xbf, 0xc0u8..=0xc1, 0xf5u8..=0xff], prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(first, rest)| Poison::Bytes([vec![first], rest].concat())),
        (200usize..4 << 20).prop_map(Poison::Oversized),
        Just(Poison::RepeatedKey),
        Just(Poison::UnknownField),
    ]
}

/// The manifest's text with `poison` in it.
fn poisoned(manifest: &Value, poison: &Poison) -> Vec<u8> {
    let text = serde_json::to_string(manifest).unwrap();
    let marker = "\"gen_accuracy\":0.4562857142857143";
    assert!(text.contains(marker));
    match poison {
        Poison::Nesting(depth) => text.replacen(
            marker,
            &format!("\"gen_accuracy\":{}1{}", "[".repeat(*depth), "]".repeat(*depth)),
            1,
        ),
        Poison::Metric(n) => text.replacen(marker, &format!("\"gen_accuracy\":{n}"), 1),
        Poison::Attempt(n) => text.replacen("\"attempt\":1", &format!("\"attempt\":{n}"), 1),
        Poison::Bytes(bytes) => {
            let mut out = text.into_bytes();
            let at = out.windows(8).position(|w| w == b"OpenHand").unwrap() + 4;
            out.splice(at..at, bytes.iter().copied());
            return out;
        }
        Poison::Oversized(n) => text.replacen("\"OpenHands\"", &format!("\"{}\"", "O".repeat(*n)), 1),
        Poison::RepeatedKey => text.replacen(marker, &format!("{marker},\"gen_accuracy\":1.0"), 1),
        Poison::UnknownField => text.replacen("\"runs\":", "\"score\":1.0,\"runs\":", 1),
    }
    .into_bytes()
}

/// Where each member's header starts in a ustar archive.
fn header_offsets(tar: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut at = 0;
    while at + 512 <= tar.len() && tar[at] != 0 {
        offsets.push(at);
        let size =
            std::str::from_utf8(&tar[at + 124..at + 135]).ok().and_then(|s| u64::from_str_radix(s, 8).ok());
        at += 512 + (size.unwrap_or(0) as usize).div_ceil(512) * 512;
    }
    offsets
}

/// An edit of one header field, made with a valid checksum so that it gets past the
/// tar reader's first check.
#[derive(Debug, Clone)]
enum HeaderEdit {
    Name(Vec<u8>),
    Size(Vec<u8>),
    Kind(u8),
    Mode(Vec<u8>),
    LinkName(Vec<u8>),
}

fn header_edit() -> impl Strategy<Value = HeaderEdit> {
    let names = prop::sample::select(vec![
        b"../envelope.json".to_vec(),
        b"/etc/passwd".to_vec(),
        b"artifacts/../../x".to_vec(),
        b"artifacts/".to_vec(),
        b"envelope.json".to_vec(),
        b"artifacts/\0hidden".to_vec(),
        b"C:\\windows".to_vec(),
        vec![b'a'; 100],
    ]);
    prop_oneof![
        prop_oneof![names, prop::collection::vec(any::<u8>(), 1..100)].prop_map(HeaderEdit::Name),
        prop_oneof![
            prop::sample::select(vec![b"77777777777".to_vec(), b"00000000000".to_vec(), b"-1".to_vec()]),
            prop::collection::vec(any::<u8>(), 1..12),
        ]
        .prop_map(HeaderEdit::Size),
        prop::sample::select(b"0123456789xgLKSV\0".to_vec()).prop_map(HeaderEdit::Kind),
        prop::collection::vec(any::<u8>(), 1..8).prop_map(HeaderEdit::Mode),
        prop::collection::vec(any::<u8>(), 1..100).prop_map(HeaderEdit::LinkName),
    ]
}

fn edit_header(tar: &[u8], member: usize, edit: &HeaderEdit) -> Vec<u8> {
    let mut tar = tar.to_vec();
    let offsets = header_offsets(&tar);
    let at = offsets[member % offsets.len()];
    let mut field = |start: usize, len: usize, value: &[u8]| {
        let end = start + value.len().min(len);
        tar[at + start..at + end].copy_from_slice(&value[..end - start]);
        tar[at + end..at + start + len].fill(0);
    };
    match edit {
        HeaderEdit::Name(v) => field(0, 100, v),
        HeaderEdit::Mode(v) => field(100, 8, v),
        HeaderEdit::Size(v) => field(124, 12, v),
        HeaderEdit::Kind(k) => field(156, 1, &[*k]),
        HeaderEdit::LinkName(v) => field(157, 100, v),
    }
    let header = tar::Header::from_byte_slice(&tar[at..at + 512]).clone();
    let mut header = header;
    header.set_cksum();
    tar[at..at + 512].copy_from_slice(header.as_bytes());
    tar
}

/// The members in another order, some twice, some missing.
fn shuffled_members(order: &[usize]) -> Vec<u8> {
    let b = base();
    let envelope = Envelope::sign(&b.verified.manifest_bytes, &[&b.sample.key]).to_bytes();
    let mut members = vec![("envelope.json".to_owned(), envelope)];
    members.extend(b.sample.members());
    let picked: Vec<_> = order.iter().map(|i| members[i % members.len()].clone()).collect();
    gzip(&tar_of(&picked))
}

#[derive(Debug, Clone)]
enum Mutant {
    Compressed(Vec<Damage>),
    Archive(Vec<Damage>),
    Header {
        member: usize,
        edit: HeaderEdit,
    },
    Members(Vec<usize>),
    Signed(Poison),
    /// The manifest's text damaged before signing: may be a valid, different bundle.
    SignedDamage(Damage),
}

fn mutant() -> impl Strategy<Value = Mutant> {
    prop_oneof![
        prop::collection::vec(damage(), 1..4).prop_map(Mutant::Compressed),
        prop::collection::vec(damage(), 1..4).prop_map(Mutant::Archive),
        (0usize..8, header_edit()).prop_map(|(member, edit)| Mutant::Header { member, edit }),
        prop::collection::vec(0usize..8, 0..8).prop_map(Mutant::Members),
        poison().prop_map(Mutant::Signed),
        damage().prop_map(Mutant::SignedDamage),
    ]
}

fn run(mutant: &Mutant) -> Result<(), TestCaseError> {
    let b = base();
    match mutant {
        Mutant::Compressed(ds) => check(&ds.iter().fold(b.gz.clone(), apply)),
        Mutant::Archive(ds) => check(&gzip(&ds.iter().fold(b.tar.clone(), apply))),
        Mutant::Header { member, edit } => check(&gzip(&edit_header(&b.tar, *member, edit))),
        Mutant::Members(order) => check(&shuffled_members(order)),
        Mutant::Signed(poison) => {
            let bytes = b.sample.bundle_with(&poisoned(&b.sample.manifest, poison), &b.sample.members());
            let verified = b.sample.verifier().verify(bytes.as_slice());
            prop_assert!(verified.is_err(), "a poisoned manifest verified: {poison:?}");
            Ok(())
        }
        Mutant::SignedDamage(d) => {
            let text = apply(serde_json::to_vec(&b.sample.manifest).unwrap(), d);
            // Signed by the trusted key, so it may be valid; it must only not panic,
            // and what verifies must be what was signed.
            if let Ok(v) =
                b.sample.verifier().verify(b.sample.bundle_with(&text, &b.sample.members()).as_slice())
            {
                prop_assert_eq!(v.manifest_bytes, text);
            }
            Ok(())
        }
    }
}

#[test]
fn fuzz_for_a_time_budget() {
    let seconds: u64 = std::env::var("REXBENCH_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 =
        std::env::var("REXBENCH_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
        });
    eprintln!("fuzzing for {seconds} s with REXBENCH_FUZZ_SEED={seed}");
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: 64, failure_persistence: None, ..Config::default() };
    let strategy = mutant();
    let (started, budget) = (Instant::now(), Duration::from_secs(seconds));
    let mut batches = 0u64;
    while started.elapsed() < budget {
        // A runner runs its number of cases once: a fresh one per batch, seeded by the
        // run's seed and the batch's number.
        key[8..16].copy_from_slice(&batches.to_le_bytes());
        let mut runner =
            TestRunner::new_with_rng(config.clone(), TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        match runner.run(&strategy, |m| run(&m)) {
            Ok(()) => batches += 1,
            Err(TestError::Fail(why, mutant)) => {
                panic!("REXBENCH_FUZZ_SEED={seed}: {why}\nsmallest failing mutant: {mutant:?}")
            }
            Err(TestError::Abort(why)) => panic!("REXBENCH_FUZZ_SEED={seed}: aborted: {why}"),
        }
    }
    eprintln!("{} hostile bundles in {:.0?}: no panic, none accepted", batches * 64, started.elapsed());
    assert!(batches > 0);
}
