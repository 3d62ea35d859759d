//! How numbers and the benchmark's words are shown.

mod sample;
pub use sample::{catch_words, regrade_words, taint_words};

use store::{Hint, Outcome, ProvenanceKind, Tier};

/// A rate as a whole percentage; a dash where no run counted.
pub fn pct(rate: Option<f64>) -> String {
    rate.map_or_else(|| "–".to_owned(), |r| format!("{:.0}%", r * 100.0))
}

/// A change in percentage points, signed.
pub fn points(delta: Option<f64>) -> String {
    match delta {
        None => "–".to_owned(),
        Some(d) if d.abs() < 0.005 => "±0".to_owned(),
        Some(d) => format!("{:+.0}", d * 100.0),
    }
}

/// The symbol a page shows beside an outcome's words. The symbol and the words carry
/// the meaning; colour only repeats it.
pub fn outcome_symbol(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "✓",
        Outcome::WrongResult | Outcome::ExecutionFailed => "✗",
        Outcome::Timeout => "◔",
        Outcome::PatchFailed => "⊘",
        Outcome::EmptyPatch => "∅",
        Outcome::InfraError => "⚠",
    }
}

pub fn outcome_words(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::WrongResult => "wrong result",
        Outcome::ExecutionFailed => "execution failed",
        Outcome::Timeout => "timeout",
        Outcome::PatchFailed => "patch failed",
        Outcome::EmptyPatch => "empty patch",
        Outcome::InfraError => "infrastructure error",
    }
}

pub fn tier_title(tier: Tier) -> &'static str {
    match tier {
        Tier::Maintainer => "Signed by a benchmark maintainer's key",
        Tier::Submitter => {
            "Signed by the submitter's own key; the maintainers re-run only a sample of its runs"
        }
    }
}

/// What a submission covers in valid attempts, in words, where it is less than
/// RExBench's design (every task of the set under each of the three conditions, 5 valid
/// attempts each): "2 of 12 tasks, no hints only, 3 valid attempts each", naming the
/// tasks short of the attempts asked. None for a full submission.
pub fn coverage_words(
    coverage: &std::collections::BTreeMap<Hint, store::Coverage>,
    of: usize,
) -> Option<String> {
    const DESIGNED_ATTEMPTS: i64 = store::BENCHMARK_ATTEMPTS as i64;
    let full = Hint::ALL.iter().all(|h| {
        coverage.get(h).is_some_and(|c| {
            c.tasks as usize >= of
                && c.short_tasks == 0
                && c.fewest_attempts == DESIGNED_ATTEMPTS
                && c.most_attempts == DESIGNED_ATTEMPTS
        })
    });
    if full || coverage.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let tasks: Vec<i64> = coverage.values().map(|c| c.tasks).collect();
    if tasks.iter().all(|t| *t == tasks[0]) {
        parts.push(format!("{} of {of} tasks", tasks[0]));
    } else {
        parts.push(
            coverage
                .iter()
                .map(|(h, c)| format!("{} of {of} tasks with {}", c.tasks, h.label().to_lowercase()))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if coverage.len() < Hint::ALL.len() {
        let names: Vec<String> = coverage.keys().map(|h| h.label().to_lowercase()).collect();
        parts.push(format!("{} only", names.join(" and ")));
    }
    let fewest = coverage.values().map(|c| c.fewest_attempts).min().unwrap_or(0);
    let most = coverage.values().map(|c| c.most_attempts).max().unwrap_or(0);
    parts.push(if fewest == most {
        format!("{fewest} valid attempt{} each", if fewest == 1 { "" } else { "s" })
    } else {
        format!("{fewest}–{most} valid attempts per task")
    });
    for (hint, c) in coverage.iter().filter(|(_, c)| c.short_tasks > 0) {
        parts.push(format!(
            "{} task{} short of the attempts asked with {}",
            c.short_tasks,
            if c.short_tasks == 1 { "" } else { "s" },
            hint.label().to_lowercase()
        ));
    }
    Some(parts.join(", "))
}

/// A row's runs that ended `infra_error`, per condition, in words: "3 of 6 runs with no
/// hints (50%), 1 of 6 with hints (17%)". None where there are none.
pub fn infra_error_words(by_hint: &std::collections::BTreeMap<Hint, store::Rates>) -> Option<String> {
    let parts: Vec<String> = by_hint
        .iter()
        .filter(|(_, r)| r.infra_errors > 0)
        .enumerate()
        .map(|(i, (hint, r))| {
            format!(
                "{} of {}{} with {} ({})",
                r.infra_errors,
                r.runs,
                if i == 0 { " runs" } else { "" },
                hint.label().to_lowercase(),
                pct(r.infra_error_share)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

pub fn provenance_label(provenance: ProvenanceKind) -> &'static str {
    match provenance {
        ProvenanceKind::Published => "Reported in the paper",
        ProvenanceKind::Imported => "Imported",
        ProvenanceKind::Evaluated => "Evaluated",
    }
}

/// A provenance in a word, as a leaderboard row's badge says it.
pub fn provenance_short(provenance: ProvenanceKind) -> &'static str {
    match provenance {
        ProvenanceKind::Published => "Paper",
        ProvenanceKind::Imported => "Imported",
        ProvenanceKind::Evaluated => "Evaluated",
    }
}

/// A harness in a few words, as a leaderboard row's badge says it: its name without its
/// version, and RExBench's own harness as the original one.
pub fn harness_short(harness: &store::Harness) -> String {
    match harness.name.as_str() {
        store::Harness::ORIGINAL => "Original harness".to_owned(),
        _ => harness.title(),
    }
}

/// The badge's words where the source is known: an import names its harness
/// (`harbor 0.3.1, job …` → "Imported from Harbor").
pub fn provenance_badge(provenance: ProvenanceKind, source: Option<&str>) -> String {
    let harness = source.and_then(|s| s.split([' ', ',']).next()).filter(|h| !h.is_empty());
    match (provenance, harness) {
        (ProvenanceKind::Imported, Some(harness)) => {
            let mut chars = harness.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
            format!("Imported from {first}{}", chars.as_str())
        }
        _ => provenance_label(provenance).to_owned(),
    }
}

pub fn provenance_title(provenance: ProvenanceKind, source: Option<&str>) -> String {
    match provenance {
        ProvenanceKind::Published => {
            "Published in the RExBench paper; runs reconstructed from its per-task fractions".to_owned()
        }
        ProvenanceKind::Imported => format!(
            "Run and judged by another harness ({}), not by this project's runner; imported with the verifier's output, and the agent's patch where the job kept one",
            source.unwrap_or("source not named")
        ),
        ProvenanceKind::Evaluated => {
            "Evaluated by the runner from the agent's patches, with patches and logs".to_owned()
        }
    }
}

/// A link target only if it is an http(s) URL; anything else is shown as text.
pub fn safe_url(url: &str) -> Option<&str> {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url.trim())
}

pub fn bytes(n: i64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// US dollars: cents where they matter, a dash where unknown.
pub fn usd(amount: Option<f64>) -> String {
    match amount {
        None => "–".to_owned(),
        Some(a) if a != 0.0 && a.abs() < 0.01 => format!("${a:.4}"),
        Some(a) if a.abs() >= 1000.0 => format!("${a:.0}"),
        Some(a) => format!("${a:.2}"),
    }
}

pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 3600.0 => format!("{:.1} h", s / 3600.0),
        s if s >= 60.0 => format!("{:.1} min", s / 60.0),
        s => format!("{s:.1} s"),
    }
}

/// Appends `value` with four decimals: exactly what `format!("{value:.4}")` writes (the
/// exact binary value rounded, ties to even; a sign on negative zero), an order of
/// magnitude faster for the values exports hold. A value of at most 2^53 in magnitude is
/// `m · 2^-k` with `m < 2^53`, so `value · 10^4` is the integer `m · 10^4` (under 2^67)
/// shifted right by `k`, and rounding reads the bits shifted out. Others (huge, tiny
/// beyond 2^-127, not finite) go through `format!`.
pub fn fixed4(value: f64, out: &mut String) {
    const SCALE: u128 = 10_000;
    let bits = value.to_bits();
    // Common (no success at all), and below the exact path's range.
    if bits == 0 {
        out.push_str("0.0000");
        return;
    }
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    // value = mantissa · 2^exponent
    let (mantissa, exponent) =
        if biased == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased - 1075) };
    if biased == 0x7ff || exponent > 0 || exponent < -127 {
        use std::fmt::Write as _;
        let _ = write!(out, "{value:.4}");
        return;
    }
    let shift = (-exponent) as u32;
    let scaled = u128::from(mantissa) * SCALE;
    let mut q = if shift == 0 { scaled } else { scaled >> shift };
    if shift > 0 {
        let rest = scaled & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rest > half || (rest == half && q % 2 == 1) {
            q += 1;
        }
    }
    if value.is_sign_negative() {
        out.push('-');
    }
    let (whole, part) = (q / SCALE, (q % SCALE) as u32);
    out.push_str(itoa::Buffer::new().format(whole as u64));
    out.push('.');
    for unit in [1000, 100, 10, 1] {
        out.push(char::from(b'0' + (part / unit % 10) as u8));
    }
}

/// The first characters of a digest or bundle id, enough to tell them apart on a page.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Text made safe to write into HTML as it is.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `path?k=v&…` with the pairs that have a value, encoded as a form would.
pub fn href(path: &str, pairs: &[(&str, Option<&str>)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            query.append_pair(k, v);
        }
    }
    let query = query.finish();
    if query.is_empty() { path.to_owned() } else { format!("{path}?{query}") }
}

/// A path segment, percent-encoded.
pub fn segment(s: impl AsRef<str>) -> String {
    form_urlencoded::byte_serialize(s.as_ref().as_bytes()).collect::<String>().replace('+', "%20")
}

/// An agent's name with the harness that ran it, said once: a name that names its
/// harness already (the parity experiment's `… (Harbor)`) is left as it is.
pub fn named_with_harness(name: &str, harness: &store::Harness) -> String {
    let title = harness.title();
    if name.to_lowercase().contains(&title.to_lowercase()) {
        name.to_owned()
    } else {
        format!("{name} ({})", harness.label())
    }
}

/// A text cell of an export as no spreadsheet runs it (OWASP's CSV-injection rule): a
/// cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to
/// Excel, LibreOffice and Google Sheets, so it is written after a `'`, which they show
/// as text. Every free text a submitter chose goes through this in every export.
pub fn spreadsheet_text(text: &str) -> std::borrow::Cow<'_, str> {
    match text.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => std::borrow::Cow::Owned(format!("'{text}")),
        _ => std::borrow::Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exported_cell_never_begins_a_formula() {
        for cell in ["=1+2", "+1", "-2+3", "@SUM(1,2)", "\t=1", "\r=1", "=HYPERLINK(\"http://x\")"] {
            let safe = spreadsheet_text(cell);
            assert_eq!(safe, format!("'{cell}"), "{cell:?}");
        }
        for cell in ["aider", "gpt-4o", "", "1.5", "'quoted"] {
            assert_eq!(spreadsheet_text(cell), cell);
        }
    }
    use super::*;

    #[test]
    fn a_name_says_its_harness_once() {
        let harbor = store::Harness::new("harbor", Some("0.3.1".into()));
        assert_eq!(named_with_harness("OpenHands + Claude (Harbor)", &harbor), "OpenHands + Claude (Harbor)");
        assert_eq!(named_with_harness("OpenHands + Claude", &harbor), "OpenHands + Claude (Harbor 0.3.1)");
        let original = store::Harness::new("rexbench-original", None);
        assert_eq!(
            named_with_harness("OpenHands 1.4.0 + Claude Sonnet 4.5 (RExBench original harness)", &original),
            "OpenHands 1.4.0 + Claude Sonnet 4.5 (RExBench original harness)"
        );
    }

    #[test]
    fn numbers_read_as_people_expect() {
        assert_eq!(pct(Some(0.42)), "42%");
        assert_eq!(pct(Some(0.4166)), "42%");
        assert_eq!(pct(None), "–");
        assert_eq!(points(Some(0.2)), "+20");
        assert_eq!(points(Some(-0.08)), "-8");
        assert_eq!(points(Some(0.001)), "±0");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(seconds(90.0), "1.5 min");
        assert_eq!(usd(Some(0.2)), "$0.20");
        assert_eq!(usd(Some(0.0031)), "$0.0031");
        assert_eq!(usd(Some(35.134)), "$35.13");
        assert_eq!(usd(Some(1234.4)), "$1234");
        assert_eq!(usd(None), "–");
    }

    #[test]
    fn four_decimals_are_what_format_writes() {
        let std = |v: f64| format!("{v:.4}");
        let fast = |v: f64| {
            let mut s = String::new();
            fixed4(v, &mut s);
            s
        };
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            0.03125,
            0.00005,
            0.00015,
            0.99995,
            0.999_949_999,
            1e-5,
            -1e-5,
            4e-5,
            5e-5,
            6e-5,
            123_456.789_05,
            9_007_199_254_740_992.0,
            9_007_199_254_740_993.0,
            1e300,
            -1e300,
            5e-324,
            1e-40,
            2f64.powi(-127),
            2f64.powi(-128),
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        // Every rate of up to 400 runs, and ties at each shift: (2i + 1) / 2^j · 10^-4.
        for n in 1..=400u32 {
            values.extend((0..=n).map(|k| f64::from(k) / f64::from(n)));
        }
        for j in 1..=60 {
            for i in 0..20u32 {
                values.push(f64::from(2 * i + 1) / 2f64.powi(j) / 1e4);
                values.push(f64::from(2 * i + 1) / 2f64.powi(j));
            }
        }
        // Bit patterns from a fixed generator (xorshift): every exponent the fast path takes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let exponent = 1075 - 130 + (x >> 56) % 140;
            values.push(f64::from_bits((x & ((1 << 52) - 1)) | (exponent << 52) | (x & (1 << 63))));
        }
        for v in values {
            assert_eq!(fast(v), std(v), "{v:e}");
        }
    }

    #[test]
    fn links_carry_their_state() {
        assert_eq!(
            href("/", &[("sort", Some("final-none")), ("tier", None), ("model", Some(""))]),
            "/?sort=final-none"
        );
        assert_eq!(href("/compare", &[("a", Some("x y&z"))]), "/compare?a=x+y%26z");
        assert_eq!(href("/", &[]), "/");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn only_http_links() {
        assert_eq!(safe_url("https://example.org/a"), Some("https://example.org/a"));
        assert_eq!(safe_url("javascript:alert(1)"), None);
        assert_eq!(safe_url(" JAVASCRIPT:alert(1)"), None);
        assert_eq!(safe_url("data:text/html,x"), None);
    }
}

/// A sampled run's reproduction in words: "same outcome" where the re-run ended as
/// submitted, "same verdict (…)" where it failed otherwise, "different: … → …" where
/// its final success differs.
pub fn reproduction_words(submitted: Outcome, reproduced: Outcome, held: bool) -> String {
    match (held, submitted == reproduced) {
        (true, true) => "reproduced: same outcome".to_owned(),
        (true, false) => {
            format!("reproduced: same verdict ({} → {})", outcome_words(submitted), outcome_words(reproduced))
        }
        (false, _) => format!("different: {} → {}", outcome_words(submitted), outcome_words(reproduced)),
    }
}

/// A submission's held-out re-runs in words (spec §4l): "held out: 1 of 2
/// generalised"; none where none was re-run on a variant.
pub fn heldout_words(heldout: i64, generalised: i64) -> Option<String> {
    (heldout > 0).then(|| format!("held out: {generalised} of {heldout} generalised"))
}

/// A submission's sample in words: "reproduced 3 of 4 sampled", with the runs that
/// differed.
pub fn sample_words(sampled: i64, reproduced: i64, differed: i64) -> String {
    match (sampled, differed) {
        (0, _) => "not sampled".to_owned(),
        (n, 0) => format!("reproduced {reproduced} of {n} sampled"),
        (n, d) => format!("reproduced {reproduced} of {n} sampled; {d} different"),
    }
}
