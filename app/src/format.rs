//! How numbers and the benchmark's words are shown.

/// The hint conditions in the order pages show them: (key, label).
pub const HINTS: [(&str, &str); 3] =
    [("none", "No hints"), ("hints", "Hints"), ("detailed", "Detailed hints")];

pub fn hint_label(hint: &str) -> &str {
    HINTS.iter().find(|(k, _)| *k == hint).map_or(hint, |(_, l)| l)
}

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

/// Every outcome of a run: (key, symbol, words). The symbol and the words carry the
/// meaning; colour only repeats it.
pub const OUTCOMES: [(&str, &str, &str); 7] = [
    ("success", "✓", "success"),
    ("wrong_result", "✗", "wrong result"),
    ("execution_failed", "✗", "execution failed"),
    ("timeout", "◔", "timeout"),
    ("patch_failed", "⊘", "patch failed"),
    ("empty_patch", "∅", "empty patch"),
    ("infra_error", "⚠", "infrastructure error"),
];

pub fn outcome_symbol(outcome: &str) -> &'static str {
    OUTCOMES.iter().find(|(k, ..)| *k == outcome).map_or("?", |(_, s, _)| s)
}

pub fn outcome_words(outcome: &str) -> &str {
    OUTCOMES.iter().find(|(k, ..)| *k == outcome).map_or(outcome, |(_, _, w)| w)
}

pub fn tier_label(tier: &str) -> &'static str {
    if tier == "maintainer" { "Verified" } else { "Self-reported" }
}

pub fn tier_title(tier: &str) -> &'static str {
    if tier == "maintainer" {
        "Signed by a benchmark maintainer's key"
    } else {
        "Signed by the submitter's own key; not re-run by the maintainers"
    }
}

pub fn provenance_label(provenance: &str) -> &'static str {
    match provenance {
        "published" => "Reported in the paper",
        "imported" => "Imported",
        _ => "Evaluated",
    }
}

/// The badge's words where the source is known: an import names its harness
/// (`harbor 0.3.1, job …` → "Imported from Harbor").
pub fn provenance_badge(provenance: &str, source: Option<&str>) -> String {
    match (provenance, source.and_then(|s| s.split([' ', ',']).next()).filter(|h| !h.is_empty())) {
        ("imported", Some(harness)) => {
            let mut chars = harness.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
            format!("Imported from {first}{}", chars.as_str())
        }
        _ => provenance_label(provenance).to_owned(),
    }
}

pub fn provenance_title(provenance: &str, source: Option<&str>) -> String {
    match provenance {
        "published" => "Per-task results published in the RExBench paper; 5 runs per cell reconstructed from the published fractions, with no patches or logs".to_owned(),
        "imported" => format!(
            "Run and judged by another harness ({}), not by this project's runner; imported with the verifier's output, and the agent's patch where the job kept one",
            source.unwrap_or("source not named")
        ),
        _ => "Evaluated by the runner from the agent's patches, with patches and logs".to_owned(),
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

pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 3600.0 => format!("{:.1} h", s / 3600.0),
        s if s >= 60.0 => format!("{:.1} min", s / 60.0),
        s => format!("{s:.1} s"),
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
pub fn segment(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

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
