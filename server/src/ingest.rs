//! The ingest pipeline: verify a bundle against the key registry and the task catalog
//! while staging its artifacts, record it in one transaction, and invalidate the render
//! cache. The one path for the API, the upload form, `import`, the demo and `synth`.

use std::io;
use std::net::IpAddr;

use bundle::{ArtifactInfo, ArtifactSink, BundleError, Digest, RunMarks, SignatureStatus, Verifier};
use store::{Ingested, Store};

use crate::error::ApiError;
use crate::guard::{Ingests, Permit};
use crate::metrics::IngestResult;
use crate::state::AppState;

/// [`ingest`] of the bundle `reader` gives, counted in the metrics whatever the end,
/// including a bundle that could not even be received. A bundle from a `client` over
/// HTTP is held to the guard's limits: one of its address's uploads at once and its
/// address's allowance before it is read; a place among the ingests at once once its
/// envelope has been read (so that an upload that never gets that far, however slowly
/// it arrives, keeps no other submitter waiting), and its signers' allowance. With the
/// result, the marks the bundle alone gives its runs (a submission's; none for a
/// reproduction).
pub async fn ingest_measured<R: io::Read + Send + 'static>(
    app: &AppState,
    client: Option<IpAddr>,
    reader: impl Future<Output = Result<R, ApiError>>,
) -> Result<Received, ApiError> {
    let started = std::time::Instant::now();
    let outcome = async {
        let _upload = match client {
            Some(client) => {
                let upload = app.guard.admit_upload(client)?;
                app.guard.admit_address(client)?;
                Some(upload)
            }
            None => None,
        };
        let guarded = client.map(|_| app.guard.ingests());
        // Over HTTP, a key whose request is pending may submit: its bundles are held.
        let (checked, _place) = check_as(app, reader.await?, guarded, client.is_some()).await?;
        let marks = checked.marks.clone();
        if checked.held.is_some() {
            return Ok::<_, ApiError>(Received::Held(hold(app, checked).await?));
        }
        Ok::<_, ApiError>(Received::Recorded(record(app, checked).await?, marks))
    }
    .await;
    let measured = match &outcome {
        Ok(Received::Recorded(Ingested::Stored { .. }, _)) => IngestResult::Stored,
        Ok(Received::Recorded(Ingested::AlreadyStored { .. }, _)) => IngestResult::AlreadyStored,
        Ok(Received::Held(_)) => IngestResult::Held,
        Err(e) if e.status.is_server_error() => IngestResult::Failed,
        Err(_) => IngestResult::Refused,
    };
    app.metrics.ingest(measured, started.elapsed());
    outcome
}

/// What became of a bundle received over HTTP: recorded on the board (with the marks the
/// bundle alone gives its runs, for a submission), or held, its key's request pending.
#[derive(Debug)]
pub enum Received {
    Recorded(Ingested, Option<Vec<RunMarks>>),
    Held(Held),
}

/// A bundle held for its key's pending request: shown to its submitter and the
/// maintainers only, recorded on the board if the key is approved.
#[derive(Debug)]
pub struct Held {
    pub request: i64,
    pub bundle: store::HeldBundle,
    /// False if the same bundle was held before.
    pub new: bool,
    pub marks: Option<Vec<RunMarks>>,
}

/// Verifies the bundle `reader` yields against the registry and the task ids, staging
/// its artifacts, then records it: the one path for the API, `import` and the demo.
pub async fn ingest(app: &AppState, reader: impl io::Read + Send + 'static) -> Result<Ingested, ApiError> {
    record(app, check(app, reader).await?).await
}

/// A bundle verified, its artifacts staged and the server's own findings made: all an
/// ingest does before its transaction, and nothing yet stored.
pub struct Checked {
    bundle: bundle::VerifiedBundle,
    staging: store::Staging,
    /// The server's findings and cost checks; none for a reproduction, which is judged against the
    /// submission it re-ran instead.
    found: Option<store::ServerChecks>,
    /// The marks the bundle alone gives its runs (none for a reproduction).
    marks: Option<Vec<RunMarks>>,
    /// Signed by no registered key but by one whose request is pending: that key, and
    /// the bundle's bytes as they arrived, to hold.
    held: Option<(String, tempfile::NamedTempFile)>,
}

/// The first half of an ingest: verifies the bundle `reader` yields against the registry
/// and the task ids, staging its artifacts, and makes the server's findings. Bundles may
/// be checked at once; [`record`] them one at a time, in the order they should be stored.
pub async fn check(app: &AppState, reader: impl io::Read + Send + 'static) -> Result<Checked, ApiError> {
    Ok(check_as(app, reader, None, false).await?.0)
}

/// [`check`], for an upload over HTTP when `guarded`: the bundle takes a place among the
/// ingests at once (given back with the check, to hold until it is recorded) once its
/// envelope has been read, and its signers are held to their allowance. With
/// `hold_pending`, the keys of pending requests verify too, and a bundle signed by one
/// of them alone is kept whole, to hold.
async fn check_as(
    app: &AppState,
    reader: impl io::Read + Send + 'static,
    guarded: Option<Ingests>,
    hold_pending: bool,
) -> Result<(Checked, Option<Permit>), ApiError> {
    let limited = guarded.is_some();
    let trusted = app.store.trusted_keys().await?;
    let tiers: std::collections::BTreeMap<String, store::Tier> =
        trusted.iter().map(|(_, r)| (r.keyid.clone(), r.tier)).collect();
    let pending = if hold_pending && app.store.any_pending_request().await? {
        app.store.pending_keys().await?
    } else {
        Vec::new()
    };
    let pending_ids: std::collections::BTreeSet<String> = pending.iter().map(|(_, id)| id.clone()).collect();
    // Kept whole only while a request is pending: it may be a pending key's.
    let copy = if pending.is_empty() {
        None
    } else {
        let file = tempfile::NamedTempFile::new_in(app.store.blobs().staging_dir())
            .map_err(|e| ApiError::internal(format!("keeping an upload whole: {e}")))?;
        Some(file)
    };
    let mut keys: Vec<bundle::PublicKey> = trusted.into_iter().map(|(k, _)| k).collect();
    keys.extend(pending.into_iter().map(|(k, _)| k));
    let verifier = Verifier::new(keys, app.catalog.tasks.iter().map(|t| t.id.clone()))
        .with_private_checks(app.catalog.tasks.iter().filter(|t| t.check_private).map(|t| t.id.clone()))
        .holding(views::catalog::claims(&app.store, &app.catalog).await?)
        .with_limits(app.limits);
    let mut placing = Placing { staging: app.store.blobs().stage(), ingests: guarded, place: Ok(None) };
    let compressed = app.limits.compressed;
    let holder = pending_ids.clone();
    let (verified, placing, copy) = tokio::task::spawn_blocking(move || {
        let mut reader = Copying::new(reader, copy.as_ref().map(|f| f.as_file()), compressed);
        let verified = verifier.verify_into(&mut reader, &mut placing);
        // A pending key's bundle is kept as it arrived, to its end.
        let copy = match &verified {
            Ok(v) if held_by(v, &holder).is_some() => reader.finish().then_some(copy).flatten(),
            _ => None,
        };
        (verified, placing, copy)
    })
    .await
    .map_err(ApiError::internal)?;
    let Placing { staging, ingests, place } = placing;
    // Refused a place at its first artifact: that is the answer, not the artifact the
    // refusal left unstored.
    let place = place?;
    let verified = match verified {
        Ok(v) => v,
        Err(e @ BundleError::NoTrustedSignature { .. }) => return Err(revoked_or(&app.store, e).await),
        Err(e) => return Err(e.into()),
    };
    // A bundle of no artifacts takes its place now, read whole.
    let place = match (place, ingests) {
        (None, Some(ingests)) => Some(ingests.place()?),
        (place, _) => place,
    };
    if limited {
        let signers = verified.signatures.iter().filter(|(_, s)| *s == SignatureStatus::Verified);
        app.guard.admit_keys(signers.map(|(keyid, _)| keyid.as_str()))?;
    }
    // Signed by no registered key, only by pending ones: held, never recorded now.
    let held = match held_by(&verified, &pending_ids) {
        Some(keyid)
            if !verified
                .signatures
                .iter()
                .any(|(k, s)| *s == SignatureStatus::Verified && tiers.contains_key(k)) =>
        {
            if store::is_reproduction(&verified) {
                return Err(store::StoreError::Refused {
                    code: "reproduction_not_maintainer",
                    message: format!("key {keyid} is pending: a reproduction is signed by a maintainer key"),
                }
                .into());
            }
            // A pending key is no maintainer's, whatever tier it may be given: what only
            // the maintainers may sign is refused now, as a submitter's would be.
            if verified.manifest.provenance.kind == bundle::ProvenanceKind::Published {
                return Err(store::StoreError::Refused {
                    code: "provenance_not_maintainer",
                    message: format!(
                        "key {keyid} is pending: published results are signed by a maintainer key, never held"
                    ),
                }
                .into());
            }
            let copy = copy.ok_or_else(|| ApiError::internal("a pending key's upload was not kept whole"))?;
            Some((keyid, copy))
        }
        _ => None,
    };
    // A reproduction (spec §4d) is the maintainers' re-run of a submission's sample,
    // not a submission: it is recorded beside the runs it re-ran.
    let (found, marks) = if store::is_reproduction(&verified) {
        (None, None)
    } else {
        // The tier the store will record it under: a maintainer's where any signer is one.
        let signers = verified.signatures.iter().filter(|(_, s)| *s == SignatureStatus::Verified);
        let tier = signers
            .filter_map(|(keyid, _)| tiers.get(keyid).copied())
            .min_by_key(|t| *t != store::Tier::Maintainer);
        let (found, marks) = crate::integrity::server_checks(app, &verified, &staging, tier).await?;
        (Some(found), Some(marks))
    };
    Ok((Checked { bundle: verified, staging, found, marks, held }, place))
}

/// The first verified signer of `bundle` among the pending keys, if any.
fn held_by(bundle: &bundle::VerifiedBundle, pending: &std::collections::BTreeSet<String>) -> Option<String> {
    bundle
        .signatures
        .iter()
        .find(|(keyid, s)| *s == SignatureStatus::Verified && pending.contains(keyid))
        .map(|(keyid, _)| keyid.clone())
}

/// A reader that copies what it reads into a file (no more than `limit` bytes; past it,
/// or on a failed write, the copy is abandoned).
struct Copying<'f, R> {
    inner: R,
    file: Option<&'f std::fs::File>,
    written: u64,
    limit: u64,
    whole: bool,
}

impl<'f, R: io::Read> Copying<'f, R> {
    fn new(inner: R, file: Option<&'f std::fs::File>, limit: u64) -> Self {
        Copying { inner, file, written: 0, limit, whole: true }
    }

    /// Reads what is left of the stream into the copy: whether the copy is whole.
    fn finish(&mut self) -> bool {
        let mut rest = [0u8; 64 * 1024];
        loop {
            match io::Read::read(self, &mut rest) {
                Ok(0) => break,
                Ok(_) if self.whole => continue,
                Ok(_) | Err(_) => return false,
            }
        }
        self.whole && self.file.is_some()
    }
}

impl<R: io::Read> io::Read for Copying<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(mut file) = self.file.filter(|_| self.whole) {
            self.written += n as u64;
            if self.written > self.limit || io::Write::write_all(&mut file, &buf[..n]).is_err() {
                self.whole = false;
            }
        }
        Ok(n)
    }
}

/// Holds a pending key's checked bundle: its bytes as a blob, its summary beside its
/// request. Nothing of it reaches the board, the change log or any public answer.
async fn hold(app: &AppState, checked: Checked) -> Result<Held, ApiError> {
    let Checked { bundle, marks, held, .. } = checked;
    let (keyid, copy) = held.ok_or_else(|| ApiError::internal("holding a bundle that is not held"))?;
    let path = copy.path().to_owned();
    let staging_io = |e: io::Error| ApiError::internal(format!("keeping a held bundle: {e}"));
    let (digest, bytes) = tokio::task::spawn_blocking(move || Digest::of_reader(std::fs::File::open(&path)?))
        .await
        .map_err(ApiError::internal)?
        .map_err(staging_io)?;
    let mut staging = app.store.blobs().stage();
    let mut file = std::fs::File::open(copy.path()).map_err(staging_io)?;
    let info = ArtifactInfo { media_type: "application/gzip".into(), size: bytes };
    staging.artifact(&digest, &info, &mut file).map_err(staging_io)?;
    staging.publish().await?;
    let runs = &bundle.manifest.runs;
    let summary = store::HeldBundle {
        bundle_id: bundle.id.to_hex(),
        agent_id: bundle.manifest.agent.id.clone(),
        runs: runs.len() as i64,
        successes: runs.iter().filter(|r| r.outcome == store::Outcome::Success).count() as i64,
        bytes: bytes as i64,
        received_at: time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(ApiError::internal)?,
    };
    let blob = digest.to_hex();
    let (request, new) = match app.store.hold_bundle(&keyid, &summary, &blob, app.guard.key_requests()).await
    {
        Ok(held) => held,
        Err(refused) => {
            // Kept for nothing: it goes now, not with the next collection.
            app.store.drop_unheld_blobs(std::slice::from_ref(&blob)).await?;
            return Err(refused.into());
        }
    };
    Ok(Held { request: request.id, bundle: summary, new, marks })
}

/// The stage an upload's artifacts go to, taking the upload's place among the ingests at
/// once when its first artifact arrives: the reader hands over none before the envelope
/// has been read, its signatures checked and its manifest validated. Until then the
/// upload holds no place.
struct Placing {
    staging: store::Staging,
    /// Where the place comes from; none for a bundle that is not held to the limit.
    ingests: Option<Ingests>,
    /// The place once taken, or the 429 when none was free.
    place: Result<Option<Permit>, ApiError>,
}

impl ArtifactSink for Placing {
    fn artifact(
        &mut self,
        digest: &Digest,
        info: &ArtifactInfo,
        content: &mut dyn io::Read,
    ) -> io::Result<()> {
        if let (Ok(None), Some(ingests)) = (&self.place, &self.ingests) {
            self.place = ingests.place().map(Some);
        }
        if self.place.is_err() {
            return Err(io::Error::other("no place among the ingests at once"));
        }
        self.staging.artifact(digest, info, content)
    }
}

/// The second half: records a checked bundle in one transaction and refreshes the pages.
pub async fn record(app: &AppState, checked: Checked) -> Result<Ingested, ApiError> {
    let Checked { bundle, staging, found, .. } = checked;
    let ingested = match found {
        None => app.store.ingest_reproduction(&bundle, staging).await?,
        Some(found) => app.store.ingest(&bundle, staging, &found).await?,
    };
    if matches!(ingested, Ingested::Stored { .. }) {
        refresh_pages(app).await;
    }
    Ok(ingested)
}

/// [`record`] of several checked submissions in one transaction, in order: all of them or
/// none. For loading many at once (`synth`); the rows are those [`record`] gives one by
/// one. A reproduction is recorded on its own.
pub async fn record_together(app: &AppState, checked: Vec<Checked>) -> Result<Vec<Ingested>, ApiError> {
    let (mut verified, mut stagings) = (Vec::with_capacity(checked.len()), Vec::with_capacity(checked.len()));
    for Checked { bundle, staging, found, .. } in checked {
        let Some(found) = found else {
            return Err(ApiError::internal("a reproduction is recorded on its own, not with other bundles"));
        };
        verified.push((bundle, found));
        stagings.push(staging);
    }
    let together =
        verified.iter().zip(stagings).map(|((bundle, found), staging)| (bundle, staging, found)).collect();
    let ingested = app.store.ingest_together(together).await?;
    if ingested.iter().any(|i| matches!(i, Ingested::Stored { .. })) {
        refresh_pages(app).await;
    }
    Ok(ingested)
}

/// What the pages show has changed (the change log moved): the cache must not serve
/// them as they were.
pub async fn refresh_pages(app: &AppState) {
    match app.store.generation().await {
        Ok(g) => app.cache.advance(u64::try_from(g).unwrap_or(0)),
        Err(e) => tracing::warn!(error = %crate::error::chain(e), "could not read the change log's position"),
    }
}

/// A bundle signed only by keys the registry no longer trusts: say it was revoked
/// when that is why.
async fn revoked_or(store: &Store, e: BundleError) -> ApiError {
    if let BundleError::NoTrustedSignature { keyids } = &e {
        for keyid in keyids {
            if let Ok(key) = store.key(keyid).await
                && let Some(at) = key.revoked_at
            {
                return store::StoreError::RevokedKey(keyid.to_owned(), at).into();
            }
        }
    }
    e.into()
}
