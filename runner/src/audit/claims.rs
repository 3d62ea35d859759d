//! Spec §5a, recomputed from what anyone may read: that the key the server names may sign
//! the bundle's kind, that no task and condition has more valid attempts than its task
//! asks, and that every success whose agent record is another success's (the same digest,
//! in the signed manifest) carries the server's `copied-attempt` finding.

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
