//! `/tasks/{id}`: one task: what it asks, the papers it extends, each agent's results
//! by hint condition and attempt, and how runs failed.

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::{Hint, Outcome, RunSummary};

use crate::charts;
use crate::components::{Chart, FailureRow, FailureTable, Rate, TierBadge, loaded, param, query};
use crate::data::{TASK_AGENTS_PER_PAGE, TaskData};
use views::format::{self, href};

#[component]
pub(crate) fn TaskPage() -> impl IntoView {
    let id = param("id");
    let page = views::task::TaskQuery::from_page(query).window.page;
    let data = Resource::new_blocking(move || (id.clone(), page), |(id, page)| load_task(id, page));
    view! {
        {loaded(data, |data| view! { <Task data=data/> })}
    }
}

#[component]
fn Task(data: TaskData) -> impl IntoView {
    let t = data.task;
    // A page of agents at a time: the page stays quick however many there are.
    let (total, page, pages) = (data.total, data.page, data.pages);
    let first = (page - 1).saturating_mul(TASK_AGENTS_PER_PAGE);
    let agents = data.agents;
    let (only_hinted, hinted_count) = (data.hinted_only, data.hinted_only_count);
    let page_link = |p: usize| {
        let p = p.to_string();
        href(
            &format!("/tasks/{}", format::segment(&t.id)),
            &[("page", Some(p.as_str()).filter(|p| *p != "1"))],
        ) + "#results"
    };
    // Agent → hint → its runs in attempt order.
    let mut attempts: BTreeMap<String, BTreeMap<Hint, Vec<RunSummary>>> = BTreeMap::new();
    for r in data.runs {
        attempts.entry(r.agent_id.clone()).or_default().entry(r.hint).or_default().push(r);
    }
    let chart_rows: Vec<(String, [Option<f64>; 3])> = agents
        .iter()
        .map(|a| (a.display_name.clone(), Hint::ALL.map(|h| a.by_hint.get(&h).and_then(|r| r.final_success))))
        .collect();
    let chart = charts::hint_dots(&format!("Final success per agent on {}", t.name), &chart_rows);
    let description = format!(
        "RExBench task {}: {} Results of every agent with no hints, hints and detailed hints.",
        t.name,
        t.summary.clone().unwrap_or_default()
    );

    view! {
        <Title text=t.name.clone()/>
        <Meta name="description" content=description/>
        <nav class="crumbs" aria-label="Breadcrumb"><a href="/tasks">"Tasks"</a>" › "{t.name.clone()}</nav>
        <h1>{t.name.clone()}</h1>
        // What the reader came for first: each agent's results; what the task asks and how
        // a run is judged follow them.
        <p class="lede">
            {t.summary.clone()}
            " "<a href="#task">"What the task asks, and how a run is judged"</a>
        </p>
        <h2 id="results">"Results by agent"</h2>
        {data.folder_splits.iter().map(|(set, folders)| view! {
            <p class="notice folder-split" role="note">
                {format!(
                    "⚠ The current submissions on task set {} ran {} different folders of this task: {}. Their results are not of one task; ",
                    format::short(set),
                    folders.len(),
                    folders.iter().map(|(f, n)| format!("{} ({n} submission{})", views::cost::task_folder(f), if *n == 1 { "" } else { "s" })).collect::<Vec<_>>().join(", ")
                )}
                <a href="/about#task-identity">"how a task's folder is checked"</a>"."
            </p>
        }).collect_view()}
        {(pages > 1 && page <= pages).then(|| view! {
            <p class="count">{format!("Agents {}–{} of {total}, best without hints first.", first + 1, first + agents.len())}</p>
        })}
        {if page > pages {
            view! {
                <p class="empty past-end">
                    {format!("Page {page} is past the last: {total} agents make {pages} page{}. ", if pages == 1 { "" } else { "s" })}
                    <a href=page_link(pages)>"The last page"</a>
                </p>
            }.into_any()
        } else if agents.is_empty() {
            view! { <p class="empty">"No agent has results for this task yet."</p> }.into_any()
        } else {
            view! {
                <div class="table-wrap primary">
                    <table class="attempts">
                        <caption>"Final success per hint condition, and the outcome of each attempt (✓ success; ✗, ◔, ⊘, ∅ failures); each links to its run."</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Agent"</th>
                                {Hint::ALL.map(|h| view! { <th scope="col">{h.label()}</th> }).collect_view()}
                            </tr>
                        </thead>
                        <tbody>
                            {agents.iter().map(|a| {
                                let agent = format!("/agents/{}", format::segment(&a.agent_id));
                                let runs = attempts.get(&a.agent_id).cloned().unwrap_or_default();
                                view! {
                                    <tr>
                                        <th scope="row">
                                            <a href=agent.clone()>{a.display_name.clone()}</a>
                                            <div class="badges"><TierBadge tier=a.tier/></div>
                                            {a.task_folder.clone().map(|f| view! {
                                                <div class="muted small folder" title=format!("the task folder its runs ran: {f}")>{format!("folder {}", views::cost::task_folder(&f))}</div>
                                            })}
                                        </th>
                                        {Hint::ALL.map(|h| {
                                            let rate = a.by_hint.get(&h).and_then(|r| r.final_success);
                                            let link = href(&agent, &[("task", Some(t.id.as_str())), ("hint", Some(h.as_str()))]) + "#runs";
                                            let these = runs.get(&h).cloned().unwrap_or_default();
                                            view! {
                                                <td>
                                                    <Rate rate=rate href=link detail=String::new()/>
                                                    <span class="tries">
                                                        {these.into_iter().map(|r| {
                                                            let title = format!("attempt {}: {}", r.attempt, format::outcome_words(r.outcome));
                                                            let class = if r.outcome == Outcome::Success { "try ok" } else { "try fail" };
                                                            view! {
                                                                <a class=class href=format!("/runs/{}", r.id) title=title.clone() aria-label=title>
                                                                    {format::outcome_symbol(r.outcome)}
                                                                </a>
                                                            }
                                                        }).collect_view()}
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
                <Chart
                    svg=chart
                    caption="Final success of each agent on this task: ● no hints, ▲ hints, ■ detailed hints. The table above holds the same numbers and every attempt.".to_owned()
                />
            }.into_any()
        }}
        {(pages > 1).then(|| view! {
            <nav class="pages" aria-label="Pages">
                {(page > 1 && page <= pages).then(|| view! { <a rel="prev" href=page_link(page - 1)>"← Better agents"</a> })}
                {(page < pages).then(|| view! { <a rel="next" href=page_link(page + 1)>"More agents →"</a> })}
            </nav>
        })}

        {(!only_hinted.is_empty()).then(|| {
            let more = hinted_count.saturating_sub(only_hinted.len());
            view! {
                <p>
                    <strong>"Solved only with hints: "</strong>
                    {only_hinted.iter().enumerate().map(|(i, (id, name))| view! {
                        {(i > 0).then_some(", ")}
                        <a href=format!("/agents/{}", format::segment(id))>{name.clone()}</a>
                    }).collect_view()}
                    {(more > 0).then(|| format!(" and {more} more"))}
                    " — no successful run without hints, at least one with hints or detailed hints."
                </p>
            }
        })}
        {(!data.every_time.is_empty()).then(|| view! {
            <p><strong>"Solved every time"</strong>" (every attempt succeeded; pass^n = 100%):"</p>
            <ul class="every-time">
                {data.every_time.iter().map(|(hint, named, count)| {
                    let more = count.saturating_sub(named.len());
                    view! {
                        <li>
                            {format!("With {}: ", hint.label().to_lowercase())}
                            {named.iter().enumerate().map(|(i, (id, name))| view! {
                                {(i > 0).then_some(", ")}
                                <a href=format!("/agents/{}", format::segment(id))>{name.clone()}</a>
                            }).collect_view()}
                            {(more > 0).then(|| format!(" and {more} more"))}
                        </li>
                    }
                }).collect_view()}
            </ul>
        })}
        <h2 id="task">"The task"</h2>
        <article class="readme" inner_html=data.readme_html></article>
        {t.repository.clone().map(|r| {
            let url = format!("https://github.com/{r}");
            view! { <p>"Codebase: "<a href=url rel="noopener">{r}</a>{t.license.clone().map(|l| format!(" (licence: {l})"))}</p> }
        })}
        {(!t.public_expected.is_empty()).then(|| view! {
            <h2>"Expected results"</h2>
            <table>
                <caption>"This task's expected values are public."</caption>
                <thead><tr><th scope="col">"Metric"</th><th scope="col">"Expected"</th></tr></thead>
                <tbody>
                    {t.public_expected.iter().map(|e| view! {
                        <tr><th scope="row"><code>{e.metric.clone()}</code></th><td class="num">{e.value.clone()}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        })}

        <FailureTable
            caption="The ways runs of this task failed, with how many agents failed each way."
            rows=data.failures.iter().map(|f| FailureRow {
                outcome: f.outcome,
                error_type: f.error_type.clone(),
                agents: Some(f.agents),
                runs: f.runs,
            }).collect()
        />
        <h2 id="hints">"Hints, and runs labelled no hints"</h2>
        {match (t.hint_passages, t.hints_unpublished.clone()) {
            (0, Some(why)) => view! {
                <p>{format!("The hint check cannot run on this task: {why} A run labelled no hints is taken at its word here (")}<a href="/about#claims">"what the board checks"</a>")."</p>
            }.into_any(),
            (0, None) => view! {
                <p>"This task's card names no passage of its hints: a run labelled no hints is taken at its word here."</p>
            }.into_any(),
            (n, _) => view! {
                <p>{format!("A run labelled no hints whose agent record quotes one of the {n} hint passages this task's card names (compared word by word, whatever its case, punctuation, spacing or invisible characters, and found with a word or two edited) is flagged hint-in-transcript.")}</p>
            }.into_any(),
        }}
        {t.heldout.clone().map(|(how, cost)| view! {
            <h2 id="heldout">"Held-out re-runs"</h2>
            <p>
                "The maintainers re-run each sampled success once more on a held-out variant of this task: inputs "
                "no submitter sees, kept with their gold ("<a href="/about#heldout">"how"</a>"). "
                {how}" "{cost}
            </p>
        })}
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn load_task(id: String, page: usize) -> Result<TaskData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::task::page(&ctx.store, &ctx.catalog, &id, page).await?)
}
