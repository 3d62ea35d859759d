//! `/compare?a=…&b=…`: two agents side by side, task by task.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::AgentDetail;

use store::stats::Comparison;

use crate::components::{IntervalNote, Rate, loaded, points_interval, query, query_all};
use crate::data::CompareData;
use store::{Hint, TaskId};
use views::format::{self, href};

#[component]
pub(crate) fn ComparePage() -> impl IntoView {
    let views::compare::CompareQuery { a, b } = views::compare::CompareQuery::from_page(query, query_all);
    let data = Resource::new_blocking(move || (a.clone(), b.clone()), |(a, b)| load_compare(a, b));
    view! {
        <Meta name="description" content="Two RExBench agents side by side, task by task, with and without hints."/>
        {loaded(data, |data| view! { <Compare data=data/> })}
    }
}

/// Agents past this many are typed rather than chosen from a list.
const MOST_IN_A_LIST: usize = 200;

#[component]
fn Compare(data: CompareData) -> impl IntoView {
    let CompareData { agents, answer } = data;
    let views::compare::CompareAnswer { a, b, names, comparison, wins } = answer;
    let title = match (&a, &b) {
        (Some(a), Some(b)) => format!("{} vs {}", a.display_name, b.display_name),
        _ => "Compare agents".to_owned(),
    };
    // A few agents are chosen from a list; many (a board of thousands) are typed, by id,
    // with the browser's suggestions from one list the two fields share: two lists of
    // every agent would double the page's weight with each agent on the board.
    let typed = agents.len() > MOST_IN_A_LIST;
    let picker = |name: &'static str, label: &'static str, chosen: Option<String>| {
        let id = format!("pick-{name}");
        if typed {
            return view! {
                <label for=id.clone()>{label}</label>
                <input type="text" id=id name=name list="known-agents" value=chosen placeholder="An agent's id"/>
            }
            .into_any();
        }
        view! {
            <label for=id.clone()>{label}</label>
            <select id=id name=name>
                <option value="">"Choose an agent"</option>
                {agents.iter().map(|(id, n)| {
                    let selected = chosen.as_deref() == Some(id.as_str());
                    view! { <option value=id.clone() selected=selected>{n.clone()}</option> }
                }).collect_view()}
            </select>
        }
        .into_any()
    };
    let suggestions = typed.then(|| view! {
        <datalist id="known-agents">
            {agents.iter().map(|(id, n)| view! { <option value=id.clone() label=n.clone()></option> }).collect_view()}
        </datalist>
    });
    let a_id = a.as_ref().map(|a| a.id.clone());
    let b_id = b.as_ref().map(|b| b.id.clone());
    view! {
        <Title text=title.clone()/>
        <h1>{title}</h1>
        <form class="filters" method="get" action="/compare">
            {picker("a", "Agent A", a_id.clone())}
            {picker("b", "Agent B", b_id.clone())}
            {suggestions}
            <button type="submit">"Compare"</button>
            {(a_id.is_some() && b_id.is_some()).then(|| view! {
                <a href=href("/compare", &[("a", b_id.as_deref()), ("b", a_id.as_deref())])>"Swap"</a>
            })}
        </form>
        {match (a, b) {
            (Some(a), Some(b)) => view! {
                <Paired a=a.display_name.clone() b=b.display_name.clone() comparison=comparison/>
                <Table a=a b=b names=names wins=wins.unwrap_or(views::compare::TaskWins { a: 0, b: 0 })/>
            }.into_any(),
            _ => view! { <p class="empty">"Choose two agents to see their results task by task."</p> }.into_any(),
        }}
    }
}

#[component]
fn Table(
    a: AgentDetail,
    b: AgentDetail,
    names: crate::data::TaskNames,
    wins: views::compare::TaskWins,
) -> impl IntoView {
    let grid = |x: &AgentDetail| x.newest_current().map(|(_, g)| g.clone()).unwrap_or_default();
    let (ga, gb) = (grid(&a), grid(&b));
    let tasks = views::compare::tasks_of(&ga, &gb);
    let link = |x: &AgentDetail, task: &TaskId, hint: Hint| {
        let pairs = [("task", Some(task.as_str())), ("hint", Some(hint.as_str()))];
        href(&format!("/agents/{}", format::segment(&x.id)), &pairs) + "#runs"
    };
    let views::compare::TaskWins { a: a_wins, b: b_wins } = wins;
    view! {
        <p>
            {format!(
                "Without hints, {} does better on {a_wins} task(s) and {} on {b_wins}; the rest are tied or lack results.",
                a.display_name, b.display_name
            )}
        </p>
        <div class="table-wrap">
            <table class="compare">
                <caption>
                    {format!("Final success per task: {} (A) and {} (B) under each hint condition; each rate links to its runs.", a.display_name, b.display_name)}
                </caption>
                <thead>
                    <tr>
                        <th scope="col" rowspan="2">"Task"</th>
                        {Hint::ALL.map(|h| view! { <th scope="colgroup" colspan="3">{h.label()}</th> }).collect_view()}
                    </tr>
                    <tr>
                        {Hint::ALL.map(|_| view! { <th scope="col">"A"</th><th scope="col">"B"</th><th scope="col">"B − A"</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {tasks.iter().map(|t| {
                        let name = names.get(t).cloned().unwrap_or_else(|| t.to_string());
                        view! {
                            <tr>
                                <th scope="row"><a href=format!("/tasks/{}", format::segment(t.as_str()))>{name}</a></th>
                                {Hint::ALL.map(|h| {
                                    let ra = ga.get(t).and_then(|g| g.get(&h)).and_then(|r| r.final_success);
                                    let rb = gb.get(t).and_then(|g| g.get(&h)).and_then(|r| r.final_success);
                                    let diff = ra.zip(rb).map(|(x, y)| y - x);
                                    let class = match diff { Some(d) if d > 0.005 => "num up", Some(d) if d < -0.005 => "num down", _ => "num" };
                                    view! {
                                        <td class="num"><Rate rate=ra href=link(&a, t, h) detail=String::new()/></td>
                                        <td class="num"><Rate rate=rb href=link(&b, t, h) detail=String::new()/></td>
                                        <td class=class>{format::points(diff)}</td>
                                    }
                                }).collect_view()}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// The paired test's verdict under each hint condition.
#[component]
fn Paired(a: String, b: String, comparison: Option<Comparison>) -> impl IntoView {
    let Some(c) = comparison else {
        return view! { <p class="empty">"These two have no results on the same tasks."</p> }.into_any();
    };
    view! {
        <h2>"Paired comparison"</h2>
        <p>{format!("Over the {} task(s) both ran; B − A in percentage points, with its 95% interval.", c.shared_tasks)}</p>
        <ul class="paired">
            {Hint::ALL.iter().map(|hint| {
                let label = hint.label();
                let text = match c.difference.get(*hint) {
                    None => format!("{label}: no shared runs."),
                    Some(d) => {
                        let verdict = if !d.excludes_zero() {
                            "the two cannot be told apart".to_owned()
                        } else if d.estimate > 0.0 {
                            format!("{b} does better")
                        } else {
                            format!("{a} does better")
                        };
                        format!("{label}: {} ({}): {verdict}.", format::points(Some(d.estimate)), points_interval(&d))
                    }
                };
                view! { <li>{text}</li> }
            }).collect_view()}
        </ul>
        <IntervalNote/>
    }
    .into_any()
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "compare")]
pub async fn load_compare(
    a: Option<String>,
    b: Option<String>,
) -> Result<CompareData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    let query = views::compare::CompareQuery { a, b };
    Ok(views::compare::page(&ctx.store, &ctx.catalog, &ctx.reader, &query).await?)
}
