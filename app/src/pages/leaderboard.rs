//! `/`: the leaderboard. Narrowing, sorting and the task set are in the URL, so every
//! view is a link; the form and the column headers are plain GET links and forms.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use store::{LeaderboardRow, Rates};

use store::stats::AgentStats;

use super::{
    AgentUrl, Chart, IntervalNote, ProvenanceBadge, Rate, TierBadge, interval_text, loaded, points_interval,
    query,
};
use crate::charts;
use crate::data::{LeaderboardData, load_leaderboard};
use crate::format::{self, HINTS, href};

/// The columns one can sort by: (key, what it sorts by).
const SORTS: [(&str, &str); 11] = [
    ("agent", "Agent"),
    ("final-none", "Final success, no hints"),
    ("final-hints", "Final success, hints"),
    ("final-detailed", "Final success, detailed hints"),
    ("uplift", "Change with hints"),
    ("exec-none", "Execution success, no hints"),
    ("exec-hints", "Execution success, hints"),
    ("exec-detailed", "Execution success, detailed hints"),
    ("recall-none", "File recall, no hints"),
    ("recall-hints", "File recall, hints"),
    ("recall-detailed", "File recall, detailed hints"),
];

const DEFAULT_SORT: &str = "final-none";

/// The view the URL asks for.
#[derive(Debug, Clone, PartialEq)]
struct View {
    set: Option<String>,
    framework: Option<String>,
    model: Option<String>,
    tier: Option<String>,
    provenance: Option<String>,
    sort: String,
    ascending: bool,
    /// 1-based; [`PER_PAGE`] rows a page.
    page: usize,
}

/// Rows a page shows: a page stays small and quick however many agents there are.
const PER_PAGE: usize = 50;

impl View {
    fn from_url() -> View {
        let sort = query("sort").filter(|s| SORTS.iter().any(|(k, _)| k == s)).unwrap_or(DEFAULT_SORT.into());
        // Names read best A→Z, rates best first.
        let ascending = match query("dir").as_deref() {
            Some("asc") => true,
            Some("desc") => false,
            _ => sort == "agent",
        };
        View {
            set: query("set"),
            framework: query("framework"),
            model: query("model"),
            tier: query("tier"),
            provenance: query("provenance"),
            sort,
            ascending,
            page: query("page").and_then(|p| p.parse().ok()).filter(|p| *p >= 1).unwrap_or(1),
        }
    }

    /// The link to this view's page `page`.
    fn at_page(&self, page: usize) -> String {
        self.link(&self.sort, self.ascending, page)
    }

    /// The link to this view with `sort` (and `ascending`) changed, from its first page.
    fn sorted(&self, sort: &str, ascending: bool) -> String {
        self.link(sort, ascending, 1)
    }

    fn link(&self, sort: &str, ascending: bool, page: usize) -> String {
        let dir = if ascending { "asc" } else { "desc" };
        let page = page.to_string();
        href(
            "/",
            &[
                ("set", self.set.as_deref()),
                ("framework", self.framework.as_deref()),
                ("model", self.model.as_deref()),
                ("tier", self.tier.as_deref()),
                ("provenance", self.provenance.as_deref()),
                ("sort", Some(sort)),
                ("dir", Some(dir)),
                ("page", Some(page.as_str()).filter(|p| *p != "1")),
            ],
        )
    }

    fn keeps(&self, row: &LeaderboardRow) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        is(&self.framework, &row.framework)
            && is(&self.model, &row.model)
            && is(&self.tier, &row.tier)
            && is(&self.provenance, &row.provenance)
    }
}

fn rates<'a>(row: &'a LeaderboardRow, hint: &str) -> Option<&'a Rates> {
    row.by_hint.get(hint)
}

fn final_success(row: &LeaderboardRow, hint: &str) -> Option<f64> {
    rates(row, hint).and_then(|r| r.final_success)
}

fn uplift(row: &LeaderboardRow) -> Option<f64> {
    Some(final_success(row, "hints")? - final_success(row, "none")?)
}

fn sort_value(row: &LeaderboardRow, sort: &str) -> Option<f64> {
    let (metric, hint) = sort.split_once('-').unwrap_or((sort, "none"));
    let r = rates(row, hint);
    match metric {
        "final" => r.and_then(|r| r.final_success),
        "exec" => r.and_then(|r| r.execution_success),
        "recall" => r.and_then(|r| r.file_recall),
        "uplift" => uplift(row),
        _ => None,
    }
}

fn sort_rows(rows: &mut [LeaderboardRow], view: &View) {
    rows.sort_by(|a, b| {
        let order = if view.sort == "agent" {
            a.display_name.to_lowercase().cmp(&b.display_name.to_lowercase())
        } else {
            // Rows without a value go last whichever the direction.
            match (sort_value(a, &view.sort), sort_value(b, &view.sort)) {
                (Some(x), Some(y)) => {
                    let o = x.total_cmp(&y);
                    if view.ascending { o } else { o.reverse() }
                }
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        };
        let order = if view.sort == "agent" && !view.ascending { order.reverse() } else { order };
        order.then_with(|| a.display_name.cmp(&b.display_name))
    });
}

#[component]
pub(crate) fn LeaderboardPage() -> impl IntoView {
    let data = Resource::new_blocking(|| (), |_| load_leaderboard());
    view! {
        <Title text=""/>
        <Meta
            name="description"
            content="Which coding agents can implement extensions of real AI research papers, and how much hints help: RExBench results per agent, with every run behind every number."
        />
        {loaded(data, |data| view! { <Board data=data/> })}
    }
}

#[component]
fn Board(data: LeaderboardData) -> impl IntoView {
    let view = View::from_url();
    let set = view
        .set
        .clone()
        .filter(|s| data.sets.iter().any(|t| &t.digest == s))
        .or_else(|| data.sets.first().map(|s| s.digest.clone()));
    let in_set: Vec<LeaderboardRow> =
        data.rows.iter().filter(|r| Some(&r.task_set_digest) == set.as_ref()).cloned().collect();
    let options = |f: fn(&LeaderboardRow) -> &str| {
        let mut v: Vec<String> = in_set.iter().map(|r| f(r).to_owned()).collect();
        v.sort();
        v.dedup();
        v
    };
    let frameworks = options(|r| &r.framework);
    let models = options(|r| &r.model);
    let mut rows: Vec<LeaderboardRow> = in_set.iter().filter(|r| view.keeps(r)).cloned().collect();
    sort_rows(&mut rows, &view);
    let total = in_set.len();
    let shown = rows.len();
    let pages = shown.div_ceil(PER_PAGE).max(1);
    let page = view.page.min(pages);
    let first = (page - 1) * PER_PAGE;
    let rows: Vec<LeaderboardRow> = rows.into_iter().skip(first).take(PER_PAGE).collect();
    let current_set = data.sets.iter().find(|s| Some(&s.digest) == set.as_ref()).cloned();

    let chart_rows: Vec<(String, [Option<f64>; 3])> =
        rows.iter().map(|r| (r.display_name.clone(), HINTS.map(|(h, _)| final_success(r, h)))).collect();
    let chart =
        charts::hint_dots("Final success per agent with no hints, hints and detailed hints", &chart_rows);

    let sort_link = {
        let view = view.clone();
        move |key: &'static str, label: &'static str| {
            let active = view.sort == key;
            // A second click on the active column flips it; a new column starts at its
            // natural direction.
            let next_ascending = if active { !view.ascending } else { key == "agent" };
            let arrow = if !active {
                ""
            } else if view.ascending {
                " ▲"
            } else {
                " ▼"
            };
            let sort = if active { if view.ascending { "ascending" } else { "descending" } } else { "none" };
            view! {
                <th scope="col" aria-sort=sort>
                    <a href=view.sorted(key, next_ascending)>{label}{arrow}</a>
                </th>
            }
        }
    };

    view! {
        <section class="intro">
            <h1>"RExBench leaderboard"</h1>
            <p>
                "Can coding agents implement extensions of real AI research papers? Each of RExBench's 12 tasks "
                "gives an agent a paper's codebase and an extension to build. Every agent runs every task 5 times "
                "with no hints, with hints and with detailed hints; a run succeeds when its experiment reproduces "
                "the gold results. Every number below links to the runs behind it."
            </p>
        </section>

        <nav class="sets" aria-label="Task sets">
            {data.sets.iter().map(|s| {
                let selected = Some(&s.digest) == set.as_ref();
                let link = href("/", &[("set", Some(s.digest.as_str()))]);
                view! {
                    <a href=link aria-current=selected.then_some("page") class:selected=selected>
                        {s.label.clone()}
                        <span class="muted">{format!(" · {} tasks · {} agents", s.tasks.len(), s.agents)}</span>
                    </a>
                }
            }).collect_view()}
        </nav>
        {current_set.map(|s| view! {
            <p class="muted small">
                "Task set "<code title=s.digest.clone()>{format::short(&s.digest).to_owned()}</code>
                ". Results evaluated on different task sets are never ranked together."
            </p>
        })}

        <form class="filters" method="get" action="/">
            <input type="hidden" name="set" value=set.clone().unwrap_or_default()/>
            <input type="hidden" name="sort" value=view.sort.clone()/>
            <input type="hidden" name="dir" value=if view.ascending { "asc" } else { "desc" }/>
            <Select name="framework" label="Framework" options=frameworks chosen=view.framework.clone()/>
            <Select name="model" label="Model" options=models chosen=view.model.clone()/>
            <Select
                name="tier"
                label="Tier"
                options=vec!["maintainer".into(), "submitter".into()]
                chosen=view.tier.clone()
                words=true
            />
            <Select
                name="provenance"
                label="Provenance"
                options=vec!["evaluated".into(), "imported".into(), "published".into()]
                chosen=view.provenance.clone()
                words=true
            />
            <button type="submit">"Apply"</button>
            <a class="clear" href=href("/", &[("set", set.as_deref())])>"Clear"</a>
        </form>

        <p class="count">
            {format!("{shown} of {total} agents")}
            {(pages > 1).then(|| format!(" · showing {}–{} (page {page} of {pages})", first + 1, first + rows.len()))}
        </p>

        <div class="table-wrap">
            <table class="board">
                <caption>
                    "Final success, execution success and file recall per agent under each hint condition, "
                    "sorted by " {SORTS.iter().find(|(k, _)| *k == view.sort).map(|(_, l)| *l).unwrap_or("")}
                    {if view.ascending { " (ascending)" } else { " (descending)" }}
                    ". Rates are over 12 tasks × 5 runs; Δ is the change in final success from no hints to hints, in percentage points. "
                    "Rank is the plausible range of ranks by final success without hints; agents in one group cannot be told apart."
                </caption>
                <thead>
                    <tr>
                        <th scope="col" rowspan="2">"Rank"</th>
                        {sort_link("agent", "Agent")}
                        <th scope="colgroup" colspan="4">"Final success"</th>
                        <th scope="colgroup" colspan="3">"Execution success"</th>
                        <th scope="colgroup" colspan="3">"File recall"</th>
                    </tr>
                    <tr>
                        <th scope="col" class="sub">"Tier · provenance"</th>
                        {sort_link("final-none", "None")}
                        {sort_link("final-hints", "Hints")}
                        {sort_link("final-detailed", "Detailed")}
                        {sort_link("uplift", "Δ")}
                        {sort_link("exec-none", "None")}
                        {sort_link("exec-hints", "Hints")}
                        {sort_link("exec-detailed", "Detailed")}
                        {sort_link("recall-none", "None")}
                        {sort_link("recall-hints", "Hints")}
                        {sort_link("recall-detailed", "Detailed")}
                    </tr>
                </thead>
                <tbody>
                    {rows.iter().map(|row| {
                        let stats = data.stats.get(&row.bundle_id).cloned();
                        view! { <BoardRow row=row.clone() stats=stats/> }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        {(rows.is_empty()).then(|| view! { <p class="empty">"No agent matches these filters."</p> })}
        {(pages > 1).then(|| view! {
            <nav class="pages" aria-label="Pages">
                {(page > 1).then(|| view! { <a rel="prev" href=view.at_page(page - 1)>{format!("← Agents {}–{}", first + 1 - PER_PAGE, first)}</a> })}
                {(page < pages).then(|| view! {
                    <a rel="next" href=view.at_page(page + 1)>{format!("Agents {}–{} →", first + PER_PAGE + 1, (first + 2 * PER_PAGE).min(shown))}</a>
                })}
            </nav>
        })}
        <IntervalNote/>

        <Chart
            svg=chart
            caption="Final success of each agent in the table's order: ● no hints, ▲ hints, ■ detailed hints; the line spans the three. The same numbers are in the table above.".to_owned()
        />

        <p class="downloads">
            "Download: "<a href="/leaderboard.csv">"CSV"</a>" · "<a href="/api/v1/leaderboard">"JSON"</a>
            " · "<a href="/changes">"What changed"</a>
        </p>
    }
}

#[component]
fn BoardRow(row: LeaderboardRow, stats: Option<AgentStats>) -> impl IntoView {
    let agent = format!("/agents/{}", format::segment(&row.agent_id));
    let cell = |hint: &str, f: fn(&Rates) -> Option<f64>| {
        let r = row.by_hint.get(hint);
        let detail = r.map(|r| format!("{} of {} runs counted", r.counted, r.runs)).unwrap_or_default();
        view! {
            <td class="num">
                <Rate rate=r.and_then(f) href=format!("{agent}?hint={hint}#runs") detail=detail/>
            </td>
        }
    };
    // Final success, with its interval under it.
    let final_cell = |h: usize| {
        let (hint, _) = HINTS[h];
        let r = row.by_hint.get(hint);
        let ci = stats.as_ref().and_then(|s| s.final_success[h]);
        let detail =
            r.map(|r| format!("{} of {} runs succeeded", r.successes, r.counted)).unwrap_or_default();
        view! {
            <td class="num">
                <Rate rate=r.and_then(|r| r.final_success) href=format!("{agent}?hint={hint}#runs") detail=detail/>
                {ci.map(|i| view! { <span class="ci" title="95% interval">{interval_text(&i)}</span> })}
            </td>
        }
    };
    let delta = uplift(&row);
    let up = stats.as_ref().and_then(|s| s.uplift[0]);
    let clear = up.is_some_and(|u| u.excludes_zero());
    let delta_class = match delta {
        Some(d) if d > 0.005 => "num up",
        Some(d) if d < -0.005 => "num down",
        _ => "num",
    };
    let (rank, group) = match &stats {
        Some(s) if s.rank.0 == s.rank.1 => (s.rank.0.to_string(), s.group),
        Some(s) => (format!("{}–{}", s.rank.0, s.rank.1), s.group),
        None => ("–".to_owned(), 0),
    };
    let band = if group % 2 == 1 { "group-odd" } else { "group-even" };
    view! {
        <tr class=band>
            <td class="num rank">
                {rank}
                {(group > 0).then(|| view! { <span class="group" title="agents in one group cannot be told apart">{format!("group {group}")}</span> })}
            </td>
            <th scope="row" class="agent">
                <a href=agent.clone()>{row.display_name.clone()}</a>
                <div class="badges">
                    <TierBadge tier=row.tier.clone()/>
                    <ProvenanceBadge provenance=row.provenance.clone() source=row.provenance_source.clone()/>
                </div>
                <div class="muted small"><AgentUrl url=row.url.clone()/></div>
            </th>
            {final_cell(0)}
            {final_cell(1)}
            {final_cell(2)}
            <td class=delta_class>
                {if clear { view! { <strong title="the interval excludes zero">{format::points(delta)}</strong> }.into_any() } else { format::points(delta).into_any() }}
                {up.map(|u| view! { <span class="ci" title="95% interval of the change">{points_interval(&u)}</span> })}
            </td>
            {cell("none", |r| r.execution_success)}
            {cell("hints", |r| r.execution_success)}
            {cell("detailed", |r| r.execution_success)}
            {cell("none", |r| r.file_recall)}
            {cell("hints", |r| r.file_recall)}
            {cell("detailed", |r| r.file_recall)}
        </tr>
    }
}

/// A filter: one select of a GET form, "Any" meaning no filter.
#[component]
fn Select(
    name: &'static str,
    label: &'static str,
    options: Vec<String>,
    chosen: Option<String>,
    /// Show the tier's or provenance's words instead of the stored value.
    #[prop(optional)]
    words: bool,
) -> impl IntoView {
    let id = format!("filter-{name}");
    view! {
        <label for=id.clone()>{label}</label>
        <select id=id name=name>
            <option value="">"Any"</option>
            {options.into_iter().map(|o| {
                let text = match (words, name) {
                    (true, "tier") => format::tier_label(&o).to_owned(),
                    (true, _) => format::provenance_label(&o).to_owned(),
                    _ => o.clone(),
                };
                let selected = chosen.as_deref() == Some(o.as_str());
                view! { <option value=o selected=selected>{text}</option> }
            }).collect_view()}
        </select>
    }
}
