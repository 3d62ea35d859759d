//! `/failures`: how runs fail: by agent and outcome (as the paper's Tables 9–10), the
//! tasks no agent solves, those solved only with hints, and failures shared by agents.

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use super::{Chart, OutcomeLabel, loaded};
use crate::charts;
use crate::data::{FailuresData, load_failures};
use crate::format;
use store::{Hint, Outcome};

/// Agents the chart and the table show.
const AGENTS_SHOWN: usize = 50;

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
fn Failures(data: FailuresData) -> impl IntoView {
    let failed: Vec<Outcome> = Outcome::ALL.into_iter().filter(|o| *o != Outcome::Success).collect();
    // Agent → (name, count per failed outcome).
    let mut agents: BTreeMap<String, (String, Vec<i64>)> = BTreeMap::new();
    let mut errors: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for f in &data.by_agent {
        let entry = agents
            .entry(f.agent_id.clone())
            .or_insert_with(|| (f.display_name.clone(), vec![0; failed.len()]));
        if let Some(i) = failed.iter().position(|o| *o == f.outcome) {
            entry.1[i] += f.runs;
        }
        if let Some(e) = &f.error_type {
            *errors.entry(e.clone()).or_default().entry(f.display_name.clone()).or_default() += f.runs;
        }
    }
    let mut rows: Vec<(String, String, Vec<i64>)> =
        agents.into_iter().map(|(id, (n, c))| (id, n, c)).collect();
    rows.sort_by(|a, b| b.2.iter().sum::<i64>().cmp(&a.2.iter().sum::<i64>()).then_with(|| a.1.cmp(&b.1)));
    // However many agents there are, the page shows those with the most failed runs.
    let all_agents = rows.len();
    rows.truncate(AGENTS_SHOWN);
    let names: Vec<&str> = failed.iter().map(|o| format::outcome_words(*o)).collect();
    let chart_rows: Vec<(String, Vec<i64>)> = rows.iter().map(|(_, n, c)| (n.clone(), c.clone())).collect();
    let chart = charts::stacked_bars("Failed runs per agent, by outcome", &names, &chart_rows);

    let name_of = |t: &str| data.names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    let successes = |r: &store::TaskRow, h: Hint| r.by_hint.get(&h).map_or(0, |r| r.successes);
    let unsolved: Vec<&store::TaskRow> =
        data.tasks.iter().filter(|r| Hint::ALL.into_iter().all(|h| successes(r, h) == 0)).collect();
    let only_hinted: Vec<&store::TaskRow> = data
        .tasks
        .iter()
        .filter(|r| {
            successes(r, Hint::None) == 0 && successes(r, Hint::Hints) + successes(r, Hint::Detailed) > 0
        })
        .collect();
    let shared: Vec<&store::FailurePattern> =
        data.patterns.iter().filter(|p| p.agents >= 2).take(30).collect();

    view! {
        <h1>"Failures"</h1>
        <p>
            "How the runs of every agent's current results failed. Published results carry an outcome only; "
            "evaluated ones also the error type the runner classified (as in the paper's Tables 9–10)."
        </p>

        <h2>"Failed runs by agent"</h2>
        <Chart
            svg=chart
            caption="Failed runs per agent, stacked by outcome; the legend names each colour and the table below gives every count.".to_owned()
        />
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
                        {failed.iter().map(|o| view! { <th scope="col">{format::outcome_symbol(*o)}" "{format::outcome_words(*o)}</th> }).collect_view()}
                        <th scope="col">"All"</th>
                    </tr>
                </thead>
                <tbody>
                    {rows.iter().map(|(id, n, counts)| view! {
                        <tr>
                            <th scope="row"><a href=format!("/agents/{}#runs", format::segment(id))>{n.clone()}</a></th>
                            {counts.iter().map(|c| view! { <td class="num">{*c}</td> }).collect_view()}
                            <td class="num">{counts.iter().sum::<i64>()}</td>
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
                        {errors.into_iter().map(|(e, by)| {
                            let runs: i64 = by.values().sum();
                            let agents = by.len();
                            let mut most: Vec<(String, i64)> = by.into_iter().collect();
                            most.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                            let most = most.into_iter().take(5).map(|(a, n)| format!("{a} ({n})")).collect::<Vec<_>>().join("; ");
                            view! {
                                <tr>
                                    <th scope="row"><code>{e}</code></th>
                                    <td class="num">{runs}</td>
                                    <td class="num">{agents}</td>
                                    <td>{most}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}

        <h2>"Tasks no agent solves"</h2>
        {if unsolved.is_empty() {
            view! { <p class="empty">"Every task was solved at least once."</p> }.into_any()
        } else {
            view! {
                <ul>
                    {unsolved.iter().map(|r| view! {
                        <li>
                            <a href=format!("/tasks/{}", format::segment(&r.task))>{name_of(r.task.as_str())}</a>
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
                            <a href=format!("/tasks/{}#results", format::segment(&r.task))>{name_of(r.task.as_str())}</a>
                            {format!(
                                " — no successful run without hints; {} with hints, {} with detailed hints",
                                successes(r, Hint::Hints),
                                successes(r, Hint::Detailed)
                            )}
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}

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
                                <th scope="row"><a href=format!("/tasks/{}#results", format::segment(&p.task))>{name_of(p.task.as_str())}</a></th>
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
