//! What a submission's reproduction sample could catch, and what a caught lie costs it,
//! in words (spec §4e).

/// What a caught lie costs a submission, in words: its refuted runs and the successes
/// they leave unverified.
pub fn taint_words(refuted: i64, unverified: i64) -> String {
    let what = if refuted <= 1 {
        "a sampled run did not reproduce".to_owned()
    } else {
        format!("a sampled run did not reproduce ({refuted} runs refuted)")
    };
    match unverified {
        0 => format!("⚑ {what}"),
        1 => format!("⚑ {what}: 1 success unverified"),
        n => format!("⚑ {what}: {n} successes unverified"),
    }
}

/// How many of a submission's verdicts a regrade changed (spec §4i), in words.
pub fn regrade_words(flipped: i64) -> String {
    match flipped {
        1 => "1 verdict changed by a regrade, re-run".to_owned(),
        n => format!("{n} verdicts changed by regrades, each re-run"),
    }
}

/// What a submission's sample of successes could catch (spec §4e), in words; none where
/// it was not sized (stored before sizing, or not sampled, or without successes).
pub fn catch_words(catches: Option<f64>, share: Option<f64>) -> Option<String> {
    let (catches, share) = (catches?, share?);
    Some(format!(
        "this sample catches a {}% share of fakes with {}% probability",
        percent_text(share),
        // Never more than it is: down to a tenth of a percent.
        percent_text((catches.clamp(0.0, 1.0) * 1000.0 + 1e-9).floor() / 1000.0)
    ))
}

/// A share as a percentage to a tenth, its trailing zeros dropped (0.2 → "20").
fn percent_text(x: f64) -> String {
    let text = format!("{:.1}", (x * 100.0).max(0.0));
    text.strip_suffix(".0").map(str::to_owned).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_sample_catches_is_said_never_above_what_it_is() {
        assert_eq!(
            catch_words(Some(0.92934), Some(0.2)).as_deref(),
            Some("this sample catches a 20% share of fakes with 92.9% probability")
        );
        assert_eq!(
            catch_words(Some(0.8999), Some(0.1)).as_deref(),
            Some("this sample catches a 10% share of fakes with 89.9% probability")
        );
        assert_eq!(
            catch_words(Some(1.0), Some(0.2)).as_deref(),
            Some("this sample catches a 20% share of fakes with 100% probability")
        );
        assert_eq!(catch_words(None, Some(0.2)), None);
    }

    #[test]
    fn regrades_are_counted_in_words() {
        assert_eq!(regrade_words(1), "1 verdict changed by a regrade, re-run");
        assert_eq!(regrade_words(4), "4 verdicts changed by regrades, each re-run");
    }
}
