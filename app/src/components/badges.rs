//! The small pieces inside a page's lines: a rate that links to its runs, the badges of
//! a submission (tier, provenance, harness), a run's outcome and an agent's own link.

use leptos::prelude::*;
use store::{Outcome, ProvenanceKind, Tier};
use views::format;

/// A rate that links to the runs behind it.
#[component]
pub(crate) fn Rate(rate: Option<f64>, href: String, #[prop(optional)] detail: String) -> impl IntoView {
    let text = format::pct(rate);
    if rate.is_none() {
        return view! { <span class="na">{text}</span> }.into_any();
    }
    let detail = (!detail.is_empty()).then_some(detail);
    view! { <a class="rate" href=href title=detail>{text}</a> }.into_any()
}

#[component]
pub(crate) fn TierBadge(tier: Tier) -> impl IntoView {
    let (class, symbol) = match tier {
        Tier::Maintainer => ("badge verified", "✔ "),
        Tier::Submitter => ("badge self", ""),
    };
    view! { <span class=class title=format::tier_title(tier)>{symbol}{tier.label()}</span> }
}

/// Where a submission's results come from, as a badge; `short` in a leaderboard row
/// ("Paper", "Imported", "Evaluated"), the whole words in its title.
#[component]
pub(crate) fn ProvenanceBadge(
    provenance: ProvenanceKind,
    source: Option<String>,
    #[prop(optional)] short: bool,
) -> impl IntoView {
    let class = match provenance {
        ProvenanceKind::Published => "badge paper",
        ProvenanceKind::Imported => "badge imported",
        ProvenanceKind::Evaluated => "badge evaluated",
    };
    let source = source.as_deref();
    let words = match short {
        true => format::provenance_short(provenance).to_owned(),
        false => format::provenance_badge(provenance, source),
    };
    view! {
        <span class=class title=format::provenance_title(provenance, source)>{words}</span>
    }
}

/// The harness that executed a submission's runs, as a badge; `short` in a leaderboard
/// row (without its version, which its title says).
#[component]
pub(crate) fn HarnessBadge(harness: store::Harness, #[prop(optional)] short: bool) -> impl IntoView {
    let words = match short {
        true => format::harness_short(&harness),
        false => harness.label(),
    };
    view! {
        <span class="badge harness" title=format!("run by {}", harness.label())>{words}</span>
    }
}

#[component]
pub(crate) fn OutcomeLabel(outcome: Outcome) -> impl IntoView {
    let class = if outcome == Outcome::Success { "outcome ok" } else { "outcome fail" };
    view! {
        <span class=class>
            <span aria-hidden="true">{format::outcome_symbol(outcome)}</span>
            " "
            {format::outcome_words(outcome)}
        </span>
    }
}

/// An agent's own link, only if it is http(s), and never followed for ranking.
#[component]
pub(crate) fn AgentUrl(url: Option<String>) -> impl IntoView {
    url.and_then(|u| format::safe_url(&u).map(str::to_owned)).map(|u| {
        let text = u.clone();
        view! { <a class="external" href=u rel="nofollow noopener noreferrer">{text}</a> }
    })
}
