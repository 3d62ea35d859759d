//! `/`: the leaderboard. Narrowing, sorting and the task set are in the URL, so every
//! view is a link; the form and the column headers are plain GET links and forms.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::stats::AgentStats;
use store::{Hint, Integrity, LeaderboardRow, ProvenanceKind, Rates, Tier};

use crate::charts;
use crate::components::{
    AgentUrl, Chart, HarnessBadge, IntervalNote, IssueMark, ProvenanceBadge, Rate, SubmittedBy, TierBadge,
    interval_text, loaded, points_interval, query, query_all,
};
use crate::data::LeaderboardData;
use crate::islands::LiveBoard;
use views::board::{BoardQuery, Columns, Metric, PER_PAGE, Sort, TaskScope, uplift};
use views::format::{self, href};
use views::leaderboard::CostDrawn;
use views::paper::KnownIssue;

#[component]
pub(crate) fn LeaderboardPage() -> impl IntoView {
    let asked = BoardQuery::from_query(query, query_all);
    let data = Resource::new_blocking(move || asked.clone(), load_leaderboard);
    view! {
        <Title text=""/>
        <leptos_meta::Link rel="alternate" type_="application/atom+xml" title="RExBench leaderboard: changes" href="/changes.atom"/>
        <Meta
            name="description"
            content="Which coding agents can implement extensions of real AI research papers, and how much hints help: RExBench results per agent, with every run behind every number."
        />
        {loaded(data, |data| view! { <Board data=data/> })}
    }
}

#[component]
fn Board(data: LeaderboardData) -> impl IntoView {
    let view = BoardQuery::from_query(query, query_all);
    let set = data.set.as_ref().map(|s| s.digest.clone());
    let total = data.set.as_ref().map_or(0, |s| s.agents);
    let (shown, page, pages, first) = (data.matching, data.page, data.pages, data.first());
    let of = data.tasks.len();
    let (rows, apart): (Vec<LeaderboardRow>, Vec<LeaderboardRow>) =
        data.rows.into_iter().partition(|r| r.ranked(of));
    // Every agent of the set is on this page, all ranked on every task: the browser can
    // narrow and order it alone.
    let complete =
        !view.narrows() && pages == 1 && page == 1 && apart.is_empty() && view.tasks == TaskScope::All;
    let public: Vec<String> = data
        .set
        .as_ref()
        .map(|s| s.tasks.iter().filter(|t| data.tasks.contains(t)).map(|t| t.to_string()).collect())
        .unwrap_or_default();
    let set_tasks = data.set.as_ref().map_or(0, |s| s.tasks.len());

    let chart_rows: Vec<(String, [Option<f64>; 3])> = rows
        .iter()
        .map(|r| (r.display_name.clone(), Hint::ALL.map(|h| r.by_hint.get(&h).and_then(|r| r.final_success))))
        .collect();
    let chart =
        charts::hint_dots("Final success per agent with no hints, hints and detailed hints", &chart_rows);
    let cost = CostDrawn::of(&rows, &data.stats);

    let board_row = |row: &LeaderboardRow| {
        let stats = data.stats.get(&row.bundle_id).cloned();
        let issues = data.issues.get(&row.agent_id).cloned().unwrap_or_default();
        let submitter = data.submitters.get(&row.bundle_id).cloned();
        view! {
            <BoardRow row=row.clone() stats=stats issues=issues submitter=submitter integrity=view.integrity of=of columns=view.columns.clone()/>
        }
        .into_any()
    };
    let (ranked_rows, apart_rows) =
        (rows.iter().map(board_row).collect_view(), apart.iter().map(board_row).collect_view());

    let sort_link = {
        let view = view.clone();
        move |sort: Sort, label: &'static str| {
            let (aria, arrow) = view.marks(sort);
            // The agent's column stays in view while the others scroll sideways.
            let class = if sort == Sort::Agent { "agent-head" } else { "" };
            view! {
                <th scope="col" aria-sort=aria class=class>
                    <a href=view.sorted_by(sort)>{label}{arrow}</a>
                </th>
            }
        }
    };

    let chips = view.chips();
    let harness_words = |name: &str| {
        data.harnesses.iter().find(|h| h.name == name).map(|h| h.title()).unwrap_or_else(|| name.to_owned())
    };
    let chips: Vec<_> = chips
        .into_iter()
        .map(|mut c| {
            if c.name == "harness" {
                c.value = harness_words(&c.value);
            }
            c
        })
        .collect();
    let shown_set = data.set.clone();
    let no_chips = chips.is_empty();

    view! {
        <section class="intro">
            <h1>"RExBench leaderboard"</h1>
            <p class="lede">
                "Can coding agents implement extensions of real AI research papers? "
                <a href="/about">"How the board counts"</a>
            </p>
        </section>

        <LiveBoard set=set.clone() complete=complete integrity=view.integrity columns=view.columns.clone()>
        <div class="board-body" data-complete=complete.to_string()>
        // One line at a laptop's width: the sets, the tasks counted, the filters (folded)
        // and those in force, the count, and how to read the table (folded).
        <div class="board-bar">
            <SetsAndScopes sets=data.sets.clone() set=set.clone() view=view.clone() set_tasks=set_tasks public=public.clone()/>
            <details class="filter-box">
                <summary>
                    "Filters"
                    {(!chips.is_empty()).then(|| view! { <span class="muted">{format!(" · {} in force", chips.len())}</span> })}
                </summary>
                <Filters view=view.clone() set=set.clone() frameworks=data.frameworks.clone() models=data.models.clone() harnesses=data.harnesses.clone()/>
            </details>
            <ul class="chips" aria-label="Filters in force" hidden=no_chips>
                {chips.into_iter().map(|c| {
                    let words = format!("{}: {}", c.label, c.value);
                    let label = format!("Remove the filter {words}");
                    view! {
                        <li>
                            <a class="chip" href=c.remove data-filter=c.name aria-label=label>
                                {words}<span aria-hidden="true">" ×"</span>
                            </a>
                        </li>
                    }
                }).collect_view()}
            </ul>
            <p class="count">
                {format!("{shown} of {total} agents")}
                {(pages > 1 && page <= pages).then(|| format!(" · showing {}–{} (page {page} of {pages})", first + 1, first + rows.len()))}
            </p>
            <details class="how-to-read">
                <summary>"How to read this table"</summary>
                <BoardNotes set=shown_set public=public.clone() view=view.clone() of=of with_infra_errors=data.with_infra_errors/>
            </details>
        </div>
        // The ticked agents' boxes and the button in the table's head belong to it.
        <form id="pick" method="get" action="/compare"></form>
        <div class="table-wrap">
            <table class="board" aria-describedby="board-notes">
                <caption>
                    {columns_words(&view.columns)}
                    ", sorted by "
                    <span class="sorted-by">{view.order_words()}</span>
                    ". How to read it: the notes above the table."
                </caption>
                <thead>
                    <tr>
                        <th scope="col" rowspan="2" class="rank-head">"Rank"</th>
                        {sort_link(Sort::Agent, "Agent")}
                        {view.columns.metrics.iter().map(|m| view! {
                            <th scope="colgroup" colspan=view.columns.width(*m)>{group_label(*m)}</th>
                        }).collect_view()}
                    </tr>
                    <tr>
                        <th scope="col" class="sub agent-head">
                            <span class="sub-words">"Tier · provenance"</span>
                            <button
                                type="submit"
                                form="pick"
                                class="compare"
                                aria-label="Compare the ticked agents"
                                title="Tick two agents in the table to see them side by side, task by task"
                            >
                                "Compare"
                            </button>
                        </th>
                        {view.columns.metrics.iter().map(|m| match m.per_hint() {
                            true => view.columns.hints.iter().map(|h| sort_link(m.sort(*h), short_label(*h))).collect_view().into_any(),
                            false => sort_link(m.sort(Hint::None), "Δ").into_any(),
                        }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {ranked_rows}
                </tbody>
            </table>
        </div>
        {(!apart.is_empty()).then(|| view! {
            <PartialTable view=view.clone() of=of public=!public.is_empty()>{apart_rows}</PartialTable>
        })}
        <p class="empty no-match" hidden={!rows.is_empty() || page > pages}>"No agent matches these filters."</p>
        <PageLinks view=view.clone() page=page pages=pages first=first shown=shown/>
        <IntervalNote/>

        <Chart
            svg=chart
            caption="Final success of each agent in the table's order: ● no hints, ▲ hints, ■ detailed hints; the line spans the three. The same numbers are in the table above.".to_owned()
        />

        <SuccessAndCost drawn=cost/>
        </div>
        </LiveBoard>

        <p class="downloads">
            "Download: "<a href="/leaderboard.csv">"CSV"</a>" · "<a href="/api/v1/leaderboard">"JSON"</a>
            " · "<a href="/changes">"What changed"</a>
        </p>
    }
}

/// The cost–success chart of the page's ranked rows, with what it draws and leaves out
/// in words (the rule is `views::leaderboard::CostDrawn`'s).
#[component]
fn SuccessAndCost(drawn: CostDrawn) -> impl IntoView {
    let CostDrawn { dots, partial, without_cost, checked, of_runs, from_paper } = drawn;
    let points: Vec<charts::CostPoint> = dots
        .into_iter()
        .map(|d| charts::CostPoint { label: d.label, cost: d.cost, success: d.success, interval: d.interval })
        .collect();
    let frontier: Vec<String> =
        charts::frontier(&points).into_iter().map(|i| points[i].label.clone()).collect();
    let paper_words = (from_paper > 0).then(|| {
        format!("the paper's {from_paper} agents are drawn at its average cost per run, as published")
    });
    let checked_words = match (of_runs, paper_words) {
        (0, None) => String::new(),
        (0, Some(paper)) => format!("{}{}. ", paper[..1].to_uppercase(), &paper[1..]),
        (_, paper) => format!(
            "Each run's cost is its tokens priced at its model's price of its day where the board could check \
             them (cost checked for {checked} of {of_runs} run{} drawn), else what it states{}. ",
            if of_runs == 1 { "" } else { "s" },
            paper.map(|p| format!("; {p}")).unwrap_or_default()
        ),
    };
    let chart = (!points.is_empty()).then(|| {
        charts::cost_success(
            "Final success against mean cost per run, with no hints, one dot per agent",
            &points,
        )
    });
    view! {
        <h2 id="cost">"Success and cost"</h2>
        {match chart {
            Some(svg) => view! {
                <Chart
                    svg=svg
                    caption=format!(
                        "Final success with no hints (the bar is its 95% interval) against the mean cost of a run with no hints, \
                         for the agents of this page that report costs. The line joins the cost–success frontier: agents \
                         no other agent here beats on both counts ({}). {checked_words}{}{}The same numbers are in the table above.",
                        frontier.join(", "),
                        if without_cost > 0 { format!("{without_cost} agents on this page report no cost and are not drawn. ") } else { String::new() },
                        if partial > 0 { format!("{partial} report a cost for only some of their runs without hints and are not drawn either: the cost column says how many. ") } else { String::new() },
                    )
                />
            }.into_any(),
            None => view! { <p class="empty">{if partial > 0 { format!("No agent on this page reports what all its runs without hints cost ({partial} report some: the cost column says how many).") } else { "No agent on this page reports what its runs cost.".to_owned() }}</p> }.into_any(),
        }}
    }
}

/// The links to the pages before and after, or, past the last page, what is there
/// instead and a link to the last.
#[component]
fn PageLinks(view: BoardQuery, page: usize, pages: usize, first: usize, shown: usize) -> impl IntoView {
    view! {
        {(page > pages).then(|| view! {
            <p class="empty past-end">
                {format!("Page {page} is past the last: {shown} agents make {pages} page{}. ", if pages == 1 { "" } else { "s" })}
                <a href=view.at_page(pages)>"The last page"</a>
            </p>
        })}
        {(pages > 1 && page <= pages).then(|| view! {
            <nav class="pages" aria-label="Pages">
                {(page > 1).then(|| view! { <a rel="prev" href=view.at_page(page - 1)>{format!("← Agents {}–{}", first + 1 - PER_PAGE, first)}</a> })}
                {(page < pages).then(|| view! {
                    <a rel="next" href=view.at_page(page + 1)>{format!("Agents {}–{} →", first + PER_PAGE + 1, (first + 2 * PER_PAGE).min(shown))}</a>
                })}
            </nav>
        })}
    }
}

/// The submissions listed apart, not ranked: why, and their rows.
#[component]
fn PartialTable(view: BoardQuery, of: usize, public: bool, children: Children) -> impl IntoView {
    view! {
        <h2 id="partial">"Not ranked: partial results"</h2>
        <p>
            {format!(
                "These submissions do not cover all {of} tasks counted here without hints, or have fewer valid attempts \
                 than the benchmark asks on some task they ran (an attempt that ended infra_error, or one left out, is \
                 not one), so they are not ranked beside those that do: a rate over some tasks or fewer attempts is not \
                 a rate over the set. Each row says what it covers, and its rates and intervals are over those runs only."
            )}
            {(view.tasks == TaskScope::All && public).then(|| view! {
                " "<a href=view.scoped(TaskScope::Public)>"Rank everyone on the public tasks"</a>"."
            })}
        </p>
        <div class="table-wrap">
            <table class="board partial">
                <caption>"Partial submissions, with what each covers; same columns as the ranked table."</caption>
                <thead>
                    <tr>
                        <th scope="col" class="rank-head">"Rank"</th>
                        <th scope="col" class="agent-head">"Agent"</th>
                        {view.columns.metrics.iter().map(|m| match m.per_hint() {
                            true => view.columns.hints.iter().map(|h| view! {
                                <th scope="col">{format!("{}, {}", m.label(), short_label(*h).to_lowercase())}</th>
                            }).collect_view().into_any(),
                            false => view! { <th scope="col">"Δ"</th> }.into_any(),
                        }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {children()}
                </tbody>
            </table>
        </div>
    }
}

/// The task sets to choose from and which of the shown one's tasks count: one row of
/// links.
#[component]
fn SetsAndScopes(
    sets: Vec<crate::data::TaskSet>,
    set: Option<String>,
    view: BoardQuery,
    set_tasks: usize,
    public: Vec<String>,
) -> impl IntoView {
    view! {
            // The set shown, and the others folded: however many sets the board knows,
            // they take one place in the bar.
            {match sets.iter().find(|s| Some(&s.digest) == set.as_ref()).cloned() {
                Some(current) if sets.len() == 1 => view! {
                    <span class="set-one" title=format!("{} tasks; task set {}", current.tasks.len(), current.digest)>
                        {current.label.clone()}<span class="muted">{format!(" · {} agents", current.agents)}</span>
                    </span>
                }.into_any(),
                current => view! {
                    <details class="set-box">
                        <summary>
                            {current.as_ref().map(|c| c.label.clone()).unwrap_or_else(|| "Task sets".to_owned())}
                            <span class="muted">
                                {current.as_ref().map(|c| format!(" · {} agents", c.agents))}
                                {format!(" · {} task sets", sets.len())}
                            </span>
                        </summary>
                        <nav class="sets" aria-label="Task sets">
                            {sets.iter().map(|s| {
                                let selected = Some(&s.digest) == set.as_ref();
                                let link = href("/", &[("set", Some(s.digest.as_str()))]);
                                view! {
                                    <a href=link aria-current=selected.then_some("page") class:selected=selected title=format!("{} tasks; task set {}", s.tasks.len(), s.digest)>
                                        {s.label.clone()}
                                        <span class="muted">{format!(" · {} agents", s.agents)}</span>
                                    </a>
                                }
                            }).collect_view()}
                        </nav>
                    </details>
                }.into_any(),
            }}
            <nav class="scopes" aria-label="Tasks counted">
                <a href=view.scoped(TaskScope::All) aria-current=(view.tasks == TaskScope::All).then_some("page")>
                    {format!("All {set_tasks} tasks")}
                </a>
                <a href=view.scoped(TaskScope::Public) aria-current=(view.tasks == TaskScope::Public).then_some("page")>
                    {match (view.tasks, public.as_slice()) {
                        (TaskScope::Public, []) => "Public tasks: none in this set".to_owned(),
                        (TaskScope::Public, names) => format!("Public tasks only: {}", names.join(", ")),
                        _ => "Public tasks only".to_owned(),
                    }}
                </a>
            </nav>
    }
}

/// How to read the table: what the board is, what its rows and numbers mean, and how the
/// view counts; folded above the table, and what the table's `aria-describedby` names.
#[component]
fn BoardNotes(
    set: Option<crate::data::TaskSet>,
    public: Vec<String>,
    view: BoardQuery,
    /// The tasks counted.
    of: usize,
    /// Rows of this view with runs that ended infra_error.
    with_infra_errors: usize,
) -> impl IntoView {
    view! {
        <div class="board-notes" id="board-notes">
            <p>
                "Each of RExBench's 12 tasks gives an agent a paper's codebase and an extension to build. Every agent "
                "runs every task 5 times with no hints, with hints and with detailed hints; a run succeeds when its "
                "experiment reproduces the gold results. Every number links to the runs behind it."
                {set.map(|s| view! {
                    " Task set "<code title=s.digest.clone()>{format::short(&s.digest).to_owned()}</code>
                    ": results evaluated on different task sets are never ranked together."
                })}
                {(view.tasks == TaskScope::Public).then(|| if public.is_empty() {
                    " No task of this set is public.".to_owned()
                } else {
                    format!(
                        " Counting {} only: the tasks anyone can run, on which outside results are ranked beside \
                         everyone's results on the same tasks (the paper's agents from their per-task results).",
                        public.join(" and ")
                    )
                })}
            </p>
            <p>
                {format!("Ranked rows cover all {of} tasks counted here without hints, with the valid attempts the benchmark asks \
                 on every task and condition they have runs on (5 by RExBench's design; a row says where it has fewer); rates \
                 are over their valid runs. A run that ended infra_error counts in no rate and in no attempt: ")}
                {match with_infra_errors {
                    0 => "no row here has one. ".to_owned(),
                    1 => "1 row here has some, and says how many. ".to_owned(),
                    n => format!("{n} rows here have some, and each says how many. "),
                }}
                "The small figures under a rate are its 95% interval; – marks a number with no runs counted. "
                "Solved every time is pass^n: the share of tasks an agent solved in every one of its n attempts (n = 5 by design), with its 95% interval; its agent's page draws pass@k and pass^k for every k. "
                "Δ is the change in final success from no hints to hints, in percentage points, over the tasks both cover with their full attempts (marked partial where hints cover fewer, and sorted after complete rows). "
                "Rank is the plausible range of ranks by final success without hints; agents in one group cannot be told apart. "
                "Cost per run is the mean over the runs with a cost, in US dollars (– where none has one): a run's tokens priced at its model's price of its day where the board could check them, else the cost it states; under each, how many of its runs were checked. The paper's rows carry its average cost per run, as published, which no token checks. Cost per success, among the columns to choose, is what the runs cost over the successes. "
                {match view.integrity {
                    Integrity::Reported => "Successes are counted as their runs reported them; ⚑ counts an agent's successes with an integrity finding no maintainer has dismissed.",
                    Integrity::Strict => "Strict: every success with an integrity finding no maintainer has dismissed (⚑) counts as a failure, and intervals and ranks are computed from those counts.",
                }}
            </p>
            <p>
                "Badges: the tier (✔ Verified: signed by a maintainer's key; Self-reported: by the submitter's, with a sample "
                "re-run by the maintainers), where the results come from (the paper, imported from another harness, or evaluated "
                "by this project's runner) and the harness that ran them. Tick two agents' boxes to compare them task by task."
            </p>
        </div>
    }
}

/// The filter form: a GET form, so that the URL holds the view with JavaScript off.
#[component]
fn Filters(
    view: BoardQuery,
    set: Option<String>,
    frameworks: Vec<String>,
    models: Vec<String>,
    harnesses: Vec<store::Harness>,
) -> impl IntoView {
    view! {
        <form class="filters" method="get" action="/">
            <input type="hidden" name="set" value=set.clone().unwrap_or_default()/>
            <input type="hidden" name="sort" value=view.sort.key()/>
            <input type="hidden" name="dir" value=if view.ascending { "asc" } else { "desc" }/>
            {(view.tasks == TaskScope::Public).then(|| view! { <input type="hidden" name="tasks" value="public"/> })}
            {view.benchmark_version.clone().map(|v| view! { <input type="hidden" name="benchmark_version" value=v/> })}
            <Select name="framework" label="Framework" options=names(frameworks) chosen=view.framework.clone()/>
            <Select name="model" label="Model" options=names(models) chosen=view.model.clone()/>
            <Select
                name="tier"
                label="Tier"
                options=Tier::ALL.map(|t| (t.as_str().to_owned(), t.label().to_owned())).to_vec()
                chosen=view.tier.map(|t| t.as_str().to_owned())
            />
            <Select
                name="provenance"
                label="Provenance"
                options=ProvenanceKind::ALL.map(|p| (p.as_str().to_owned(), format::provenance_label(p).to_owned())).to_vec()
                chosen=view.provenance.map(|p| p.as_str().to_owned())
            />
            <Select
                name="harness"
                label="Harness"
                options=harnesses.iter().map(|h| (h.name.clone(), h.title())).collect()
                chosen=view.harness.clone()
            />
            <Select
                name="reproduced"
                label="Reproduced"
                options=vec![(views::board::REPRODUCED_HELD.to_owned(), "re-run by the maintainers, and held".to_owned())]
                chosen=view.reproduced.then(|| views::board::REPRODUCED_HELD.to_owned())
            />
            <span class="field">
                <label for="filter-integrity">"Flagged successes"</label>
                <select id="filter-integrity" name="integrity">
                    {Integrity::ALL.map(|i| view! {
                        <option value=i.as_str() selected=view.integrity == i>{integrity_label(i)}</option>
                    }).collect_view()}
                </select>
            </span>
            <span class="field">
                <label for="filter-q">"Agent"</label>
                <input id="filter-q" type="search" name="q" value=view.search.clone().unwrap_or_default() placeholder="name contains…"/>
            </span>
            <ColumnChoice columns=view.columns.clone()/>
            <button type="submit">"Apply"</button>
            <a class="clear" href=href("/", &[("set", set.as_deref())])>"Clear"</a>
        </form>
    }
}

#[component]
fn BoardRow(
    row: LeaderboardRow,
    stats: Option<AgentStats>,
    issues: Vec<KnownIssue>,
    /// Who submitted it, and their other rows with the same model.
    submitter: Option<views::submitter::Submitter>,
    integrity: Integrity,
    /// The tasks counted in this view.
    of: usize,
    /// The columns shown.
    columns: Columns,
) -> impl IntoView {
    let agent = format!("/agents/{}", format::segment(&row.agent_id));
    let provenance = row.provenance;
    // The marks of the known issues about one of the row's numbers, linking to the
    // agent's page, which lists them.
    let marks = |hint: Hint, metric: &str| {
        issues
            .iter()
            .filter(|i| i.condition == Some(hint) && i.metric.as_deref() == Some(metric))
            .map(|i| view! { <IssueMark issue=i.clone() page=agent.clone()/> })
            .collect_view()
    };
    let cell = |hint: Hint, f: fn(&Rates) -> Option<f64>, metric: &str| {
        let r = row.by_hint.get(&hint);
        // Said only where some runs were not counted: a title on every cell would
        // repeat "60 of 60" a hundred times.
        let detail = r
            .filter(|r| r.counted < r.runs)
            .map(|r| format!("{} of {} runs counted", r.counted, r.runs))
            .unwrap_or_default();
        view! {
            <td class="num">
                <Rate rate=r.and_then(f) href=format!("{agent}?hint={hint}#runs") detail=detail/>
                {marks(hint, metric)}
            </td>
        }
    };
    // Final success, with its interval under it.
    let final_cell = |hint: Hint| {
        let r = row.by_hint.get(&hint);
        let ci = stats.as_ref().and_then(|s| s.final_success.get(hint));
        let detail = r
            .map(|r| match (integrity, r.flagged) {
                (_, 0) => format!("{} of {} runs succeeded", r.successes, r.counted),
                (Integrity::Reported, f) => {
                    format!("{} of {} runs succeeded, {f} of them flagged", r.successes, r.counted)
                }
                (Integrity::Strict, f) => {
                    format!("{} of {} runs succeeded, not counting {f} flagged", r.successes, r.counted)
                }
            })
            .unwrap_or_default();
        view! {
            <td class="num">
                <Rate rate=r.and_then(|r| r.final_success) href=format!("{agent}?hint={hint}#runs") detail=detail/>
                {marks(hint, "final_success")}
                {ci.map(|i| view! { <span class="ci">{interval_text(&i)}</span> })}
            </td>
        }
    };
    let delta = uplift(&row);
    let up = stats.as_ref().and_then(|s| s.uplift.hints);
    let clear = up.is_some_and(|u| u.excludes_zero());
    let delta_class = match delta {
        Some(d) if d > 0.005 => "num up",
        Some(d) if d < -0.005 => "num down",
        _ => "num",
    };
    let (rank, group) = match stats.as_ref().and_then(|s| Some((s.rank?, s.group?))) {
        Some((rank, group)) => (rank.to_string(), group),
        None => ("–".to_owned(), 0),
    };
    let coverage = format::coverage_words(&row.coverage, of);
    let band = if group % 2 == 1 { "group-odd" } else { "group-even" };
    let (flagged, infra_errors) = (row.flagged(), row.infra_errors());
    let infra_words = format::infra_error_words(&row.by_hint);
    view! {
        <tr class=band>
            <td class="num rank">
                {rank}
                {(group > 0).then(|| view! { <span class="group">{format!("group {group}")}</span> })}
            </td>
            <th scope="row" class="agent">
                <a href=agent.clone()>{row.display_name.clone()}</a>
                // One line: the box first, so that a narrow column cuts a badge's end and
                // never the box.
                <div class="badges">
                    <input type="checkbox" class="pick" form="pick" name="agent" value=row.agent_id.clone() aria-label=format!("Compare {}", row.display_name)/>
                    <TierBadge tier=row.tier/>
                    <ProvenanceBadge provenance=row.provenance source=row.provenance_source.clone() short=true/>
                    <HarnessBadge harness=row.harness.clone() short=true/>
                    {submitter.map(|s| view! { <SubmittedBy submitter=s inline=true/> })}
                </div>
                {row.url.clone().map(|url| view! { <div class="muted small"><AgentUrl url=Some(url)/></div> })}
                {coverage.map(|c| view! { <div class="coverage small">{c}</div> })}
                <SampleBadge sample=row.sample agent=agent.clone()/>
                {row.not_reproduced_before.clone().map(|before| view! {
                    <div class="repro differed">
                        <a href=format!("{agent}#reproduction") title=format!("submission {before}: a run the maintainers re-ran did not reproduce, and no maintainer has dismissed the finding")>
                            <span aria-hidden="true">"✗ "</span>"a previous submission did not reproduce"
                        </a>
                    </div>
                })}
                <TaintNotice taint=row.taint.clone() agent=agent.clone()/>
                {(row.regrades_flipped > 0).then(|| view! {
                    <div class="small regrades">
                        <a href="/about#regrades" title="a Harbor regrade judged these runs' outputs again and changed their verdicts; each is re-run by the maintainers, whatever the sample's key">
                            {format::regrade_words(row.regrades_flipped)}
                        </a>
                    </div>
                })}
                {(flagged > 0).then(|| view! {
                    <div class="flag">
                        <a href=format!("{agent}#flagged") title="successes with an integrity finding no maintainer has dismissed">
                            {format!("⚑ {flagged} flagged")}
                        </a>
                    </div>
                })}
                {infra_words.map(|words| view! {
                    <div class="infra small">
                        <a href=format!("{agent}#infra-errors") title=format!("ended infra_error, counted in no rate: {words}")>
                            {format!("{infra_errors} run{} not counted (infra_error)", if infra_errors == 1 { "" } else { "s" })}
                        </a>
                    </div>
                })}
            </th>
            {columns.metrics.iter().map(|m| {
                let hints = columns.hints.iter().copied();
                match m {
                    Metric::Final => hints.map(final_cell).collect_view().into_any(),
                    Metric::Uplift => view! {
                        <td class=delta_class>
                            {if clear { view! { <strong title="the interval excludes zero">{format::points(delta)}</strong> }.into_any() } else { format::points(delta).into_any() }}
                            {up.map(|u| view! { <span class="ci">{points_interval(&u)}</span> })}
                            {row.uplift.partial().then(|| view! {
                                <span class="ci partial" title="over the tasks both conditions cover; sorted after complete rows">
                                    {format!("partial: {} of {} tasks", row.uplift.tasks, row.uplift.of)}
                                </span>
                            })}
                        </td>
                    }.into_any(),
                    Metric::EveryTime => hints.map(|h| {
                        let every = stats.as_ref().and_then(|s| s.reliability.get(h)).and_then(|r| r.every_time());
                        view! {
                            <td class="num">
                                // The notes say what these are; the agent's page has the curves.
                                {match every {
                                    Some(i) => view! { {format::pct(Some(i.estimate))}<span class="ci">{interval_text(&i)}</span> }.into_any(),
                                    None => "–".into_any(),
                                }}
                            </td>
                        }
                    }).collect_view().into_any(),
                    Metric::Execution => hints.map(|h| cell(h, |r| r.execution_success, "execution_success")).collect_view().into_any(),
                    Metric::Recall => hints.map(|h| cell(h, |r| r.file_recall, "file_recall")).collect_view().into_any(),
                    Metric::Cost => hints.map(|h| cost_cell(row.by_hint.get(&h), provenance, |r| r.mean_cost_usd)).collect_view().into_any(),
                    Metric::CostPerSuccess => hints.map(|h| cost_cell(row.by_hint.get(&h), provenance, |r| r.cost_per_success_usd)).collect_view().into_any(),
                }
            }).collect_view()}
        </tr>
    }
}

/// A cost cell: the figure `value` takes from the rates, and how much of it was checked.
fn cost_cell(
    rates: Option<&Rates>,
    provenance: ProvenanceKind,
    value: fn(&Rates) -> Option<f64>,
) -> impl IntoView {
    // The words only (the notes say what they mean): a title per cell would weigh on every row.
    let checked = rates.and_then(|r| views::cost::cost_checked(r, provenance));
    view! {
        <td class="num">
            {format::usd(rates.and_then(value))}
            {checked.map(|words| view! { <span class="ci">{words}</span> })}
        </td>
    }
}

/// A column group's heading over its conditions' columns.
fn group_label(metric: Metric) -> &'static str {
    match metric {
        Metric::Uplift => "Hints help",
        m => m.label(),
    }
}

/// What the table shows, as its caption says: "Final success, Δ, … per agent under no
/// hints and hints".
fn columns_words(columns: &Columns) -> String {
    let metrics: Vec<String> = columns
        .metrics
        .iter()
        .map(|m| {
            if *m == Metric::Uplift {
                "the change with hints (Δ)".to_owned()
            } else {
                m.label().to_lowercase()
            }
        })
        .collect();
    let hints: Vec<String> = columns.hints.iter().map(|h| h.label().to_lowercase()).collect();
    let mut words = format!("{} per agent", metrics.join(", "));
    if columns.metrics.iter().any(|m| m.per_hint()) {
        words.push_str(&format!(" under {}", hints.join(", ")));
    }
    let mut chars = words.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Which columns the table shows: a group of boxes in the filter form (a GET form, so
/// the choice is in the URL like every other).
#[component]
fn ColumnChoice(columns: Columns) -> impl IntoView {
    view! {
        <details class="columns">
            <summary>"Columns"</summary>
            <fieldset>
                <legend>"Numbers"</legend>
                {Metric::ALL.map(|m| {
                    let id = format!("col-{}", m.key());
                    view! {
                        <span class="field">
                            <input type="checkbox" id=id.clone() name="col" value=m.key() checked=columns.shows(m)/>
                            <label for=id>{m.label()}</label>
                        </span>
                    }
                }).collect_view()}
            </fieldset>
            <fieldset>
                <legend>"Hint conditions"</legend>
                {Hint::ALL.map(|h| {
                    let id = format!("cond-{}", h.as_str());
                    view! {
                        <span class="field">
                            <input type="checkbox" id=id.clone() name="cond" value=h.as_str() checked=columns.hints.contains(&h)/>
                            <label for=id>{h.label()}</label>
                        </span>
                    }
                }).collect_view()}
            </fieldset>
        </details>
    }
    .into_any()
}

/// How the filter names a way of counting flagged successes.
fn integrity_label(integrity: Integrity) -> &'static str {
    match integrity {
        Integrity::Reported => "Count as reported",
        Integrity::Strict => "Count as failures (strict)",
    }
}

/// A column's short heading under its group: "None", "Hints", "Detailed".
fn short_label(hint: Hint) -> &'static str {
    match hint {
        Hint::None => "None",
        Hint::Hints => "Hints",
        Hint::Detailed => "Detailed",
    }
}

/// Choices whose value is what they show.
fn names(values: Vec<String>) -> Vec<(String, String)> {
    values.into_iter().map(|v| (v.clone(), v)).collect()
}

/// What a caught lie costs a row (spec §4e), in both views: a refuted run makes every
/// success of the submission not itself re-run and held unverified; a refuted
/// submission of the same key marks the submitter's other rows.
#[component]
pub(super) fn TaintNotice(taint: store::Taint, agent: String) -> impl IntoView {
    view! {
        {taint.flagged().then(|| view! {
            <div class="flag taint">
                <a href=format!("{agent}#flagged") title="a re-run by the maintainers refuted a run of this submission: every success of it not itself re-run and held counts as a failure in the strict view, and is queued for re-run">
                    {format::taint_words(taint.refuted, taint.unverified)}
                </a>
            </div>
        })}
        {taint.submitter_refuted.clone().map(|other| view! {
            <div class="flag kin-taint small">
                <a href=format!("/agents/{other}#reproduction") title=format!("agent {other}, signed by the same key, has a run the maintainers' re-run refuted")>
                    "a submission of this submitter did not reproduce"
                </a>
            </div>
        })}
    }
}

/// A row's reproduction sample: re-run and held, re-run and different, or waiting.
#[component]
pub(super) fn SampleBadge(sample: store::SampleCounts, agent: String) -> impl IntoView {
    let (class, symbol, title) = match (sample.reproduced, sample.differed) {
        (_, d) if d > 0 => {
            ("repro differed", "✗", "a sampled run the maintainers re-ran ended with another final success")
        }
        _ if sample.generalised < sample.heldout => {
            ("repro differed", "✗", "a sampled success was no success on a held-out variant of its task")
        }
        (0, _) => ("repro pending", "◷", "sampled runs the maintainers have not re-run yet"),
        _ => ("repro held", "✓", "every sampled run the maintainers re-ran ended as submitted"),
    };
    let title = match format::catch_words(sample.catches, sample.share) {
        Some(words) => format!("{title}; {words}"),
        None => title.to_owned(),
    };
    (sample.sampled > 0).then(|| {
        view! {
            <div class=class>
                <a href=format!("{agent}#reproduction") title=title>
                    <span aria-hidden="true">{symbol}" "</span>
                    {format::sample_words(sample.sampled, sample.reproduced, sample.differed)}
                    {format::heldout_words(sample.heldout, sample.generalised).map(|w| format!("; {w}"))}
                </a>
            </div>
        }
    })
}

/// A filter: one select of a GET form, "Any" meaning no filter; each option a
/// (value, words) pair.
#[component]
fn Select(
    name: &'static str,
    label: &'static str,
    options: Vec<(String, String)>,
    chosen: Option<String>,
) -> impl IntoView {
    let id = format!("filter-{name}");
    // A label and its control are one box, which the form's line never breaks.
    view! {
        <span class="field">
            <label for=id.clone()>{label}</label>
            <select id=id name=name>
                <option value="">"Any"</option>
                {options.into_iter().map(|(value, text)| {
                    let selected = chosen.as_deref() == Some(value.as_str());
                    view! { <option value=value selected=selected>{text}</option> }
                }).collect_view()}
            </select>
        </span>
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "leaderboard")]
pub async fn load_leaderboard(query: BoardQuery) -> Result<LeaderboardData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::leaderboard::page(&ctx.store, &ctx.catalog, &query).await?)
}
