//! `/changes`: the change log, newest first, fifty at a time.

use leptos::prelude::*;
use leptos_meta::{Link, Meta, Title};

use crate::components::{loaded, query};
use views::format;

#[component]
pub(crate) fn ChangesPage() -> impl IntoView {
    let before = views::changes::ChangesQuery::from_page(query).window.before;
    let data = Resource::new_blocking(move || before, load_changes);
    view! {
        <Title text="Changes"/>
        <Link rel="alternate" type_="application/atom+xml" title="RExBench leaderboard: changes" href="/changes.atom"/>
        <Meta name="description" content="Every bundle the RExBench leaderboard accepted or superseded, in order."/>
        <h1>"Changes"</h1>
        <p>"Every accepted, superseded or retracted bundle, every review, reproduction and change of who may read outputs, and every sampling key committed and revealed, newest first. Also as "<a href="/api/v1/changes">"JSON"</a>" and as an "<a href="/changes.atom">"Atom feed"</a>" to follow."</p>
        {loaded(data, |changes| view! { <Changes changes=changes/> })}
    }
}

#[component]
fn Changes(changes: Vec<store::Change>) -> impl IntoView {
    let next = (changes.len() as i64 == CHANGES_PER_PAGE).then(|| changes.last().map(|c| c.seq)).flatten();
    view! {
        {if changes.is_empty() {
            view! { <p class="empty">"Nothing has changed yet."</p> }.into_any()
        } else {
            view! {
                <table class="changes">
                    <caption>"Change log entries: when, what happened, and to which agent or task."</caption>
                    <thead>
                        <tr>
                            <th scope="col">"#"</th>
                            <th scope="col">"When (UTC)"</th>
                            <th scope="col">"Event"</th>
                            <th scope="col">"Agent or task"</th>
                            <th scope="col">"Detail"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {changes.into_iter().map(|c| view! {
                            <tr id=format!("change-{}", c.seq)>
                                <td class="num">{c.seq}</td>
                                <td>{c.at.clone()}</td>
                                <td><span class=format!("badge {}", c.kind)>{c.kind.clone()}</span></td>
                                <td>{match (&c.agent_id, &c.task) {
                                    (Some(agent), _) => view! { <a href=format!("/agents/{}", format::segment(agent))>{agent.clone()}</a> }.into_any(),
                                    (None, Some(task)) => view! { <a href=format!("/tasks/{}", format::segment(task))>{format!("task {task}")}</a> }.into_any(),
                                    (None, None) => "–".into_any(),
                                }}</td>
                                <td>{c.detail.clone()}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }
            .into_any()
        }}
        {next.map(|seq| view! { <p><a rel="next" href=format!("/changes?before={seq}")>"Older changes →"</a></p> })}
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

pub const CHANGES_PER_PAGE: i64 = views::changes::PER_PAGE;

#[server(prefix = "/sfn", endpoint = "changes")]
pub async fn load_changes(before: Option<i64>) -> Result<Vec<store::Change>, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::changes::list(&ctx.store, views::changes::ChangesQuery::page_before(before)).await?)
}
