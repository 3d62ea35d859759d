//! Checks of what a run claims beside its result (bundle spec §5a): that its agent's
//! record is its own (no two attempts share one byte for byte), and that a run labelled
//! `none` was given no hint (its transcript does not quote the task's hint text). They
//! look across runs, or at the agent's own words, where the other checks look at one
//! run's patch and experiment.

use std::collections::BTreeMap;

use bundle::{AGENT_RECORD_ROLES, Finding, Hint, Run};

use super::Check;
use crate::task::TaskCard;

pub const COPIED_ATTEMPT: Check = Check {
    slug: "copied-attempt",
    looks_for: "a success whose agent record (its log or trajectory) is byte for byte another success's, \
                in the same bundle or under another agent id: an agent run twice does not write the same \
                record twice, so one of them was copied (a success copied over a failure, or one pool of \
                runs drawn again under a new name); and two successes of one bundle on one task whose \
                patches change the same lines (the same patch identity, bundle spec §5b, however each is \
                written: behind another first line, re-indented): one attempt's work counted as several. A \
                maintainer may dismiss it where the change is so small that attempts meet on it honestly",
};

pub const HINT_IN_TRANSCRIPT: Check = Check {
    slug: "hint-in-transcript",
    looks_for: "a run labelled `none` (no hints) whose agent record quotes a passage of the hints the \
                benchmark gives under a hinted condition (the task's `integrity.toml`, `hint_passages`): \
                a hinted run counted as an unhinted one lifts the no-hint rate",
};

/// Where else a record was seen: the run's key, and the agent whose run it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordUse {
    pub agent_id: String,
    pub task: String,
    pub hint: Hint,
    pub attempt: u32,
}

/// The agent record's digest of `run`, by the first role that holds one.
pub fn record_of(run: &Run) -> Option<(&'static str, &str)> {
    AGENT_RECORD_ROLES.iter().find_map(|role| run.artifacts.get(*role).map(|d| (*role, d.as_str())))
}

/// A finding for each success of `runs` (by index) whose agent record is another
/// success's: of the same bundle, or (`elsewhere`, by digest: successes stored before) of
/// another agent. `agent_id` is the bundle's agent. Only successes count: a copy is made
/// to claim one, and a failure's record shared harms no rate.
pub fn copied_attempts(
    runs: &[Run],
    agent_id: &str,
    elsewhere: &BTreeMap<String, Vec<RecordUse>>,
) -> BTreeMap<usize, Finding> {
    let mut by_record: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate().filter(|(_, r)| r.outcome == bundle::Outcome::Success) {
        if let Some((_, digest)) = record_of(run) {
            by_record.entry(digest).or_default().push(i);
        }
    }
    let mut out = BTreeMap::new();
    for (digest, here) in by_record {
        let others = elsewhere.get(digest).map_or(&[][..], Vec::as_slice);
        let others: Vec<&RecordUse> = others.iter().filter(|u| u.agent_id != agent_id).collect();
        if here.len() < 2 && others.is_empty() {
            continue;
        }
        for &i in &here {
            let run = &runs[i];
            let (role, _) = record_of(run).expect("grouped by its record");
            let mut copies: Vec<String> = here
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| {
                    format!("attempt {} of {} ({})", runs[j].attempt, runs[j].task, runs[j].hint.label())
                })
                .collect();
            copies.extend(others.iter().take(5).map(|u| {
                format!("attempt {} of {} ({}) of agent {}", u.attempt, u.task, u.hint.label(), u.agent_id)
            }));
            if others.len() > 5 {
                copies.push(format!("{} more of other agents", others.len() - 5));
            }
            out.insert(
                i,
                Finding {
                    check: COPIED_ATTEMPT.slug.to_owned(),
                    message: format!(
                        "this run's agent record ({role}) is byte for byte that of {}: a copied attempt",
                        copies.join(", ")
                    ),
                    artifact: Some(role.to_owned()),
                    line: None,
                    text_digest: None,
                },
            );
        }
    }
    out
}

/// A finding for each success of `runs` (by index) whose patch has the identity of
/// another success's of the same task in the same bundle (bundle spec §5b); `identity`
/// gives a run's.
pub fn copied_patches<'r>(
    runs: &'r [Run],
    identity: impl Fn(&'r Run) -> Option<&'r str>,
) -> BTreeMap<usize, Finding> {
    let mut by_patch: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate().filter(|(_, r)| r.outcome == bundle::Outcome::Success) {
        if let Some(id) = identity(run) {
            by_patch.entry((run.task.as_str(), id)).or_default().push(i);
        }
    }
    let mut out = BTreeMap::new();
    for ((_, id), here) in by_patch.into_iter().filter(|(_, here)| here.len() > 1) {
        for &i in &here {
            let others: Vec<String> = here
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| format!("attempt {} ({})", runs[j].attempt, runs[j].hint.label()))
                .collect();
            out.insert(
                i,
                Finding {
                    check: COPIED_ATTEMPT.slug.to_owned(),
                    message: format!(
                        "this run's patch changes the same lines as that of {} of {} in this bundle (patch identity \
                         {id}, however each is written): one attempt's work counted as several",
                        others.join(", "),
                        runs[i].task
                    ),
                    artifact: Some("patch".to_owned()),
                    line: None,
                    text_digest: None,
                },
            );
        }
    }
    out
}

/// Text as the hint check compares it: lower case, every run of whitespace (and a JSON
/// string's escaped line break or tab) one space, so that a passage quoted in a log or in
/// a trajectory's JSON is found alike.
fn normalised(text: &str) -> String {
    let text = text.replace("\\n", " ").replace("\\t", " ").replace("\\\"", "\"");
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Every string in `json` (keys too), each followed by a space.
fn strings_of(json: &serde_json::Value, out: &mut String) {
    match json {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        serde_json::Value::Object(fields) => {
            for (k, v) in fields {
                out.push_str(k);
                out.push(' ');
                strings_of(v, out);
            }
        }
        _ => {}
    }
}

/// A finding if `run`, labelled `none`, has an agent record (`record`, its bytes) that
/// quotes one of `card`'s hint passages.
pub fn hint_in_transcript(card: &TaskCard, run: &Run, record: Option<&[u8]>) -> Option<Finding> {
    let (Hint::None, Some(record)) = (run.hint, record) else { return None };
    let passages = &card.integrity.hint_passages;
    if passages.is_empty() {
        return None;
    }
    // A trajectory's words are its JSON's strings, decoded (a `\u0020` is a space).
    let text = match serde_json::from_slice::<serde_json::Value>(record) {
        Ok(json) => {
            let mut words = String::new();
            strings_of(&json, &mut words);
            words
        }
        Err(_) => String::from_utf8_lossy(record).into_owned(),
    };
    let transcript = normalised(&text);
    let quoted = passages.iter().position(|p| transcript.contains(&normalised(p)))?;
    let (role, _) = record_of(run)?;
    Some(Finding {
        check: HINT_IN_TRANSCRIPT.slug.to_owned(),
        message: format!(
            "this run is labelled no hints, but its agent record ({role}) quotes hint passage {} of the task's \
             integrity.toml: it reads as a hinted run",
            quoted + 1
        ),
        artifact: Some(role.to_owned()),
        line: None,
        text_digest: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(task: &str, hint: Hint, attempt: u32, log: Option<&str>) -> Run {
        let mut r: Run = serde_json::from_value(serde_json::json!({
            "task": task, "hint": hint.as_str(), "attempt": attempt, "outcome": "success"
        }))
        .unwrap();
        if let Some(log) = log {
            r.artifacts.insert("agent_log".into(), log.into());
        }
        r
    }

    #[test]
    fn a_hint_quoted_in_a_trajectorys_escaped_json_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("task.toml"),
            "id = \"t\"\nname = \"T\"\n[evaluation]\ncommand = [\"true\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("integrity.toml"),
            "hint_passages = [\"Lower-case each token before looking it up in the word lists.\"]\n",
        )
        .unwrap();
        let card = crate::task::load(&dir).unwrap();
        let run = run("t", Hint::None, 1, Some("aa"));
        let quoted = br#"{"steps": [{"message": "Lower-case\u0020each token\nbefore looking it up in the word lists."}]}"#;
        assert!(hint_in_transcript(&card, &run, Some(quoted)).is_some());
        assert!(
            hint_in_transcript(
                &card,
                &run,
                Some(b"lower-case each  token before looking it up IN the word lists.")
            )
            .is_some()
        );
        assert!(hint_in_transcript(&card, &run, Some(b"made the words lower case")).is_none());
        let hinted = Run { hint: Hint::Hints, ..run.clone() };
        assert!(hint_in_transcript(&card, &hinted, Some(quoted)).is_none());
    }

    #[test]
    fn a_record_twice_is_a_copy_here_or_under_another_agent() {
        let runs = [
            run("cogs", Hint::None, 1, Some("aa")),
            run("cogs", Hint::None, 2, Some("aa")),
            run("cogs", Hint::None, 3, Some("bb")),
            run("cogs", Hint::None, 4, None),
            Run { outcome: bundle::Outcome::WrongResult, ..run("cogs", Hint::None, 5, Some("bb")) },
        ];
        let found = copied_attempts(&runs, "me", &BTreeMap::new());
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), [0, 1]);
        assert!(found[&1].message.contains("attempt 1 of cogs (No hints)"), "{}", found[&1].message);
        // The same record under this agent's own earlier bundle is a resubmission, not a copy.
        let mine = RecordUse { agent_id: "me".into(), task: "cogs".into(), hint: Hint::None, attempt: 3 };
        let theirs = RecordUse { agent_id: "other".into(), ..mine.clone() };
        let found = copied_attempts(&runs[2..], "me", &[("bb".to_owned(), vec![mine])].into());
        assert!(found.is_empty());
        let found = copied_attempts(&runs[2..], "me", &[("bb".to_owned(), vec![theirs])].into());
        assert!(found[&0].message.contains("of agent other"), "{}", found[&0].message);
    }
}
