//! Intervals in words and the note that says what they mean.

use leptos::prelude::*;
use views::format;

/// An interval, in percent: `30–55`.
pub(crate) fn interval_text(i: &store::stats::Interval) -> String {
    format!("{:.0}–{:.0}", i.low * 100.0, i.high * 100.0)
}

/// A difference's interval, in signed points: `−10 to +20`.
pub(crate) fn points_interval(i: &store::stats::Interval) -> String {
    format!("{} to {}", format::points(Some(i.low)), format::points(Some(i.high)))
}

/// The sentence that says what the intervals mean, with the link to the method.
#[component]
pub(crate) fn IntervalNote() -> impl IntoView {
    view! {
        <p class="muted small note">
            "Small figures are 95% intervals: where the rate would plausibly fall on another draw of tasks and runs "
            "(a cluster bootstrap over tasks, then runs). "
            <a href="/about">"How the numbers are made"</a>
        </p>
    }
}
