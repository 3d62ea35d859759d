//! Who submitted a leaderboard or agent page's row, with their other rows and re-runs.

use leptos::prelude::*;
use views::format;

/// Who submitted a row (the key's owner), the owner's other rows with the same
/// framework and model, each linked, and the maintainers' re-runs of all their rows.
#[component]
pub fn SubmittedBy(
    submitter: views::submitter::Submitter,
    /// Within a leaderboard row's line of badges: one line, cut short where the column
    /// ends, its whole words in its title.
    #[prop(optional)]
    inline: bool,
) -> impl IntoView {
    const SHOWN: usize = 5;
    let n = submitter.rows_with_model();
    let others = submitter.same_model.clone();
    let more = others.len().saturating_sub(SHOWN);
    let sample = submitter.sample;
    let kin_words = format!(" · one of {n} rows from this submitter with this model: ");
    let sample_words = format!(
        " · this submitter's re-runs: {} of {} reproduced",
        sample.reproduced - sample.differed,
        sample.reproduced
    );
    let pooled_words = submitter.pooled.map(|p| {
        format!(" · pooled over {} rows from this submitter: {}", p.rows, format::pct(Some(p.final_success)))
    });
    let mut whole = format!("by {}", submitter.owner);
    if n > 1 {
        whole.push_str(&kin_words);
        whole.push_str(&others.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", "));
        if more > 0 {
            whole.push_str(&format!(" and {more} more"));
        }
    }
    if let Some(p) = &pooled_words {
        whole.push_str(p);
    }
    if sample.reproduced > 0 {
        whole.push_str(&sample_words);
    }
    let words = view! {
        {format!("by {}", submitter.owner)}
        {(n > 1).then(|| view! {
            <span class="kin">
                {kin_words}
                {others.iter().take(SHOWN).enumerate().map(|(i, a)| view! {
                    {(i > 0).then_some(", ")}
                    <a href=format!("/agents/{}", format::segment(a))>{a.clone()}</a>
                }).collect_view()}
                {(more > 0).then(|| format!(" and {more} more"))}
            </span>
        })}
        {pooled_words.clone().map(|p| view! { <span class="kin-pooled">{p}</span> })}
        {(sample.reproduced > 0).then(|| view! { <span class="kin-sample">{sample_words}</span> })}
    };
    // Only words long enough to be cut get a title (each row's bytes count at 10,000 rows).
    let title = (n > 1 || sample.reproduced > 0).then_some(whole);
    match inline {
        true => view! { <span class="submitter small" title=title>{words}</span> }.into_any(),
        false => view! { <div class="submitter small">{words}</div> }.into_any(),
    }
}
