//! `/parity?a=…&b=…`: two submissions of one agent side by side (two harnesses, two
//! runner versions, a re-run), with the analysis Harbor's adapter guide asks for.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::{Hint, TaskId};
use views::parity::{LOPSIDED_BELOW, Parity, ParitySide, RunRatesFrom, Solved};

use crate::components::{HarnessBadge, IntervalNote, ProvenanceBadge, loaded, points_interval, query};
use crate::data::{ParityData, TaskNames};
use views::format::{self, href};

#[component]
pub(crate) fn ParityPage() -> impl IntoView {
    let views::parity::ParityQuery { a, b, hint } = views::parity::ParityQuery::from_page(query);
    let data = Resource::new_blocking(move || (a.clone(), b.clone(), hint), |(a, b, h)| load_parity(a, b, h));
    view! {
        <Meta
            name="description"
            content="One agent measured twice (two harnesses, two runner versions, a re-run): run-level rates, Harbor's matching criterion, a paired interval and the tasks each side solved alone."
        />
        {loaded(data, |data| view! { <ParityView data=data/> })}
    }
}

#[component]
fn ParityView(data: ParityData) -> impl IntoView {
    let hint = data.hint;
    let title = match &data.parity {
        Some(p) => format!("Parity: {} vs {}", side_name(&p.a), side_name(&p.b)),
        None => "Harness parity".to_owned(),
    };
    let views::parity::ParityQuery { a, b, .. } = views::parity::ParityQuery::from_page(query);
    let chosen = |side: &str| if side == "a" { a.clone() } else { b.clone() };
    let picker = |name: &'static str, label: &'static str| {
        let id = format!("parity-{name}");
        let chosen = chosen(name);
        let agents = data.agents.clone();
        // A bundle id names a submission the agent list does not hold: kept as chosen.
        let other = chosen.clone().filter(|c| !agents.iter().any(|(id, _)| id == c));
        view! {
            <label for=id.clone()>{label}</label>
            <select id=id name=name>
                <option value="">"Choose an agent"</option>
                {other.map(|b| view! { <option value=b.clone() selected=true>{format!("submission {}", format::short(&b))}</option> })}
                {agents.into_iter().map(|(id, n)| {
                    let selected = chosen.as_deref() == Some(id.as_str());
                    view! { <option value=id selected=selected>{n}</option> }
                }).collect_view()}
            </select>
        }
    };
    view! {
        <Title text=title.clone()/>
        <h1>{title}</h1>
        <p>
            "The same agent measured twice: under two harnesses, two runner versions, or again. "
            "This is the analysis Harbor's adapter guide asks of an adaptation: do the run-level rates' ranges overlap "
            "(its matching criterion), and is the split of tasks solved by one side only lopsided? "
            "Each side is named by an agent (its current results) or by a submission."
        </p>
        <form class="filters" method="get" action="/parity">
            {picker("a", "Side A")}
            {picker("b", "Side B")}
            <label for="parity-hint">"Hint condition"</label>
            <select id="parity-hint" name="hint">
                {Hint::ALL.map(|h| view! { <option value=h.as_str() selected=h == hint>{h.label()}</option> }).collect_view()}
            </select>
            <button type="submit">"Compare"</button>
        </form>
        {match data.parity {
            Some(p) => view! { <Analysis p=p names=data.names/> }.into_any(),
            None => view! {
                <p class="empty">
                    "Choose two sides. The first example: "
                    <a href=href("/parity", &[
                        ("a", Some("openhands-1.4.0-claude-sonnet-4.5-rexbench")),
                        ("b", Some("openhands-1.4.0-claude-sonnet-4.5-harbor")),
                    ])>"Harbor's own parity experiment, RExBench's original harness against Harbor"</a>"."
                </p>
            }.into_any(),
        }}
    }
}

fn side_name(s: &ParitySide) -> String {
    format::named_with_harness(&s.display_name, &s.harness)
}

/// Percent with two decimals, as Harbor prints its rates.
fn pct2(rate: Option<f64>) -> String {
    rate.map_or_else(|| "–".to_owned(), |r| format!("{:.2}%", r * 100.0))
}

#[component]
fn Analysis(p: Parity, names: TaskNames) -> impl IntoView {
    let hint = p.hint.label().to_lowercase();
    let name = |t: &TaskId| names.get(t).cloned().unwrap_or_else(|| t.to_string());
    let list = |tasks: &[TaskId]| {
        if tasks.is_empty() {
            "none".to_owned()
        } else {
            tasks.iter().map(&name).collect::<Vec<_>>().join(", ")
        }
    };
    let verdict = match p.ranges_overlap {
        Some(true) => "The ranges overlap: by Harbor's criterion the two sides match.".to_owned(),
        Some(false) => {
            "The ranges do not overlap: by Harbor's criterion the two sides do not match, which its guide \
                        treats as a systematic difference until shown otherwise."
                .to_owned()
        }
        None => "A side's run-level rates are not known, so Harbor's criterion cannot be judged.".to_owned(),
    };
    let difference = match p.difference {
        Some(d) => format!(
            "B − A in final success over the {} task(s) both ran: {} percentage points ({}), {}.",
            p.shared_tasks,
            format::points(Some(d.estimate)),
            points_interval(&d),
            if d.excludes_zero() {
                "an interval that excludes zero"
            } else {
                "an interval that includes zero: the two cannot be told apart"
            }
        ),
        None => "The two sides share no task with runs.".to_owned(),
    };
    let split = format!(
        "{} task(s) solved by A only and {} by B only: an exact two-sided sign test gives p = {:.3}, {}.",
        p.only_a.len(),
        p.only_b.len(),
        p.sign_test_p,
        if p.lopsided {
            format!(
                "below {LOPSIDED_BELOW}: the split is lopsided, which Harbor's guide reads as an adaptation error"
            )
        } else {
            format!("not below {LOPSIDED_BELOW}: the split is not lopsided")
        }
    );
    let reconstructed = [&p.a, &p.b].iter().any(|s| s.run_rates_from != RunRatesFrom::Attempts);
    view! {
        {(!p.same_agent).then(|| view! {
            <p class="warning">"These are different agents (framework, version or model differ): this is a comparison, not a parity check."</p>
        })}
        <div class="table-wrap">
            <table class="parity-sides">
                <caption>{format!("The two sides, with {hint}: successes over all runs, and each run's final success over the tasks.")}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Side"</th>
                        <th scope="col">"Agent and harness"</th>
                        <th scope="col">"Successes"</th>
                        <th scope="col">"Final success"</th>
                        <th scope="col">"Run-level rates"</th>
                        <th scope="col">"Mean ± SEM"</th>
                        <th scope="col">"Range"</th>
                    </tr>
                </thead>
                <tbody>
                    {[("A", p.a.clone()), ("B", p.b.clone())].into_iter().map(|(label, s)| view! { <SideRow label=label side=s/> }).collect_view()}
                </tbody>
            </table>
        </div>
        <h2>"Harbor's matching criterion"</h2>
        <p class="verdict">{verdict}</p>
        <p class="muted small">"max(A) ≥ min(B) and max(B) ≥ min(A), over the run-level rates. Mean ± SEM is the sample standard deviation of the runs over √n, as Harbor reports it."</p>
        {reconstructed.then(|| view! {
            <p class="muted small">
                "Results reconstructed from published per-task counts record the first successes of a task as its first attempts; "
                "which attempt succeeded is not published, so their run-level rates are the source's own, or not shown, and everything else here uses the counts per task only."
            </p>
        })}
        <h2>"The difference"</h2>
        <p>{difference}</p>
        <IntervalNote/>
        <h2>"Which tasks each side solved"</h2>
        <p class="muted small">"A side solved a task if at least one of its runs succeeded."</p>
        <dl class="solved">
            <dt>"A only"</dt><dd>{list(&p.only_a)}</dd>
            <dt>"B only"</dt><dd>{list(&p.only_b)}</dd>
            <dt>"Both"</dt><dd>{list(&p.both)}</dd>
            <dt>"Neither"</dt><dd>{list(&p.neither)}</dd>
        </dl>
        <p>{split}</p>
        <div class="table-wrap">
            <table class="parity-tasks">
                <caption>{format!("Per task with {hint}: successes out of runs on each side.")}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Task"</th>
                        <th scope="col">"A"</th>
                        <th scope="col">"B"</th>
                        <th scope="col">"Solved by"</th>
                    </tr>
                </thead>
                <tbody>
                    {p.tasks.iter().map(|t| {
                        let count = |c: Option<views::parity::TaskCount>| c.map_or_else(|| "–".to_owned(), |c| format!("{}/{}", c.successes, c.runs));
                        let solved = match t.solved {
                            Some(Solved::Both) => "both",
                            Some(Solved::OnlyA) => "A only",
                            Some(Solved::OnlyB) => "B only",
                            Some(Solved::Neither) => "neither",
                            None => "not run by both",
                        };
                        view! {
                            <tr>
                                <th scope="row"><a href=format!("/tasks/{}", format::segment(t.task.as_str()))>{name(&t.task)}</a></th>
                                <td class="num">{count(t.a)}</td>
                                <td class="num">{count(t.b)}</td>
                                <td>{solved}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <p class="downloads">
            "JSON: "
            <a href=href("/api/v1/parity", &[("a", Some(p.a.bundle_id.as_str())), ("b", Some(p.b.bundle_id.as_str())), ("hint", Some(p.hint.as_str()))])>
                "/api/v1/parity"
            </a>
        </p>
    }
}

#[component]
fn SideRow(label: &'static str, side: ParitySide) -> impl IntoView {
    let runs = match side.run_rates_from {
        RunRatesFrom::NotPublished => "not published".to_owned(),
        _ if side.run_rates.is_empty() => "–".to_owned(),
        from => {
            let rates = side.run_rates.iter().map(|r| pct2(Some(*r))).collect::<Vec<_>>().join(", ");
            if from == RunRatesFrom::Published { format!("{rates} (as published)") } else { rates }
        }
    };
    let mean = match (side.mean, side.sem) {
        (Some(m), Some(s)) => format!("{:.2} ± {:.2}", m * 100.0, s * 100.0),
        (Some(m), None) => format!("{:.2}", m * 100.0),
        _ => "–".to_owned(),
    };
    let range = side
        .low
        .zip(side.high)
        .map_or_else(|| "–".to_owned(), |(l, h)| format!("{}–{}", pct2(Some(l)), pct2(Some(h))));
    view! {
        <tr>
            <th scope="row">{label}</th>
            <td>
                <a href=format!("/agents/{}", format::segment(&side.agent_id))>{side.display_name.clone()}</a>
                <div class="badges">
                    <HarnessBadge harness=side.harness.clone()/>
                    <ProvenanceBadge provenance=side.provenance source=None/>
                </div>
                <div class="muted small">
                    {format!("submission {}", format::short(&side.bundle_id))}
                    {(!side.current).then_some(" (superseded)")}
                </div>
            </td>
            <td class="num">{format!("{}/{}", side.successes, side.runs)}</td>
            <td class="num">{pct2(side.final_success)}</td>
            <td>{runs}</td>
            <td class="num">{mean}</td>
            <td class="num">{range}</td>
        </tr>
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "parity")]
pub async fn load_parity(
    a: Option<String>,
    b: Option<String>,
    hint: Hint,
) -> Result<ParityData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::parity::page(&ctx.store, &ctx.catalog, a.as_deref(), b.as_deref(), hint).await?)
}
