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
pub const BADGE_GLYPHS: &[char] =
    &['✓', '✔', '✗', '✘', '◷', '⚑', '⚐', '☑', '☒', '✅', '❌', '❎', '✕', '✖', '🗸', '🗹', '🗷', '⛳'];

/// A field as a reader compares it: NFKC, its skeleton, in lower case.
fn seen(text: &str) -> String {
    let folded: String = text.nfkc().collect::<String>().to_lowercase();
    skeleton(&folded).collect::<String>().to_lowercase()
}

/// What of the board's badges `value` imitates, if anything: the glyph or the word as
/// the field writes it.
pub fn imitated(value: &str) -> Option<String> {
    let plain: String = value.nfkc().collect();
    if let Some(glyph) = plain.chars().find(|c| BADGE_GLYPHS.contains(c)) {
        return Some(glyph.to_string());
    }
    let glyphs: Vec<String> = BADGE_GLYPHS.iter().map(|g| seen(&g.to_string())).collect();
    let looked = seen(value);
    if let Some(g) = glyphs.iter().find(|g| !g.trim().is_empty() && looked.contains(g.as_str())) {
        return Some(g.clone());
    }
    // Words as the reader sees them: runs of letters and digits, and each pair of them
    // side by side ("Self reported", "self-reported").
    let words: Vec<&str> = looked.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let badge: Vec<(String, &str)> = BADGE_WORDS.iter().map(|w| (seen(w).replace('-', ""), *w)).collect();
    let mut candidates: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    candidates.extend(words.windows(2).map(|p| format!("{}{}", p[0], p[1])));
    candidates.iter().find_map(|c| badge.iter().find(|(b, _)| b == c).map(|(_, word)| (*word).to_owned()))
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
        ] {
            assert_eq!(imitated(name), None, "{name}");
        }
    }
}
