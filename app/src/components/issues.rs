//! The known issues of the paper's published numbers: a marker on each number an issue
//! touches, and the list the markers link to.

use leptos::prelude::*;

/// A marker on a published number that a known issue of the paper touches: the issue
/// in a few words on hover, and a link to its whole sentence in the list (on `page`, or
/// on this page).
#[component]
pub(crate) fn IssueMark(
    issue: views::paper::KnownIssue,
    #[prop(optional)] page: Option<String>,
) -> impl IntoView {
    let href = format!("{}#issue-{}", page.unwrap_or_default(), issue.id);
    view! {
        <a class="issue-mark" href=href title=issue.summary() aria-label="known issue">"†"</a>
    }
}

/// The known issues of the published numbers a page shows, each with the anchor its
/// markers link to.
#[component]
pub(crate) fn KnownIssues(issues: Vec<views::paper::KnownIssue>) -> impl IntoView {
    view! {
        <section class="known-issues" id="known-issues">
            <h2>"Known issues of the published numbers"</h2>
            <p>
                "Where the paper's tables disagree with each other or with its text, the numbers are shown as printed "
                "and marked †; each mark links here."
            </p>
            <ul>
                {issues.into_iter().map(|i| {
                    let r#where = if i.tables.is_empty() { String::new() } else { format!("{}: ", i.tables.join(", ")) };
                    view! { <li id=format!("issue-{}", i.id)><strong>{r#where}</strong>{i.description}</li> }
                }).collect_view()}
            </ul>
        </section>
    }
}
