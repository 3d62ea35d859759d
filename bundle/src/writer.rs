//! Writing a signed bundle: the manifest's artifacts table is filled from the files
//! added, the manifest is checked and signed, and the archive is streamed out with the
//! envelope first. Artifacts are read from disk as they are written, never held whole.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::digest::{Digest, HashingReader};
use crate::envelope::Envelope;
use crate::error::BundleError;
use crate::keys::SecretKey;
use crate::limits::Limits;
use crate::manifest::{ArtifactInfo, Manifest};
use crate::validate::validate;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the bundle would be invalid")]
    Invalid(#[from] BundleError),
    #[error("artifact file {} changed while the bundle was being written", .0.display())]
    Changed(PathBuf),
    #[error("a bundle needs at least one signing key")]
    NoKey,
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Opens an artifact's bytes again, each time the bundle reads them.
type Open = Box<dyn Fn() -> io::Result<Box<dyn Read>>>;

enum Source {
    Bytes(Vec<u8>),
    /// Read when hashed and again when written; `name` says which file changed, if one did.
    Reader {
        name: PathBuf,
        open: Open,
    },
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Source::Reader { name, .. } => write!(f, "Reader({})", name.display()),
        }
    }
}

/// Assembles a bundle. Artifacts added here are listed in the manifest for you.
#[derive(Debug)]
pub struct BundleBuilder {
    manifest: Manifest,
    sources: BTreeMap<Digest, Source>,
    compression: Compression,
}

impl BundleBuilder {
    /// Starts from `manifest`; its `artifacts` table is replaced by what is added.
    pub fn new(manifest: Manifest) -> BundleBuilder {
        BundleBuilder { manifest, sources: BTreeMap::new(), compression: Compression::default() }
    }

    /// Stores the archive in gzip without compressing it: as large as its contents, but
    /// written and read at the speed of copying (the server's synthetic results, made by
    /// the million and never sent anywhere, use it). Any level reads the same.
    pub fn fast(mut self) -> BundleBuilder {
        self.compression = Compression::none();
        self
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn manifest_mut(&mut self) -> &mut Manifest {
        &mut self.manifest
    }

    /// Adds an artifact held in memory and returns its digest.
    pub fn add_bytes(&mut self, bytes: Vec<u8>, media_type: &str) -> Digest {
        let digest = Digest::of(&bytes);
        self.list(digest, bytes.len() as u64, media_type);
        self.sources.entry(digest).or_insert(Source::Bytes(bytes));
        digest
    }

    /// Adds an artifact from a file (hashed now, copied when written).
    pub fn add_file(&mut self, path: &Path, media_type: &str) -> io::Result<Digest> {
        let owned = path.to_owned();
        self.add_reader(path, media_type, move || Ok(Box::new(File::open(&owned)?) as Box<dyn Read>))
    }

    /// Adds an artifact whose bytes `open` gives, each time it is called: hashed now,
    /// read again when the bundle is written, never held whole. `name` names it if its
    /// bytes change in between. This is how a caller reads files its own way (beneath
    /// a directory handle, say) without the bundle knowing how.
    pub fn add_reader(
        &mut self,
        name: &Path,
        media_type: &str,
        open: impl Fn() -> io::Result<Box<dyn Read>> + 'static,
    ) -> io::Result<Digest> {
        let (digest, size) = Digest::of_reader(open()?)?;
        self.list(digest, size, media_type);
        self.sources
            .entry(digest)
            .or_insert_with(|| Source::Reader { name: name.to_owned(), open: Box::new(open) });
        Ok(digest)
    }

    /// Spec §4g: moves the words of each run's findings that still hold them (no
    /// `text_digest`) into the run's `x-findings` artifact, salted with 16 bytes `key`
    /// derives from the run and the finding's place (so the same results seal the same
    /// way, and no one without the key can guess a salt).
    pub fn seal_findings(&mut self, key: &SecretKey) {
        for i in 0..self.manifest.runs.len() {
            let run = &mut self.manifest.runs[i];
            if run.findings.is_empty() || run.findings.iter().all(|f| f.text_digest.is_some()) {
                continue;
            }
            let context = format!("{}\n{}\n{}\n", run.task, run.hint, run.attempt);
            let mut n = 0u32;
            let (sealed, texts) = crate::findings_text::seal(std::mem::take(&mut run.findings), || {
                n += 1;
                key.salt(format!("{context}{n}\n").as_bytes())
            });
            run.findings = sealed;
            let digest = self.add_bytes(texts.to_bytes(), crate::findings_text::FINDINGS_MEDIA_TYPE);
            self.manifest.runs[i]
                .artifacts
                .insert(crate::findings_text::FINDINGS_ROLE.to_owned(), digest.to_hex());
        }
    }

    /// Spec §4j: the metrics of every run whose task `private` names (its check is the
    /// maintainers') leave the manifest for the run's `x-metrics` artifact, named by a
    /// salted digest. The salt comes from `key` (HMAC-SHA-256 of the run's place), so
    /// that sealing the same results twice gives the same bundle.
    pub fn seal_metrics(&mut self, key: &SecretKey, private: impl Fn(&str) -> bool) {
        for i in 0..self.manifest.runs.len() {
            let run = &mut self.manifest.runs[i];
            if run.metrics.is_empty() || !private(run.task.as_str()) {
                continue;
            }
            let context = format!("metrics\n{}\n{}\n{}\n", run.task, run.hint, run.attempt);
            let (digest, text) = crate::metrics_text::seal_metrics(
                std::mem::take(&mut run.metrics),
                key.salt(context.as_bytes()),
            );
            run.metrics_digest = Some(digest);
            let artifact = self.add_bytes(text.to_bytes(), crate::metrics_text::METRICS_MEDIA_TYPE);
            self.manifest.runs[i]
                .artifacts
                .insert(crate::metrics_text::METRICS_ROLE.to_owned(), artifact.to_hex());
        }
    }

    fn list(&mut self, digest: Digest, size: u64, media_type: &str) {
        self.manifest
            .artifacts
            .entry(digest.to_hex())
            .or_insert_with(|| ArtifactInfo { media_type: media_type.to_owned(), size });
    }

    /// Seals the findings' words (spec §4g, [`BundleBuilder::seal_findings`] with the
    /// first key), checks, signs and writes the bundle; returns its id. Whatever `out` received
    /// is garbage if this fails.
    pub fn write(mut self, keys: &[&SecretKey], out: impl Write) -> Result<Digest, WriteError> {
        if keys.is_empty() {
            return Err(WriteError::NoKey);
        }
        // Spec §4g: whatever findings still hold their words are sealed by the first key.
        self.seal_findings(keys[0]);
        self.manifest
            .artifacts
            .retain(|d, _| Digest::from_hex(d).is_some_and(|d| self.sources.contains_key(&d)));
        validate(&self.manifest, None, &Limits::default())?;
        let manifest_bytes = self.manifest.to_bytes();
        let envelope = Envelope::sign(&manifest_bytes, keys).to_bytes();
        let mtime = OffsetDateTime::parse(&self.manifest.created_at, &Rfc3339)
            .map(|t| t.unix_timestamp().max(0) as u64)
            .unwrap_or(0);

        let mut tar = tar::Builder::new(GzEncoder::new(out, self.compression));
        tar.append(&header("envelope.json", envelope.len() as u64, mtime)?, envelope.as_slice())?;
        for (digest, source) in &self.sources {
            let name = format!("artifacts/{digest}");
            match source {
                Source::Bytes(bytes) => {
                    tar.append(&header(&name, bytes.len() as u64, mtime)?, bytes.as_slice())?
                }
                Source::Reader { name: path, open } => {
                    let size = self.manifest.artifacts[&digest.to_hex()].size;
                    let mut reading = HashingReader::new(open()?.take(size));
                    tar.append(&header(&name, size, mtime)?, &mut reading)?;
                    if reading.finish() != (*digest, size) {
                        return Err(WriteError::Changed(path.clone()));
                    }
                }
            }
        }
        tar.into_inner()?.finish()?.flush()?;
        Ok(Digest::of(&manifest_bytes))
    }
}

fn header(path: &str, size: u64, mtime: u64) -> io::Result<tar::Header> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path)?;
    h.set_size(size);
    h.set_mode(0o644);
    h.set_mtime(mtime);
    h.set_uid(0);
    h.set_gid(0);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    Ok(h)
}
