//! `/desk`: the maintainers' desk, for a signed-in maintainer only (403 for anyone else,
//! never cached). What waits on them first (key requests, findings to review, the
//! reproduction queue), then what they keep (task sets, held-out variants). Each action
//! is a POST form that works without JavaScript, carrying the session's form token, and
//! answered by the rule the admin API calls (`server/src/desk.rs`); each list is paged by
//! its own URL parameter.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use views::desk::{DeskData, PageOf, QueueRow, SubmissionFindings, TaskSetRow};
use views::key_requests::KeyRequestView;

use crate::components::{loaded, query, set_status};
use crate::pages::Verdict;

#[component]
pub(crate) fn DeskPage() -> impl IntoView {
    let pages = (query("requests"), query("findings"), query("queue"));
    let desk = Resource::new_blocking(move || pages.clone(), |(r, f, q)| load_desk(r, f, q));
    let verdict = use_context::<Verdict>();
    if let Some(v) = &verdict {
        set_status(v.status);
    }
    let done = query("done").and_then(|d| done_words(&d));
    view! {
        <Title text="Maintainers' desk"/>
        <Meta name="robots" content="noindex"/>
        <Meta name="description" content="The RExBench maintainers' desk: key requests, findings to review, the reproduction queue, task sets and held-out variants."/>
        <h1>"Maintainers' desk"</h1>
        {verdict.map(|v| view! {
            <div class="verdict refused" role="alert">
                <h2>"✗ Not done"</h2>
                <p>{v.message}</p>
                <p class="muted small">"Error code: "<code>{v.code}</code>" (HTTP "{v.status}"). Nothing was changed."</p>
            </div>
        })}
        {done.map(|d| view! { <p class="notice" role="status">{d}</p> })}
        {loaded(desk, |d| view! { <Desk d=d/> })}
    }
}

/// What a finished action says, by the word the desk's form handler sends back.
fn done_words(done: &str) -> Option<&'static str> {
    Some(match done {
        "approved" => "Approved: the key is in the registry and its held bundles are on the board.",
        "declined" => "Declined: the key and its held bundles are removed; the requester sees your reason.",
        "confirmed" => "Confirmed: the finding stands, and the strict view counts the run as a failure.",
        "dismissed" => "Dismissed: the finding no longer flags its run.",
        "variant-registered" => "Registered the held-out variant.",
        "variant-known" => "That variant was registered already: nothing changed.",
        "variant-retired" => "Retired the variant: it is chosen for no new submission.",
        "variant-was-retired" => "That variant was retired already: nothing changed.",
        "task-set-registered" => "Registered the task set.",
        "task-set-known" => "That task set was registered already: nothing changed.",
        _ => return None,
    })
}

#[component]
fn Desk(d: DeskData) -> impl IntoView {
    let token = d.form_token.clone();
    view! {
        <p class="lede">
            <a href="#requests">{plural(d.requests_page.total, "key request", "key requests")}</a>" · "
            <a href="#findings">{plural(d.findings_page.total, "finding to review", "findings to review")}</a>" · "
            <a href="#queue">{plural(d.queue_page.total, "sampled run to re-run", "sampled runs to re-run")}</a>
        </p>
        <Requests requests=d.requests page=d.requests_page token=token.clone()/>
        <Findings findings=d.findings page=d.findings_page token=token.clone()/>
        <Queue queue=d.queue page=d.queue_page/>
        <TaskSets sets=d.task_sets token=token.clone()/>
        <Variants variants=d.variants tasks=d.tasks token=token/>
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A list's page links, each keeping the other lists' pages as they are (the URL holds them).
#[component]
fn Pages(name: &'static str, page: PageOf) -> impl IntoView {
    if page.pages <= 1 {
        return ().into_any();
    }
    let link = move |n: usize| format!("/desk?{name}={n}#{name}");
    view! {
        <nav class="pages" aria-label=format!("Pages of {name}")>
            {(page.page > 1).then(|| view! { <a href=link(page.page - 1) rel="prev">"← Newer"</a>" " })}
            <span>{format!("Page {} of {}", page.page.min(page.pages), page.pages)}</span>
            {(page.page < page.pages).then(|| view! { " "<a href=link(page.page + 1) rel="next">"Older →"</a> })}
        </nav>
    }
    .into_any()
}

#[component]
fn Requests(requests: Vec<KeyRequestView>, page: PageOf, token: String) -> impl IntoView {
    view! {
        <section id="requests" aria-labelledby="requests-h">
            <h2 id="requests-h">"Key requests"</h2>
            <p class="muted">
                "Keys that asked to be registered with "<code>"rexbench register"</code>". A pending key may already submit: "
                "its bundles are held, seen by it and by you alone. Approve it (choosing its tier) and they go on the board; "
                "decline it and they are removed, and the requester reads your reason."
            </p>
            {if requests.is_empty() {
                view! { <p class="empty">"No key request waits."</p> }.into_any()
            } else {
                requests.into_iter().map(|r| view! { <Request r=r token=token.clone()/> }).collect_view().into_any()
            }}
            <Pages name="requests" page=page/>
        </section>
    }
}

#[component]
fn Request(r: KeyRequestView, token: String) -> impl IntoView {
    let private = r.private.clone();
    let id = r.id;
    let tier_id = format!("tier-{id}");
    let reason_id = format!("reason-{id}");
    view! {
        <article class="card request" id=format!("request-{id}")>
            <h3><a href=views::key_requests::page_of(id)>{format!("Request {id}: ")}{r.owner.clone()}</a></h3>
            <dl class="facts">
                <dt>"Key"</dt><dd><code class="keyid">{r.keyid.clone()}</code></dd>
                <dt>"Requested (UTC)"</dt><dd>{r.requested_at.clone()}</dd>
                {r.url.clone().map(|u| view! { <dt>"Page"</dt><dd><a href=u.clone() rel="nofollow noopener">{u.clone()}</a></dd> })}
                {private.clone().map(|p| view! {
                    <dt>"Contact"</dt><dd>{p.contact}</dd>
                    {p.note.map(|n| view! { <dt>"Note"</dt><dd class="note">{n}</dd> })}
                    <dt>"Held bundles"</dt>
                    <dd>{if p.held.is_empty() {
                        "none".into_any()
                    } else {
                        view! {
                            <ul>
                                {p.held.into_iter().map(|h| view! {
                                    <li><code>{h.agent_id}</code>{format!(": {} runs, {} successes, {} bytes, received {} (bundle {})", h.runs, h.successes, h.bytes, h.received_at, short(&h.bundle_id))}</li>
                                }).collect_view()}
                            </ul>
                        }.into_any()
                    }}</dd>
                })}
            </dl>
            <div class="actions">
                <form method="post" action=format!("/desk/requests/{id}/approve")>
                    <input type="hidden" name="token" value=token.clone()/>
                    <label for=tier_id.clone()>"Tier "</label>
                    <select id=tier_id name="tier">
                        <option value="submitter" selected>"submitter (self-reported)"</option>
                        <option value="maintainer">"maintainer (verified)"</option>
                    </select>
                    " "<button type="submit">"Approve"</button>
                </form>
                <form method="post" action=format!("/desk/requests/{id}/decline")>
                    <input type="hidden" name="token" value=token/>
                    <label for=reason_id.clone()>"Reason "</label>
                    <input id=reason_id name="reason" type="text" required maxlength="1000" size="40"/>
                    " "<button type="submit">"Decline"</button>
                </form>
            </div>
        </article>
    }
}

fn short(id: &str) -> String {
    id.chars().take(12).collect()
}

#[component]
fn Findings(findings: Vec<SubmissionFindings>, page: PageOf, token: String) -> impl IntoView {
    view! {
        <section id="findings" aria-labelledby="findings-h">
            <h2 id="findings-h">"Findings to review"</h2>
            <p class="muted">
                "Integrity findings about current successes that no maintainer has reviewed, by submission. Confirm one "
                "(the strict view counts the run as a failure) or dismiss it (it no longer flags the run), with a note the run page shows."
            </p>
            {if findings.is_empty() {
                view! { <p class="empty">"No finding waits for review."</p> }.into_any()
            } else {
                findings.into_iter().map(|s| view! { <Submission s=s token=token.clone()/> }).collect_view().into_any()
            }}
            <Pages name="findings" page=page/>
        </section>
    }
}

#[component]
fn Submission(s: SubmissionFindings, token: String) -> impl IntoView {
    let count = s.findings.len();
    view! {
        <article class="card">
            <h3>
                <a href=format!("/agents/{}", views::format::segment(&s.agent_id))>{s.agent_name.clone()}</a>
                {format!(": submission {} ({})", short(&s.bundle_id), plural(count, "finding", "findings"))}
            </h3>
            <ul class="findings">
                {s.findings.into_iter().map(|f| {
                    let fid = f.finding.id.clone();
                    let note_id = format!("note-{fid}");
                    let verdict_id = format!("verdict-{fid}");
                    view! {
                        <li>
                            <p>
                                <a href=format!("/runs/{}", f.run_id)>{format!("Run {}", f.run_id)}</a>
                                {format!(" ({}, {}, attempt {}): ", f.task, f.hint.as_str(), f.attempt)}
                                <strong>{f.finding.check.clone()}</strong>
                                {format!(" (found by the {})", f.finding.found_by.as_str())}
                            </p>
                            <p class="evidence">{f.finding.message.clone()}
                                {f.finding.artifact.clone().map(|a| format!(" [{a}{}]", f.finding.line.map(|l| format!(":{l}")).unwrap_or_default()))}
                            </p>
                            <form method="post" action=format!("/desk/findings/{fid}/review")>
                                <input type="hidden" name="token" value=token.clone()/>
                                <label for=verdict_id.clone()>"Verdict "</label>
                                <select id=verdict_id name="verdict">
                                    <option value="confirmed">"confirm"</option>
                                    <option value="dismissed">"dismiss"</option>
                                </select>
                                " "<label for=note_id.clone()>"Note "</label>
                                <input id=note_id name="note" type="text" required maxlength="1000" size="40"/>
                                " "<button type="submit">"Review"</button>
                            </form>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </article>
    }
}

#[component]
fn Queue(queue: Vec<QueueRow>, page: PageOf) -> impl IntoView {
    view! {
        <section id="queue" aria-labelledby="queue-h">
            <h2 id="queue-h">"Reproduction queue"</h2>
            <p class="muted">
                "Sampled runs of self-reported submissions not yet re-run: pending, escalated (carried on from a refuted success), "
                "retrying (an infrastructure error so far) or overdue (sampled over a week ago). "
                <code>"SERVER"</code>" is this site's address."
            </p>
            {if queue.is_empty() {
                view! { <p class="empty">"No sampled run waits."</p> }.into_any()
            } else {
                view! {
                    <div class="table-wrap">
                        <table>
                            <caption>"Sampled runs waiting to be re-run, oldest sample first, with the command that re-runs the submission's sample."</caption>
                            <thead><tr>
                                <th scope="col">"Run"</th><th scope="col">"Agent"</th><th scope="col">"Task"</th>
                                <th scope="col">"State"</th><th scope="col">"Sampled (UTC)"</th><th scope="col">"Command"</th>
                            </tr></thead>
                            <tbody>
                                {queue.into_iter().map(|q| view! {
                                    <tr>
                                        <td><a href=format!("/runs/{}", q.run.run_id)>{q.run.run_id}</a></td>
                                        <td><a href=format!("/agents/{}", views::format::segment(&q.run.agent_id))>{q.run.agent_id.clone()}</a></td>
                                        <td>{format!("{} · {} · {}", q.run.task, q.run.hint.as_str(), q.run.attempt)}</td>
                                        <td>{q.state.clone()}</td>
                                        <td>{q.run.sampled_at.clone()}</td>
                                        <td><code>{q.command.clone()}</code></td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }.into_any()
            }}
            <Pages name="queue" page=page/>
        </section>
    }
}

#[component]
fn TaskSets(sets: Vec<TaskSetRow>, token: String) -> impl IntoView {
    view! {
        <section id="task-sets" aria-labelledby="task-sets-h">
            <h2 id="task-sets-h">"Task sets"</h2>
            <ul>
                {sets.into_iter().map(|s| view! {
                    <li>
                        {format!("{} {} ", s.name, s.version)}<code>{s.digest.clone()}</code>
                        {format!(": {}", s.registered_at.map(|at| format!("registered {at}, {}", s.note)).unwrap_or(s.note))}
                    </li>
                }).collect_view()}
            </ul>
            <form method="post" action="/desk/task-sets" class="stack">
                <input type="hidden" name="token" value=token/>
                <label for="set-digest">"Digest"</label>
                <input id="set-digest" name="digest" type="text" required pattern="[0-9a-f]{64}" size="66"/>
                <label for="set-name">"Benchmark name"</label>
                <input id="set-name" name="name" type="text" required maxlength="200"/>
                <label for="set-version">"Version"</label>
                <input id="set-version" name="version" type="text" required maxlength="200"/>
                <label for="set-note">"Note"</label>
                <input id="set-note" name="note" type="text" required maxlength="200" size="40"/>
                <button type="submit">"Register the task set"</button>
            </form>
        </section>
    }
}

#[component]
fn Variants(variants: Vec<store::RegisteredVariant>, tasks: Vec<String>, token: String) -> impl IntoView {
    view! {
        <section id="variants" aria-labelledby="variants-h">
            <h2 id="variants-h">"Held-out variants"</h2>
            {if variants.is_empty() {
                view! { <p class="empty">"No variant is registered."</p> }.into_any()
            } else {
                view! {
                    <ul class="variants">
                        {variants.into_iter().map(|v| {
                            let note_id = format!("retire-{}-{}", v.task, short(&v.digest));
                            view! {
                                <li>
                                    <code>{v.task.clone()}</code>" "<code>{v.digest.clone()}</code>
                                    {format!(": registered {}, {}", v.registered_at, v.note)}
                                    {match v.retired_at.clone() {
                                        Some(at) => format!(" (retired {at})").into_any(),
                                        None => view! {
                                            <form method="post" action="/desk/variants/retire">
                                                <input type="hidden" name="token" value=token.clone()/>
                                                <input type="hidden" name="task" value=v.task.clone()/>
                                                <input type="hidden" name="digest" value=v.digest.clone()/>
                                                <label for=note_id.clone()>"Why retire "</label>
                                                <input id=note_id name="note" type="text" required maxlength="1000" size="30"/>
                                                " "<button type="submit">"Retire"</button>
                                            </form>
                                        }.into_any(),
                                    }}
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            <form method="post" action="/desk/variants" class="stack">
                <input type="hidden" name="token" value=token/>
                <label for="variant-task">"Task"</label>
                <select id="variant-task" name="task">
                    {tasks.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                </select>
                <label for="variant-digest">"Digest ("<code>"rexbench variants --gold DIR"</code>")"</label>
                <input id="variant-digest" name="digest" type="text" required pattern="[0-9a-f]{64}" size="66"/>
                <label for="variant-note">"Note (never the variant's contents)"</label>
                <input id="variant-note" name="note" type="text" required maxlength="1000" size="40"/>
                <button type="submit">"Register the variant"</button>
            </form>
        </section>
    }
}

// What this page reads, through its server function (thin: the page's URL → the view).

/// The desk, for a maintainer; anyone else is refused (a 403 page).
#[server(prefix = "/sfn", endpoint = "desk")]
pub async fn load_desk(
    requests: Option<String>,
    findings: Option<String>,
    queue: Option<String>,
) -> Result<DeskData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    if !matches!(ctx.reader, views::access::Reader::Maintainer { .. }) {
        return Err(crate::error::AppError::Forbidden(
            "The desk is for a signed-in maintainer: open a link from `rexbench-server sign-in-link`, or sign in with a maintainer key (`rexbench login`)."
                .into(),
        ));
    }
    let Some(token) = ctx.form_token.clone() else {
        return Err(crate::error::AppError::Forbidden(
            "The desk's forms need a browser session: open a sign-in link in this browser.".into(),
        ));
    };
    let query = views::desk::DeskQuery::read(|name| match name {
        "requests" => requests.clone(),
        "findings" => findings.clone(),
        "queue" => queue.clone(),
        _ => None,
    });
    Ok(views::desk::desk(&ctx.store, &ctx.catalog, query, &ctx.reader, token).await?)
}
