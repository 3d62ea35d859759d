//! `rexbench audit URL AGENT_ID`: checks from outside that what a leaderboard shows for an
//! agent is what its signed bundle says. It fetches the agent's current submission's
//! signed envelope, the signer's public key and every artifact the runs name; verifies
//! the signature, that the bundle id is the manifest's SHA-256 and every artifact's
//! digest; and recomputes each rate the server shows (the leaderboard's, under each
//! hint condition, and the agent's task × hint grid) from the signed manifest.
//!
//! The rates are recomputed here from spec §4's definitions, not with the server's code,
//! so that a fault in either shows as a difference.

pub(crate) mod api;
mod claims;
mod cost;
mod sample;
mod tally;

use std::collections::BTreeMap;
use std::fmt;

use bundle::{Digest, Envelope, Hint, Limits, Manifest, PublicKey};

/// One finding: what was checked, and whether it held.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub ok: bool,
    pub what: String,
}

/// Everything the audit found about one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Audit {
    pub agent: String,
    pub bundle_id: String,
    pub checks: Vec<Check>,
}

impl Audit {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

impl fmt::Display for Audit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "agent {}, current submission {}", self.agent, self.bundle_id)?;
        for c in &self.checks {
            writeln!(f, "  {}  {}", if c.ok { "ok    " } else { "FAILED" }, c.what)?;
        }
        if self.passed() {
            write!(f, "VERIFIED: every number shown for this agent is what its signed manifest gives")
        } else {
            let failed = self.checks.iter().filter(|c| !c.ok).count();
            write!(f, "NOT VERIFIED: {failed} check(s) failed")
        }
    }
}

use crate::Error;
use api::*;
use tally::{Tally, reliability};

/// Audits `agent` on the leaderboard at `server`. With `trust`, the signature must be
/// by one of those keys; without, by the key the server lists as the signer's.
pub fn audit(server: &str, agent: &str, trust: &[PublicKey], token: Option<&str>) -> Result<Audit, Error> {
    let api = Api::new(server, token);
    if !bundle::is_slug(agent) {
        return Err(Error::NoCurrent(agent.to_owned()));
    }
    let detail: AgentAnswer = api.json(&format!("/api/v1/agents/{agent}"))?;
    let submission = detail
        .submissions
        .iter()
        .find(|s| s.superseded_by.is_none())
        .ok_or_else(|| Error::NoCurrent(agent.to_owned()))?;
    let bundle_id = submission.bundle_id.clone();
    let mut checks = Vec::new();
    let mut check = |ok: bool, what: String| checks.push(Check { ok, what });

    // The signature, by the key the server names, and what it signs.
    let envelope_bytes = match api.bytes(&format!("/api/v1/submissions/{bundle_id}/envelope")) {
        Ok(bytes) => bytes,
        // Spec §4g: stored before findings' words left manifests, and quoting outputs this
        // reader may not read: the server serves it to its submitter and the maintainers.
        Err(Error::Fetch { reason, .. }) if reason.contains("envelope_withheld") => {
            check(
                false,
                "envelope: withheld from you. Its manifest was stored before findings' words left manifests \
                 (spec §4g) and quotes private outputs; audit it signed in as its submitter (rexbench login) \
                 or as a maintainer (--token)"
                    .into(),
            );
            return Ok(Audit { agent: agent.to_owned(), bundle_id, checks });
        }
        Err(e) => return Err(e),
    };
    let keys: KeysAnswer = api.json("/api/v1/keys")?;
    let listed = keys.keys.iter().find(|k| k.keyid == submission.keyid);
    let signed =
        Envelope::parse(&envelope_bytes).and_then(|e| Ok((e.payload(Limits::default().manifest)?, e)));
    let (manifest_bytes, envelope) = match signed {
        Ok(x) => x,
        Err(e) => {
            check(false, format!("envelope: not a readable DSSE envelope: {e}"));
            return Ok(Audit { agent: agent.to_owned(), bundle_id, checks });
        }
    };
    let server_key = listed.map(|k| PublicKey::from_pem(&k.public_key));
    let trusted: Vec<PublicKey> = match (trust.is_empty(), server_key) {
        (false, _) => trust.to_vec(),
        (true, Some(Ok(k))) => vec![k],
        (true, Some(Err(e))) => {
            check(
                false,
                format!("signer: the key the server lists for {} is not a public key: {e}", submission.keyid),
            );
            Vec::new()
        }
        (true, None) => {
            check(false, format!("signer: the server lists no key {}", submission.keyid));
            Vec::new()
        }
    };
    if !trusted.is_empty() {
        let whose = match listed {
            Some(k) => format!(
                "{}, {} ({})",
                k.owner,
                k.tier,
                if trust.is_empty() { "as the server lists it" } else { "a key you trust" }
            ),
            None => "a key you trust".to_owned(),
        };
        match envelope.check_signatures(&manifest_bytes, &trusted) {
            Ok(_) => check(true, format!("signature: verifies with key {} ({whose})", submission.keyid)),
            Err(e) => check(false, format!("signature: {e}")),
        }
        if let Some(at) = listed.and_then(|k| k.revoked_at.as_deref()) {
            check(true, format!("signer: the key was revoked at {at}; what it signed before stays"));
        }
    }
    let id = Digest::of(&manifest_bytes).to_hex();
    check(id == bundle_id, format!("bundle id: the SHA-256 of the signed manifest is {id}"));

    let manifest = match Manifest::parse(&manifest_bytes) {
        Ok(m) => m,
        Err(e) => {
            check(false, format!("manifest: {e}"));
            return Ok(Audit { agent: agent.to_owned(), bundle_id, checks });
        }
    };
    check(
        manifest.agent.id == agent,
        format!("agent: the signed manifest names agent `{}`", manifest.agent.id),
    );

    // Every artifact a run names, byte for byte.
    let named: std::collections::BTreeSet<&String> =
        manifest.runs.iter().flat_map(|r| r.artifacts.values()).collect();
    let mut bad = Vec::new();
    let mut private = 0;
    // The trajectories and patches are kept as they are hashed, none fetched twice: each
    // run's cost is priced from them below, and each patch's identity recomputed (§5b).
    let kept_roles = [benchmark::integrity::TRAJECTORY, "patch"];
    let trajectories: std::collections::BTreeSet<&String> =
        manifest.runs.iter().flat_map(|r| kept_roles.iter().filter_map(|k| r.artifacts.get(*k))).collect();
    let mut kept: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    for digest in &named {
        let hashed = if trajectories.contains(*digest) {
            api.artifact(digest).map(|bytes| {
                let d = bytes.as_deref().map(Digest::of);
                kept.insert((*digest).clone(), bytes);
                d
            })
        } else {
            api.digest_of(digest)
        };
        match hashed {
            Ok(Some(d)) if d.to_hex() == **digest => {}
            Ok(Some(d)) => bad.push(format!("{digest} is served as bytes that hash to {}", d.to_hex())),
            // Private outputs are not served to this reader: the signed manifest's digest
            // is what anyone holding a copy checks it against.
            Ok(None) => private += 1,
            Err(e) => bad.push(e.to_string()),
        }
    }
    let served = named.len() - private;
    check(
        bad.is_empty(),
        match (bad.is_empty(), private) {
            (true, 0) => {
                format!("artifacts: all {} the runs name are served with their digests", named.len())
            }
            (true, _) => format!(
                "artifacts: all {served} served to you hash to their digests; {private} more are private outputs, \
                 not served to you (their SHA-256 is the signed manifest's: check a copy with sha256sum)"
            ),
            (false, _) => format!("artifacts: {}", bad.join("; ")),
        },
    );

    let (costs, words) = cost::priced(&kept, &manifest, &detail, &bundle_id);
    check(true, words);

    // The numbers.
    let mut cells: BTreeMap<(String, Hint), Tally> = BTreeMap::new();
    let mut totals: BTreeMap<Hint, Tally> = BTreeMap::new();
    for (run, cost) in manifest.runs.iter().zip(&costs) {
        cells.entry((run.task.to_string(), run.hint)).or_default().add(run, cost.as_ref());
        totals.entry(run.hint).or_default().add(run, cost.as_ref());
    }
    let board = api.leaderboard("")?;
    match board.rows.iter().find(|r| r.bundle_id == bundle_id) {
        None => check(false, "leaderboard: no row shows this submission".into()),
        Some(row) => {
            let mut found = Vec::new();
            for hint in Hint::ALL {
                let served = row.by_hint.get(&hint).copied().unwrap_or_default();
                let signed = totals.get(&hint).copied().unwrap_or_default();
                found.extend(
                    signed.differences(&served).into_iter().map(|d| format!("{}: {d}", hint.label())),
                );
            }
            check(
                found.is_empty(),
                if found.is_empty() {
                    "leaderboard: final success, execution success and file recall under each hint condition equal the signed manifest's".into()
                } else {
                    format!("leaderboard: {}", found.join("; "))
                },
            );
            let harness = manifest.harness();
            check(
                row.harness == HarnessAnswer { name: harness.name.clone(), version: harness.version.clone() },
                format!("harness: the row names {}, the signed manifest {harness}", row.harness.name),
            );
            // Coverage in valid attempts (spec §4f), each cell held to the attempts its
            // task asks, as the server's task list says them (published results keep
            // their source's design).
            let tasks: TasksAnswer = api.json("/api/v1/tasks")?;
            let asked = |task: &str| {
                tasks
                    .tasks
                    .iter()
                    .find(|t| t.id == task)
                    .map_or(i64::from(bundle::BENCHMARK_ATTEMPTS), |t| i64::from(t.attempts))
            };
            let published = manifest.provenance.kind == bundle::ProvenanceKind::Published;
            let mut found = Vec::new();
            for hint in Hint::ALL {
                let signed: Vec<(&str, i64)> = cells
                    .iter()
                    .filter(|((_, h), t)| *h == hint && t.runs > 0)
                    .map(|((task, _), t)| (task.as_str(), t.counted))
                    .collect();
                let valid: Vec<i64> = signed.iter().map(|(_, n)| *n).filter(|n| *n > 0).collect();
                let served = row.coverage.get(&hint).copied();
                let expected = (!signed.is_empty()).then(|| CoverageAnswer {
                    tasks: valid.len() as i64,
                    fewest_attempts: valid.iter().copied().min().unwrap_or(0),
                    most_attempts: signed.iter().map(|(_, n)| *n).max().unwrap_or(0),
                    short_tasks: if published {
                        0
                    } else {
                        signed.iter().filter(|(task, n)| *n < asked(task)).count() as i64
                    },
                });
                if served != expected {
                    found.push(format!(
                        "{}: coverage {served:?}, the signed manifest gives {expected:?}",
                        hint.label()
                    ));
                }
                // Reliability is computed from the counts as reported (the strict view
                // moves it with the reviews).
                let counts: Vec<(i64, i64)> = cells
                    .iter()
                    .filter(|((_, h), t)| *h == hint && t.counted > 0)
                    .map(|(_, t)| (t.counted, t.successes))
                    .collect();
                let shown =
                    row.stats.as_ref().and_then(|s| s.reliability.get(&hint)).and_then(Option::as_ref);
                match (shown, counts.is_empty()) {
                    (None, true) => {}
                    (None, false) => found.push(format!("{}: no pass@k or pass^k shown", hint.label())),
                    (Some(_), true) => {
                        found.push(format!("{}: pass@k shown without counted runs", hint.label()))
                    }
                    (Some(r), false) => {
                        let (at, all) = reliability(&counts);
                        let same = |served: &[Estimate], mine: &[f64]| {
                            served.len() == mine.len()
                                && served.iter().zip(mine).all(|(s, m)| (s.estimate - m).abs() <= 1e-9)
                        };
                        if !same(&r.pass_at, &at) || !same(&r.pass_all, &all) {
                            found.push(format!(
                                "{}: pass@k or pass^k differ from the signed counts",
                                hint.label()
                            ));
                        }
                    }
                }
            }
            claims::audit(&manifest, listed.map(|k| k.tier), &tasks, &detail, &bundle_id, &mut check);
            claims::audit_patches(&manifest, &kept, &detail, &bundle_id, &mut check);
            check(
                found.is_empty(),
                if found.is_empty() {
                    "coverage, pass@k and pass^k under each hint condition follow from the signed manifest"
                        .into()
                } else {
                    format!("coverage and reliability: {}", found.join("; "))
                },
            );
        }
    }
    let read = Read { detail: &detail, reported: &board, totals: &totals };
    integrity(&api, &manifest, read, &bundle_id, &mut check)?;
    sample::audit(&api, &manifest, submission, &detail, &keys, &mut check)?;
    let grid = detail.current.get(&bundle_id);
    let mut found = Vec::new();
    let served_cells: Vec<(String, Hint, Rates)> = grid
        .into_iter()
        .flatten()
        .flat_map(|(task, by_hint)| by_hint.iter().map(move |(h, r)| (task.clone(), *h, *r)))
        .collect();
    for (task, hint, served) in &served_cells {
        let signed = cells.get(&(task.clone(), *hint)).copied().unwrap_or_default();
        found.extend(
            signed.differences(served).into_iter().map(|d| format!("{task} / {}: {d}", hint.label())),
        );
    }
    for (task, hint) in cells.keys() {
        if !served_cells.iter().any(|(t, h, _)| t == task && h == hint) {
            found.push(format!(
                "{task} / {}: the signed manifest has runs the server does not show",
                hint.label()
            ));
        }
    }
    check(
        found.is_empty(),
        if found.is_empty() {
            format!("per task: all {} task × hint cells equal the signed manifest's", cells.len())
        } else {
            format!("per task: {}", found.join("; "))
        },
    );
    Ok(Audit { agent: agent.to_owned(), bundle_id, checks })
}

/// What the audit has already read and tallied: the agent's answer, the leaderboard as
/// reported, and the manifest's totals by hint condition.
#[derive(Clone, Copy)]
struct Read<'a> {
    detail: &'a AgentAnswer,
    reported: &'a LeaderboardAnswer,
    totals: &'a BTreeMap<Hint, Tally>,
}

/// The findings signed in the manifest are all shown as the submitter's, and the flagged
/// counts (as reported, and in the strict view) are what the manifest's successes and
/// the findings shown about them give: a success is flagged while one of its findings,
/// the submitter's or the server's, is not dismissed.
fn integrity(
    api: &Api,
    manifest: &Manifest,
    read: Read<'_>,
    bundle_id: &str,
    check: &mut impl FnMut(bool, String),
) -> Result<(), Error> {
    let Read { detail, reported, totals } = read;
    // A finding's text is `None` where the server withholds it (the run's outputs are
    // private to this reader): its check and place are still compared.
    type Shown = (String, Option<String>, Option<String>, Option<u64>);
    let mut withheld: std::collections::BTreeSet<RunKey> = std::collections::BTreeSet::new();
    let mut shown: BTreeMap<RunKey, Vec<Shown>> = BTreeMap::new();
    let mut doubting: std::collections::BTreeSet<RunKey> = std::collections::BTreeSet::new();
    for record in detail.findings.iter().filter(|f| f.bundle_id == bundle_id) {
        let key = (record.task.clone(), record.hint, record.attempt);
        let f = &record.finding;
        if f.withheld {
            withheld.insert(key.clone());
        }
        if f.found_by == "submitter" {
            let message = (!f.withheld).then(|| f.message.clone());
            let entry = (f.check.clone(), message, f.artifact.clone(), f.line);
            shown.entry(key.clone()).or_default().push(entry);
        }
        if f.review.as_ref().is_none_or(|r| r.verdict != "dismissed") {
            doubting.insert(key);
        }
    }
    // Spec §4g: the manifest names each finding's words by a salted digest; the words are
    // in the run's x-findings, fetched (where this reader may) and checked against it.
    let mut signed: BTreeMap<RunKey, Vec<Shown>> = BTreeMap::new();
    for r in manifest.runs.iter().filter(|r| !r.findings.is_empty()) {
        let key = (r.task.to_string(), r.hint, r.attempt);
        let hide = withheld.contains(&key);
        let sealed = r.findings.iter().any(|f| f.text_digest.is_some());
        let words: Option<Vec<String>> = match (hide, sealed, r.artifacts.get(bundle::FINDINGS_ROLE)) {
            (true, _, _) => None,
            (false, false, _) => Some(r.findings.iter().map(|f| f.message.clone()).collect()),
            (false, true, None) => None,
            (false, true, Some(d)) => {
                let texts =
                    api.bytes(&format!("/artifacts/{d}")).ok().map(|b| bundle::FindingsText::parse(&b));
                match texts {
                    Some(Ok(t)) if t.check(&r.findings).is_ok() => {
                        Some(bundle::unseal(&r.findings, &t).into_iter().map(|f| f.message).collect())
                    }
                    Some(_) => {
                        check(
                            false,
                            format!(
                                "findings: {}/{}/{}: its x-findings are not its findings' words",
                                key.0, key.1, key.2
                            ),
                        );
                        None
                    }
                    None => None,
                }
            }
        };
        let list = r.findings.iter().enumerate().map(|(i, f)| {
            (f.check.clone(), words.as_ref().map(|w| w[i].clone()), f.artifact.clone(), f.line)
        });
        signed.insert(key.clone(), list.collect());
        if words.is_none()
            && let Some(shown) = shown.get_mut(&key)
        {
            shown.iter_mut().for_each(|s| s.1 = None);
        }
    }
    let count: usize = signed.values().map(Vec::len).sum();
    check(
        signed == shown,
        if signed == shown {
            format!("findings: all {count} the manifest signs are shown with their runs as the submitter's")
        } else {
            let differ: Vec<String> = signed
                .keys()
                .chain(shown.keys())
                .filter(|k| signed.get(*k) != shown.get(*k))
                .map(|(t, h, a)| format!("{t}/{h}/{a}"))
                .collect();
            format!("findings: the runs {} show other findings than the manifest signs", differ.join(", "))
        },
    );

    let mut flagged: BTreeMap<Hint, i64> = BTreeMap::new();
    for run in &manifest.runs {
        let key = (run.task.to_string(), run.hint, run.attempt);
        if run.outcome.succeeded() == Some(true) && doubting.contains(&key) {
            *flagged.entry(run.hint).or_default() += 1;
        }
    }
    let strict = api.leaderboard("integrity=strict")?;
    let mut found = Vec::new();
    for (view, board) in [("as reported", reported), ("strict", &strict)] {
        let Some(row) = board.rows.iter().find(|r| r.bundle_id == bundle_id) else {
            found.push(format!("the {view} leaderboard shows no row for this submission"));
            continue;
        };
        for hint in Hint::ALL {
            let Some(signed) = totals.get(&hint) else { continue };
            let served = row.by_hint.get(&hint).copied().unwrap_or_default();
            let expected = flagged.get(&hint).copied().unwrap_or(0);
            if served.flagged != expected {
                found.push(format!(
                    "{view}, {}: {} flagged, the findings shown give {expected}",
                    hint.label(),
                    served.flagged
                ));
            }
            if view == "strict" {
                // Strictly, flagged successes are failures, and so is every
                // infra_error run (spec §4f): every run is counted.
                let mut strict = *signed;
                strict.successes -= expected;
                strict.counted = strict.runs;
                found.extend(
                    strict.differences(&served).into_iter().map(|d| format!("strict, {}: {d}", hint.label())),
                );
            }
        }
    }
    let total: i64 = flagged.values().sum();
    check(
        found.is_empty(),
        if found.is_empty() {
            format!(
                "flagged: {total} successes with a finding not dismissed, counted so on the leaderboard; its strict view counts them, and every infra_error run, as failures"
            )
        } else {
            format!("flagged: {}", found.join("; "))
        },
    );
    Ok(())
}
