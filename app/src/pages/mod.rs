//! One page per file, and the pieces they share.

mod about;
mod agent;
mod changes;
mod compare;
mod experiment;
mod failures;
mod keys;
mod leaderboard;
mod login;
mod not_found;
mod outputs;
mod parity;
mod reproduction;
mod run;
mod signin;
mod submit;
mod task;
mod tasks;

pub(crate) use about::AboutPage;
pub(crate) use agent::AgentPage;
pub(crate) use changes::ChangesPage;
pub(crate) use compare::ComparePage;
pub(crate) use failures::FailuresPage;
pub(crate) use keys::KeysPage;
pub(crate) use leaderboard::LeaderboardPage;
pub(crate) use login::SignInLinkPage;
pub(crate) use not_found::NotFound;
pub(crate) use parity::ParityPage;
pub(crate) use run::RunPage;
pub(crate) use signin::SignInPage;
pub use submit::{SubmitPage, Verdict};
pub(crate) use task::TaskPage;
pub(crate) use tasks::TasksPage;

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use store::{Outcome, ProvenanceKind, Tier};

use crate::error::AppError;
use crate::format;

/// Sets the response's status (on the server; a no-op in a browser build).
pub(crate) fn set_status(code: u16) {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::from_u16(code).expect("a valid status"));
    }
    #[cfg(not(feature = "ssr"))]
    let _ = code;
}

/// A path parameter of the current route.
pub(crate) fn param(name: &str) -> String {
    use_params_map().read_untracked().get(name).unwrap_or_default()
}

/// A query parameter, `None` when absent or empty.
pub(crate) fn query(name: &str) -> Option<String> {
    use_query_map().read_untracked().get(name).filter(|v| !v.is_empty())
}

/// Every non-empty value of a repeated query parameter (`?col=a&col=b`).
pub(crate) fn query_all(name: &str) -> Vec<String> {
    use_query_map()
        .read_untracked()
        .get_all(name)
        .unwrap_or_default()
        .into_iter()
        .filter(|v| !v.is_empty())
        .collect()
}

/// What a page shows when its data could not be had: a 404 for what does not exist,
/// a 500 without internals otherwise.
#[component]
pub(crate) fn ErrorPage(error: AppError) -> impl IntoView {
    match error {
        AppError::NotFound(message) => {
            set_status(404);
            view! {
                <Title text="Not found"/>
                <section class="error">
                    <h1>"Not found"</h1>
                    <p>{message}</p>
                    <p><a href="/">"Back to the leaderboard"</a></p>
                </section>
            }
            .into_any()
        }
        AppError::Internal | AppError::ServerFn(_) => {
            set_status(500);
            view! {
                <Title text="Something went wrong"/>
                <section class="error">
                    <h1>"Something went wrong"</h1>
                    <p>"The results could not be read just now. Please try again in a moment."</p>
                    <p><a href="/">"Back to the leaderboard"</a></p>
                </section>
            }
            .into_any()
        }
    }
}

/// A page's body once its data have arrived, or the error page if they could not be had.
pub(crate) fn loaded<T, V>(data: Resource<Result<T, AppError>>, body: fn(T) -> V) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    V: IntoView + 'static,
{
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(data) => body(data).into_any(),
                    Err(e) => view! { <ErrorPage error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

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

/// One way runs failed: its outcome, error type, how many runs ended so and, where
/// several agents are counted, how many of them.
#[derive(Debug, Clone)]
pub(crate) struct FailureRow {
    pub outcome: Outcome,
    pub error_type: Option<String>,
    pub agents: Option<i64>,
    pub runs: i64,
}

/// "How runs failed": a table of the ways runs failed, or a line saying none did.
#[component]
pub(crate) fn FailureTable(caption: &'static str, rows: Vec<FailureRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <h2>"How runs failed"</h2><p class="empty">"No failed runs."</p> }.into_any();
    }
    let by_agent = rows.iter().any(|r| r.agents.is_some());
    view! {
        <h2>"How runs failed"</h2>
        <table>
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <th scope="col">"Outcome"</th>
                    <th scope="col">"Error type"</th>
                    {by_agent.then(|| view! { <th scope="col">"Agents"</th> })}
                    <th scope="col">"Runs"</th>
                </tr>
            </thead>
            <tbody>
                {rows.into_iter().map(|f| view! {
                    <tr>
                        <td><OutcomeLabel outcome=f.outcome/></td>
                        <td>{f.error_type.unwrap_or_else(|| "–".into())}</td>
                        {by_agent.then(|| view! { <td class="num">{f.agents.unwrap_or_default()}</td> })}
                        <td class="num">{f.runs}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
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

/// A chart's SVG, drawn on the server, with the sentence that says what it shows.
#[component]
pub(crate) fn Chart(svg: String, caption: String) -> impl IntoView {
    view! {
        <figure class="chart">
            <div class="chart-svg" inner_html=svg></div>
            <figcaption>{caption}</figcaption>
        </figure>
    }
}

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

/// A marker on a published number that a known issue of the paper touches: the issue
/// in a few words on hover, and a link to its whole sentence in the list (on `page`, or
/// on this page).
#[component]
pub(crate) fn IssueMark(
    issue: crate::paper::KnownIssue,
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
pub(crate) fn KnownIssues(issues: Vec<crate::paper::KnownIssue>) -> impl IntoView {
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

/// Flagged successes, one row per run with the checks that flag it and who found each:
/// the agent page's list (`agents` false) and the failure explorer's (naming the agent).
#[component]
pub(crate) fn FlaggedRuns(
    caption: String,
    records: Vec<store::FindingRecord>,
    names: crate::data::TaskNames,
    agents: bool,
) -> impl IntoView {
    // The records come ordered by run: each run's findings are consecutive.
    let mut runs: Vec<(store::FindingRecord, Vec<store::RunFinding>)> = Vec::new();
    for r in records {
        match runs.last_mut() {
            Some((first, findings)) if first.run_id == r.run_id => findings.push(r.finding),
            _ => {
                let finding = r.finding.clone();
                runs.push((r, vec![finding]));
            }
        }
    }
    let name_of = move |task: &store::TaskId| names.get(task).cloned().unwrap_or_else(|| task.to_string());
    view! {
        <div class="table-wrap">
            <table class="flagged-runs">
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Run"</th>
                        {agents.then(|| view! { <th scope="col">"Agent"</th> })}
                        <th scope="col">"Task"</th>
                        <th scope="col">"Hints"</th>
                        <th scope="col">"Attempt"</th>
                        <th scope="col">"Findings"</th>
                    </tr>
                </thead>
                <tbody>
                    {runs.into_iter().map(|(run, findings)| view! {
                        <tr>
                            <td><a href=format!("/runs/{}#findings", run.run_id)>{format!("#{}", run.run_id)}</a></td>
                            {agents.then(|| view! {
                                <td><a href=format!("/agents/{}", crate::format::segment(&run.agent_id))>{run.agent_name.clone()}</a></td>
                            })}
                            <td>{name_of(&run.task)}</td>
                            <td>{run.hint.label()}</td>
                            <td class="num">{run.attempt}</td>
                            <td>
                                {findings.into_iter().map(|f| view! {
                                    <span class="finding">
                                        <code>{f.check.clone()}</code>
                                        <span class="muted small">{match f.found_by {
                                            store::FoundBy::Submitter => " (submitter",
                                            store::FoundBy::Server => " (server",
                                        }}{match f.review.as_ref().map(|r| r.verdict) {
                                            Some(store::Review::Confirmed) => ", confirmed)",
                                            Some(store::Review::Dismissed) => ", dismissed)",
                                            None => ")",
                                        }}</span>
                                    </span>
                                }).collect_view()}
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

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
    let mut whole = format!("by {}", submitter.owner);
    if n > 1 {
        whole.push_str(&kin_words);
        whole.push_str(&others.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", "));
        if more > 0 {
            whole.push_str(&format!(" and {more} more"));
        }
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
        {(sample.reproduced > 0).then(|| view! { <span class="kin-sample">{sample_words}</span> })}
    };
    // Only words long enough to be cut get a title (each row's bytes count at 10,000 rows).
    let title = (n > 1 || sample.reproduced > 0).then_some(whole);
    match inline {
        true => view! { <span class="submitter small" title=title>{words}</span> }.into_any(),
        false => view! { <div class="submitter small">{words}</div> }.into_any(),
    }
}
