//! `/failures`: how runs fail: by agent and outcome (as the paper's Tables 9–10), the
//! tasks no agent solves, those solved only with hints, successes that integrity checks
//! doubt, and failures shared by agents.

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::charts;
use crate::components::{Chart, FlaggedRuns, IssueMark, KnownIssues, OutcomeLabel, loaded};
use store::Hint;
use views::failures::{
    ErrorComparison, FailuresAnswer, IntegritySummary, PublishedErrorTable, TaskSuccesses,
};
use views::format;
use views::paper::KnownIssue;

use views::failures::FAILURE_AGENTS_SHOWN as AGENTS_SHOWN;

#[component]
pub(crate) fn FailuresPage() -> impl IntoView {
    let data = Resource::new_blocking(|| (), |_| load_failures());
    view! {
        <Title text="Failures"/>
        <Meta
            name="description"
            content="Why RExBench runs fail: outcomes and error types by agent, tasks no agent solves, tasks solved only with hints, and failures agents share."
        />
        {loaded(data, |data| view! { <Failures data=data/> })}
    }
}

#[component]
fn Failures(data: FailuresAnswer) -> impl IntoView {
    let names: Vec<&str> = data.outcomes.iter().map(|o| format::outcome_words(*o)).collect();
    let chart_rows: Vec<(String, Vec<i64>)> =
        data.by_agent.iter().map(|a| (a.display_name.clone(), a.runs.clone())).collect();
    let chart = charts::stacked_bars("Failed runs per agent, by outcome", &names, &chart_rows);
    let all_agents = data.agents as usize;
    let FailuresAnswer { outcomes, by_agent, error_types: errors, unsolved, only_hinted, shared, .. } =
        data.clone();
    let of = |t: &TaskSuccesses, h: Hint| t.successes.get(&h).copied().unwrap_or(0);

    view! {
        <h1>"Failures"</h1>
        <p>
            "How the runs of every agent's current results failed. Published results carry an outcome only; "
            "evaluated ones also the error type the runner classified (as the paper does in its Tables 9–10, "
            "which are "<a href="#published-errors">"shown below as published"</a>")."
        </p>

        <h2>"Failed runs by agent"</h2>
        <div class="primary">
            <Chart
                svg=chart
                caption="Failed runs per agent, stacked by outcome; the legend names each colour and the table below gives every count.".to_owned()
            />
        </div>
        <div class="table-wrap">
            <table>
                <caption>
                    {if all_agents > AGENTS_SHOWN {
                        format!("Failed runs per agent and outcome: the {AGENTS_SHOWN} of {all_agents} agents with the most; every agent's page has its own.")
                    } else {
                        "Failed runs per agent and outcome.".to_owned()
                    }}
                </caption>
                <thead>
                    <tr>
                        <th scope="col">"Agent"</th>
                        {outcomes.iter().map(|o| view! { <th scope="col">{format::outcome_symbol(*o)}" "{format::outcome_words(*o)}</th> }).collect_view()}
                        <th scope="col">"All"</th>
                    </tr>
                </thead>
                <tbody>
                    {by_agent.into_iter().map(|a| view! {
                        <tr>
                            <th scope="row"><a href=format!("/agents/{}#runs", format::segment(&a.agent_id))>{a.display_name}</a></th>
                            {a.runs.iter().map(|c| view! { <td class="num">{*c}</td> }).collect_view()}
                            <td class="num">{a.total}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>

        <h2>"Error types"</h2>
        {if errors.is_empty() {
            view! { <p class="empty">"No run carries an error type yet."</p> }.into_any()
        } else {
            view! {
                <table>
                    <caption>"Error types of failed runs: how many runs and agents, and the agents with the most such runs."</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Error type"</th>
                            <th scope="col">"Runs"</th>
                            <th scope="col">"Agents"</th>
                            <th scope="col">"Most often"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {errors.into_iter().map(|e| {
                            let most = e.most.iter().map(|a| format!("{} ({})", a.display_name, a.runs)).collect::<Vec<_>>().join("; ");
                            view! {
                                <tr>
                                    <th scope="row"><code>{e.error_type}</code></th>
                                    <td class="num">{e.runs}</td>
                                    <td class="num">{e.agents}</td>
                                    <td>{most}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}

        <PublishedComparison data=data.published.clone() comparison=data.comparison.clone() unit=data.published_unit.clone() issues=data.issues.clone()/>

        <h2>"Tasks no agent solves"</h2>
        {if unsolved.is_empty() {
            view! { <p class="empty">"Every task was solved at least once."</p> }.into_any()
        } else {
            view! {
                <ul>
                    {unsolved.iter().map(|r| view! {
                        <li>
                            <a href=format!("/tasks/{}", format::segment(&r.task))>{r.name.clone()}</a>
                            {format!(" — {} agents, no successful run under any hint condition", r.agents)}
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}

        <h2>"Tasks solved only with hints"</h2>
        {if only_hinted.is_empty() {
            view! { <p class="empty">"No task is solved only with hints."</p> }.into_any()
        } else {
            view! {
                <ul>
                    {only_hinted.iter().map(|r| view! {
                        <li>
                            <a href=format!("/tasks/{}#results", format::segment(&r.task))>{r.name.clone()}</a>
                            {format!(
                                " — no successful run without hints; {} with hints, {} with detailed hints",
                                of(r, Hint::Hints),
                                of(r, Hint::Detailed)
                            )}
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}

        <Integrity overview=data.integrity.clone() names=data.names.clone() checks=data.checks.clone()/>

        <h2>"Failures agents share"</h2>
        {if shared.is_empty() {
            view! { <p class="empty">"No two agents failed a task the same way."</p> }.into_any()
        } else {
            view! {
                <table>
                    <caption>"Ways of failing a task that at least two agents share, most agents first."</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Task"</th>
                            <th scope="col">"Outcome"</th>
                            <th scope="col">"Error type"</th>
                            <th scope="col">"Agents"</th>
                            <th scope="col">"Runs"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {shared.iter().map(|p| view! {
                            <tr>
                                <th scope="row"><a href=format!("/tasks/{}#results", format::segment(&p.task))>{p.name.clone()}</a></th>
                                <td><OutcomeLabel outcome=p.outcome/></td>
                                <td>{p.error_type.clone().unwrap_or_else(|| "–".into())}</td>
                                <td class="num">{p.agents}</td>
                                <td class="num">{p.runs}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
    }
}

/// The paper's error analysis (Tables 9 and 10, as printed) beside the error types of
/// the results evaluated here: the same classification, so the shares can be compared.
#[component]
fn PublishedComparison(
    data: Vec<PublishedErrorTable>,
    comparison: Vec<ErrorComparison>,
    unit: String,
    issues: Vec<KnownIssue>,
) -> impl IntoView {
    if data.is_empty() {
        return ().into_any();
    }
    let totals: Vec<i64> = data.iter().map(|t| t.total).collect();
    let evaluated_total = views::failures::evaluated_runs(&comparison);
    let share = |n: i64, of: i64| {
        if of > 0 { format!("{:.0}%", 100.0 * n as f64 / of as f64) } else { "–".to_owned() }
    };
    let listed = issues.clone();
    let marks = move || issues.iter().map(|i| view! { <IssueMark issue=i.clone()/> }).collect_view();
    let marks2 = marks.clone();
    view! {
        <h2 id="published-errors">"Error types: the paper's analysis and the results here"</h2>
        <p>
            "The paper classifies its agents' failed runs by error type in Tables 9 (aider) and 10 (OpenHands). "
            "Its per-task results, which the published rows of the leaderboard reconstruct, carry no error types, so "
            "these counts are shown as printed, summed over each table's agents, beside the error types the runner "
            "classified for the results evaluated here. "
            {format!("The paper's unit: {unit}.")}
        </p>
        <div class="table-wrap">
            <table class="published">
                <caption>"Failed runs by error type: as published (counts and share of the table's total) and as evaluated here (runs, agents and share)"{marks()}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Error type"</th>
                        {data.iter().map(|t| view! { <th scope="col">{format!("{}, {} (published)", t.table, t.framework)}</th> }).collect_view()}
                        <th scope="col">"Evaluated here"</th>
                    </tr>
                </thead>
                <tbody>
                    {comparison.into_iter().map(|c| view! {
                        <tr>
                            <th scope="row"><code>{c.error_type}</code></th>
                            {c.published.iter().zip(&totals).map(|(n, of)| view! {
                                <td class="num">{*n}<span class="muted small">{format!(" · {}", share(*n, *of))}</span></td>
                            }).collect_view()}
                            <td class="num">
                                {c.runs}
                                <span class="muted small">{format!(" · {} agents · {}", c.agents, share(c.runs, evaluated_total))}</span>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        {data.into_iter().map(|t| {
            let marks = marks2.clone();
            view! {
                <h3>{format!("{} as published: {} agents", t.table, t.framework)}</h3>
                <div class="table-wrap">
                    <table class="published">
                        <caption>{format!("{}: error counts per {} agent, as printed in the paper", t.table, t.framework)}{marks()}</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Error type"</th>
                                <th scope="col">"Group"</th>
                                {t.agents.iter().map(|a| view! {
                                    <th scope="col"><a href=format!("/agents/{}#published-errors", format::segment(&a.agent_id))>{a.model.clone()}</a></th>
                                }).collect_view()}
                            </tr>
                        </thead>
                        <tbody>
                            {t.rows.into_iter().map(|r| view! {
                                <tr>
                                    <th scope="row"><code>{r.error_type}</code></th>
                                    <td>{r.group}</td>
                                    {r.counts.into_iter().map(|n| view! { <td class="num">{n}</td> }).collect_view()}
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }
        }).collect_view()}
        <KnownIssues issues=listed/>
    }
    .into_any()
}

/// Successes whose integrity checks found signs of a result produced without the work:
/// by check, the agents with most, and the newest with their evidence one click away.
#[component]
fn Integrity(
    overview: IntegritySummary,
    names: crate::data::TaskNames,
    checks: BTreeMap<String, String>,
) -> impl IntoView {
    view! {
        <h2 id="integrity">"Successes in doubt"</h2>
        {if overview.flagged == 0 {
            view! {
                <p class="empty">
                    "No current success carries an integrity finding that a maintainer has not dismissed. "
                    "What the checks look for is on the "<a href="/about#integrity">"about page"</a>"."
                </p>
            }.into_any()
        } else {
            view! {
                <p>
                    {format!(
                        "{} successes of the current results carry integrity findings no maintainer has dismissed                          ({} of them confirmed by a maintainer): signs that the result was written rather than                          computed. The leaderboard's ",
                        overview.flagged, overview.confirmed
                    )}
                    <a href="/?integrity=strict">"strict view"</a>
                    " counts them as failures. What each check looks for is on the "
                    <a href="/about#integrity">"about page"</a>"."
                </p>
                <div class="table-wrap">
                    <table>
                        <caption>"Flagged successes by check (a success flagged by two checks counts under each)"</caption>
                        <thead>
                            <tr><th scope="col">"Check"</th><th scope="col">"Flagged successes"</th><th scope="col">"Looks for"</th></tr>
                        </thead>
                        <tbody>
                            {overview.by_check.iter().map(|c| view! {
                                <tr>
                                    <th scope="row"><code>{c.check.clone()}</code></th>
                                    <td class="num">{c.successes}</td>
                                    <td class="small">{checks.get(&c.check).cloned().unwrap_or_else(|| "a check this server does not know".to_owned())}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
                <div class="table-wrap">
                    <table>
                        <caption>"The agents with most flagged successes"</caption>
                        <thead><tr><th scope="col">"Agent"</th><th scope="col">"Flagged successes"</th></tr></thead>
                        <tbody>
                            {overview.agents.iter().map(|a| view! {
                                <tr>
                                    <th scope="row"><a href=format!("/agents/{}#flagged", format::segment(&a.agent_id))>{a.display_name.clone()}</a></th>
                                    <td class="num">{a.flagged}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
                <FlaggedRuns
                    caption="The newest flagged successes, with the checks that flag each".to_owned()
                    records=overview.runs.clone()
                    names=names.clone()
                    agents=true
                />
            }.into_any()
        }}
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "failures")]
pub async fn load_failures() -> Result<views::failures::FailuresAnswer, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::failures::answer(&ctx.store, &ctx.catalog, &ctx.reader).await?)
}
