//! Spec §5a, recomputed from what anyone may read: that the key the server names may sign
//! the bundle's kind, that no task and condition has more valid attempts than its task
//! asks, and that every success whose agent record is another success's (the same digest,
//! in the signed manifest) carries the server's `copied-attempt` finding; and, from the
//! patches served, that two successes of one task whose patches have one identity (spec
//! §5b, recomputed here) carry it too.

use std::collections::BTreeMap;

use bundle::{Manifest, Outcome, Tier};

use super::api::{AgentAnswer, TasksAnswer};

/// Checks the claims of `manifest` (submission `bundle_id`), signed by a key of `tier`.
pub(super) fn audit(
    manifest: &Manifest,
    tier: Option<Tier>,
    tasks: &TasksAnswer,
    detail: &AgentAnswer,
    bundle_id: &str,
    check: &mut impl FnMut(bool, String),
) {
    let kind = manifest.provenance.kind;
    let rule = kind.rule();
    let allowed = !rule.maintainers_only || tier == Some(Tier::Maintainer);
    check(
        allowed,
        if allowed {
            format!("kind: `{kind}` may be signed by the key that signed it")
        } else {
            format!(
                "kind: `{kind}` is the maintainers' to sign, but the server names {} key",
                tier.map_or("no".to_owned(), |t| format!("a {t}"))
            )
        },
    );

    let asked = |task: &str| tasks.tasks.iter().find(|t| t.id == task).map(|t| t.attempts);
    let mut valid: BTreeMap<(&str, bundle::Hint), u32> = BTreeMap::new();
    for run in manifest.runs.iter().filter(|r| r.outcome.is_counted()) {
        *valid.entry((run.task.as_str(), run.hint)).or_default() += 1;
    }
    let over: Vec<String> = valid
        .iter()
        .filter(|((task, _), n)| rule.held_to_attempts && asked(task).is_some_and(|a| **n > a))
        .map(|((task, hint), n)| format!("{task} / {}: {n} valid attempts", hint.label()))
        .collect();
    check(
        over.is_empty(),
        if over.is_empty() {
            "attempts: no task and condition has more valid attempts than its task asks".into()
        } else {
            format!("attempts: more than the task asks: {}", over.join("; "))
        },
    );

    let mut by_record: BTreeMap<&str, Vec<(&str, bundle::Hint, u32)>> = BTreeMap::new();
    for run in
        manifest.runs.iter().filter(|r| r.outcome == Outcome::Success && manifest.reproduction.is_none())
    {
        if let Some((_, digest)) = benchmark::integrity::record_of(run) {
            by_record.entry(digest).or_default().push((run.task.as_str(), run.hint, run.attempt));
        }
    }
    let flagged = |(task, hint, attempt): &(&str, bundle::Hint, u32)| {
        detail.findings.iter().any(|f| {
            f.bundle_id == bundle_id
                && f.task == *task
                && f.hint == *hint
                && f.attempt == *attempt
                && f.finding.found_by == "server"
                && f.finding.check == benchmark::integrity::COPIED_ATTEMPT.slug
        })
    };
    let copies: Vec<_> = by_record.values().filter(|runs| runs.len() > 1).flatten().collect();
    let missing: Vec<String> = copies
        .iter()
        .filter(|r| !flagged(r))
        .map(|(task, hint, attempt)| format!("{task}/{hint}/{attempt}"))
        .collect();
    check(
        missing.is_empty(),
        if missing.is_empty() {
            format!(
                "copies: {} successes share their agent record with another of this bundle, each flagged as copied",
                copies.len()
            )
        } else {
            format!(
                "copies: successes sharing their agent record but not flagged copied: {}",
                missing.join(", ")
            )
        },
    );
}

/// Spec §5b, recomputed: each patch served (`kept`, by digest) has its identity computed
/// here; two successes of one task of the bundle with one identity must each carry the
/// server's `copied-attempt` finding. Patches not served (private outputs) are counted,
/// not judged.
pub(super) fn audit_patches(
    manifest: &Manifest,
    kept: &BTreeMap<String, Option<Vec<u8>>>,
    detail: &AgentAnswer,
    bundle_id: &str,
    check: &mut impl FnMut(bool, String),
) {
    if manifest.reproduction.is_some() {
        return;
    }
    let mut by_identity: BTreeMap<(&str, String), Vec<&bundle::Run>> = BTreeMap::new();
    let mut unread = 0;
    for run in manifest.runs.iter().filter(|r| r.outcome == Outcome::Success) {
        let Some(digest) = run.artifacts.get("patch") else { continue };
        match kept.get(digest) {
            Some(Some(bytes)) => {
                if let Some(id) = benchmark::diff::identity(&String::from_utf8_lossy(bytes)) {
                    by_identity.entry((run.task.as_str(), id)).or_default().push(run);
                }
            }
            _ => unread += 1,
        }
    }
    let copies: Vec<&&bundle::Run> = by_identity.values().filter(|runs| runs.len() > 1).flatten().collect();
    let missing: Vec<String> = copies
        .iter()
        .filter(|r| {
            !detail.findings.iter().any(|f| {
                f.bundle_id == bundle_id
                    && f.task == r.task.as_str()
                    && f.hint == r.hint
                    && f.attempt == r.attempt
                    && f.finding.found_by == "server"
                    && f.finding.check == benchmark::integrity::COPIED_ATTEMPT.slug
            })
        })
        .map(|r| format!("{}/{}/{}", r.task, r.hint, r.attempt))
        .collect();
    let unread_words = if unread > 0 {
        format!(" ({unread} successes' patches are private outputs, not served to you)")
    } else {
        String::new()
    };
    check(
        missing.is_empty(),
        if missing.is_empty() {
            format!(
                "patch identities: {} successes share a patch with another of their task (however written), each \
                 flagged as copied{unread_words}",
                copies.len()
            )
        } else {
            format!(
                "patch identities: successes sharing a patch but not flagged copied: {}",
                missing.join(", ")
            )
        },
    );
}
