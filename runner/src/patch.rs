//! What a patch is worth before it runs: file recall against the gold solution (of the
//! files `benchmark::diff::files_touched` reads from a patch), and whether it is empty.

use std::collections::BTreeSet;

/// |files changed ∩ gold files| / |gold files|; `None` without gold files.
pub fn file_recall(changed: &[String], gold: &[String]) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    let changed: BTreeSet<&str> = changed.iter().map(String::as_str).collect();
    let gold: BTreeSet<&str> = gold.iter().map(String::as_str).collect();
    Some(gold.iter().filter(|g| changed.contains(*g)).count() as f64 / gold.len() as f64)
}

/// Whether a patch changes nothing.
pub fn is_empty(patch: &str) -> bool {
    patch.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall() {
        let changed = vec!["a.py".to_owned(), "b.py".to_owned()];
        assert_eq!(file_recall(&changed, &["a.py".into(), "c.py".into()]), Some(0.5));
        assert_eq!(file_recall(&changed, &["a.py".into()]), Some(1.0));
        assert_eq!(file_recall(&[], &["a.py".into()]), Some(0.0));
        assert_eq!(file_recall(&changed, &[]), None);
    }
}
