//! `/agents/{id}`: one agent: its task × hint grid, how its runs failed, its runs, and
//! its submission history.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::charts;
use crate::components::{
    AgentUrl, Chart, FailureRow, FailureTable, FlaggedRuns, HarnessBadge, IntervalNote, IssueMark,
    KnownIssues, OutcomeLabel, ProvenanceBadge, Rate, SubmittedBy, TierBadge, interval_text, loaded, param,
    points_interval, query,
};
use crate::data::{AgentData, ErrorCountRow, PublishedFacts, TaskNames};
use store::{Hint, ProvenanceKind, TaskGrid};
use views::agent::Spent;
use views::format::{self, href};
use views::paper::{self, KnownIssue};

#[component]
pub(crate) fn AgentPage() -> impl IntoView {
    let id = param("id");
    let views::agent::AgentQuery { task, hint, .. } = views::agent::AgentQuery::from_page(query);
    let data = Resource::new_blocking(
        move || (id.clone(), task.clone(), hint),
        |(id, task, hint)| load_agent(id, task, hint),
    );
    view! {
        {loaded(data, |data| view! { <Agent data=data/> })}
    }
}

#[component]
fn Agent(data: AgentData) -> impl IntoView {
    let a = data.agent;
    let base = format!("/agents/{}", format::segment(&a.id));
    let views::agent::AgentQuery { task, hint, submitted } = views::agent::AgentQuery::from_page(query);
    let current = a.submissions.iter().find(|s| s.superseded_by.is_none()).cloned();
    let name_of = |t: &str| data.names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    let grid = a.newest_current().map(|(_, g)| g.clone()).unwrap_or_default();
    let issues: Vec<KnownIssue> = data.published.as_ref().map(|p| p.issues.clone()).unwrap_or_default();

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
        // Its rates first; what the results are and where they come from follow them.
        <p class="lede badges">
            {current.clone().map(|s| view! {
                <TierBadge tier=s.tier/>
                <ProvenanceBadge provenance=s.provenance source=s.provenance_source.clone()/>
                <HarnessBadge harness=s.harness.clone()/>
            })}
            <span>{format!("{} · {}", a.framework, a.model)}</span>
            <a href="#about-results">"About these results"</a>
        </p>
        {data.stats.clone().map(|st| view! { <Overall st=st/> }.into_any())}

        <h2 id="about-results">"About these results"</h2>
        {view! {
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
            {current.clone().map(|s| view! { <dt>"Harness"</dt><dd><HarnessBadge harness=s.harness.clone()/></dd> })}
            {data.coverage.clone().map(|c| view! {
                <dt>"Covers"</dt>
                <dd>
                    {c.words.clone().unwrap_or_else(|| format!("all {} tasks under each hint condition, 5 valid attempts each", c.of))}
                    {(!c.ranked).then(|| view! {
                        " — not ranked: it does not cover every task of its set without hints with the valid attempts the benchmark asks ("
                        <a href="/about#coverage">"why"</a>")"
                    })}
                </dd>
                <dt id="infra-errors">"Not counted"</dt>
                <dd>
                    {match c.infra_errors.clone() {
                        Some(words) => format!("{words} ended infra_error: counted in no rate and in no attempt"),
                        None => "no run ended infra_error".to_owned(),
                    }}
                    " ("<a href="/about#infra-errors">"why"</a>")"
                </dd>
                {c.not_reproduced_before.clone().map(|before| view! {
                    <dt>"Reproduction"</dt>
                    <dd class="repro differed">
                        {format!("a previous submission ({}) did not reproduce: ", format::short(&before))}
                        <a href="#reproduction">"its re-runs"</a>
                        "; the same runs of this one are sampled, and its successes among them count as failures in the strict view until a maintainer dismisses the finding"
                    </dd>
                })}
                {c.taint.flagged().then(|| view! {
                    <dt>"A caught lie"</dt>
                    <dd class="repro differed taint">
                        {format::taint_words(c.taint.refuted, c.taint.unverified)}
                        ": every success of this submission that was not itself re-run and held counts as a failure in the \
                         strict view and is queued for the maintainers to re-run, until a re-run holds or a maintainer \
                         dismisses the refutation ("<a href="/about#caught-lie">"what a caught lie costs"</a>")"
                    </dd>
                })}
                {c.taint.submitter_refuted.clone().map(|other| view! {
                    <dt>"Its submitter"</dt>
                    <dd class="repro differed">
                        "a submission of this submitter ("<a href=format!("/agents/{other}#reproduction")>{other.clone()}</a>
                        ") did not reproduce: its later submissions are sampled by the enlarged rule"
                    </dd>
                })}
            })}
            {data.submitted_by.clone().map(|s| view! {
                <dt>"Submitted"</dt>
                <dd><SubmittedBy submitter=s/></dd>
            })}
            <dt>"Compare"</dt>
            <dd><a href=href("/compare", &[("a", Some(a.id.as_str()))])>"Compare with another agent"</a></dd>
            {(!data.elsewhere.is_empty()).then(|| view! {
                <dt>"Measured elsewhere"</dt>
                <dd>
                    <ul class="plain">
                        // The other side's harness, said once: in its name or after it.
                        {data.elsewhere.iter().map(|(other, name, harness)| view! {
                            <li>
                                <a href=href("/parity", &[("a", Some(a.id.as_str())), ("b", Some(other.as_str()))])>
                                    {format!("Harness parity with {}", format::named_with_harness(name, harness))}
                                </a>
                            </li>
                        }).collect_view()}
                    </ul>
                </dd>
            })}
        </dl>
        }.into_any()}

        {data.stats.clone().map(|st| view! { <Reliability reliability=st.reliability/> }.into_any())}

        {view! { <CostSection grid=grid.clone() names=data.names.clone() published=data.published.clone() marked=a.cost_marked.iter().filter(|m| task.as_deref().is_none_or(|t| m.task.as_str() == t) && hint.is_none_or(|h| m.hint == h)).cloned().collect() provenance=current.as_ref().map(|s| s.provenance)/> }.into_any()}

        <SuccessByTask grid=grid.clone() names=data.names.clone() issues=issues.clone() same=data.same_patches.clone() base=base.clone() heat=heat/>

        <FailureTable
            caption="Runs that did not succeed, by outcome and error type (published results carry outcomes only)."
            rows=data.failures.iter().map(|f| FailureRow {
                outcome: f.outcome,
                error_type: f.error_type.clone(),
                agents: None,
                runs: f.runs,
            }).collect()
        />

        {data.published.clone().map(|p| view! { <PublishedErrors facts=p/> }.into_any())}

        {(!data.flagged.is_empty()).then(|| {
            let runs = data.flagged.iter().map(|f| f.run_id).collect::<std::collections::BTreeSet<_>>().len();
            view! {
                <h2 id="flagged">"Flagged successes"</h2>
                <p>
                    {format!("{runs} of this agent's successes carry integrity findings no maintainer has dismissed: ")}
                    "signs that the result may not come from running the agent's code. They stand as the checker judged "
                    "them; the leaderboard's "<a href="/?integrity=strict">"strict view"</a>" counts them as failures. "
                    "What each check looks for is on the "<a href="/about#integrity">"about page"</a>"."
                </p>
                <FlaggedRuns
                    caption=format!("{runs} flagged successes, each with the checks that flag it")
                    records=data.flagged.clone()
                    names=data.names.clone()
                    agents=false
                />
            }
        })}

        <RunList heading=runs_heading base=base.clone() runs=data.runs.clone() names=data.names.clone()/>

        <Submissions submissions=a.submissions.clone()/>

        <Reproduced runs=a.reproduced.clone() sample=current.as_ref().map(|s| s.sample)/>

        {(!issues.is_empty()).then(|| view! { <KnownIssues issues=issues.clone()/> }.into_any())}
    }
}

/// The agent's rates under each condition with their intervals, its plausible rank and
/// the change hints make.
#[component]
fn Overall(st: store::stats::AgentStats) -> impl IntoView {
    let placed = match (st.rank, st.group) {
            (Some(rank), Some(group)) => format!(
                "Plausible rank by final success without hints: {rank} of {}; tie group {group} (agents in one group cannot be told apart).",
                st.of
            ),
            _ => "Not ranked: these results do not cover every task of their set without hints, so the intervals below are over the tasks they ran.".to_owned(),
        };
    view! {
        <h2>"Overall, with uncertainty"</h2>
        <p>{placed}</p>
        <div class="table-wrap primary">
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
        </div>
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
}

/// Final and execution success per task and condition: the heat map and its table, each
/// rate linking to its runs, with the paper's known issues marked.
#[component]
fn SuccessByTask(
    grid: TaskGrid,
    names: TaskNames,
    issues: Vec<KnownIssue>,
    /// Where attempts made the same patch: task, condition, the most sharing one, of how many.
    same: Vec<(store::TaskId, Hint, i64, i64)>,
    base: String,
    heat: String,
) -> impl IntoView {
    let name_of = |t: &str| names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    view! {
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
                                    let notes: Vec<KnownIssue> = issues
                                        .iter()
                                        .filter(|i| i.condition == Some(h) && i.task.as_deref() == Some(t.as_str()))
                                        .cloned()
                                        .collect();
                                    view! {
                                        <td class="num">
                                            <Rate rate=r.and_then(|r| r.final_success) href=link detail=String::new()/>
                                            <span class="muted small">
                                                {format!(" exec {}", format::pct(r.and_then(|r| r.execution_success)))}
                                            </span>
                                            {notes.into_iter().map(|i| view! { <IssueMark issue=i/> }).collect_view()}
                                            {same.iter().find(|(task, hint, ..)| task == t && *hint == h).map(|(_, _, most, of)| view! {
                                                <div class="small same-patch">{format!("{most} of {of} attempts made the same patch")}</div>
                                            })}
                                        </td>
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

/// The agent's runs (of the task and condition the URL narrows to), each linking to its
/// page.
#[component]
fn RunList(heading: String, base: String, runs: Vec<store::RunSummary>, names: TaskNames) -> impl IntoView {
    let name_of = |t: &str| names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    let runs_heading = heading;
    view! {
        <h2 id="runs">{runs_heading}</h2>
        <p class="muted small">
            "Show: "
            <a href=format!("{base}#runs")>"all runs"</a>
            {Hint::ALL.map(|h| view! { " · "<a href=href(&base, &[("hint", Some(h.as_str()))]) + "#runs">{h.label()}</a> }).collect_view()}
        </p>
        <div class="table-wrap">
            <table class="runs">
                <caption>{format!("{} runs; each links to its patch, logs and metrics.", runs.len())}</caption>
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
                    {runs.iter().map(|r| view! {
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
    }
}

/// Every bundle received for the agent, newest first, with its status, sample and
/// signed envelope.
#[component]
fn Submissions(submissions: Vec<store::SubmissionRecord>) -> impl IntoView {
    view! {
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
                    <th scope="col">"Reproduction"</th>
                    <th scope="col">"Evidence"</th>
                </tr>
            </thead>
            <tbody>
                {submissions.iter().map(|s| view! {
                    <tr>
                        <td><code title=s.bundle_id.clone()>{format::short(&s.bundle_id).to_owned()}</code></td>
                        <td>{s.created_at.clone()}</td>
                        <td>{s.received_at.clone()}</td>
                        <td><TierBadge tier=s.tier/>" "<ProvenanceBadge provenance=s.provenance source=s.provenance_source.clone()/></td>
                        <td><a href=format!("/keys#key-{}", s.keyid) title=s.keyid.clone()><code>{format::short(&s.keyid).to_owned()}</code></a></td>
                        <td class="num">{s.run_count}</td>
                        <td>{match &s.superseded_by {
                            None => view! { "current" }.into_any(),
                            Some(b) => view! {
                                {format!("superseded by {} · ", format::short(b))}
                                <a href=href("/parity", &[("a", Some(s.bundle_id.as_str())), ("b", Some(b.as_str()))])>"parity with it"</a>
                            }.into_any(),
                        }}</td>
                        <td>
                            <a href=format!("/api/v1/submissions/{}/sample", s.bundle_id)>
                                {format::sample_words(s.sample.sampled, s.sample.reproduced, s.sample.differed)}
                                {format::heldout_words(s.sample.heldout, s.sample.generalised).map(|w| format!("; {w}"))}
                                {format::catch_words(s.sample.catches, s.sample.share).map(|w| format!("; {w}"))}
                            </a>
                        </td>
                        <td><a href=format!("/api/v1/submissions/{}/envelope", s.bundle_id)>"signed envelope"</a></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The runs whose stated cost is not borne out, each beside what its tokens cost.
#[component]
fn CostMarked(marked: Vec<store::CostMarkedRun>, names: TaskNames) -> impl IntoView {
    let shown = marked.len();
    view! {
        <div class="table-wrap">
            <table id="cost-marked">
                <caption>
                    {format!("Runs whose stated cost is not borne out ({shown}{}): a mark about cost alone, not about success. ", if shown as i64 >= store::AgentDetail::COST_MARKED_SHOWN { ", the first shown" } else { "" })}
                    <a href="/about#cost">"What the marks mean"</a>
                </caption>
                <thead>
                    <tr>
                        <th scope="col">"Run"</th>
                        <th scope="col">"Task"</th>
                        <th scope="col">"Hint condition"</th>
                        <th scope="col">"Stated"</th>
                        <th scope="col">"Its tokens cost"</th>
                        <th scope="col">"Mark"</th>
                    </tr>
                </thead>
                <tbody>
                    {marked.into_iter().map(|m| view! {
                        <tr>
                            <td><a href=format!("/runs/{}", m.run_id)>{format!("#{} (attempt {})", m.run_id, m.attempt)}</a></td>
                            <td>{names.get(m.task.as_str()).cloned().unwrap_or_else(|| m.task.to_string())}</td>
                            <td>{m.hint.label()}</td>
                            <td class="num">{format::usd(m.cost_usd)}</td>
                            <td class="num">{format::usd(m.cost_computed_usd)}</td>
                            <td class="cost-mark" title=m.mark.sentence()>{m.mark.as_str()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Cost and duration under each hint condition and per task, from the runs; for the
/// paper's agents, Table 7 as printed beside them.
#[component]
fn CostSection(
    grid: TaskGrid,
    names: TaskNames,
    published: Option<PublishedFacts>,
    marked: Vec<store::CostMarkedRun>,
    provenance: Option<ProvenanceKind>,
) -> impl IntoView {
    let from_paper = provenance == Some(ProvenanceKind::Published);
    let rows: Vec<(Hint, Spent)> = Hint::ALL.iter().map(|h| (*h, Spent::of(&grid, *h))).collect();
    let any = rows.iter().any(|(_, s)| s.cost_runs > 0 || s.duration_runs > 0);
    let all = Spent::over(rows.iter().map(|(_, s)| s));
    let (all_runs, all_cost, cost_runs) = (all.runs, all.cost, all.cost_runs);
    let mean = |sum: f64, n: i64| (n > 0).then(|| sum / n as f64);
    let names_marked = names.clone();
    let name_of = move |t: &str| names.get(t).cloned().unwrap_or_else(|| t.to_owned());
    view! {
        <h2 id="cost">"Cost and time"</h2>
        {if !any {
            view! { <p class="empty">"This agent's runs report no cost or duration."</p> }.into_any()
        } else {
            view! {
                <table>
                    <caption>
                        "What a run cost and how long it took under each hint condition: the mean over the runs that report it, and their sum. "
                        {if from_paper {
                            "The costs are the paper's averages per run, as published: no run's tokens can be checked."
                        } else {
                            "A run's cost is its tokens priced at its model's price of its day where the board could check them, else what it states ("
                        }}
                        {(!from_paper).then(|| view! { <a href="/about#cost">"how cost is checked"</a>")." })}
                    </caption>
                    <thead>
                        <tr>
                            <th scope="col">"Hint condition"</th>
                            <th scope="col">"Runs"</th>
                            <th scope="col">"Mean cost per run"</th>
                            <th scope="col">"Cost per success"</th>
                            <th scope="col">"Cost checked"</th>
                            <th scope="col">"Total cost"</th>
                            <th scope="col">"Mean duration"</th>
                            <th scope="col">"Total duration"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows.iter().map(|(h, s)| view! {
                            <tr>
                                <th scope="row">{h.label()}</th>
                                <td class="num">{s.runs}</td>
                                <td class="num" title=format!("over {} runs", s.cost_runs)>{format::usd(mean(s.cost, s.cost_runs))}</td>
                                <td class="num" title=format!("over {} successes", s.successes)>{format::usd(store::cost_per_success(s.cost, s.cost_runs, s.runs, s.successes))}</td>
                                <td class="num">{match (from_paper, s.cost_runs) {
                                    (_, 0) => "–".to_owned(),
                                    (true, _) => "paper's average".to_owned(),
                                    (false, n) => format!(
                                        "{} of {}{}{}",
                                        s.cost_checked,
                                        s.runs,
                                        if n < s.runs { format!(" · {} state none", s.runs - n) } else { String::new() },
                                        if s.cost_marked > 0 { format!(" · {} marked", s.cost_marked) } else { String::new() }
                                    ),
                                }}</td>
                                <td class="num">{format::usd((s.cost_runs > 0).then_some(s.cost))}</td>
                                <td class="num" title=format!("over {} runs", s.duration_runs)>{mean(s.duration, s.duration_runs).map_or_else(|| "–".to_owned(), format::seconds)}</td>
                                <td class="num">{(s.duration_runs > 0).then_some(s.duration).map_or_else(|| "–".to_owned(), format::seconds)}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
                <div class="table-wrap">
                    <table>
                        <caption>"Mean cost and duration of a run per task and hint condition."</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Task"</th>
                                {Hint::ALL.map(|h| view! { <th scope="col">{h.label()}</th> }).collect_view()}
                            </tr>
                        </thead>
                        <tbody>
                            {grid.iter().map(|(t, by_hint)| view! {
                                <tr>
                                    <th scope="row">{name_of(t.as_str())}</th>
                                    {Hint::ALL.map(|h| {
                                        let r = by_hint.get(&h);
                                        let cost = format::usd(r.and_then(|r| r.mean_cost_usd));
                                        let time = r.and_then(|r| r.mean_duration_s).map_or_else(|| "–".to_owned(), format::seconds);
                                        view! { <td class="num">{cost}<span class="muted small">{format!(" · {time}")}</span></td> }
                                    }).collect_view()}
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
        {(!marked.is_empty()).then(|| view! { <CostMarked marked=marked names=names_marked/> })}
        {published.and_then(|p| p.cost.clone().map(|c| (p, c))).map(|(p, c)| {
            let reconstructed_total = (cost_runs > 0).then_some(all_cost);
            let run_count = issue_of(&p.issues, paper::issue::TABLE7_RUN_COUNT);
            view! {
                <table class="published">
                    <caption>
                        {format!("As published: {}", p.cost_caption)}
                        {run_count.map(|i| view! { <IssueMark issue=i/> })}
                    </caption>
                    <thead>
                        <tr>
                            <th scope="col">"Avg. cost ($)"</th>
                            <th scope="col">"Avg. duration"</th>
                            <th scope="col">"Total cost ($)"</th>
                            <th scope="col">"Total duration"</th>
                        </tr>
                    </thead>
                    <tbody>
                        <tr>
                            <td class="num">{format!("{:.2}", c.avg_cost_usd)}</td>
                            <td class="num">{c.avg_duration_printed.clone()}</td>
                            <td class="num">{format!("{:.2}", c.total_cost_usd)}</td>
                            <td class="num">{c.total_duration_printed.clone()}</td>
                        </tr>
                    </tbody>
                </table>
                <p class="muted small">
                    {format!(
                        "Reconstructed: the paper publishes only these averages and totals, so each of the {all_runs} runs                          reconstructed from its per-task results ({}) carries the published average, {} and {}. The mean                          cost and duration above are therefore the paper's; the total over those runs is {} where Table 7                          prints ${:.2} (the average is rounded to cents), and Table 7's totals are about 180 runs' worth                          although its caption speaks of the no-hint runs only.",
                        p.table,
                        format::usd(Some(c.avg_cost_usd)),
                        format::seconds(c.avg_duration_s),
                        format::usd(reconstructed_total),
                        c.total_cost_usd,
                    )}
                </p>
            }
        })}
    }
}

/// This agent's column of Table 9 or 10, as published.
#[component]
fn PublishedErrors(facts: PublishedFacts) -> impl IntoView {
    let Some(column) = facts.errors.clone() else { return ().into_any() };
    let total = column.total();
    let table = column.table;
    let shown: Vec<ErrorCountRow> = column.rows.into_iter().filter(|r| r.count > 0).collect();
    let marks: Vec<KnownIssue> = [paper::issue::ERROR_COLUMN_ORDER, paper::issue::ERROR_BELOW_FAILED]
        .into_iter()
        .filter_map(|id| issue_of(&facts.issues, id))
        .collect();
    view! {
        <h2 id="published-errors">{format!("Error types as published ({table})")}</h2>
        <p>
            "The paper classifies this agent's failed runs by error type; the reconstructed runs carry no error type, "
            "so these counts are shown as printed and are not spread over runs. "
            <a href="/failures#published-errors">"All agents' counts"</a>" are on the failures page. "
            {format!("Unit: {}.", facts.errors_unit)}
        </p>
        <table class="published">
            <caption>
                {format!("Error counts of this agent in {table} of the paper ({total} in all; types with no count left out)")}
                {marks.into_iter().map(|i| view! { <IssueMark issue=i/> }).collect_view()}
            </caption>
            <thead>
                <tr><th scope="col">"Error type"</th><th scope="col">"Group"</th><th scope="col">"Count"</th></tr>
            </thead>
            <tbody>
                {shown.into_iter().map(|ErrorCountRow { error_type: e, group: g, count: n }| view! {
                    <tr><th scope="row">{e}</th><td>{g}</td><td class="num">{n}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

fn issue_of(issues: &[KnownIssue], id: &str) -> Option<KnownIssue> {
    issues.iter().find(|i| i.id == id).cloned()
}

/// pass@k and pass^k under each condition: two charts, and the same numbers in a table.
#[component]
fn Reliability(reliability: store::stats::ReliabilityByHint) -> impl IntoView {
    let by_hint: Vec<(usize, Hint, store::stats::Reliability)> = Hint::ALL
        .iter()
        .enumerate()
        .filter_map(|(i, h)| Some((i, *h, reliability.get(*h)?.clone())))
        .collect();
    if by_hint.is_empty() {
        return view! { <span></span> }.into_any();
    }
    let most = by_hint.iter().map(|(_, _, r)| r.pass_at.len()).max().unwrap_or(0);
    let line = |f: fn(&store::stats::Reliability) -> &Vec<store::stats::Interval>| {
        by_hint
            .iter()
            .map(|(i, _, r)| (*i, f(r).iter().map(|x| x.estimate).collect()))
            .collect::<Vec<(usize, Vec<f64>)>>()
    };
    let at = charts::curves(
        &format!(
            "pass@k: the chance that at least one of k attempts at a task succeeds, for k = 1 to {most}"
        ),
        &line(|r| &r.pass_at),
    );
    let all = charts::curves(
        &format!("pass^k: the chance that all k attempts at a task succeed, for k = 1 to {most}"),
        &line(|r| &r.pass_all),
    );
    view! {
        <h3 id="reliability">"How reliably: pass@k and pass^k"</h3>
        <p>
            "From each task's attempts and successes, by the unbiased estimators: pass@k is the chance that at least one of k attempts "
            "succeeds, pass^k that all k do (pass^1 = pass@1 = final success, averaged over tasks). Where pass@k climbs and pass^k falls, "
            "the agent solves tasks now and then rather than every time."
        </p>
        <div class="charts-pair">
            <Chart svg=at caption="pass@k under each hint condition; the numbers are in the table below.".to_owned()/>
            <Chart svg=all caption="pass^k under each hint condition; the numbers are in the table below.".to_owned()/>
        </div>
        <div class="table-wrap">
            <table class="reliability">
                <caption>"pass@k and pass^k by hint condition, each with its 95% interval (tasks and their attempts redrawn)."</caption>
                <thead>
                    <tr>
                        <th scope="col">"Hint condition"</th>
                        <th scope="col">"Measure"</th>
                        {(1..=most).map(|k| view! { <th scope="col">{format!("k = {k}")}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {by_hint.iter().flat_map(|(_, h, r)| {
                        [("pass@k", r.pass_at.clone()), ("pass^k", r.pass_all.clone())].into_iter().map(move |(name, values)| view! {
                            <tr>
                                <th scope="row">{h.label()}</th>
                                <td>{name}</td>
                                {values.iter().map(|i| view! {
                                    <td class="num">{format::pct(Some(i.estimate))}<span class="ci">{interval_text(i)}</span></td>
                                }).collect_view()}
                            </tr>
                        })
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// The agent's runs the maintainers re-ran from their sample, each beside its
/// submitted outcome.
#[component]
fn Reproduced(runs: Vec<store::ReproducedRun>, sample: Option<store::SampleCounts>) -> impl IntoView {
    let sample = sample.unwrap_or_default();
    view! {
        <h2 id="reproduction">"Reproduction"</h2>
        <p>
            {if sample.sampled == 0 {
                "Its current submission was not sampled for reproduction: only self-reported submissions are (a \
                 maintainer's are verified already)."
                    .to_owned()
            } else {
                format!(
                    "Its current submission: {}{}{}. The maintainers re-run a sample of every self-reported submission, \
                     chosen by a keyed hash the submitter could not predict, and each sampled success once more on a \
                     held-out variant of its task: inputs no submitter sees.",
                    format::sample_words(sample.sampled, sample.reproduced, sample.differed),
                    format::heldout_words(sample.heldout, sample.generalised).map(|w| format!("; {w}")).unwrap_or_default(),
                    format::catch_words(sample.catches, sample.share).map(|w| format!("; {w}")).unwrap_or_default()
                )
            }}
            " "<a href="/about#reproductions">"How the sample is chosen and checked"</a>
            " · "<a href="/about#heldout">"held-out re-runs"</a>
        </p>
        {(!runs.is_empty()).then(|| view! {
            <div class="table-wrap">
                <table>
                    <caption>"The runs the maintainers re-ran, newest first: each ended as submitted, or not."</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Run"</th>
                            <th scope="col">"Task"</th>
                            <th scope="col">"Hints"</th>
                            <th scope="col" class="num">"Attempt"</th>
                            <th scope="col">"Submitted"</th>
                            <th scope="col">"Re-run"</th>
                            <th scope="col">"Verdict"</th>
                            <th scope="col">"Held out"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {runs.into_iter().map(|r| view! {
                            <tr>
                                <td><a href=format!("/runs/{}#reproduction", r.run_id)>{format!("#{}", r.run_id)}</a></td>
                                <td>{r.task.to_string()}</td>
                                <td>{r.hint.label()}</td>
                                <td class="num">{r.attempt}</td>
                                <td><OutcomeLabel outcome=r.submitted/></td>
                                <td><OutcomeLabel outcome=r.reproduced/></td>
                                <td class=if r.held { "repro held" } else { "repro differed" }>
                                    {format::reproduction_words(r.submitted, r.reproduced, r.held)}
                                </td>
                                {match r.heldout {
                                    None => view! { <td>"—"</td> }.into_any(),
                                    Some(true) => view! { <td class="repro held">"a success: generalised"</td> }.into_any(),
                                    Some(false) => view! { <td class="repro differed">"no success: did not generalise"</td> }.into_any(),
                                }}
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        })}
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "agent")]
pub async fn load_agent(
    id: String,
    task: Option<String>,
    hint: Option<Hint>,
) -> Result<AgentData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::agent::page(&ctx.store, &ctx.catalog, &ctx.reader, &id, task.as_deref(), hint).await?)
}
