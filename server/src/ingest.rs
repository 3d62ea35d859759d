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
) -> Result<(Ingested, Option<Vec<RunMarks>>), ApiError> {
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
        let (checked, _place) = check_as(app, reader.await?, guarded).await?;
        let marks = checked.marks.clone();
        Ok::<_, ApiError>((record(app, checked).await?, marks))
    }
    .await;
    let measured = match &outcome {
        Ok((Ingested::Stored { .. }, _)) => IngestResult::Stored,
        Ok((Ingested::AlreadyStored { .. }, _)) => IngestResult::AlreadyStored,
        Err(e) if e.status.is_server_error() => IngestResult::Failed,
        Err(_) => IngestResult::Refused,
    };
    app.metrics.ingest(measured, started.elapsed());
    outcome
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
}

/// The first half of an ingest: verifies the bundle `reader` yields against the registry
/// and the task ids, staging its artifacts, and makes the server's findings. Bundles may
/// be checked at once; [`record`] them one at a time, in the order they should be stored.
pub async fn check(app: &AppState, reader: impl io::Read + Send + 'static) -> Result<Checked, ApiError> {
    Ok(check_as(app, reader, None).await?.0)
}

/// [`check`], for an upload over HTTP when `guarded`: the bundle takes a place among the
/// ingests at once (given back with the check, to hold until it is recorded) once its
/// envelope has been read, and its signers are held to their allowance.
async fn check_as(
    app: &AppState,
    reader: impl io::Read + Send + 'static,
    guarded: Option<Ingests>,
) -> Result<(Checked, Option<Permit>), ApiError> {
    let limited = guarded.is_some();
    let trusted = app.store.trusted_keys().await?;
    let tiers: std::collections::BTreeMap<String, store::Tier> =
        trusted.iter().map(|(_, r)| (r.keyid.clone(), r.tier)).collect();
    let verifier = Verifier::new(
        trusted.into_iter().map(|(k, _)| k).collect(),
        app.catalog.tasks.iter().map(|t| t.id.clone()),
    )
    .with_private_checks(app.catalog.tasks.iter().filter(|t| t.check_private).map(|t| t.id.clone()))
    .holding(views::catalog::claims(&app.store, &app.catalog).await?)
    .with_limits(app.limits);
    let mut placing = Placing { staging: app.store.blobs().stage(), ingests: guarded, place: Ok(None) };
    let (verified, placing) = tokio::task::spawn_blocking(move || {
        let mut reader = reader;
        let verified = verifier.verify_into(&mut reader, &mut placing);
        (verified, placing)
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
    Ok((Checked { bundle: verified, staging, found, marks }, place))
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
