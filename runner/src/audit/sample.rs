//! The audit of a submission's reproduction sample (spec §4d, §4e): once its epoch's
//! key is revealed, the key must hash to the commitment the server published before the
//! submission arrived, and the sample the server keeps must be the one the rule picks
//! from the signed manifest; every reproduction must verify with a maintainer's key,
//! name this submission, re-run its runs' signed patches, and end as the server shows.

use std::collections::{BTreeMap, BTreeSet};

use bundle::sample::{self as rule, Candidate, choose, choose_one_each, commitment};
use bundle::{Digest, Envelope, Limits, Manifest, PublicKey, Tier};

use super::api::{AgentAnswer, Api, KeysAnswer, SampleAnswer, SamplingAnswer, SubmissionAnswer};
use crate::Error;

pub(super) fn audit(
    api: &Api,
    manifest: &Manifest,
    submission: &SubmissionAnswer,
    detail: &AgentAnswer,
    keys: &KeysAnswer,
    check: &mut impl FnMut(bool, String),
) -> Result<(), Error> {
    let bundle_id = &submission.bundle_id;
    let sample: SampleAnswer = api.json(&format!("/api/v1/submissions/{bundle_id}/sample"))?;
    let sampling: SamplingAnswer = api.json("/api/v1/sampling")?;
    let keyed = |keyid: &str| keys.keys.iter().find(|k| k.keyid == keyid);
    let submitter = keyed(&submission.keyid).is_some_and(|k| k.tier == Tier::Submitter);
    let shown: BTreeSet<(String, String, u32)> =
        sample.runs.iter().map(|r| (r.task.clone(), r.hint.to_string(), r.attempt)).collect();
    // Runs sampled because the same run of an earlier submission of the agent did not
    // reproduce (spec §4e): each must name one, whose re-run of that run differed.
    // And runs queued because a re-run refuted another run of the submission: each must
    // name a run of it the board shows re-run and not held.
    let carried: BTreeSet<(String, String, u32)> = sample
        .runs
        .iter()
        .filter(|r| r.carried_from.is_some() || r.escalated_by.is_some())
        .map(|r| (r.task.clone(), r.hint.to_string(), r.attempt))
        .collect();
    let escalations: BTreeSet<i64> = sample.runs.iter().filter_map(|r| r.escalated_by).collect();
    for by in &escalations {
        let refuted =
            detail.reproduced.iter().any(|x| &x.bundle_id == bundle_id && x.run_id == *by && !x.held);
        let heldout_refuted = detail
            .reproduced
            .iter()
            .any(|x| &x.bundle_id == bundle_id && x.run_id == *by && x.heldout == Some(false));
        let n = sample.runs.iter().filter(|r| r.escalated_by == Some(*by)).count();
        check(
            refuted || heldout_refuted,
            format!(
                "sample: {n} run(s) queued because run {by} of this submission was refuted: {}",
                if refuted || heldout_refuted {
                    "its re-run there did not hold"
                } else {
                    "the board shows no such refuted re-run"
                }
            ),
        );
    }
    for r in sample.runs.iter() {
        let Some(from) = &r.carried_from else { continue };
        let (held_true, said) = if detail.submissions.iter().any(|s| &s.bundle_id == from) {
            // An earlier submission of this agent: its same run did not reproduce.
            let differed = detail.reproduced.iter().any(|x| {
                &x.bundle_id == from
                    && x.task == r.task
                    && x.hint == r.hint
                    && x.attempt == r.attempt
                    && !x.held
            });
            let earlier = detail
                .submissions
                .iter()
                .any(|s| &s.bundle_id == from && s.received_at < submission.received_at);
            let ok = differed && earlier;
            (
                ok,
                if ok {
                    "its re-run there differed".to_owned()
                } else {
                    "no such earlier re-run that differed".to_owned()
                },
            )
        } else {
            // Another agent's (spec §6a, §5b): a run of the same task there, with this
            // run's patch, was re-run and refuted.
            carried_from_another(api, manifest, r, from, submission)
        };
        check(
            held_true,
            format!(
                "sample: {}/{}/{} is sampled because it did not reproduce in the earlier submission {from}: {said}",
                r.task, r.hint, r.attempt
            ),
        );
    }

    // Spec §4e: the sample's size follows from the successes and the rule it names, and
    // what it catches is recomputed from both.
    let runs = Candidate::of(manifest);
    let successes = rule::successes(&runs);
    let sizes = match &sample.sizing {
        Some(r) => rule::sizes(successes, r),
        None => successes.map(|s| s.min(1)),
    };
    if let Some(r) = &sample.sizing {
        let catches = rule::power(successes, sizes, r.share);
        let same = match (catches, sample.counts.catches) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            (a, b) => a.is_none() && b.is_none(),
        };
        check(
            same && r.problem().is_none(),
            format!(
                "sample size: {} successes of {} by its rule (a {}% share of fakes caught with {}% probability, at \
                 most {} per submission): it catches {}, {}",
                sizes.iter().sum::<u32>(),
                successes.iter().sum::<u32>(),
                r.share * 100.0,
                r.probability * 100.0,
                r.cap,
                catches.map_or_else(|| "nothing (no successes)".to_owned(), |c| format!("{:.1}%", c * 100.0)),
                if same {
                    "as the server says".to_owned()
                } else {
                    match sample.counts.catches {
                        Some(c) => format!("where the server says {:.1}%", c * 100.0),
                        None => "where the server says nothing".to_owned(),
                    }
                }
            ),
        );
    }
    // The rule must be the one the server says was in force when the submission arrived
    // (or its enlarged form, for a submitter one of whose submissions stood refuted):
    // a server that sized this one sample down otherwise is caught.
    if let Some(r) = &sample.sizing {
        let in_force = sampling.sizing_history.iter().rev().find(|h| h.since <= submission.received_at);
        match in_force {
            Some(h) => {
                let ok = *r == h.rule || *r == h.rule.enlarged();
                check(
                    ok,
                    if ok {
                        format!(
                            "sample rule: the {} in force since {}, as the server published it",
                            if *r == h.rule { "rule" } else { "enlarged form of the rule" },
                            h.since
                        )
                    } else {
                        format!(
                            "sample rule: sampled by {r:?}, where the rule in force when it arrived ({}) was {:?}",
                            h.since, h.rule
                        )
                    },
                );
            }
            None => check(
                true,
                "sample rule: unchecked (the server publishes no rule in force when the submission arrived)"
                    .into(),
            ),
        }
    }
    let most = sizes.iter().sum::<u32>() as usize + 2 * bundle::Hint::ALL.len() + carried.len();
    let mut revealed_key: Option<Vec<u8>> = None;
    match sample.epoch.and_then(|e| sampling.epochs.iter().find(|x| x.epoch == e)) {
        None if sample.epoch.is_some() => check(
            false,
            format!("sample: epoch {:?} is not among the server's sampling epochs", sample.epoch),
        ),
        None => {
            let eligible = Candidate::of(manifest).iter().any(Candidate::eligible);
            let kind = manifest.provenance.kind;
            let due = submitter && eligible && kind != bundle::ProvenanceKind::Published;
            check(
                !due,
                if due {
                    "sample: a self-reported submission with runs to sample, but the server sampled none of them"
                        .into()
                } else {
                    "sample: none (only self-reported submissions with patches or infra_error runs are sampled)"
                        .into()
                },
            );
        }
        Some(epoch) => match &epoch.key {
            None => check(
                sample.counts.sampled as usize <= most && !sample.revealed,
                format!(
                    "sample: {} runs sampled under epoch {}, whose key is still secret (commitment {}): it can be \
                     recomputed once the key is revealed",
                    sample.counts.sampled, epoch.epoch, epoch.commitment
                ),
            ),
            Some(key_hex) => {
                let key = hex::decode(key_hex).unwrap_or_default();
                check(
                    commitment(&key) == epoch.commitment && key.len() == bundle::sample::KEY_BYTES,
                    format!(
                        "sampling key: epoch {}'s revealed key hashes to its commitment {}",
                        epoch.epoch, epoch.commitment
                    ),
                );
                check(
                    epoch.committed_at <= submission.received_at,
                    format!(
                        "sampling key: committed at {}, before the submission arrived at {}",
                        epoch.committed_at, submission.received_at
                    ),
                );
                revealed_key = Some(key.clone());
                let chosen = match &sample.sizing {
                    Some(r) => choose(&key, bundle_id, &runs, r),
                    None => choose_one_each(&key, bundle_id, &runs),
                };
                let mut mine: BTreeSet<(String, String, u32)> = chosen
                    .into_iter()
                    .map(|i| (runs[i].task.clone(), runs[i].hint.to_string(), runs[i].attempt))
                    .collect();
                mine.extend(carried.iter().cloned());
                let same = mine == shown && sample.counts.sampled as usize == mine.len();
                check(
                    same,
                    if same {
                        format!(
                            "sample: the {} runs the server sampled are the rule's, recomputed from the signed manifest",
                            mine.len()
                        )
                    } else {
                        format!(
                            "sample: the rule picks {}, the server shows {} ({} counted)",
                            words(&mine),
                            words(&shown),
                            sample.counts.sampled
                        )
                    },
                );
            }
        },
    }

    // Each reproduction, against its own envelope.
    let signed: BTreeMap<(String, String, u32), &bundle::Run> =
        manifest.runs.iter().map(|r| ((r.task.to_string(), r.hint.to_string(), r.attempt), r)).collect();
    let shown_reruns: Vec<_> = detail.reproduced.iter().filter(|r| &r.bundle_id == bundle_id).collect();
    let reproductions: BTreeSet<&str> = shown_reruns.iter().map(|r| r.reproduction.as_str()).collect();
    let maintainers: Vec<PublicKey> = keys
        .keys
        .iter()
        .filter(|k| k.tier == Tier::Maintainer)
        .filter_map(|k| PublicKey::from_pem(&k.public_key).ok())
        .collect();
    let mut found = Vec::new();
    let mut reran = 0;
    let mut differed = 0;
    let (mut heldout, mut generalised, mut variants_checked) = (0, 0, 0);
    // Spec §4j: a reproduction that re-ran a run of a task whose check is private is the
    // maintainers' to read (its durations and sizes could carry what a patch read on
    // their machine); the board's word for its verdicts is all anyone else has.
    let mut withheld = Vec::new();
    for id in &reproductions {
        let bytes = match api.bytes(&format!("/api/v1/submissions/{id}/envelope")) {
            Ok(bytes) => bytes,
            Err(Error::Fetch { reason, .. }) if reason.contains("envelope_withheld") => {
                for r in shown_reruns.iter().filter(|r| r.reproduction == **id) {
                    reran += 1;
                    differed += usize::from(!r.held);
                    if let Some(g) = r.heldout {
                        heldout += 1;
                        generalised += usize::from(g);
                    }
                }
                withheld.push(*id);
                continue;
            }
            Err(e) => return Err(e),
        };
        let opened = Envelope::parse(&bytes).and_then(|e| Ok((e.payload(Limits::default().manifest)?, e)));
        let (payload, envelope) = match opened {
            Ok(x) => x,
            Err(e) => {
                found.push(format!("{id}: not a readable envelope: {e}"));
                continue;
            }
        };
        if envelope.check_signatures(&payload, &maintainers).is_err() {
            found.push(format!("{id}: no signature by a maintainer key the server lists"));
        }
        if Digest::of(&payload).to_hex() != **id {
            found.push(format!("{id}: its manifest hashes otherwise"));
        }
        let Ok(m) = Manifest::parse(&payload) else {
            found.push(format!("{id}: its manifest does not parse"));
            continue;
        };
        if m.reproduction.as_ref().is_none_or(|r| &r.of != bundle_id) {
            found.push(format!("{id}: it does not say it reproduces {bundle_id}"));
        }
        // Spec §4l: each held-out re-run, on the variant the key chose among those of
        // its task registered before the submission arrived.
        for h in m.reproduction.iter().flat_map(|r| r.heldout.iter()) {
            let label = format!("{}/{}/{}", h.task, h.hint, h.attempt);
            heldout += 1;
            generalised += usize::from(h.generalised);
            let on_board = shown_reruns.iter().find(|r| {
                r.reproduction == **id && r.task == h.task && r.hint == h.hint && r.attempt == h.attempt
            });
            if on_board.and_then(|r| r.heldout) != Some(h.generalised) {
                found.push(format!(
                    "{label}: its signed held-out re-run says generalised: {}, the server shows {:?}",
                    h.generalised,
                    on_board.and_then(|r| r.heldout)
                ));
            }
            if let Some(key) = &revealed_key {
                let registered: Vec<&str> = sampling
                    .variants
                    .iter()
                    .filter(|v| v.task == h.task && v.registered_at <= submission.received_at)
                    .filter(|v| v.retired_at.as_ref().is_none_or(|r| *r > submission.received_at))
                    .map(|v| v.digest.as_str())
                    .collect();
                let chosen =
                    bundle::sample::choose_variant(key, bundle_id, &h.task, h.hint, h.attempt, registered);
                variants_checked += 1;
                if chosen != Some(h.variant.as_str()) {
                    found.push(format!(
                        "{label}: re-run on the held-out variant {}, where the key chooses {}",
                        h.variant,
                        chosen.unwrap_or("none")
                    ));
                }
            }
        }
        for run in &m.runs {
            let key = (run.task.to_string(), run.hint.to_string(), run.attempt);
            let label = format!("{}/{}/{}", key.0, key.1, key.2);
            let Some(original) = signed.get(&key) else {
                found.push(format!("{id}: re-ran {label}, which the submission does not have"));
                continue;
            };
            if run.artifacts.get("patch") != original.artifacts.get("patch") {
                found.push(format!("{id}: {label} re-ran another patch than the one submitted"));
            }
            if !shown.contains(&key) {
                found.push(format!("{id}: {label} is not in the sample the server shows"));
            }
            let held = run.outcome.succeeded() == original.outcome.succeeded();
            reran += 1;
            differed += usize::from(!held);
            let on_board = shown_reruns
                .iter()
                .find(|r| r.reproduction == **id && (r.task.clone(), r.hint.to_string(), r.attempt) == key);
            match on_board {
                Some(r) if r.reproduced == run.outcome && r.held == held => {}
                Some(r) => found.push(format!(
                    "{label}: the server shows the re-run as {} (held: {}), its signed reproduction says {} (held: {held})",
                    r.reproduced, r.held, run.outcome
                )),
                None => found.push(format!("{label}: re-run in {id}, but the server does not show it")),
            }
        }
    }
    if sample.counts.reproduced != reran as i64 || sample.counts.differed != differed as i64 {
        found.push(format!(
            "the server counts {} re-run and {} different, the signed reproductions {reran} and {differed}",
            sample.counts.reproduced, sample.counts.differed
        ));
    }
    if sample.counts.heldout != heldout as i64 || sample.counts.generalised != generalised as i64 {
        found.push(format!(
            "the server counts {} of {} held-out re-runs generalised, the signed reproductions {generalised} of {heldout}",
            sample.counts.generalised, sample.counts.heldout
        ));
    }
    let unseen = if withheld.is_empty() {
        String::new()
    } else {
        format!(
            " ({} of them withheld from you and taken on the server's word: they re-ran a task whose check is \
             private, which only the maintainers read; audit with --token to check them: {})",
            withheld.len(),
            withheld.join(", ")
        )
    };
    check(
        found.is_empty(),
        if found.is_empty() {
            format!(
                "reproductions: {} signed by maintainers{unseen} re-ran {reran} sampled runs with their submitted \
                 patches; {differed} ended otherwise; held out: {generalised} of {heldout} generalised{}, as the \
                 server shows",
                reproductions.len(),
                if variants_checked > 0 {
                    format!(" (each variant the revealed key's choice, recomputed for {variants_checked})")
                } else {
                    String::new()
                }
            )
        } else {
            format!("reproductions{unseen}: {}", found.join("; "))
        },
    );
    Ok(())
}

fn words(runs: &BTreeSet<(String, String, u32)>) -> String {
    if runs.is_empty() {
        return "none".into();
    }
    runs.iter().map(|(t, h, a)| format!("{t}/{h}/{a}")).collect::<Vec<_>>().join(", ")
}

/// Whether run `r` of `manifest`, sampled as carried from `from`, a submission of another
/// agent, is so rightly: `from` arrived earlier, has a run of the same task the board
/// shows re-run and refuted, and that run's patch is this one's (by digest; a patch with
/// the same identity but other bytes cannot be told from the manifests, and is said).
fn carried_from_another(
    api: &Api,
    manifest: &Manifest,
    r: &super::api::SampledRunAnswer,
    from: &str,
    submission: &SubmissionAnswer,
) -> (bool, String) {
    let read = || -> Result<(Manifest, AgentAnswer), String> {
        let bytes = api.bytes(&format!("/api/v1/submissions/{from}/envelope")).map_err(|e| e.to_string())?;
        let envelope = Envelope::parse(&bytes).map_err(|e| e.to_string())?;
        let payload = envelope.payload(Limits::default().manifest).map_err(|e| e.to_string())?;
        let theirs = Manifest::parse(&payload).map_err(|e| e.to_string())?;
        let agent: AgentAnswer =
            api.json(&format!("/api/v1/agents/{}", theirs.agent.id)).map_err(|e| e.to_string())?;
        Ok((theirs, agent))
    };
    let (theirs, agent) = match read() {
        Ok(read) => read,
        Err(why) => return (false, format!("it names a submission the audit cannot read: {why}")),
    };
    let earlier =
        agent.submissions.iter().any(|s| s.bundle_id == from && s.received_at < submission.received_at);
    let refuted: Vec<&super::api::ReproducedAnswer> = agent
        .reproduced
        .iter()
        .filter(|x| x.bundle_id == from && x.task == r.task && (!x.held || x.heldout == Some(false)))
        .collect();
    let ours = manifest
        .runs
        .iter()
        .find(|m| m.task.as_str() == r.task && m.hint == r.hint && m.attempt == r.attempt)
        .and_then(|m| m.artifacts.get("patch"));
    let same_bytes = refuted.iter().any(|x| {
        theirs
            .runs
            .iter()
            .find(|t| t.task.as_str() == x.task && t.hint == x.hint && t.attempt == x.attempt)
            .and_then(|t| t.artifacts.get("patch"))
            .is_some_and(|p| Some(p) == ours)
    });
    match (earlier, refuted.is_empty()) {
        (false, _) => {
            (false, format!("agent {}'s submission {from} did not arrive before this one", theirs.agent.id))
        }
        (true, true) => (
            false,
            format!("agent {}'s submission {from} has no refuted re-run of {}", theirs.agent.id, r.task),
        ),
        (true, false) if same_bytes => {
            (true, format!("a re-run of the same patch in agent {}'s submission differed", theirs.agent.id))
        }
        (true, false) => (
            true,
            format!(
                "a re-run of {} in agent {}'s submission differed; that its patch is this one's by identity (the \
                 same changes, written otherwise) is the server's word",
                r.task, theirs.agent.id
            ),
        ),
    }
}
