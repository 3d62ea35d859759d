//! Reading a bundle as a stream (spec §1, §7): the envelope first, each artifact hashed
//! while it passes, every limit enforced on the bytes actually read. Memory stays flat
//! whatever the archive's headers claim.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use tar::EntryType;
use time::OffsetDateTime;

use crate::digest::{Digest, HashingReader};
use crate::envelope::{Envelope, SignatureStatus};
use crate::error::{BundleError, RunRef};
use crate::findings_text::{FINDINGS_ROLE, FindingsText, unseal};
use crate::keys::PublicKey;
use crate::limits::Limits;
use crate::manifest::{ArtifactInfo, Finding, Manifest};
use crate::metrics_text::{METRICS_ROLE, MetricsText};
use crate::provenance::{PROVENANCE_ROLE, ProvenanceRecord};
use crate::validate::{clock, not_in_future, validate};

/// Where a verified artifact's bytes go. The reader hashes them on the way and
/// refuses the bundle afterwards if they do not match, so a sink must hold what it
/// receives somewhere provisional until the whole bundle has verified.
pub trait ArtifactSink {
    fn artifact(&mut self, digest: &Digest, info: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()>;
}

/// An artifact's bytes on their way to the sink, kept as they pass.
struct Keeping<'k, R> {
    inner: R,
    kept: &'k mut Vec<u8>,
}

impl<R: Read> Read for Keeping<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.kept.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

impl<R: Read> Keeping<'_, R> {
    /// Hands the bytes to `sink`, then reads what it left, so that all are kept.
    fn sink_into(
        mut self,
        sink: &mut dyn ArtifactSink,
        digest: &Digest,
        info: &ArtifactInfo,
    ) -> io::Result<()> {
        sink.artifact(digest, info, &mut self)?;
        io::copy(&mut self, &mut io::sink()).map(drop)
    }
}

/// A sink that keeps nothing: for verifying only.
#[derive(Debug, Default)]
pub struct Discard;

impl ArtifactSink for Discard {
    fn artifact(&mut self, _: &Digest, _: &ArtifactInfo, content: &mut dyn Read) -> io::Result<()> {
        io::copy(content, &mut io::sink()).map(drop)
    }
}

/// A bundle that passed every check.
#[derive(Debug, Clone)]
pub struct VerifiedBundle {
    /// SHA-256 of the manifest bytes (spec §6).
    pub id: Digest,
    pub manifest: Manifest,
    /// The exact bytes that were signed.
    pub manifest_bytes: Vec<u8>,
    /// `envelope.json` as it was in the archive: enough to verify the signatures again.
    pub envelope: Vec<u8>,
    /// Each signature's key id and what became of it, in envelope order.
    pub signatures: Vec<(String, SignatureStatus)>,
    pub compressed_bytes: u64,
    pub artifact_bytes: u64,
    /// Each run's findings' words (spec §4g), by the run's index, checked against the
    /// manifest's digests: private with the run's outputs.
    pub finding_texts: BTreeMap<usize, FindingsText>,
    /// Each run's sealed metrics (spec §4j), by the run's index, checked against the
    /// manifest's digests: private with the run's outputs.
    pub metric_texts: BTreeMap<usize, MetricsText>,
}

impl VerifiedBundle {
    /// Run `index`'s metrics: those its manifest states, or those it sealed.
    pub fn metrics_of(&self, index: usize) -> BTreeMap<String, f64> {
        match self.metric_texts.get(&index) {
            Some(text) => text.metrics.clone(),
            None => self.manifest.runs[index].metrics.clone(),
        }
    }

    /// Run `index`'s findings with their words put back, as the runner made them.
    pub fn findings_of(&self, index: usize) -> Vec<Finding> {
        let findings = &self.manifest.runs[index].findings;
        match self.finding_texts.get(&index) {
            Some(texts) => unseal(findings, texts),
            None => findings.clone(),
        }
    }
}

/// Checks bundles against a set of trusted keys and a benchmark's task ids.
#[derive(Debug, Clone)]
pub struct Verifier {
    /// `None`: inspect without checking signatures.
    trusted: Option<Vec<PublicKey>>,
    tasks: Option<BTreeSet<String>>,
    /// The tasks whose check is private (spec §4j): a run of one states no metrics in
    /// the manifest. Empty where the verifier was not told.
    private_checks: BTreeSet<String>,
    /// The board's rules its claims are held to (spec §5a); `None`: the format alone.
    claims: Option<crate::Claims>,
    limits: Limits,
    /// The time a bundle's `created_at` may not be later than (by more than
    /// [`CLOCK_TOLERANCE_S`]); read when the verifier is made, or set with
    /// [`Verifier::at`]. `None` (a verifier for the browser made without
    /// [`Verifier::at`], or an inspector) skips that one rule.
    now: Option<OffsetDateTime>,
}

/// Longest pax or GNU long-name header we read: our member names are short, so
/// anything near this is an attack on memory, not a name.
const MAX_EXTENSION_HEADER: u64 = 64 * 1024;
/// Room for tar's end-of-archive blocks and record padding.
const TRAILER_SLACK: u64 = 1024 * 1024;

impl Verifier {
    pub fn new<T: Into<String>>(
        trusted: Vec<PublicKey>,
        known_tasks: impl IntoIterator<Item = T>,
    ) -> Verifier {
        Verifier {
            trusted: Some(trusted),
            tasks: Some(known_tasks.into_iter().map(Into::into).collect()),
            private_checks: BTreeSet::new(),
            claims: None,
            limits: Limits::default(),
            now: clock(),
        }
    }

    /// The tasks whose check is private (not on their cards): a manifest that states
    /// the metrics of a run of one is refused (spec §4j: they are its gold).
    pub fn with_private_checks<T: Into<String>>(mut self, tasks: impl IntoIterator<Item = T>) -> Verifier {
        self.private_checks = tasks.into_iter().map(Into::into).collect();
        self
    }

    /// Holds a bundle's claims to the board's rules (spec §5a): a known task set, no more
    /// valid attempts than each card asks, the agent's record with every success, and a
    /// success that agrees with its own metrics where its task's check is public.
    pub fn holding(mut self, claims: crate::Claims) -> Verifier {
        self.claims = Some(claims);
        self
    }

    /// Checks `created_at` against `now` instead of the clock read when it was made.
    pub fn at(mut self, now: OffsetDateTime) -> Verifier {
        self.now = Some(now);
        self
    }

    /// Every rule except the two that need outside knowledge: who is trusted, and
    /// which tasks exist. For looking at a bundle, never for accepting one.
    pub fn inspector() -> Verifier {
        Verifier {
            trusted: None,
            tasks: None,
            private_checks: BTreeSet::new(),
            claims: None,
            limits: Limits::default(),
            now: None,
        }
    }

    pub fn with_limits(mut self, limits: Limits) -> Verifier {
        self.limits = limits;
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn verify(&self, input: impl Read) -> Result<VerifiedBundle, BundleError> {
        self.verify_into(input, &mut Discard)
    }

    /// Verifies `input`, handing each artifact to `sink` as it is read.
    pub fn verify_into(
        &self,
        input: impl Read,
        sink: &mut dyn ArtifactSink,
    ) -> Result<VerifiedBundle, BundleError> {
        let trip = Tripwire::default();
        let compressed = Meter::new(self.limits.compressed);
        let source = Metered {
            inner: input,
            meter: compressed.clone(),
            trip: trip.clone(),
            over: |limit| BundleError::CompressedTooLarge { limit },
            source: true,
        };
        let mut buffered = BufReader::with_capacity(64 * 1024, source);
        let head = buffered.fill_buf().map_err(|e| trip.explain(e, "reading the gzip header"))?;
        if head.is_empty() || head[0] != 0x1f || head.get(1).is_some_and(|&b| b != 0x8b) {
            return Err(trip.take().unwrap_or(BundleError::NotGzip));
        }
        // Until the manifest says how much to expect, the stream may hold no more than
        // an envelope and its headers.
        let uncompressed = Meter::new(self.limits.envelope() + 2 * MAX_EXTENSION_HEADER + 4096);
        let tar_stream = Metered {
            inner: flate2::bufread::GzDecoder::new(buffered),
            meter: uncompressed.clone(),
            trip: trip.clone(),
            over: |limit| BundleError::UnaccountedData { limit },
            source: false,
        };
        let mut archive = tar::Archive::new(tar_stream);
        let mut reading =
            Reading { verifier: self, trip: &trip, uncompressed: &uncompressed, sink, state: None };
        let result = reading.members(&mut archive)?;

        // Read to the end so the gzip trailer's CRC and length are checked, and refuse
        // anything after the gzip stream: one file, one meaning.
        let mut rest = archive.into_inner();
        io::copy(&mut rest, &mut io::sink())
            .map_err(|e| trip.explain(e, "reading the end of the archive"))?;
        let mut buffered = rest.inner.into_inner();
        let after = buffered.fill_buf().map_err(|e| trip.explain(e, "reading the end of the file"))?;
        if !after.is_empty() {
            return Err(BundleError::CorruptArchive("there is data after the end of the gzip stream".into()));
        }
        let Expecting {
            manifest,
            manifest_bytes,
            envelope,
            signatures,
            artifact_bytes,
            finding_texts,
            metric_texts,
            ..
        } = result;
        // Spec §5a, last: a bundle is held to the board's rules once it is known to be a
        // well-formed bundle, so that each of the format's rules keeps its own code.
        if let Some(claims) = &self.claims {
            crate::claims::check(&manifest, claims, &metric_texts)?;
        }
        Ok(VerifiedBundle {
            id: Digest::of(&manifest_bytes),
            manifest,
            manifest_bytes,
            envelope,
            signatures,
            compressed_bytes: compressed.count.get(),
            artifact_bytes,
            finding_texts,
            metric_texts,
        })
    }
}

/// What the manifest promised, and what has been seen of it so far.
struct Expecting {
    manifest: Manifest,
    manifest_bytes: Vec<u8>,
    envelope: Vec<u8>,
    signatures: Vec<(String, SignatureStatus)>,
    listed: BTreeMap<Digest, ArtifactInfo>,
    seen: BTreeSet<Digest>,
    artifact_bytes: u64,
    /// Provenance records (spec §4b), by digest, with the first run that carries each:
    /// read whole as they pass (their size is bounded) and checked.
    records: BTreeMap<Digest, RunRef>,
    /// Findings' words (spec §4g), by digest, with the runs that carry each: read whole
    /// and checked against each run's findings.
    texts: BTreeMap<Digest, Vec<usize>>,
    /// Each run's findings' words, by run.
    finding_texts: BTreeMap<usize, FindingsText>,
    /// Sealed metrics (spec §4j), by digest, with the runs that carry each: read whole
    /// and checked against each run's metrics_digest.
    sealed: BTreeMap<Digest, Vec<usize>>,
    /// Each run's sealed metrics, by run.
    metric_texts: BTreeMap<usize, MetricsText>,
}

struct Reading<'a> {
    verifier: &'a Verifier,
    trip: &'a Tripwire,
    uncompressed: &'a Meter,
    sink: &'a mut dyn ArtifactSink,
    state: Option<Expecting>,
}

impl Reading<'_> {
    fn members<R: Read>(&mut self, archive: &mut tar::Archive<R>) -> Result<Expecting, BundleError> {
        let limits = self.verifier.limits;
        let mut entries =
            archive.entries().map_err(|e| self.trip.explain(e, "reading the archive"))?.raw(true);
        let mut members: u64 = 0;
        let mut long_name: Option<Vec<u8>> = None;
        let mut artifacts_dir_seen = false;
        for entry in entries.by_ref() {
            let mut entry = entry.map_err(|e| self.trip.explain(e, "reading a tar header"))?;
            let kind = entry.header().entry_type();
            match kind {
                EntryType::XHeader => {
                    let data = self.small(&mut entry)?;
                    for ext in tar::PaxExtensions::new(&data) {
                        let ext =
                            ext.map_err(|_| BundleError::CorruptArchive("a pax header is malformed".into()))?;
                        if ext.key_bytes() == b"path" {
                            long_name = Some(ext.value_bytes().to_vec());
                        }
                    }
                    continue;
                }
                EntryType::GNULongName => {
                    let mut data = self.small(&mut entry)?;
                    while data.last() == Some(&0) {
                        data.pop();
                    }
                    long_name = Some(data);
                    continue;
                }
                EntryType::XGlobalHeader | EntryType::GNULongLink => {
                    self.small(&mut entry)?;
                    continue;
                }
                _ => {}
            }
            members += 1;
            if members > limits.members {
                return Err(BundleError::TooManyMembers { limit: limits.members });
            }
            let raw = long_name.take().unwrap_or_else(|| entry.path_bytes().into_owned());
            let path = String::from_utf8_lossy(&raw).into_owned();
            if path.starts_with('/') || path.split('/').any(|c| c == "..") {
                return Err(BundleError::UnsafePath { path });
            }
            let is_artifacts_dir =
                kind == EntryType::Directory && (path == "artifacts/" || path == "artifacts");
            if self.state.is_none() && path != "envelope.json" {
                return Err(if members == 1 {
                    BundleError::EnvelopeNotFirst { first: path }
                } else {
                    BundleError::EnvelopeMissing
                });
            }
            if is_artifacts_dir {
                if artifacts_dir_seen {
                    return Err(BundleError::DuplicateMember { path });
                }
                artifacts_dir_seen = true;
                continue;
            }
            if !matches!(kind, EntryType::Regular | EntryType::Continuous) {
                return Err(BundleError::NonRegularMember { path, kind: kind_name(kind) });
            }
            if path == "envelope.json" {
                if self.state.is_some() {
                    return Err(BundleError::DuplicateMember { path });
                }
                self.envelope(&mut entry)?;
                continue;
            }
            let digest = path
                .strip_prefix("artifacts/")
                .and_then(Digest::from_hex)
                .ok_or_else(|| BundleError::UnexpectedMember { path: path.clone() })?;
            self.artifact(digest, &path, &mut entry)?;
        }
        let Some(state) = self.state.take() else {
            return Err(BundleError::EnvelopeMissing);
        };
        if let Some(missing) = state.listed.keys().find(|d| !state.seen.contains(d)) {
            return Err(BundleError::ArtifactMissing { digest: missing.to_hex() });
        }
        Ok(state)
    }

    /// Reads the envelope, checks its signatures and the manifest's rules, and from
    /// then on lets the stream hold only what the manifest accounts for.
    fn envelope(&mut self, entry: &mut impl Read) -> Result<(), BundleError> {
        let limits = self.verifier.limits;
        let mut bytes = Vec::new();
        entry
            .take(limits.envelope() + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.trip.explain(e, "reading envelope.json"))?;
        if bytes.len() as u64 > limits.envelope() {
            return Err(BundleError::EnvelopeTooLarge { limit: limits.envelope() });
        }
        let envelope = Envelope::parse(&bytes)?;
        let manifest_bytes = envelope.payload(limits.manifest)?;
        let statuses = match &self.verifier.trusted {
            Some(keys) => envelope.check_signatures(&manifest_bytes, keys)?,
            None => vec![SignatureStatus::Unchecked; envelope.signatures.len()],
        };
        let manifest = Manifest::parse(&manifest_bytes)?;
        validate(&manifest, self.verifier.tasks.as_ref(), &limits)?;
        let private = &self.verifier.private_checks;
        if let Some((index, run)) = manifest
            .runs
            .iter()
            .enumerate()
            .find(|(_, r)| !r.metrics.is_empty() && private.contains(r.task.as_str()))
        {
            let at = RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
            return Err(BundleError::PrivateMetricsInManifest { run: at, task: run.task.to_string() });
        }
        if let Some(now) = self.verifier.now {
            not_in_future(&manifest.created_at, now)?;
        }
        let listed: BTreeMap<Digest, ArtifactInfo> = manifest
            .artifacts
            .iter()
            .map(|(d, info)| (Digest::from_hex(d).expect("validated"), info.clone()))
            .collect();
        let expected: u64 =
            listed.values().map(|i| 512 + i.size.div_ceil(512) * 512 + 512 + MAX_EXTENSION_HEADER).sum();
        self.uncompressed.cap.set(self.uncompressed.count.get() + expected + 512 + TRAILER_SLACK);
        let signatures = envelope.signatures.iter().map(|s| s.keyid.clone()).zip(statuses).collect();
        let mut records = BTreeMap::new();
        let mut texts: BTreeMap<Digest, Vec<usize>> = BTreeMap::new();
        let mut sealed: BTreeMap<Digest, Vec<usize>> = BTreeMap::new();
        for (index, run) in manifest.runs.iter().enumerate() {
            if let Some(hex) = run.artifacts.get(PROVENANCE_ROLE) {
                let at =
                    RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
                records.entry(Digest::from_hex(hex).expect("validated")).or_insert(at);
            }
            if let Some(hex) = run.artifacts.get(FINDINGS_ROLE) {
                texts.entry(Digest::from_hex(hex).expect("validated")).or_default().push(index);
            }
            if let Some(hex) = run.artifacts.get(METRICS_ROLE) {
                sealed.entry(Digest::from_hex(hex).expect("validated")).or_default().push(index);
            }
        }
        self.state = Some(Expecting {
            records,
            texts,
            finding_texts: BTreeMap::new(),
            sealed,
            metric_texts: BTreeMap::new(),
            manifest,
            manifest_bytes,
            envelope: bytes,
            signatures,
            listed,
            seen: BTreeSet::new(),
            artifact_bytes: 0,
        });
        Ok(())
    }

    fn artifact(&mut self, digest: Digest, path: &str, entry: &mut impl Read) -> Result<(), BundleError> {
        let state = self.state.as_mut().expect("the envelope came first");
        let Some(info) = state.listed.get(&digest) else {
            return Err(BundleError::ArtifactUnlisted { digest: digest.to_hex() });
        };
        if !state.seen.insert(digest) {
            return Err(BundleError::DuplicateMember { path: path.to_owned() });
        }
        let listed = info.size;
        let limit = self.verifier.limits.artifact;
        // The sink gets at most the listed size; anything beyond is still hashed (up to
        // the artifact limit, and within the stream's bound) so that the error can say
        // whether the bytes or the listed size are wrong.
        let mut content = HashingReader::new(entry.take(limit + 1));
        let record = state.records.get(&digest).cloned();
        let texts = state.texts.get(&digest).cloned();
        let sealed = state.sealed.get(&digest).cloned();
        let mut kept = Vec::new();
        let stored = match record.is_some() || texts.is_some() || sealed.is_some() {
            // Validated: a record's (and a findings text's) listed size is within its bound.
            true => Keeping { inner: (&mut content).take(listed), kept: &mut kept }
                .sink_into(self.sink, &digest, info),
            false => self.sink.artifact(&digest, info, &mut (&mut content).take(listed)),
        };
        if let Some(e) = self.trip.take() {
            return Err(e);
        }
        stored.map_err(|e| match e.kind() {
            io::ErrorKind::StorageFull => BundleError::ArtifactStoreFull { digest: digest.to_hex() },
            _ => BundleError::ArtifactStore { digest: digest.to_hex(), detail: e.to_string() },
        })?;
        io::copy(&mut content, &mut io::sink()).map_err(|e| self.trip.explain(e, "reading an artifact"))?;
        let (actual, count) = content.finish();
        if count > limit {
            return Err(BundleError::ArtifactTooLarge { digest: digest.to_hex(), limit });
        }
        if actual != digest {
            return Err(BundleError::ArtifactDigestMismatch {
                digest: digest.to_hex(),
                actual: actual.to_hex(),
            });
        }
        if count != listed {
            return Err(BundleError::ArtifactSizeMismatch { digest: digest.to_hex(), listed, found: count });
        }
        if let Some(run) = record
            && let Err(detail) = ProvenanceRecord::parse(&kept)
        {
            return Err(BundleError::InvalidProvenanceRecord { run, detail });
        }
        for index in texts.into_iter().flatten() {
            let run = &state.manifest.runs[index];
            let at = RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
            let parsed = FindingsText::parse(&kept)
                .and_then(|t| t.check(&run.findings).map(|()| t))
                .map_err(|detail| BundleError::InvalidFindingText {
                    run: at,
                    detail: format!("are not its findings': {detail}"),
                })?;
            state.finding_texts.insert(index, parsed);
        }
        for index in sealed.into_iter().flatten() {
            let run = &state.manifest.runs[index];
            let at = RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
            let digest = run.metrics_digest.as_deref().expect("validated: sealed metrics name their digest");
            let parsed =
                MetricsText::parse(&kept).and_then(|t| t.check(digest).map(|()| t)).map_err(|detail| {
                    BundleError::InvalidMetricsText { run: at, detail: format!("are not its own: {detail}") }
                })?;
            state.metric_texts.insert(index, parsed);
        }
        state.artifact_bytes += listed;
        Ok(())
    }

    /// The body of a pax or GNU extension header, refused past a small bound.
    fn small(&self, entry: &mut impl Read) -> Result<Vec<u8>, BundleError> {
        let mut data = Vec::new();
        entry
            .take(MAX_EXTENSION_HEADER + 1)
            .read_to_end(&mut data)
            .map_err(|e| self.trip.explain(e, "reading an extension header"))?;
        if data.len() as u64 > MAX_EXTENSION_HEADER {
            return Err(BundleError::CorruptArchive("an extension header is implausibly large".into()));
        }
        Ok(data)
    }
}

fn kind_name(kind: EntryType) -> String {
    match kind {
        EntryType::Directory => "directory".into(),
        EntryType::Symlink => "symbolic link".into(),
        EntryType::Link => "hard link".into(),
        EntryType::Char => "character device".into(),
        EntryType::Block => "block device".into(),
        EntryType::Fifo => "FIFO".into(),
        other => format!("tar entry of type {:?}", other.as_byte() as char),
    }
}

/// Records why a read was stopped, since the tar and gzip layers rewrap io errors
/// and lose what they carried.
#[derive(Clone, Default)]
struct Tripwire(Rc<RefCell<Option<BundleError>>>);

impl Tripwire {
    fn set(&self, e: BundleError) {
        self.0.borrow_mut().get_or_insert(e);
    }
    fn take(&self) -> Option<BundleError> {
        self.0.borrow_mut().take()
    }
    /// The recorded cause of `e`, or else: the archive is damaged.
    fn explain(&self, e: io::Error, doing: &str) -> BundleError {
        self.take().unwrap_or_else(|| BundleError::CorruptArchive(format!("{doing}: {e}")))
    }
}

/// Bytes counted against a cap that may be tightened while reading.
#[derive(Clone)]
struct Meter {
    count: Rc<Cell<u64>>,
    cap: Rc<Cell<u64>>,
}

impl Meter {
    fn new(cap: u64) -> Meter {
        Meter { count: Rc::new(Cell::new(0)), cap: Rc::new(Cell::new(cap)) }
    }
}

struct Metered<R> {
    inner: R,
    meter: Meter,
    trip: Tripwire,
    /// The error for reading past the cap, given the cap.
    over: fn(u64) -> BundleError,
    /// Whether `inner` is the caller's input, whose failures are not the bundle's.
    source: bool,
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) => {
                if self.source {
                    self.trip.set(BundleError::Io(e.to_string()));
                }
                return Err(e);
            }
        };
        let count = self.meter.count.get() + n as u64;
        self.meter.count.set(count);
        if count > self.meter.cap.get() {
            self.trip.set((self.over)(self.meter.cap.get()));
            return Err(io::Error::other("size limit reached"));
        }
        Ok(n)
    }
}
