//! `/keys/request`: how a submitter registers a key without writing to anyone
//! (`rexbench register`), what a request states publicly and what only the maintainers
//! read, and a request's status by its id (`?id=`): pending, approved, or declined with
//! the maintainers' reason. Its key's holder (signed in) and the maintainers also see its
//! contact, note and the bundles it holds while pending. Works without JavaScript.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::RequestStatus;
use views::key_requests::{KeyRequestAnswer, KeyRequestView};

use crate::components::{loaded, query};

#[component]
pub(crate) fn KeyRequestPage() -> impl IntoView {
    let id = query("id");
    let shown = id.clone();
    let request = Resource::new_blocking(move || id.clone(), load_key_request);
    view! {
        <Title text="Register a key"/>
        <Meta name="description" content="Register a signing key on the RExBench leaderboard with one command, and follow the request's status."/>
        <h1>"Register a key"</h1>
        <form method="get" action="/keys/request" class="inline">
            <label for="request-id">"A request's id "</label>
            <input id="request-id" name="id" type="number" min="1" value=shown.unwrap_or_default()/>
            " "<button type="submit">"Show its status"</button>
        </form>
        {loaded(request, |r| match r {
            Some(answer) => view! { <Status answer=answer/> }.into_any(),
            None => ().into_any(),
        })}
        <h2 id="how">"How"</h2>
        <p>"Make a key once, then ask this board to register it; the command proves you hold the key by signing a challenge:"</p>
        <pre><code>"rexbench keygen --out team\nrexbench register --server https://this.server --key team.pem --owner \"Team name\" --contact you@lab.org [--url https://lab.org] [--note \"what the agent is\"]"</code></pre>
        <p>
            "It prints the request's id and this page's address; "<code>"rexbench register --status --server … --key team.pem"</code>
            " shows where it stands. While it is pending your key may already submit: its bundles are verified and held, shown to you (signed in with "
            <code>"rexbench login"</code>") and to the maintainers, and to no one else. Approved, they go on the board as any submission does; "
            "declined, they are removed with the request, and the change log says so."
        </p>
        <h2 id="fields">"What a request states"</h2>
        <ul>
            <li><strong>"Public"</strong>": its id, the key's id, the owner's name (as results will show it), the team's page, its status and dates, and a decline's reason."</li>
            <li><strong>"For the maintainers only"</strong>" (and you, signed in): the contact address, the note, the bundles it holds."</li>
        </ul>
        <h2 id="rules">"What a request is held to"</h2>
        <ul>
            <li>"A key is requested once, and not if it is registered already."</li>
            <li>"An owner's name may not read as the board's badge words ("<em>"verified"</em>", "<em>"maintainer"</em>", …) nor as another owner's name, look-alike letters included."</li>
            <li>"An address files a few requests a day, and the board holds a bounded number pending at once; each refusal has its own code."</li>
        </ul>
    }
}

#[component]
fn Status(answer: KeyRequestAnswer) -> impl IntoView {
    let r: KeyRequestView = answer.request;
    let (class, words) = match r.status {
        RequestStatus::Pending => ("pending", "Pending: waiting for the maintainers.".to_owned()),
        RequestStatus::Approved => (
            "approved",
            format!(
                "Approved{}: the key is in the registry.",
                r.tier.map(|t| format!(" as {}", t.label().to_lowercase())).unwrap_or_default()
            ),
        ),
        RequestStatus::Declined => ("declined", "Declined by the maintainers.".to_owned()),
    };
    view! {
        <section class=format!("card request {class}") aria-labelledby="status-h">
            <h2 id="status-h">{format!("Request {}: ", r.id)}{r.owner.clone()}</h2>
            <p class="status" role="status">{words}</p>
            <dl class="facts">
                <dt>"Key"</dt><dd><code class="keyid">{r.keyid.clone()}</code></dd>
                {r.url.clone().map(|u| view! { <dt>"Page"</dt><dd><a href=u.clone() rel="nofollow noopener">{u.clone()}</a></dd> })}
                <dt>"Requested (UTC)"</dt><dd>{r.requested_at.clone()}</dd>
                {r.decided_at.clone().map(|d| view! { <dt>"Decided (UTC)"</dt><dd>{d}</dd> })}
                {r.reason.clone().map(|why| view! { <dt>"Reason"</dt><dd class="note">{why}</dd> })}
                {r.private.clone().map(|p| view! {
                    <dt>"Contact"</dt><dd>{p.contact}</dd>
                    {p.note.map(|n| view! { <dt>"Note"</dt><dd class="note">{n}</dd> })}
                    <dt>"Held bundles"</dt>
                    <dd>{if p.held.is_empty() {
                        "none".into_any()
                    } else {
                        view! {
                            <ul>{p.held.into_iter().map(|h| view! {
                                <li><code>{h.agent_id}</code>{format!(": {} runs, {} successes, received {}", h.runs, h.successes, h.received_at)}</li>
                            }).collect_view()}</ul>
                        }.into_any()
                    }}</dd>
                })}
            </dl>
            <p class="muted small">"Also as "<a href=format!("/api/v1/key-requests/{}", r.id)>"JSON"</a>"."</p>
        </section>
    }
}

// What this page reads, through its server function (thin: the page's URL → the view).

/// The request `id` names, for the page's reader; none without an id. An id that is not
/// a number, or names no request, is a 404.
#[server(prefix = "/sfn", endpoint = "key_request")]
pub async fn load_key_request(
    id: Option<String>,
) -> Result<Option<KeyRequestAnswer>, crate::error::AppError> {
    let Some(id) = id else { return Ok(None) };
    let missing = || crate::error::AppError::NotFound(format!("There is no key request `{id}`."));
    let n: i64 = id.trim().parse().ok().filter(|n| *n > 0).ok_or_else(missing)?;
    let ctx = crate::data::context()?;
    match views::key_requests::request(&ctx.store, n, &ctx.reader).await {
        Ok(answer) => Ok(Some(answer)),
        Err(views::ViewError::Store(store::StoreError::UnknownRequest(_))) => Err(missing()),
        Err(e) => Err(e.into()),
    }
}
