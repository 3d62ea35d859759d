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

/// Words as the hint check compares them: the text in Unicode NFKC, without the
/// characters that show nothing (zero-width spaces and joiners, the word joiner, the
/// byte-order mark, soft hyphens), in lower case, a JSON string's escaped line break, tab
/// or quote read as what it stands for, and cut into words at every character that is
/// neither a letter nor a digit (punctuation and whitespace alike): a passage quoted in a
/// log or in a trajectory's JSON, with or without its final full stop, with another
/// width of its letters or a zero-width space inside a word, gives the same words.
fn words(text: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    let text = text.replace("\\n", " ").replace("\\t", " ").replace("\\\"", "\"");
    let shown: String = text
        .nfkc()
        .filter(|c| !matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'))
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    // Look-alike letters of other scripts read as the Latin ones (the badge check's
    // reading, spec §4o), word by word.
    shown.split_whitespace().map(bundle::as_seen).collect()
}

/// An agent record's text: UTF-16 by its byte-order mark (or by the zero bytes of UTF-16
/// written without one), else UTF-8, a byte that is not read as U+FFFD.
fn record_text(record: &[u8]) -> String {
    let utf16 = |bytes: &[u8], little: bool| -> String {
        let units = bytes.chunks_exact(2).map(|p| {
            if little { u16::from_le_bytes([p[0], p[1]]) } else { u16::from_be_bytes([p[0], p[1]]) }
        });
        char::decode_utf16(units).map(|c| c.unwrap_or('\u{FFFD}')).collect()
    };
    if let Some(rest) = record.strip_prefix(b"\xff\xfe") {
        return utf16(rest, true);
    }
    if let Some(rest) = record.strip_prefix(b"\xfe\xff") {
        return utf16(rest, false);
    }
    let head = &record[..record.len().min(4096)];
    let zeros = |parity: usize| head.iter().skip(parity).step_by(2).filter(|&&b| b == 0).count();
    if head.len() >= 8 && zeros(1) * 2 > head.len() / 2 && zeros(0) == 0 {
        return utf16(record, true);
    }
    if head.len() >= 8 && zeros(0) * 2 > head.len() / 2 && zeros(1) == 0 {
        return utf16(record, false);
    }
    String::from_utf8_lossy(record).into_owned()
}

/// How many words a hint check's n-grams hold.
const NGRAM: usize = 3;

/// The share of a passage's n-grams a record must hold for the passage to be quoted:
/// two words edited in a passage of twelve leave 4 of its 10 three-word n-grams.
const QUOTED_SHARE: f64 = 0.4;

/// Whether `passage` (its words) is quoted in a transcript whose word n-grams are
/// `grams` (and whose words, joined by spaces, are `joined`): a passage shorter than an
/// n-gram must appear whole; a longer one is quoted where at least [`QUOTED_SHARE`] of its
/// overlapping n-grams are in the transcript, so that a quote with a word or two edited
/// is found, while a transcript that merely uses the task's words, rarely three of the
/// passage's in its order, is not.
fn quoted(passage: &[String], grams: &std::collections::HashSet<&[String]>, joined: &str) -> bool {
    if passage.is_empty() {
        return false;
    }
    if passage.len() < NGRAM {
        return format!(" {joined} ").contains(&format!(" {} ", passage.join(" ")));
    }
    let windows: Vec<&[String]> = passage.windows(NGRAM).collect();
    let held = windows.iter().filter(|w| grams.contains(*w)).count();
    held as f64 >= QUOTED_SHARE * windows.len() as f64
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
    let decoded = record_text(record);
    let text = match serde_json::from_str::<serde_json::Value>(&decoded) {
        Ok(json) => {
            let mut words = String::new();
            strings_of(&json, &mut words);
            words
        }
        Err(_) => decoded,
    };
    let transcript = words(&text);
    let grams: std::collections::HashSet<&[String]> = transcript.windows(NGRAM).collect();
    let joined = transcript.join(" ");
    let quoted = passages.iter().position(|p| quoted(&words(p), &grams, &joined))?;
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

        // Issue 75, attack 6: quoted without its final full stop, with a zero-width space
        // inside a word, in full-width letters, or with a word edited, it is found.
        for loose in [
            "I will lower-case each token before looking it up in the word lists",
            "Lower-case each to\u{200B}ken before looking it up in the word lists.",
            "\u{FF2C}ower-case each token before looking it up in the word lists.",
            "Lower-case every token before looking it up in the word lists.",
            "lower case each token, before looking it up in the word-lists!",
            // A review's (issue 75): two words edited, and Cyrillic look-alikes inside.
            "Lower-case each word before looking it up on the word lists.",
            "Lower-case each t\u{043E}ken before looking it up \u{0456}n the word lists.",
        ] {
            assert!(hint_in_transcript(&card, &run, Some(loose.as_bytes())).is_some(), "{loose}");
        }
        // The exact quote in a log written as UTF-16, with its byte-order mark or without.
        let passage = "Lower-case each token before looking it up in the word lists.";
        let le: Vec<u8> = passage.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = passage.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for utf16 in [[b"\xff\xfe".to_vec(), le.clone()].concat(), [b"\xfe\xff".to_vec(), be].concat(), le] {
            assert!(hint_in_transcript(&card, &run, Some(&utf16)).is_some());
        }
        // An honest transcript that uses the task's words, never the passage's run of
        // them, is not flagged.
        for honest in [
            "Each token is looked up in the word lists; I lower-cased the file first.",
            "The word lists are case sensitive, so each token needs care before the look up.",
            "token lists word each case lower",
        ] {
            assert!(hint_in_transcript(&card, &run, Some(honest.as_bytes())).is_none(), "{honest}");
        }
    }

    #[test]
    fn a_short_passage_must_be_quoted_whole() {
        let words_of = |t: &str| words(t);
        let transcript = words_of("we used the Adam optimizer here");
        let grams: std::collections::HashSet<&[String]> = transcript.windows(NGRAM).collect();
        let joined = transcript.join(" ");
        assert!(!quoted(&words_of("Use Adam."), &grams, &joined));
        assert!(quoted(&words_of("the Adam optimizer"), &grams, &joined));
        // Whole words: "adam optim" is no quote of "adam optimizer".
        assert!(!quoted(&words_of("Adam optim"), &grams, &joined));
        assert!(!quoted(&[], &grams, &joined));
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
