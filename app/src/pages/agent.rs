//! `/agents/{id}`: one agent: its task × hint grid, how its runs failed, its runs, and
//! its submission history.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use super::{
    AgentUrl, Chart, FailureRow, FailureTable, IntervalNote, OutcomeLabel, ProvenanceBadge, Rate, TierBadge,
    interval_text, loaded, param, points_interval, query,
};
use crate::charts;
use crate::data::{AgentData, load_agent};
use crate::format::{self, href};
use store::Hint;

#[component]
pub(crate) fn AgentPage() -> impl IntoView {
    let id = param("id");
    let (task, hint) = (query("task"), hint_query());
    let data = Resource::new_blocking(
        move || (id.clone(), task.clone(), hint),
        |(id, task, hint)| load_agent(id, task, hint),
    );
    view! {
        {loaded(data, |data| view! { <Agent data=data/> })}
    }
}

/// The hint condition the URL narrows the runs to; an unknown one narrows nothing.
fn hint_query() -> Option<Hint> {
    query("hint").and_then(|h| h.parse().ok())
}

#[component]
fn Agent(data: AgentData) -> impl IntoView {
    let a = data.agent;
    let base = format!("/agents/{}", format::segment(&a.id));
    let (task, hint) = (query("task"), hint_query());
    let current = a.submissions.iter().find(|s| s.superseded_by.is_none()).cloned();
    let name_of = |t: &str| data.names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    let grid = a.newest_current().map(|(_, g)| g.clone()).unwrap_or_default();

    let heat_rows: Vec<(String, Vec<Option<f64>>)> = grid
        .iter()
        .map(|(t, by_hint)| {
            (
                name_of(t.as_str()),
                Hint::ALL.iter().map(|h| by_hint.get(h).and_then(|r| r.final_success)).collect(),
            )
        })
        .collect();
    let heat = charts::heatmap(
        &format!("Final success of {} per task and hint condition", a.display_name),
        &Hint::ALL.map(Hint::label),
        &heat_rows,
    );
    let submitted = query("submitted");
    let description = format!(
        "RExBench results of {}: success per task with no hints, hints and detailed hints, how its runs failed, and every run.",
        a.display_name
    );
    let runs_heading = match (&task, &hint) {
        (None, None) => "All runs".to_owned(),
        (Some(t), None) => format!("Runs of {}", name_of(t)),
        (None, Some(h)) => format!("Runs with {}", h.label().to_lowercase()),
        (Some(t), Some(h)) => format!("Runs of {} with {}", name_of(t), h.label().to_lowercase()),
    };

    view! {
        <Title text=a.display_name.clone()/>
        <Meta name="description" content=description/>
        {submitted.map(|b| view! {
            <p class="notice" role="status">"✔ Bundle "<code>{format::short(&b).to_owned()}</code>" was verified and stored."</p>
        })}
        <nav class="crumbs" aria-label="Breadcrumb"><a href="/">"Leaderboard"</a>" › "{a.display_name.clone()}</nav>
        <h1>{a.display_name.clone()}</h1>
        <dl class="facts">
            <dt>"Framework"</dt>
            <dd>{a.framework.clone()}{a.framework_version.clone().map(|v| format!(" {v}"))}</dd>
            <dt>"Model"</dt>
            <dd>{a.model.clone()}{a.model_id.clone().map(|m| format!(" ({m})"))}</dd>
            {current.clone().map(|s| view! {
                <dt>"Results"</dt>
                <dd>
                    <TierBadge tier=s.tier/>" "<ProvenanceBadge provenance=s.provenance source=s.provenance_source.clone()/>
                    {format!(" · {} {} · {} runs", s.benchmark_name, s.benchmark_version, s.run_count)}
                </dd>
                {s.provenance_source.clone().map(|source| view! { <dt>"Source"</dt><dd>{source}</dd> })}
            })}
            {a.url.clone().map(|u| view! { <dt>"Link"</dt><dd><AgentUrl url=Some(u)/></dd> })}
            <dt>"Compare"</dt>
            <dd><a href=href("/compare", &[("a", Some(a.id.as_str()))])>"Compare with another agent"</a></dd>
        </dl>

        {data.stats.clone().map(|st| {
            let rank = st.rank.to_string();
            view! {
                <h2>"Overall, with uncertainty"</h2>
                <p>
                    {format!(
                        "Plausible rank by final success without hints: {rank} of {}; tie group {} (agents in one group cannot be told apart).",
                        st.of, st.group
                    )}
                </p>
                <table class="overall">
                    <caption>"Final and execution success under each hint condition, each with its 95% interval; and the change that hints make."</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Hint condition"</th>
                            <th scope="col">"Final success"</th>
                            <th scope="col">"95% interval"</th>
                            <th scope="col">"Execution success"</th>
                            <th scope="col">"95% interval"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {Hint::ALL.iter().map(|hint| {
                            let f = st.final_success.get(*hint);
                            let e = st.execution_success.get(*hint);
                            view! {
                                <tr>
                                    <th scope="row">{hint.label()}</th>
                                    <td class="num">{format::pct(f.map(|i| i.estimate))}</td>
                                    <td class="num">{f.map(|i| interval_text(&i)).unwrap_or_else(|| "–".into())}</td>
                                    <td class="num">{format::pct(e.map(|i| i.estimate))}</td>
                                    <td class="num">{e.map(|i| interval_text(&i)).unwrap_or_else(|| "–".into())}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                <ul class="uplift">
                    {[Hint::Hints, Hint::Detailed].into_iter().map(|hint| st.uplift.get(hint).map(|u| {
                        let what = hint.label().to_lowercase();
                        let verdict = if !u.excludes_zero() {
                            "within chance"
                        } else if u.estimate > 0.0 {
                            "more than chance: hints help"
                        } else {
                            "more than chance: hints hurt"
                        };
                        view! {
                            <li>
                                {format!(
                                    "With {what}: {} points (95% interval {}), {verdict}.",
                                    format::points(Some(u.estimate)),
                                    points_interval(&u)
                                )}
                            </li>
                        }
                    })).collect_view()}
                </ul>
                <IntervalNote/>
            }
        })}

        <h2>"Success by task"</h2>
        <Chart
            svg=heat
            caption="Final success per task (rows) and hint condition (columns); darker is higher, and each cell is labelled with its rate. The table below holds the same numbers.".to_owned()
        />
        <div class="table-wrap">
            <table>
                <caption>"Final success and execution success per task and hint condition; each rate links to its runs."</caption>
                <thead>
                    <tr>
                        <th scope="col">"Task"</th>
                        {Hint::ALL.map(|h| view! { <th scope="col">{h.label()}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {grid.iter().map(|(t, by_hint)| {
                        let task_link = format!("/tasks/{}", format::segment(t.as_str()));
                        view! {
                            <tr>
                                <th scope="row"><a href=task_link>{name_of(t.as_str())}</a></th>
                                {Hint::ALL.map(|h| {
                                    let r = by_hint.get(&h).copied();
                                    let link = href(&base, &[("task", Some(t.as_str())), ("hint", Some(h.as_str()))]) + "#runs";
                                    view! {
                                        <td class="num">
                                            <Rate rate=r.and_then(|r| r.final_success) href=link detail=String::new()/>
                                            <span class="muted small">
                                                {format!(" exec {}", format::pct(r.and_then(|r| r.execution_success)))}
                                            </span>
                                        </td>
                                    }
                                }).collect_view()}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>

        <FailureTable
            caption="Runs that did not succeed, by outcome and error type (published results carry outcomes only)."
            rows=data.failures.iter().map(|f| FailureRow {
                outcome: f.outcome,
                error_type: f.error_type.clone(),
                agents: None,
                runs: f.runs,
            }).collect()
        />

        <h2 id="runs">{runs_heading}</h2>
        <p class="muted small">
            "Show: "
            <a href=format!("{base}#runs")>"all runs"</a>
            {Hint::ALL.map(|h| view! { " · "<a href=href(&base, &[("hint", Some(h.as_str()))]) + "#runs">{h.label()}</a> }).collect_view()}
        </p>
        <div class="table-wrap">
            <table class="runs">
                <caption>{format!("{} runs; each links to its patch, logs and metrics.", data.runs.len())}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Run"</th>
                        <th scope="col">"Task"</th>
                        <th scope="col">"Hints"</th>
                        <th scope="col">"Attempt"</th>
                        <th scope="col">"Outcome"</th>
                        <th scope="col">"Error type"</th>
                    </tr>
                </thead>
                <tbody>
                    {data.runs.iter().map(|r| view! {
                        <tr>
                            <td><a href=format!("/runs/{}", r.id)>{format!("#{}", r.id)}</a></td>
                            <td>{name_of(r.task.as_str())}</td>
                            <td>{r.hint.label()}</td>
                            <td class="num">{r.attempt}</td>
                            <td><OutcomeLabel outcome=r.outcome/></td>
                            <td>{r.error_type.clone().unwrap_or_else(|| "–".into())}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>

        <h2>"Submissions"</h2>
        <table>
            <caption>"Every bundle received for this agent, newest first; superseded ones no longer count."</caption>
            <thead>
                <tr>
                    <th scope="col">"Bundle"</th>
                    <th scope="col">"Created"</th>
                    <th scope="col">"Received"</th>
                    <th scope="col">"Signed as"</th>
                    <th scope="col">"Signed by"</th>
                    <th scope="col">"Runs"</th>
                    <th scope="col">"Status"</th>
                    <th scope="col">"Evidence"</th>
                </tr>
            </thead>
            <tbody>
                {a.submissions.iter().map(|s| view! {
                    <tr>
                        <td><code title=s.bundle_id.clone()>{format::short(&s.bundle_id).to_owned()}</code></td>
                        <td>{s.created_at.clone()}</td>
                        <td>{s.received_at.clone()}</td>
                        <td><TierBadge tier=s.tier/>" "<ProvenanceBadge provenance=s.provenance source=s.provenance_source.clone()/></td>
                        <td><a href=format!("/keys#key-{}", s.keyid) title=s.keyid.clone()><code>{format::short(&s.keyid).to_owned()}</code></a></td>
                        <td class="num">{s.run_count}</td>
                        <td>{match &s.superseded_by {
                            None => "current".to_owned(),
                            Some(b) => format!("superseded by {}", format::short(b)),
                        }}</td>
                        <td><a href=format!("/api/v1/submissions/{}/envelope", s.bundle_id)>"signed envelope"</a></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
