//! Spec §7: every limit enforced on the bytes actually read, and a gzip bomb stopped
//! long before it is inflated.

use std::io::{self, Read, Write};

use bundle::Limits;
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use crate::common::{code_of, gzip, header, sample, tar_of};

fn with(limits: Limits) -> (crate::common::Sample, bundle::Verifier) {
    let s = sample();
    let v = s.verifier().with_limits(limits);
    (s, v)
}

#[test]
fn each_limit_has_its_code() {
    let d = Limits::default();
    let (s, v) = with(Limits { compressed: 100, ..d });
    assert_eq!(code_of(&v, &s.bundle()), "bundle_too_large");
    let (s, v) = with(Limits { artifact: 20, ..d });
    assert_eq!(code_of(&v, &s.bundle()), "artifact_too_large");
    let (s, v) = with(Limits { uncompressed: 100, ..d });
    assert_eq!(code_of(&v, &s.bundle()), "uncompressed_too_large");
    let (s, v) = with(Limits { members: 2, ..d });
    assert_eq!(code_of(&v, &s.bundle()), "too_many_members");
    let (s, v) = with(Limits { manifest: 200, ..d });
    assert_eq!(code_of(&v, &s.bundle()), "manifest_too_large");

    // An envelope far over its bound is refused as such, whatever its content.
    let s = sample();
    let huge = vec![b' '; (d.envelope() + 10) as usize];
    assert_eq!(
        code_of(&s.verifier(), &gzip(&tar_of(&[("envelope.json".into(), huge)]))),
        "envelope_too_large"
    );
}

#[test]
fn the_members_limit_counts_members_actually_present() {
    // The manifest lists 3 artifacts; 10,000 extra members are refused at the limit,
    // not after all of them are read.
    let s = sample();
    let v = s.verifier().with_limits(Limits { members: 5, ..Limits::default() });
    let mut members = s.members();
    members.extend((0..10_000).map(|i| (format!("junk{i}"), Vec::new())));
    let bytes = s.bundle_with(&serde_json::to_vec(&s.manifest).unwrap(), &members);
    assert_eq!(code_of(&v, &bytes), "unexpected_member");
    let v = s.verifier().with_limits(Limits { members: 4, ..Limits::default() });
    let mut members = s.members();
    members.push(s.members()[0].clone());
    let bytes = s.bundle_with(&serde_json::to_vec(&s.manifest).unwrap(), &members);
    assert_eq!(code_of(&v, &bytes), "too_many_members");
}

/// Counts how many compressed bytes the verifier pulled, handing them over in small
/// pieces so that the count reflects what was needed, not the size of a buffer.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = buf.len().min(512);
        let n = self.inner.read(&mut buf[..len])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Verifies `bomb`, expecting the refusal `code` after reading only a small part of it.
fn assert_stopped_early(s: &crate::common::Sample, bomb: &[u8], code: &str) {
    let mut input = Counting { inner: bomb, read: 0 };
    let err = s.verifier().verify(&mut input).unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    assert!(input.read * 20 < bomb.len() as u64, "read {} of {} compressed bytes", input.read, bomb.len());
}

/// A valid bundle's tar followed by `zeros` bytes of zeros, all gzipped: the zeros
/// inflate from almost nothing.
fn bomb_after(tar: &[u8], zeros: u64) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(tar).unwrap();
    let block = vec![0u8; 1 << 20];
    for _ in 0..zeros >> 20 {
        e.write_all(&block).unwrap();
    }
    e.finish().unwrap()
}

#[test]
fn a_gzip_bomb_after_the_archive_is_stopped_early() {
    let s = sample();
    let mut members = vec![(
        "envelope.json".to_owned(),
        bundle::Envelope::sign(&serde_json::to_vec(&s.manifest).unwrap(), &[&s.key]).to_bytes(),
    )];
    members.extend(s.members());
    let bomb = bomb_after(&tar_of(&members), 512 << 20);
    // 512 MiB of zeros compress to about 500 KiB; the verifier stops in the first few
    // KiB because the manifest said how much to expect.
    assert_stopped_early(&s, &bomb, "unaccounted_data");
}

#[test]
fn a_member_whose_header_claims_gigabytes_is_stopped_at_its_listed_size() {
    let s = sample();
    let (name, data) = s.members()[0].clone();
    let env = bundle::Envelope::sign(&serde_json::to_vec(&s.manifest).unwrap(), &[&s.key]).to_bytes();
    let mut raw = tar_of(&[("envelope.json".into(), env)]);
    raw.truncate(raw.len() - 1024); // drop the end-of-archive blocks
    let mut h = header(&name, 8 << 30, tar::EntryType::Regular);
    h.set_cksum();
    raw.extend_from_slice(h.as_bytes());
    raw.extend_from_slice(&data);
    let bomb = bomb_after(&raw, 256 << 20);
    // Past its listed size the member is still hashed, but only within the bound the
    // manifest sets for the whole stream.
    assert_stopped_early(&s, &bomb, "unaccounted_data");
}

#[test]
fn an_envelope_header_claiming_gigabytes_is_stopped_at_the_envelope_bound() {
    let s = sample();
    let mut raw = header("envelope.json", 4 << 30, tar::EntryType::Regular).as_bytes().to_vec();
    raw.extend_from_slice(b"{");
    let bomb = bomb_after(&raw, 256 << 20);
    assert_stopped_early(&s, &bomb, "envelope_too_large");
}

#[test]
fn listed_sizes_over_the_limits_are_refused_before_any_artifact_is_read() {
    let s = sample();
    let mut m = s.manifest.clone();
    let d = m["runs"][0]["artifacts"]["patch"].as_str().unwrap().to_owned();
    m["artifacts"][&d]["size"] = json!(65u64 << 20);
    let bytes = s.bundle_with(&serde_json::to_vec(&m).unwrap(), &[]);
    assert_eq!(code_of(&s.verifier(), &bytes), "artifact_too_large");
}
