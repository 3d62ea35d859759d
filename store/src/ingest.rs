//! Recording a verified bundle: everything in one transaction, or nothing.

use std::collections::{BTreeMap, HashMap};

use bundle::{Finding, VerifiedBundle};
use sqlx::{Executor, Row};
use vocab::{FoundBy, Hint, Outcome, TaskId, Tier};

use crate::blobs::Staging;
use crate::db;
use crate::error::StoreError;
use crate::model::{CostCheck, KeyRecord, Sums};
use crate::steps::{Ingested, Tx, batches, insert_rows, signer, write_artifacts, write_change};
use crate::{Store, now};

/// The server's own integrity findings about a bundle's runs, by the run's position in
/// the manifest: stored beside the submitter's, so that deleting a finding from a
/// bundle does not hide it.
pub type ServerFindings = BTreeMap<usize, Vec<Finding>>;

/// What the server makes of a bundle's runs at ingest, by the run's position in the
/// manifest: its own integrity findings, and each run's cost as it checked it (a run
/// with none counts the cost it states, unchecked and unmarked).
#[derive(Debug, Clone, Default)]
pub struct ServerChecks {
    pub findings: ServerFindings,
    pub costs: BTreeMap<usize, CostCheck>,
    /// Each patch's identity (bundle spec §5b: `benchmark::diff::identity`), by the
    /// patch artifact's digest, for the patches the server read.
    pub identities: BTreeMap<String, String>,
}

impl From<ServerFindings> for ServerChecks {
    fn from(findings: ServerFindings) -> ServerChecks {
        ServerChecks { findings, ..ServerChecks::default() }
    }
}

impl ServerChecks {
    /// The identity of `run`'s patch, where it has one the server read.
    pub fn identity_of(&self, run: &bundle::Run) -> Option<&str> {
        run.artifacts.get("patch").and_then(|d| self.identities.get(d)).map(String::as_str)
    }

    /// Run `i`'s cost as the board counts it.
    fn cost(&self, i: usize, run: &bundle::Run) -> CostCheck {
        self.costs.get(&i).copied().unwrap_or(CostCheck { counted_usd: run.cost_usd, ..CostCheck::default() })
    }
}

impl Store {
    /// Records `bundle`, whose artifacts `staging` holds. The signer must be a trusted
    /// key of the registry, still unrevoked when the transaction runs; a submitter key
    /// may only submit agents it owns (the first key to submit an agent owns it).
    /// `found` are the server's own findings about its runs.
    pub async fn ingest(
        &self,
        bundle: &VerifiedBundle,
        staging: Staging,
        found: &ServerChecks,
    ) -> Result<Ingested, StoreError> {
        let mut ingested = self.ingest_together(vec![(bundle, staging, found)]).await?;
        Ok(ingested.pop().expect("one result for each bundle"))
    }

    /// Records `bundles` as [`Store::ingest`] would one after the other, in one
    /// transaction: all of them, or none (the first that fails says why). Loading many at
    /// once (`synth`) then pays for one commit and one flush of the blobs, not one each;
    /// the rows are the same.
    pub async fn ingest_together(
        &self,
        bundles: Vec<(&VerifiedBundle, Staging, &ServerChecks)>,
    ) -> Result<Vec<Ingested>, StoreError> {
        // SQLite has one writer; queueing here beats retrying on SQLITE_BUSY.
        let _one_writer = self.write_lock.lock().await;
        let flush = self.flush_each.load(std::sync::atomic::Ordering::SeqCst);
        let mut conn = self.pool.acquire().await?;
        let unsynced = !flush && matches!(self.backend(), crate::Backend::Sqlite { .. });
        if unsynced {
            conn.execute("PRAGMA synchronous = OFF").await?;
        }
        let recorded = self.record_all(&mut conn, bundles, flush).await;
        // The connection goes back to the pool as every other is, synced, or is closed.
        if unsynced && conn.execute("PRAGMA synchronous = FULL").await.is_err() {
            drop(conn.detach());
        }
        recorded
    }

    /// The bundles' steps in one transaction on `conn`, their blobs placed before it
    /// commits (flushed to disk first where `flush`).
    async fn record_all(
        &self,
        conn: &mut sqlx::pool::PoolConnection<sqlx::Any>,
        bundles: Vec<(&VerifiedBundle, Staging, &ServerChecks)>,
        flush: bool,
    ) -> Result<Vec<Ingested>, StoreError> {
        let mut tx = sqlx::Connection::begin(&mut **conn).await?;
        let (mut results, mut placing) = (Vec::with_capacity(bundles.len()), Vec::new());
        for (bundle, staging, found) in bundles {
            let ingested = self.record(&mut tx, bundle, found).await?;
            if matches!(ingested, Ingested::Stored { .. }) {
                placing.push(staging);
            }
            results.push(ingested);
        }
        if placing.is_empty() {
            // Nothing new: the transaction wrote nothing.
            return Ok(results);
        }
        // The blobs go into place before the commit: a crash between the two leaves
        // unreferenced blobs for garbage collection, never rows without their blobs.
        Staging::publish_all(placing, flush).await?;
        tx.commit().await?;
        Ok(results)
    }

    /// The steps of recording one bundle, in the transaction `tx`.
    async fn record(
        &self,
        tx: &mut Tx<'_>,
        bundle: &VerifiedBundle,
        checks: &ServerChecks,
    ) -> Result<Ingested, StoreError> {
        let m = &bundle.manifest;
        let bundle_id = bundle.id.to_hex();
        let agent_id = m.agent.id.clone();
        if already_stored(tx, &bundle_id).await? {
            return Ok(Ingested::AlreadyStored { bundle_id, agent_id });
        }
        let signer = signer(tx, bundle).await?;
        check_kind(bundle, &signer)?;
        write_agent(tx, bundle, &signer).await?;
        let received_at = now();
        let execution_known = self.execution_known(m);
        write_submission(tx, bundle, &bundle_id, &signer, &received_at, execution_known).await?;
        write_artifacts(tx, bundle, &received_at).await?;
        write_identities(tx, &checks.identities).await?;
        let carried = crate::reproductions::not_reproduced_before(tx, bundle, &bundle_id, checks).await?;
        let found = &carry_not_reproduced(tx, bundle, &bundle_id, &carried, checks).await?;
        write_runs(tx, bundle, &bundle_id, found, checks).await?;
        crate::reproductions::write_sample(
            tx,
            bundle,
            &bundle_id,
            &signer,
            &received_at,
            &carried,
            checks,
            self.sample_rule(),
        )
        .await?;
        write_aggregates(tx, bundle, &bundle_id, found, checks, execution_known).await?;
        let tainted = if carried.is_empty() {
            0
        } else {
            crate::reproductions::taint::carried(tx, &bundle_id, &received_at).await?
        };
        let superseded = supersede(tx, bundle, &bundle_id, &received_at).await?;
        update_current_totals(tx, Some(&bundle_id), &superseded).await?;
        let mut detail = format!(
            "{} ({}) submitted {} runs for {} {}, signed by {} ({})",
            m.agent.name(),
            agent_id,
            m.runs.len(),
            m.benchmark.name,
            m.benchmark.version,
            signer.owner,
            signer.tier.label().to_lowercase()
        );
        let runs = m.runs.iter().enumerate();
        let flagged =
            runs.filter(|(i, r)| r.outcome == Outcome::Success && has_findings(r, *i, found)).count();
        if flagged > 0 {
            detail.push_str(&format!("; {flagged} of its successes carry integrity findings"));
        }
        if let Some(c) = carried.first().filter(|_| tainted > 0) {
            detail.push_str(&format!(
                "; a caught lie costs the submission: it carries a refutation from {}, so {tainted} other \
                 success(es) are unverified and queued for re-run",
                c.from
            ));
        }
        write_change(tx, &received_at, "accepted", &bundle_id, &agent_id, &detail).await?;
        Ok(Ingested::Stored { bundle_id, agent_id, superseded })
    }
}

/// Spec §6a: a failed reproduction follows the agent. Where an earlier submission of it
/// has runs that did not reproduce (no maintainer having dismissed the finding), this one
/// names the earliest such submission, and each success or `infra_error` it has with the
/// same task, hint and attempt carries the server's `not-reproduced` finding too: a
/// failure in the strict view, until a maintainer dismisses it. (Its sample holds those runs:
/// `reproductions::write_sample`.)
async fn carry_not_reproduced<'f>(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    carried: &[crate::reproductions::Carried],
    checks: &'f ServerChecks,
) -> Result<std::borrow::Cow<'f, ServerFindings>, StoreError> {
    let found = &checks.findings;
    let Some(first) = carried.first() else { return Ok(std::borrow::Cow::Borrowed(found)) };
    let mut found = found.clone();
    db::query("UPDATE submissions SET not_reproduced_before = $1 WHERE bundle_id = $2")
        .bind(&first.from)
        .bind(bundle_id)
        .execute(&mut **tx)
        .await?;
    let agent = &bundle.manifest.agent.id;
    for (i, run) in bundle.manifest.runs.iter().enumerate() {
        // A success claims what did not reproduce or generalise; an infra_error says the
        // run proves nothing, where the same run's re-run ended in a counted outcome.
        let before = carried.iter().find(|c| {
            c.reaches(agent, run, checks.identity_of(run))
                && (run.outcome == Outcome::Success
                    || (run.outcome == Outcome::InfraError && c.check == crate::NOT_REPRODUCED))
        });
        if let Some(c) = before {
            let findings = found.entry(i).or_default();
            let what = if c.check == crate::NOT_GENERALISED {
                "was no success on a held-out variant of its task when the maintainers re-ran it there"
            } else {
                "did not reproduce when the maintainers re-ran it"
            };
            if findings.len() < bundle::MAX_FINDINGS {
                findings.push(Finding {
                    check: c.check.clone(),
                    message: format!(
                        "{} {what}: this run counts as a failure in the strict view until a maintainer dismisses \
                         this finding.",
                        c.source(agent, run, checks.identity_of(run))
                    ),
                    artifact: None,
                    line: None,
                    text_digest: None,
                });
            }
        }
    }
    Ok(std::borrow::Cow::Owned(found))
}

/// Each patch's identity, once for every digest (a patch stored before has it already).
async fn write_identities(tx: &mut Tx<'_>, identities: &BTreeMap<String, String>) -> Result<(), StoreError> {
    for (digest, identity) in identities {
        crate::identities::insert(tx, digest, identity).await?;
    }
    Ok(())
}

/// Spec §5a: a kind that skips what holds a submitter's claims to account (evidence, the
/// sample, the attempts rule: `published`) is the maintainers' to sign.
fn check_kind(bundle: &VerifiedBundle, signer: &KeyRecord) -> Result<(), StoreError> {
    let kind = bundle.manifest.provenance.kind;
    if kind.rule().maintainers_only && signer.tier != vocab::Tier::Maintainer {
        return Err(StoreError::Refused {
            code: "provenance_not_maintainer",
            message: format!(
                "provenance.kind `{}` is signed only by a maintainer key: it is not re-run nor held to the \
                 attempts rule; {} ({}) is a {} key",
                kind.as_str(),
                signer.keyid,
                signer.owner,
                signer.tier.as_str()
            ),
        });
    }
    Ok(())
}

async fn already_stored(tx: &mut Tx<'_>, bundle_id: &str) -> Result<bool, StoreError> {
    let row = db::query("SELECT 1 FROM submissions WHERE bundle_id = $1")
        .bind(bundle_id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.is_some())
}

/// The agent's row: created, owned by the signer, on its first bundle; its description
/// updated on later ones, which only its owner or a maintainer may send.
async fn write_agent(tx: &mut Tx<'_>, bundle: &VerifiedBundle, signer: &KeyRecord) -> Result<(), StoreError> {
    let a = &bundle.manifest.agent;
    let owner: Option<String> = db::query_as("SELECT owner_keyid FROM agents WHERE id = $1")
        .bind(&a.id)
        .fetch_optional(&mut **tx)
        .await?
        .map(|(owner,): (String,)| owner);
    if let Some(owner) = owner
        && owner != signer.keyid
        && signer.tier != Tier::Maintainer
    {
        return Err(StoreError::AgentOwnedByOther { agent: a.id.clone(), owner });
    }
    // The owner and the first sighting stay as they were; the description follows the
    // newest bundle.
    db::query(
        "INSERT INTO agents (id, owner_keyid, framework, framework_version, model, model_id, \
         display_name, url, first_seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (id) DO UPDATE SET framework = excluded.framework, \
         framework_version = excluded.framework_version, model = excluded.model, model_id = excluded.model_id, \
         display_name = excluded.display_name, url = excluded.url",
    )
    .bind(&a.id)
    .bind(&signer.keyid)
    .bind(&a.framework)
    .bind(&a.framework_version)
    .bind(&a.model)
    .bind(&a.model_id)
    .bind(a.name())
    .bind(&a.url)
    .bind(now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The submission's row, with the envelope that proves it.
async fn write_submission(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    signer: &KeyRecord,
    received_at: &str,
    execution_known: bool,
) -> Result<(), StoreError> {
    let m = &bundle.manifest;
    let harness = m.harness();
    db::query(
        "INSERT INTO submissions (bundle_id, agent_id, keyid, tier, provenance, provenance_source, \
         benchmark_name, benchmark_version, task_set_digest, runner_name, runner_version, created_at, \
         received_at, run_count, artifact_bytes, harness, harness_version, execution_known, regrades_flipped) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
    )
    .bind(bundle_id)
    .bind(&m.agent.id)
    .bind(&signer.keyid)
    .bind(signer.tier.as_str())
    .bind(m.provenance.kind.as_str())
    .bind(&m.provenance.source)
    .bind(&m.benchmark.name)
    .bind(&m.benchmark.version)
    .bind(&m.benchmark.task_set_digest)
    .bind(&m.runner.name)
    .bind(&m.runner.version)
    .bind(&m.created_at)
    .bind(received_at)
    .bind(m.runs.len() as i64)
    .bind(bundle.artifact_bytes as i64)
    .bind(&harness.name)
    .bind(&harness.version)
    .bind(i64::from(execution_known))
    .bind(m.runs.iter().filter(|r| r.regrade_changed()).count() as i64)
    .execute(&mut **tx)
    .await?;
    db::query("INSERT INTO envelopes (bundle_id, envelope) VALUES ($1, $2)")
        .bind(bundle_id)
        .bind(bundle.envelope.clone())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Whether run `i` of a bundle carries a finding, the submitter's or the server's.
fn has_findings(run: &bundle::Run, i: usize, found: &ServerFindings) -> bool {
    !run.findings.is_empty() || found.get(&i).is_some_and(|f| !f.is_empty())
}

/// The runs, and the links from each run to its artifacts by role, and the findings
/// about each.
async fn write_runs(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    found: &ServerFindings,
    checks: &ServerChecks,
) -> Result<(), StoreError> {
    let m = &bundle.manifest;
    // Spec §4j: each run's metrics as the verifier read them, sealed or not.
    let metrics: Vec<String> = (0..m.runs.len())
        .map(|i| serde_json::to_string(&bundle.metrics_of(i)).expect("serializes"))
        .collect();
    let mut first = 0;
    // Spec §4m: a count is at most 10^12, well within a BIGINT.
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    for chunk in batches(&m.runs, 19) {
        let sql = insert_rows(
            "INSERT INTO runs (bundle_id, task, hint, attempt, outcome, error_type, file_recall, \
             files_changed, duration_s, cost_usd, metrics, regraded_from, tokens_input, tokens_output, \
             tokens_cache_read, tokens_cache_write, cost_computed_usd, cost_mark, task_folder)",
            19,
            chunk.len(),
            "",
        );
        let mut q = db::query(&sql);
        for (i, run) in chunk.iter().enumerate() {
            let cost = checks.cost(first + i, run);
            let tokens = run.tokens.as_ref();
            q = q
                .bind(bundle_id)
                .bind(run.task.as_str())
                .bind(run.hint.as_str())
                .bind(i64::from(run.attempt))
                .bind(run.outcome.as_str())
                .bind(&run.error_type)
                .bind(run.file_recall)
                .bind(run.files_changed.as_ref().map(|f| serde_json::to_string(f).expect("serializes")))
                .bind(run.duration_s)
                .bind(run.cost_usd)
                .bind(&metrics[first + i])
                .bind(run.regraded.map(|r| r.from.as_str()))
                .bind(tokens.map(|t| count(t.input)))
                .bind(tokens.map(|t| count(t.output)))
                .bind(tokens.map(|t| count(t.cache_read)))
                .bind(tokens.map(|t| count(t.cache_write)))
                .bind(cost.computed_usd)
                .bind(cost.mark.map(|m| m.as_str()))
                .bind(run.task_folder.as_deref());
        }
        q.execute(&mut **tx).await?;
        first += chunk.len();
    }
    // The ids the database gave the runs, by the key the bundle gives them: only needed
    // to link artifacts (which published results do not have) and findings.
    if m.runs.iter().all(|r| r.artifacts.is_empty() && r.findings.is_empty()) && found.is_empty() {
        return Ok(());
    }
    let mut run_ids: HashMap<(TaskId, Hint, i64), i64> = HashMap::with_capacity(m.runs.len());
    for row in db::query("SELECT id, task, hint, attempt FROM runs WHERE bundle_id = $1")
        .bind(bundle_id)
        .fetch_all(&mut **tx)
        .await?
    {
        let task = TaskId::new(row.try_get::<String, _>("task")?);
        let hint: String = row.try_get("hint")?;
        let hint = hint.parse().map_err(|e: vocab::UnknownName| sqlx::Error::Decode(e.into()))?;
        run_ids.insert((task, hint, row.try_get("attempt")?), row.try_get("id")?);
    }
    let mut links = Vec::new();
    for run in m.runs.iter().filter(|r| !r.artifacts.is_empty()) {
        let run_id = run_ids[&(run.task.clone(), run.hint, i64::from(run.attempt))];
        links.extend(run.artifacts.iter().map(|(role, digest)| (run_id, role, digest)));
    }
    for chunk in batches(&links, 3) {
        let sql = insert_rows("INSERT INTO run_artifacts (run_id, role, digest)", 3, chunk.len(), "");
        let mut q = db::query(&sql);
        for (run_id, role, digest) in chunk {
            q = q.bind(*run_id).bind(*role).bind(*digest);
        }
        q.execute(&mut **tx).await?;
    }
    // A submitter's finding is stored with its words (spec §4g: from the run's
    // x-findings, which the verifier matched to the manifest's digests): they are shown
    // only to whoever may read the run's outputs (`views::access`).
    let submitted: Vec<Vec<Finding>> = (0..m.runs.len()).map(|i| bundle.findings_of(i)).collect();
    let mut findings = Vec::new();
    for (i, run) in m.runs.iter().enumerate() {
        let server = found.get(&i).map_or(&[][..], Vec::as_slice);
        if run.findings.is_empty() && server.is_empty() {
            continue;
        }
        let run_id = run_ids[&(run.task.clone(), run.hint, i64::from(run.attempt))];
        for (by, list) in [(FoundBy::Submitter, &submitted[i][..]), (FoundBy::Server, server)] {
            findings.extend(list.iter().enumerate().map(|(p, f)| (run_id, by, p as i64, f)));
        }
    }
    for chunk in batches(&findings, 7) {
        let sql = insert_rows(
            "INSERT INTO findings (run_id, found_by, position, check_name, message, artifact, line)",
            7,
            chunk.len(),
            "",
        );
        let mut q = db::query(&sql);
        for (run_id, by, position, f) in chunk {
            q = q
                .bind(*run_id)
                .bind(by.as_str())
                .bind(*position)
                .bind(&f.check)
                .bind(&f.message)
                .bind(&f.artifact)
                .bind(f.line.map(|l| i64::try_from(l).unwrap_or(i64::MAX)));
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Binds a [`Sums`] in the order of [`Sums::COLUMNS`].
fn bind_sums<'q>(q: db::Statement<'q>, c: &Sums) -> db::Statement<'q> {
    q.bind(c.runs)
        .bind(c.counted)
        .bind(c.successes)
        .bind(c.executed)
        .bind(c.recall_sum)
        .bind(c.recall_runs)
        .bind(c.cost_sum)
        .bind(c.cost_runs)
        .bind(c.duration_sum)
        .bind(c.duration_runs)
        .bind(c.flagged)
        .bind(c.exec_counted)
        .bind(c.refuted)
        .bind(c.cost_checked)
        .bind(c.cost_marked)
}

/// What the pages read instead of the runs: counts per task and hint condition, per
/// hint condition, and of the ways runs ended per task.
async fn write_aggregates(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    found: &ServerFindings,
    checks: &ServerChecks,
    execution_known: bool,
) -> Result<(), StoreError> {
    let m = &bundle.manifest;
    let mut aggregates: BTreeMap<(&str, Hint), Sums> = BTreeMap::new();
    for (i, run) in m.runs.iter().enumerate() {
        let c = aggregates.entry((run.task.as_str(), run.hint)).or_default();
        c.runs += 1;
        if let (Some(succeeded), Some(executed)) = (run.outcome.succeeded(), run.outcome.executed()) {
            c.counted += 1;
            c.successes += i64::from(succeeded);
            c.flagged += i64::from(succeeded && has_findings(run, i, found));
            if execution_known {
                c.executed += i64::from(executed);
                c.exec_counted += 1;
            }
            if let Some(r) = run.file_recall {
                c.recall_sum += r;
                c.recall_runs += 1;
            }
        }
        // An infra_error run carrying a failed reproduction of the same run of an earlier
        // submission (spec §6a) counts as a failure in the strict view.
        if run.outcome == Outcome::InfraError
            && found.get(&i).is_some_and(|f| f.iter().any(|f| f.check == crate::NOT_REPRODUCED))
        {
            c.refuted += 1;
        }
        let cost = checks.cost(i, run);
        if let Some(counted) = cost.counted_usd {
            c.cost_sum += counted;
            c.cost_runs += 1;
            c.cost_checked += i64::from(cost.checked);
        }
        c.cost_marked += i64::from(cost.mark.is_some());
        if let Some(duration) = run.duration_s {
            c.duration_sum += duration;
            c.duration_runs += 1;
        }
    }
    // How many valid attempts each cell lacks of what the benchmark asks (published
    // results keep their source's design).
    // Spec §4n: the folder each task's runs ran (one per task: the verifier saw to it).
    let folders: BTreeMap<&str, &str> =
        m.runs.iter().filter_map(|r| Some((r.task.as_str(), r.task_folder.as_deref()?))).collect();
    let rules = crate::attempts::rules(tx).await?;
    let published = !m.provenance.kind.rule().held_to_attempts;
    let aggregates: Vec<_> = aggregates
        .into_iter()
        .map(|(cell, c)| {
            let asked = crate::attempts::asked(&rules, cell.0);
            let shortfall = if published { 0 } else { (asked - c.counted).max(0) };
            (cell, c, shortfall)
        })
        .collect();
    let columns = Sums::COLUMNS.join(", ");
    for chunk in batches(&aggregates, 5 + Sums::COLUMNS.len()) {
        let sql = insert_rows(
            &format!("INSERT INTO aggregates (bundle_id, task, hint, shortfall, task_folder, {columns})"),
            5 + Sums::COLUMNS.len(),
            chunk.len(),
            "",
        );
        let mut q = db::query(&sql);
        for ((task, hint), c, shortfall) in chunk {
            let folder = folders.get(task).copied();
            q = bind_sums(q.bind(bundle_id).bind(*task).bind(hint.as_str()).bind(*shortfall).bind(folder), c);
        }
        q.execute(&mut **tx).await?;
    }

    // Per hint condition: the sums, and the coverage in valid attempts (the tasks with
    // one; the fewest and most on one of them; the cells short of what is asked).
    let mut totals: BTreeMap<Hint, (Sums, [i64; 4])> = BTreeMap::new();
    for ((_, hint), c, shortfall) in &aggregates {
        let (sums, [tasks, fewest, most, short]) =
            totals.entry(*hint).or_insert((Sums::default(), [0, i64::MAX, 0, 0]));
        sums.add(c);
        if c.counted > 0 {
            *tasks += 1;
            *fewest = (*fewest).min(c.counted);
        }
        *most = (*most).max(c.counted);
        *short += i64::from(*shortfall > 0);
    }
    if !totals.is_empty() {
        let sql = insert_rows(
            &format!(
                "INSERT INTO totals (bundle_id, hint, tasks, fewest_runs, most_runs, short_tasks, {columns})"
            ),
            6 + Sums::COLUMNS.len(),
            totals.len(),
            "",
        );
        let mut q = db::query(&sql);
        for (hint, (c, [tasks, fewest, most, short])) in &totals {
            let fewest = if *tasks == 0 { 0 } else { *fewest };
            q = q.bind(bundle_id).bind(hint.as_str()).bind(*tasks).bind(fewest).bind(*most).bind(*short);
            q = bind_sums(q, c);
        }
        q.execute(&mut **tx).await?;
    }
    let short_cells: i64 = totals.values().map(|(_, [.., short])| short).sum();
    let infra_errors: i64 = totals.values().map(|(c, _)| c.runs - c.counted).sum();
    if short_cells > 0 || infra_errors > 0 {
        db::query("UPDATE submissions SET short_cells = $1, infra_errors = $2 WHERE bundle_id = $3")
            .bind(short_cells)
            .bind(infra_errors)
            .bind(bundle_id)
            .execute(&mut **tx)
            .await?;
    }

    // Flagged successes by check (a run flagged by two checks counts under each).
    let mut by_check: BTreeMap<&str, i64> = BTreeMap::new();
    for (i, run) in m.runs.iter().enumerate().filter(|(_, r)| r.outcome == Outcome::Success) {
        let server = found.get(&i).map_or(&[][..], Vec::as_slice);
        let checks: std::collections::BTreeSet<&str> =
            run.findings.iter().chain(server).map(|f| f.check.as_str()).collect();
        for check in checks {
            *by_check.entry(check).or_default() += 1;
        }
    }
    let by_check: Vec<_> = by_check.into_iter().collect();
    for chunk in batches(&by_check, 3) {
        let sql = insert_rows("INSERT INTO flagged_checks (bundle_id, check_name, runs)", 3, chunk.len(), "");
        let mut q = db::query(&sql);
        for (check, runs) in chunk {
            q = q.bind(bundle_id).bind(*check).bind(*runs);
        }
        q.execute(&mut **tx).await?;
    }

    // How runs ended, for the failure explorer; where the source tells only whether
    // runs succeeded, the others ended in ways nobody published, and are left out.
    let mut endings: BTreeMap<(&str, Hint, Outcome, &str), i64> = BTreeMap::new();
    for run in m.runs.iter().filter(|r| execution_known || r.outcome == Outcome::Success) {
        let error = run.error_type.as_deref().unwrap_or("");
        *endings.entry((run.task.as_str(), run.hint, run.outcome, error)).or_default() += 1;
    }
    let endings: Vec<_> = endings.into_iter().collect();
    for chunk in batches(&endings, 6) {
        let sql = insert_rows(
            "INSERT INTO error_counts (bundle_id, task, hint, outcome, error_type, runs)",
            6,
            chunk.len(),
            "",
        );
        let mut q = db::query(&sql);
        for ((task, hint, outcome, error), runs) in chunk {
            q = q
                .bind(bundle_id)
                .bind(*task)
                .bind(hint.as_str())
                .bind(outcome.as_str())
                .bind(*error)
                .bind(*runs);
        }
        q.execute(&mut **tx).await?;
    }

    let mut failures: BTreeMap<(Outcome, &str), i64> = BTreeMap::new();
    for ((_, _, outcome, error), runs) in &endings {
        *failures.entry((*outcome, *error)).or_default() += runs;
    }
    if !failures.is_empty() {
        let sql = insert_rows(
            "INSERT INTO failure_totals (bundle_id, outcome, error_type, runs)",
            4,
            failures.len(),
            "",
        );
        let mut q = db::query(&sql);
        for ((outcome, error), runs) in &failures {
            q = q.bind(bundle_id).bind(outcome.as_str()).bind(*error).bind(*runs);
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Keeps the totals over current submissions (`task_totals`, `pattern_totals`,
/// `agent_failure_totals`, `error_type_agents`): adds
/// the new bundle's counts if it is current, and subtracts those of the bundles it
/// superseded. Rows are touched in key order, so that concurrent ingests on PostgreSQL
/// lock them in the same order.
async fn update_current_totals(
    tx: &mut Tx<'_>,
    added: Option<&str>,
    removed: &[String],
) -> Result<(), StoreError> {
    let sums = Sums::COLUMNS;
    let columns = sums.join(", ");
    let changes = added.into_iter().map(|b| (b, "")).chain(removed.iter().map(|b| (b.as_str(), "-")));
    for (bundle, sign) in changes {
        let values = sums.map(|c| format!("{sign}{c}")).join(", ");
        let update = sums.map(|c| format!("{c} = task_totals.{c} + excluded.{c}")).join(", ");
        db::query(&format!(
            "INSERT INTO task_totals (task, hint, bundles, {columns}) \
             SELECT task, hint, {sign}1, {values} FROM aggregates WHERE bundle_id = $1 ORDER BY task, hint \
             ON CONFLICT (task, hint) DO UPDATE SET bundles = task_totals.bundles + excluded.bundles, {update}"
        ))
        .bind(bundle)
        .execute(&mut **tx)
        .await?;
        db::query(&format!(
            "INSERT INTO pattern_totals (task, outcome, error_type, bundles, runs) \
             SELECT task, outcome, error_type, {sign}1, {sign}SUM(runs) FROM error_counts WHERE bundle_id = $1 \
             GROUP BY task, outcome, error_type ORDER BY task, outcome, error_type \
             ON CONFLICT (task, outcome, error_type) DO UPDATE SET bundles = pattern_totals.bundles + excluded.bundles, \
             runs = pattern_totals.runs + excluded.runs"
        ))
        .bind(bundle)
        .execute(&mut **tx)
        .await?;
        let failed = "FROM failure_totals f JOIN submissions s ON s.bundle_id = f.bundle_id \
             WHERE f.bundle_id = $1 AND f.outcome <> $2";
        db::query(&format!(
            "INSERT INTO agent_failure_totals (agent_id, runs) SELECT s.agent_id, {sign}SUM(f.runs) {failed} \
             GROUP BY s.agent_id ON CONFLICT (agent_id) DO UPDATE SET runs = agent_failure_totals.runs + excluded.runs"
        ))
        .bind(bundle)
        .bind(Outcome::Success.as_str())
        .execute(&mut **tx)
        .await?;
        db::query(&format!(
            "INSERT INTO error_type_agents (error_type, agent_id, runs) \
             SELECT f.error_type, s.agent_id, {sign}SUM(f.runs) {failed} AND f.error_type <> '' \
             GROUP BY f.error_type, s.agent_id ORDER BY f.error_type, s.agent_id \
             ON CONFLICT (error_type, agent_id) DO UPDATE SET runs = error_type_agents.runs + excluded.runs"
        ))
        .bind(bundle)
        .bind(Outcome::Success.as_str())
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The bundle that arrived last per agent and benchmark version is the one the
/// leaderboard shows (spec §6a): the server's order of arrival decides, never
/// `created_at`, which is the submitter's claim. The ones it follows are marked
/// superseded by it.
async fn supersede(
    tx: &mut Tx<'_>,
    bundle: &VerifiedBundle,
    bundle_id: &str,
    at: &str,
) -> Result<Vec<String>, StoreError> {
    let m = &bundle.manifest;
    let current: Vec<(String,)> = db::query_as(
        "SELECT bundle_id FROM submissions WHERE agent_id = $1 AND benchmark_version = $2 \
         AND superseded_by IS NULL AND bundle_id <> $3 ORDER BY bundle_id",
    )
    .bind(&m.agent.id)
    .bind(&m.benchmark.version)
    .bind(bundle_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut superseded = Vec::with_capacity(current.len());
    for (old,) in current {
        db::query("UPDATE submissions SET superseded_by = $1 WHERE bundle_id = $2")
            .bind(bundle_id)
            .bind(&old)
            .execute(&mut **tx)
            .await?;
        let detail = format!("{old} was superseded by {bundle_id}, which arrived after it");
        write_change(tx, at, "superseded", &old, &m.agent.id, &detail).await?;
        superseded.push(old);
    }
    Ok(superseded)
}
