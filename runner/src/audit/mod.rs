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
mod rates;
mod sample;
mod signed;
mod tally;

use std::collections::BTreeMap;
use std::fmt;

use bundle::{Hint, Manifest, PublicKey};

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
use rates::{coverage_and_reliability, row_rates, task_grid};
use signed::{artifacts, signed_manifest};
use tally::Tally;

/// Audits `agent` on the leaderboard at `server`. With `trust`, the signature must be
/// by one of those keys; without, by the key the server lists as the signer's. The
/// checks run in this order, each step its own function: the signature and what it
/// signs, the artifacts, the cost, the leaderboard's row (its rates, harness, coverage
/// and reliability, its claims and patches), the integrity findings, the sample, and
/// the agent's task × hint grid.
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
    let Some((manifest, keys)) = signed_manifest(&api, agent, submission, trust, &mut check)? else {
        return Ok(Audit { agent: agent.to_owned(), bundle_id, checks });
    };
    let listed = keys.keys.iter().find(|k| k.keyid == submission.keyid);
    let kept = artifacts(&api, &manifest, &mut check);
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
            row_rates(row, &manifest, &totals, &mut check);
            let tasks: TasksAnswer = api.json("/api/v1/tasks")?;
            let found = coverage_and_reliability(row, &manifest, &cells, &tasks);
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
    task_grid(&detail, &bundle_id, &cells, &mut check);
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
