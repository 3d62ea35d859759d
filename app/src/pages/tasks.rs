//! `/tasks`: the twelve tasks (and the example tasks), with how agents do on each.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::components::{Rate, loaded};
use crate::data::TasksData;
use store::Hint;
use views::catalog::TaskInfo;
use views::format;

#[component]
pub(crate) fn TasksPage() -> impl IntoView {
    let data = Resource::new_blocking(|| (), |_| load_tasks());
    view! {
        <Title text="Tasks"/>
        <Meta
            name="description"
            content="The 12 RExBench tasks: the papers they extend, the extension asked for, and how often agents succeed on each with and without hints."
        />
        {loaded(data, |data| view! { <Tasks data=data/> })}
    }
}

#[component]
fn Tasks(data: TasksData) -> impl IntoView {
    let (examples, benchmark): (Vec<_>, Vec<_>) = data.tasks.into_iter().partition(|(t, _)| t.example);
    view! {
        <h1>"Tasks"</h1>
        <p>
            "Each task asks an agent to extend a published paper's codebase, then run the experiment. "
            "The rates pool every agent's current runs of the task."
        </p>
        <TaskTable caption="The RExBench tasks; rates are final success over every agent's runs." tasks=benchmark/>
        {(!examples.is_empty()).then(|| view! {
            <h2>"Example tasks"</h2>
            <p>"Small runnable tasks that show the runner at work; they are not part of RExBench."</p>
            <TaskTable caption="The example tasks." tasks=examples/>
        })}
    }
}

#[component]
fn TaskTable(caption: &'static str, tasks: Vec<(TaskInfo, Option<store::TaskRow>)>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Task"</th>
                        <th scope="col">"Extension"</th>
                        <th scope="col">"Agents"</th>
                        {Hint::ALL.map(|h| view! { <th scope="col">{h.label()}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {tasks.into_iter().map(|(t, row)| {
                        let link = format!("/tasks/{}", format::segment(&t.id));
                        view! {
                            <tr>
                                <th scope="row">
                                    <a href=link.clone()>{t.name.clone()}</a>
                                    <div class="muted small">{t.venue.clone().unwrap_or_default()}</div>
                                </th>
                                <td>
                                    {t.extension_type.clone().map(|e| view! { <span class="badge">{e}</span>" " })}
                                    {t.summary.clone().unwrap_or_default()}
                                </td>
                                <td class="num">{row.as_ref().map_or(0, |r| r.agents)}</td>
                                {Hint::ALL.map(|h| {
                                    let rate = row.as_ref().and_then(|r| r.by_hint.get(&h)).and_then(|r| r.final_success);
                                    view! { <td class="num"><Rate rate=rate href=format!("{link}#results") detail=String::new()/></td> }
                                }).collect_view()}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "tasks")]
pub async fn load_tasks() -> Result<TasksData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::task::list(&ctx.store, &ctx.catalog).await?)
}
