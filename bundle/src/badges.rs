//! The board's own badges, which an agent's free-text fields may not imitate (spec §4o):
//! a name that says "✔ Verified · Paper · by Maintainers" would be read as the board's
//! word before the real badge beside it.
//!
//! A field is compared as a reader sees it, not as its bytes are: NFKC (fullwidth and
//! styled letters become plain ones), the UTS #39 skeleton (Cyrillic, Greek and other
//! look-alikes become the Latin letters they imitate; invisible characters go), and case.

use unicode_normalization::UnicodeNormalization;
use unicode_security::confusable_detection::skeleton;

/// The words the board's badges and marks are made of, as its pages write them.
pub const BADGE_WORDS: &[&str] = &[
    "verified",
    "unverified",
    "self-reported",
    "selfreported",
    "paper",
    "maintainer",
    "maintainers",
    "reproduced",
    "official",
    "imported",
    "evaluated",
];

/// The glyphs the board's badges and marks use, and the check and cross marks a reader
/// would take for them.
pub const BADGE_GLYPHS: &[char] = &[
    '✓', '✔', '✗', '✘', '◷', '⚑', '⚐', '☑', '☒', '☐', '✅', '❌', '❎', '✕', '✖', '🗸', '🗹', '🗷', '⛳', '√',
    '∨', 'ᐯ', '🮱', '⨯', '☓', '🗴', '🗵', '🗶', '🚩', '🏁', '🏳', '🏴',
];

/// Letters neither NFKC nor the UTS #39 skeleton takes to the Latin ones they are read as
/// (small capitals, and a few look-alikes a review found), and the digits and signs
/// written for letters (`Ver1f1ed`, `0fficial`): each as the letter a reader sees. `l`
/// and `1` are read as `i`, in a field and in the badge words alike.
const READ_AS: &[(char, char)] = &[
    ('ᴀ', 'a'),
    ('ʙ', 'b'),
    ('ᴄ', 'c'),
    ('ᴅ', 'd'),
    ('ᴇ', 'e'),
    ('ꜰ', 'f'),
    ('ɢ', 'g'),
    ('ʜ', 'h'),
    ('ɪ', 'i'),
    ('ᴊ', 'j'),
    ('ᴋ', 'k'),
    ('ʟ', 'l'),
    ('ᴍ', 'm'),
    ('ɴ', 'n'),
    ('ᴏ', 'o'),
    ('ᴘ', 'p'),
    ('ǫ', 'q'),
    ('ʀ', 'r'),
    ('ꜱ', 's'),
    ('ᴛ', 't'),
    ('ᴜ', 'u'),
    ('ᴠ', 'v'),
    ('ᴡ', 'w'),
    ('ʏ', 'y'),
    ('ᴢ', 'z'),
    ('ε', 'e'),
    ('ϵ', 'e'),
    ('ʋ', 'v'),
    ('ν', 'v'),
    ('ι', 'i'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('α', 'a'),
    ('τ', 't'),
    ('κ', 'k'),
    ('1', 'i'),
    ('l', 'i'),
    ('|', 'i'),
    ('!', 'i'),
    ('0', 'o'),
    ('3', 'e'),
    ('4', 'a'),
    ('5', 's'),
    ('7', 't'),
    ('$', 's'),
    ('@', 'a'),
];

/// A field as a reader compares it: NFKC, its skeleton, in lower case, each letter as
/// [`READ_AS`] reads it. The hint check reads an agent's record so too.
pub fn seen(text: &str) -> String {
    let read = |c: char| READ_AS.iter().find(|(from, _)| *from == c).map_or(c, |(_, to)| *to);
    // Read before the skeleton (which takes some small capitals elsewhere) and after it.
    let folded: String = text.nfkc().collect::<String>().to_lowercase().chars().map(read).collect();
    let skeletal: String = skeleton(&folded).collect::<String>().to_lowercase();
    skeletal.chars().map(read).collect()
}

/// What two names are compared by, for one owner per reading: the name as a reader sees
/// it ([`seen`]) with its letters and digits alone (spaces, punctuation and invisible
/// characters go), so that `Team  A`, `Team-A` and `team a` are one name.
pub fn owner_key(text: &str) -> String {
    seen(text).chars().filter(|c| c.is_alphanumeric()).collect()
}

/// The board's glyph `value` writes, if any (NFKC and the skeleton taken).
pub fn glyph(value: &str) -> Option<String> {
    let plain: String = value.nfkc().collect();
    if let Some(glyph) = plain.chars().find(|c| BADGE_GLYPHS.contains(c)) {
        return Some(glyph.to_string());
    }
    // A glyph whose skeleton is a letter (`∨` is `v`) is found as itself above, never as
    // every letter like it.
    let glyphs: Vec<String> = BADGE_GLYPHS
        .iter()
        .map(|g| skeleton(&g.to_string()).collect::<String>())
        .filter(|g| !g.trim().is_empty() && !g.chars().any(|c| c.is_alphanumeric()))
        .collect();
    let looked: String = skeleton(&plain).collect();
    glyphs.into_iter().find(|g| looked.contains(g.as_str()))
}

/// What of the board's badges `value` imitates, if anything: the glyph or the word as
/// the field writes it.
pub fn imitated(value: &str) -> Option<String> {
    if let Some(found) = glyph(value) {
        return Some(found);
    }
    let looked = seen(value);
    // Words as the reader sees them: runs of letters and digits, and each pair of them
    // side by side ("Self reported", "self-reported").
    let words: Vec<&str> = looked.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let badge: Vec<(String, &str)> = BADGE_WORDS.iter().map(|w| (seen(w).replace('-', ""), *w)).collect();
    let mut candidates: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    candidates.extend(words.windows(2).map(|p| format!("{}{}", p[0], p[1])));
    candidates.iter().find_map(|c| badge.iter().find(|(b, _)| b == c).map(|(_, word)| (*word).to_owned()))
}

/// Spec §4o: the manifest's names and words that would be read as the board's badges:
/// the agent's id and free-text fields and each run's error type (shown in the runs'
/// tables), and the glyphs in its provenance's source (quoted by the provenance badge,
/// "Imported from …"; a source names a paper, a harness and its runs in words of its own,
/// so only the glyphs are held against one). Checked after the fields' own rules.
pub(crate) fn check(m: &crate::Manifest) -> Result<(), crate::BundleError> {
    let refused = |field: String, found: String| crate::BundleError::AgentBadgeWords { field, found };
    let a = &m.agent;
    for (name, value) in [
        ("id", Some(&a.id)),
        ("framework", Some(&a.framework)),
        ("framework_version", a.framework_version.as_ref()),
        ("model", Some(&a.model)),
        ("model_id", a.model_id.as_ref()),
        ("display_name", a.display_name.as_ref()),
    ] {
        if let Some(found) = value.and_then(|v| imitated(v)) {
            return Err(refused(format!("agent.{name}"), found));
        }
    }
    if let Some(found) = m.provenance.source.as_deref().and_then(glyph) {
        return Err(refused("provenance.source".into(), found));
    }
    for (index, run) in m.runs.iter().enumerate() {
        if let Some(found) = run.error_type.as_deref().and_then(imitated) {
            let at =
                crate::RunRef { index, key: Some((run.task.to_string(), run.hint.to_string(), run.attempt)) };
            return Err(refused(format!("{at}: error_type"), found));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_badge_is_found_however_it_is_written() {
        for (name, badge) in [
            ("✔ Verified · Paper · by Maintainers", "✔"),
            ("Verified agent", "verified"),
            ("VERIFIED", "verified"),
            ("Ｖｅｒｉｆｉｅｄ", "verified"),
            ("V\u{0435}rified", "verified"),
            ("Veri\u{200b}fied", "verified"),
            ("Self reported", "self-reported"),
            ("self-Reported", "self-reported"),
            ("by the maintainers", "maintainers"),
            ("Paper", "paper"),
            ("agent ✓", "✓"),
            ("agent \u{2714}\u{fe0f}", "✔"),
            ("𝐕𝐞𝐫𝐢𝐟𝐢𝐞𝐝", "verified"),
            ("Reproduced run", "reproduced"),
            // A review's (issue 75): small capitals, Greek and IPA look-alikes, digits for
            // letters, and more check marks.
            ("ᴠᴇʀɪꜰɪᴇᴅ", "verified"),
            ("ᴘᴀᴘᴇʀ", "paper"),
            ("ᴍᴀɪɴᴛᴀɪɴᴇʀꜱ", "maintainers"),
            ("V\u{03b5}rified", "verified"),
            ("\u{028b}erified", "verified"),
            ("Ver1f1ed", "verified"),
            ("Verlfled", "verified"),
            ("0fficial", "official"),
            ("agent √", "√"),
            ("agent ᐯ", "ᐯ"),
            ("agent ∨", "∨"),
            ("agent 🮱", "🮱"),
            ("agent ⨯", "⨯"),
            ("agent 🚩", "🚩"),
            ("agent ☐", "☐"),
        ] {
            assert_eq!(imitated(name).as_deref(), Some(badge), "{name}");
        }
    }

    #[test]
    fn an_honest_name_is_left_alone() {
        for name in [
            "OpenHands",
            "Claude Sonnet 4.5",
            "claude-sonnet-4-5",
            "PaperCoder",
            "PaperQA2",
            "aider + GPT-4o",
            "o1-mini",
            "Maintainability agent",
            "a verifier-in-the-loop agent",
            "DeepSeek-R1",
            "Ｃｌａｕｄｅ",
            "DeepSeek-V3",
            "aider v0.86",
            "Llama 3.1 405B",
            "GPT-4o",
            "o3-mini",
            "SWE-agent 1.0",
            "claude-3-7-sonnet-20250219",
            "Qwen2.5-Coder-32B",
        ] {
            assert_eq!(imitated(name), None, "{name}");
        }
    }
}
