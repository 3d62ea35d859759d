//! The leaderboard's state: what a URL asks for (task set, filters, order, page), read
//! from the query string and written back into links, and the order it puts rows in.
//! The page renders it; the server function narrows in the database with it.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use store::{Hint, Integrity, LeaderboardFilter, LeaderboardRow, ProvenanceKind, RateKey, RowKey, Tier};

use crate::format::href;
use crate::query::{BadQuery, Params, Strictness, lenient};

/// Rows a page shows: a page stays small and quick however many agents there are.
pub const PER_PAGE: usize = 50;

/// What the rows can be ordered by: a column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sort {
    Agent,
    Final(Hint),
    /// The change in final success from no hints to hints.
    Uplift,
    Execution(Hint),
    Recall(Hint),
    /// Mean cost per run.
    Cost(Hint),
    /// What a success cost: the runs' cost over the successes.
    CostPerSuccess(Hint),
    /// pass^n: the share of tasks solved in every attempt (from the statistics).
    EveryTime(Hint),
}

impl Sort {
    /// Every order, as the table's columns stand.
    pub const ALL: [Sort; 20] = [
        Sort::Agent,
        Sort::Final(Hint::None),
        Sort::Final(Hint::Hints),
        Sort::Final(Hint::Detailed),
        Sort::Uplift,
        Sort::EveryTime(Hint::None),
        Sort::EveryTime(Hint::Hints),
        Sort::EveryTime(Hint::Detailed),
        Sort::Execution(Hint::None),
        Sort::Execution(Hint::Hints),
        Sort::Execution(Hint::Detailed),
        Sort::Recall(Hint::None),
        Sort::Recall(Hint::Hints),
        Sort::Recall(Hint::Detailed),
        Sort::Cost(Hint::None),
        Sort::Cost(Hint::Hints),
        Sort::Cost(Hint::Detailed),
        Sort::CostPerSuccess(Hint::None),
        Sort::CostPerSuccess(Hint::Hints),
        Sort::CostPerSuccess(Hint::Detailed),
    ];

    /// Final success without hints, best first: the benchmark's main number.
    pub const DEFAULT: Sort = Sort::Final(Hint::None);

    /// Its name in a URL (`final-none`).
    pub fn key(self) -> String {
        match self {
            Sort::Agent => "agent".to_owned(),
            Sort::Uplift => "uplift".to_owned(),
            Sort::Final(h) => format!("final-{h}"),
            Sort::Execution(h) => format!("exec-{h}"),
            Sort::Recall(h) => format!("recall-{h}"),
            Sort::Cost(h) => format!("cost-{h}"),
            Sort::CostPerSuccess(h) => format!("per-success-{h}"),
            Sort::EveryTime(h) => format!("every-{h}"),
        }
    }

    pub fn from_key(key: &str) -> Option<Sort> {
        Sort::ALL.into_iter().find(|s| s.key() == key)
    }

    /// What it orders by, in words.
    pub fn label(self) -> String {
        let hint = |h: Hint| h.label().to_lowercase();
        match self {
            Sort::Agent => "Agent".to_owned(),
            Sort::Uplift => "Change with hints".to_owned(),
            Sort::Final(h) => format!("Final success, {}", hint(h)),
            Sort::Execution(h) => format!("Execution success, {}", hint(h)),
            Sort::Recall(h) => format!("File recall, {}", hint(h)),
            Sort::Cost(h) => format!("Cost per run, {}", hint(h)),
            Sort::CostPerSuccess(h) => format!("Cost per success, {}", hint(h)),
            Sort::EveryTime(h) => format!("Solved every time, {}", hint(h)),
        }
    }

    /// Names read best A→Z, rates best first, costs cheapest first.
    pub fn natural_ascending(self) -> bool {
        matches!(self, Sort::Agent | Sort::Cost(_) | Sort::CostPerSuccess(_))
    }

    /// Whether the value comes from the statistics, which only the server holds: the
    /// browser then asks the server for the view.
    pub fn from_statistics(self) -> bool {
        matches!(self, Sort::EveryTime(_))
    }

    /// The number a row is ordered by (none for names and for what the statistics
    /// give): the same value the store orders on, so that rows ordered in the browser
    /// stand as the server puts them.
    pub fn value(self, row: &LeaderboardRow) -> Option<f64> {
        let rates = |h: Hint| row.by_hint.get(&h);
        match self {
            Sort::Agent | Sort::EveryTime(_) => None,
            // A partial Δ does not sort among complete ones.
            Sort::Uplift => row.uplift.sortable(),
            Sort::Final(h) => rates(h)?.final_success,
            Sort::Execution(h) => rates(h)?.execution_success,
            Sort::Recall(h) => rates(h)?.file_recall,
            Sort::Cost(h) => rates(h)?.mean_cost_usd,
            Sort::CostPerSuccess(h) => rates(h)?.cost_per_success_usd,
        }
    }

    /// The number it orders by, as the store computes it (none for names).
    pub fn rate_key(self) -> Option<RateKey> {
        match self {
            Sort::Agent => None,
            Sort::Uplift => Some(RateKey::Uplift),
            Sort::Final(h) => Some(RateKey::Final(h)),
            Sort::Execution(h) => Some(RateKey::Execution(h)),
            Sort::Recall(h) => Some(RateKey::Recall(h)),
            Sort::Cost(h) => Some(RateKey::Cost(h)),
            Sort::CostPerSuccess(h) => Some(RateKey::CostPerSuccess(h)),
            Sort::EveryTime(_) => None,
        }
    }
}

/// The change in final success from no hints to hints, paired: over the tasks both
/// cover with their full attempts (issue 75; `row.uplift.partial()` says where that is
/// fewer than no hints covers).
pub fn uplift(row: &LeaderboardRow) -> Option<f64> {
    row.uplift.delta
}

/// Which of the set's tasks a view counts: all, or only those anyone can run (the cards
/// say which: their checks are public), on which everyone is ranked on equal terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskScope {
    #[default]
    All,
    Public,
}

impl TaskScope {
    pub const ALL: [TaskScope; 2] = [TaskScope::All, TaskScope::Public];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskScope::All => "all",
            TaskScope::Public => "public",
        }
    }

    /// The scope a query's word names.
    pub fn parse(word: &str) -> Option<TaskScope> {
        match word {
            "all" => Some(TaskScope::All),
            "public" => Some(TaskScope::Public),
            _ => None,
        }
    }
}

/// A group of the table's columns: one column per hint condition shown (Δ: one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Metric {
    Final,
    /// Δ: the change in final success from no hints to hints.
    Uplift,
    EveryTime,
    Execution,
    Recall,
    Cost,
    CostPerSuccess,
}

impl Metric {
    /// In the table's order.
    pub const ALL: [Metric; 7] = [
        Metric::Final,
        Metric::Uplift,
        Metric::EveryTime,
        Metric::Execution,
        Metric::Recall,
        Metric::Cost,
        Metric::CostPerSuccess,
    ];

    /// Its name in a URL (`?col=exec`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::Final => "final",
            Metric::Uplift => "delta",
            Metric::EveryTime => "every",
            Metric::Execution => "exec",
            Metric::Recall => "recall",
            Metric::Cost => "cost",
            Metric::CostPerSuccess => "per-success",
        }
    }

    /// Its heading.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Final => "Final success",
            Metric::Uplift => "Δ with hints",
            Metric::EveryTime => "Solved every time",
            Metric::Execution => "Execution success",
            Metric::Recall => "File recall",
            Metric::Cost => "Cost per run",
            Metric::CostPerSuccess => "Cost per success",
        }
    }

    /// Whether it has a column per hint condition.
    pub fn per_hint(self) -> bool {
        self != Metric::Uplift
    }

    /// The order by its column under `hint` (Δ has one).
    pub fn sort(self, hint: Hint) -> Sort {
        match self {
            Metric::Final => Sort::Final(hint),
            Metric::Uplift => Sort::Uplift,
            Metric::EveryTime => Sort::EveryTime(hint),
            Metric::Execution => Sort::Execution(hint),
            Metric::Recall => Sort::Recall(hint),
            Metric::Cost => Sort::Cost(hint),
            Metric::CostPerSuccess => Sort::CostPerSuccess(hint),
        }
    }
}

/// Which columns the table shows: metric groups (`?col=…`, repeated) and the hint
/// conditions they are shown for (`?cond=…`). Either left out is its default: final
/// success, Δ, execution success and cost under all three conditions, which fits a
/// 1280-pixel window; the agent's page and the CSV have every number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Columns {
    pub metrics: Vec<Metric>,
    pub hints: Vec<Hint>,
}

impl Default for Columns {
    fn default() -> Columns {
        Columns {
            metrics: vec![Metric::Final, Metric::Uplift, Metric::Execution, Metric::Cost],
            hints: Hint::ALL.to_vec(),
        }
    }
}

impl Columns {
    /// From the values of `col` and `cond`; names that name nothing are dropped, and an
    /// empty choice is the default.
    pub fn from_values(cols: &[String], conds: &[String]) -> Columns {
        let default = Columns::default();
        let metrics: Vec<Metric> =
            Metric::ALL.into_iter().filter(|m| cols.iter().any(|c| c == m.key())).collect();
        let hints: Vec<Hint> =
            Hint::ALL.into_iter().filter(|h| conds.iter().any(|c| c == h.as_str())).collect();
        Columns {
            metrics: if metrics.is_empty() { default.metrics } else { metrics },
            hints: if hints.is_empty() { default.hints } else { hints },
        }
    }

    pub fn shows(&self, metric: Metric) -> bool {
        self.metrics.contains(&metric)
    }

    /// How many cells a row has for `metric`.
    pub fn width(&self, metric: Metric) -> usize {
        match (self.shows(metric), metric.per_hint()) {
            (false, _) => 0,
            (true, true) => self.hints.len(),
            (true, false) => 1,
        }
    }

    /// The query parameters that say this choice: none for the default.
    pub fn params(&self) -> Vec<(&'static str, &'static str)> {
        if *self == Columns::default() {
            return Vec::new();
        }
        let mut out: Vec<(&'static str, &'static str)> =
            self.metrics.iter().map(|m| ("col", m.key())).collect();
        out.extend(self.hints.iter().map(|h| ("cond", h.as_str())));
        out
    }
}

/// `?reproduced=held`: only rows whose sample was re-run and held.
pub const REPRODUCED_HELD: &str = "held";

/// The API leaderboard's and CSV's query parameters, as the OpenAPI document states
/// them: [`BoardQuery::read`] reads them, strictly. An empty parameter narrows nothing
/// (as the page's filter form sends "any"), and each may be given once.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct LeaderboardParams {
    pub framework: Option<String>,
    pub model: Option<String>,
    /// `maintainer` or `submitter`; empty: any.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::tier_or_any))]
    pub tier: Option<String>,
    /// `evaluated`, `imported` or `published`; empty: any.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::provenance_or_any))]
    pub provenance: Option<String>,
    pub benchmark_version: Option<String>,
    /// A harness's name (`rexbench`, `harbor`, `rexbench-original`, …); empty: any.
    #[cfg_attr(feature = "openapi", param(pattern = r"^([a-z0-9][a-z0-9._-]{0,63})?$"))]
    pub harness: Option<String>,
    /// `all` (the default) or `public`: only the tasks anyone can run count, and every
    /// row that covers them is ranked on them.
    #[cfg_attr(feature = "openapi", param(schema_with = tasks_or_all))]
    pub tasks: Option<String>,
    /// `reported` (the default) or `strict`: successes with an integrity finding no
    /// maintainer has dismissed count as failures, and intervals and ranks follow.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::integrity_or_default))]
    pub integrity: Option<String>,
    /// `held`: only rows whose reproduction sample the maintainers re-ran, every re-run
    /// with the submitted final success; empty: any.
    #[cfg_attr(feature = "openapi", param(schema_with = held_or_any))]
    pub reproduced: Option<String>,
}

#[cfg(feature = "openapi")]
fn tasks_or_all() -> utoipa::openapi::schema::Object {
    crate::query::schema::name_or_any(TaskScope::ALL.iter().map(|t| t.as_str()))
}

#[cfg(feature = "openapi")]
fn held_or_any() -> utoipa::openapi::schema::Object {
    crate::query::schema::name_or_any([REPRODUCED_HELD])
}

impl LeaderboardParams {
    /// The view they ask for, or the first parameter that names nothing.
    pub fn view(&self) -> Result<BoardQuery, BadQuery> {
        let get = |name: &str| {
            match name {
                "framework" => &self.framework,
                "model" => &self.model,
                "tier" => &self.tier,
                "provenance" => &self.provenance,
                "benchmark_version" => &self.benchmark_version,
                "harness" => &self.harness,
                "tasks" => &self.tasks,
                "integrity" => &self.integrity,
                "reproduced" => &self.reproduced,
                _ => return None,
            }
            .clone()
        };
        BoardQuery::read(get, |_| Vec::new(), Strictness::Strict)
    }
}

/// A filter in force, as a chip above the table says it: "Framework: aider", with the
/// link that removes it (the other filters, the order and the columns kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chip {
    /// Its query parameter (`framework`, `q`, …): the filter form's field.
    pub name: &'static str,
    /// The filter's name, as the form labels it.
    pub label: &'static str,
    /// What it keeps, in words.
    pub value: String,
    /// This view without it.
    pub remove: String,
}

/// The view a URL asks for. Values that name nothing (an unknown tier or order, page 0)
/// are dropped rather than refused: a stale link still shows the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardQuery {
    /// The task set's digest; the set with most agents when absent.
    pub set: Option<String>,
    pub framework: Option<String>,
    pub model: Option<String>,
    /// The benchmark's version (`?benchmark_version=…`).
    #[serde(default)]
    pub benchmark_version: Option<String>,
    pub tier: Option<Tier>,
    pub provenance: Option<ProvenanceKind>,
    /// The harness's name (`harbor`, `rexbench`, `rexbench-original`, …).
    pub harness: Option<String>,
    /// Which tasks count (`?tasks=public`).
    pub tasks: TaskScope,
    /// Words an agent's name must contain (any case).
    pub search: Option<String>,
    pub sort: Sort,
    pub ascending: bool,
    /// 1-based; [`PER_PAGE`] rows a page.
    pub page: usize,
    /// How successes with integrity findings count (`?integrity=strict`).
    pub integrity: Integrity,
    /// Only submissions whose sample the maintainers re-ran, every re-run holding
    /// (`?reproduced=held`).
    pub reproduced: bool,
    /// The columns shown (`?col=…&cond=…`).
    #[serde(default)]
    pub columns: Columns,
}

impl BoardQuery {
    /// Reads the view from query parameters, `get` giving each one, and `get_all`
    /// every value of a repeated one (the columns), as `reading` says: the API's
    /// leaderboard strictly, the page leniently. The API reads no order, page, set,
    /// search or columns (it lists every row), so the defaults stand there.
    pub fn read(
        get: impl Fn(&str) -> Option<String>,
        get_all: impl Fn(&str) -> Vec<String>,
        reading: Strictness,
    ) -> Result<BoardQuery, BadQuery> {
        let p = Params::new(&get, reading);
        // In this order the API names the first of several bad parameters.
        let tasks = p.word("tasks", TaskScope::parse, |o| {
            format!("unknown task scope `{o}`; expected all or public")
        })?;
        let reproduced = p.word(
            "reproduced",
            |v| (v == REPRODUCED_HELD).then_some(true),
            |o| format!("`{o}` is not held"),
        )?;
        let harness = p.checked("harness", store::is_slug, |h| {
            format!("`{h}` is not a harness name (a lowercase slug)")
        })?;
        let tier = p.name("tier")?;
        let provenance = p.name("provenance")?;
        let integrity = p.name("integrity")?;
        let sort = p.text("sort").and_then(|s| Sort::from_key(&s)).unwrap_or(Sort::DEFAULT);
        let ascending = match p.text("dir").as_deref() {
            Some("asc") => true,
            Some("desc") => false,
            _ => sort.natural_ascending(),
        };
        Ok(BoardQuery {
            set: p.text("set"),
            framework: p.text("framework"),
            model: p.text("model"),
            benchmark_version: p.text("benchmark_version"),
            tier,
            provenance,
            harness,
            tasks: tasks.unwrap_or_default(),
            search: p.text("q").map(|q| q.trim().to_owned()).filter(|q| !q.is_empty()),
            sort,
            ascending,
            // The numbered page as `query::Window::pages` reads it leniently (a test holds
            // the two to the same page), spelled out: the islands read the board's query in
            // the browser, and Window's strict reading would add to their WebAssembly.
            page: p.text("page").and_then(|p| p.parse().ok()).filter(|p| *p >= 1).unwrap_or(1),
            integrity: integrity.unwrap_or_default(),
            reproduced: reproduced.unwrap_or(false),
            // A value that names no column (the empty one included) names nothing.
            columns: Columns::from_values(&get_all("col"), &get_all("cond")),
        })
    }

    /// The page's reading of query parameters: `get` giving each one, `get_all` every
    /// value of a repeated one (the columns). Values that name nothing are dropped.
    pub fn from_query(
        get: impl Fn(&str) -> Option<String>,
        get_all: impl Fn(&str) -> Vec<String>,
    ) -> BoardQuery {
        lenient(BoardQuery::read(get, get_all, Strictness::Lenient))
    }

    /// The page's reading with the default columns.
    pub fn from_params(get: impl Fn(&str) -> Option<String>) -> BoardQuery {
        BoardQuery::from_query(get, |_| Vec::new())
    }

    /// What the database narrows by for this view (the set and the counted tasks are
    /// the caller's: the page shows one set, the API every set).
    pub fn filter(&self) -> LeaderboardFilter {
        LeaderboardFilter {
            framework: self.framework.clone(),
            model: self.model.clone(),
            tier: self.tier,
            provenance: self.provenance,
            benchmark_version: self.benchmark_version.clone(),
            task_set_digest: None,
            harness: self.harness.clone(),
            integrity: self.integrity,
            tasks: None,
            reproduced: self.reproduced,
        }
    }

    /// The link to this view's page `page`.
    pub fn at_page(&self, page: usize) -> String {
        self.link(self.sort, self.ascending, page)
    }

    /// The link to this view ordered by `sort`: a second click on the active column
    /// flips it, a new column starts at its natural direction; from the first page.
    pub fn sorted_by(&self, sort: Sort) -> String {
        let ascending = if sort == self.sort { !self.ascending } else { sort.natural_ascending() };
        self.link(sort, ascending, 1)
    }

    /// How a column's header says the order: `aria-sort`, and the arrow after its name.
    pub fn marks(&self, sort: Sort) -> (&'static str, &'static str) {
        match (sort == self.sort, self.ascending) {
            (false, _) => ("none", ""),
            (true, true) => ("ascending", " ▲"),
            (true, false) => ("descending", " ▼"),
        }
    }

    /// The order in words, as the table's caption says it: "Agent (ascending)".
    pub fn order_words(&self) -> String {
        format!("{}{}", self.sort.label(), if self.ascending { " (ascending)" } else { " (descending)" })
    }

    /// The link to this very view.
    pub fn here(&self) -> String {
        self.link(self.sort, self.ascending, self.page)
    }

    /// The link to this view with its successes counted as `integrity` says, from the
    /// first page (the order changes).
    pub fn counted(&self, integrity: Integrity) -> String {
        BoardQuery { integrity, ..self.clone() }.link(self.sort, self.ascending, 1)
    }

    /// The filters in force, in the filter form's order, each with the link to this view
    /// without it (from the first page): the chips above the table.
    pub fn chips(&self) -> Vec<Chip> {
        let without = |strip: fn(&mut BoardQuery)| {
            let mut view = self.clone();
            strip(&mut view);
            view.link(view.sort, view.ascending, 1)
        };
        let mut chips = Vec::new();
        let mut push =
            |name: &'static str, label: &'static str, value: Option<String>, strip: fn(&mut BoardQuery)| {
                if let Some(value) = value {
                    chips.push(Chip { name, label, value, remove: without(strip) });
                }
            };
        push("framework", "Framework", self.framework.clone(), |v| v.framework = None);
        push("model", "Model", self.model.clone(), |v| v.model = None);
        push("tier", "Tier", self.tier.map(|t| t.label().to_owned()), |v| v.tier = None);
        push(
            "provenance",
            "Provenance",
            self.provenance.map(|p| crate::format::provenance_label(p).to_owned()),
            |v| v.provenance = None,
        );
        push("harness", "Harness", self.harness.clone(), |v| v.harness = None);
        push("benchmark_version", "Benchmark version", self.benchmark_version.clone(), |v| {
            v.benchmark_version = None
        });
        push("reproduced", "Reproduced", self.reproduced.then(|| "re-run and held".to_owned()), |v| {
            v.reproduced = false
        });
        push(
            "integrity",
            "Flagged successes",
            (self.integrity == Integrity::Strict).then(|| "count as failures".to_owned()),
            |v| v.integrity = Integrity::default(),
        );
        push("q", "Agent", self.search.as_ref().map(|q| format!("“{q}”")), |v| v.search = None);
        chips
    }

    /// Whether the view narrows the set at all.
    pub fn narrows(&self) -> bool {
        self.framework.is_some()
            || self.model.is_some()
            || self.benchmark_version.is_some()
            || self.tier.is_some()
            || self.provenance.is_some()
            || self.harness.is_some()
            || self.search.is_some()
            || self.reproduced
    }

    /// Whether an agent's name holds the words searched for: the server narrows with
    /// this and the browser filters with it, so both keep the same rows.
    pub fn name_matches(&self, name: &str) -> bool {
        self.search.as_ref().is_none_or(|q| name.to_lowercase().contains(&q.to_lowercase()))
    }

    /// Whether a row passes every filter (the set aside).
    pub fn keeps(&self, row: &LeaderboardRow) -> bool {
        self.framework.as_ref().is_none_or(|f| *f == row.framework)
            && self.model.as_ref().is_none_or(|m| *m == row.model)
            && self.benchmark_version.as_ref().is_none_or(|v| *v == row.benchmark_version)
            && self.tier.is_none_or(|t| t == row.tier)
            && self.provenance.is_none_or(|p| p == row.provenance)
            && self.harness.as_ref().is_none_or(|h| *h == row.harness.name)
            && (!self.reproduced || row.sample.held())
            && self.name_matches(&row.display_name)
    }

    /// A row's place in this view's order: its name and the value ordered by, as the
    /// store computes it.
    pub fn key(&self, row: &LeaderboardRow) -> RowKey {
        RowKey {
            bundle_id: row.bundle_id.clone(),
            display_name: row.display_name.clone(),
            value: self.sort.value(row),
            // As the store counts it: none where a task falls short of the attempts asked.
            ranked_tasks: if row.has_every_attempt() {
                row.coverage.get(&Hint::None).map_or(0, |c| c.tasks)
            } else {
                0
            },
            infra_errors: row.by_hint.values().map(|r| r.infra_errors).sum(),
        }
    }

    fn link(&self, sort: Sort, ascending: bool, page: usize) -> String {
        let page = page.to_string();
        let sort = sort.key();
        let columns: Vec<(&str, Option<&str>)> =
            self.columns.params().into_iter().map(|(k, v)| (k, Some(v))).collect();
        let mut pairs: Vec<(&str, Option<&str>)> = vec![
            ("set", self.set.as_deref()),
            ("framework", self.framework.as_deref()),
            ("model", self.model.as_deref()),
            ("benchmark_version", self.benchmark_version.as_deref()),
            ("tier", self.tier.map(Tier::as_str)),
            ("provenance", self.provenance.map(ProvenanceKind::as_str)),
            ("harness", self.harness.as_deref()),
            ("tasks", Some(self.tasks.as_str()).filter(|_| self.tasks == TaskScope::Public)),
            ("q", self.search.as_deref()),
            ("reproduced", Some(REPRODUCED_HELD).filter(|_| self.reproduced)),
            ("integrity", Some(self.integrity.as_str()).filter(|_| self.integrity == Integrity::Strict)),
        ];
        pairs.extend(columns);
        pairs.extend([
            ("sort", Some(sort.as_str())),
            ("dir", Some(if ascending { "asc" } else { "desc" })),
            ("page", Some(page.as_str()).filter(|p| *p != "1")),
        ]);
        href("/", &pairs)
    }

    /// The link to this view counting the tasks `tasks` says, from the first page.
    pub fn scoped(&self, tasks: TaskScope) -> String {
        BoardQuery { tasks, ..self.clone() }.link(self.sort, self.ascending, 1)
    }

    /// Puts `rows` in this view's order: the ranked ones (covering all `of` tasks of
    /// their set without hints) first, then the rest, listed apart; within each, rows
    /// without a value go last whichever the direction, and ties go by name, then by
    /// bundle id: the order never depends on how the database happens to return rows (a
    /// restored copy lists them as the original does).
    pub fn order(&self, rows: &mut [RowKey], of: usize) {
        rows.sort_by(|a, b| {
            let ranked = |r: &RowKey| r.ranked_tasks as usize >= of;
            let order = match self.sort {
                Sort::Agent => {
                    let o = a.display_name.to_lowercase().cmp(&b.display_name.to_lowercase());
                    if self.ascending { o } else { o.reverse() }
                }
                _ => match (a.value, b.value) {
                    (Some(x), Some(y)) => {
                        let o = x.total_cmp(&y);
                        if self.ascending { o } else { o.reverse() }
                    }
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                },
            };
            ranked(b)
                .cmp(&ranked(a))
                .then(order)
                .then_with(|| a.display_name.cmp(&b.display_name))
                .then_with(|| a.bundle_id.cmp(&b.bundle_id))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_reads_its_page_as_the_one_window_does() {
        for given in ["", "0", "-1", "1", "2", "37", "x", "2.5", "99999999999999999999999", " 3"] {
            let get = move |k: &str| (k == "page").then(|| given.to_owned());
            let window = crate::query::Window::pages(
                &crate::query::Params::new(get, crate::query::Strictness::Lenient),
                PER_PAGE,
                None,
            )
            .unwrap();
            assert_eq!(BoardQuery::from_params(get).page, window.page, "page={given:?}");
        }
    }

    fn params(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn every_order_has_a_key_that_reads_back() {
        for s in Sort::ALL {
            assert_eq!(Sort::from_key(&s.key()), Some(s));
        }
        assert_eq!(Sort::DEFAULT.key(), "final-none");
    }

    #[test]
    fn a_url_reads_into_a_view_and_back() {
        let q = BoardQuery::from_params(params(&[
            ("tier", "maintainer"),
            ("provenance", "imported"),
            ("sort", "exec-hints"),
            ("page", "2"),
        ]));
        assert_eq!(q.tier, Some(Tier::Maintainer));
        assert_eq!(q.provenance, Some(ProvenanceKind::Imported));
        assert_eq!(q.sort, Sort::Execution(Hint::Hints));
        assert!(!q.ascending);
        assert_eq!(q.at_page(3), "/?tier=maintainer&provenance=imported&sort=exec-hints&dir=desc&page=3");
        assert_eq!(
            q.sorted_by(Sort::Execution(Hint::Hints)),
            "/?tier=maintainer&provenance=imported&sort=exec-hints&dir=asc"
        );
        assert_eq!(q.sorted_by(Sort::Agent), "/?tier=maintainer&provenance=imported&sort=agent&dir=asc");
    }

    #[test]
    fn cost_orders_cheapest_first_with_unknown_costs_last() {
        let row = |name: &str, value: Option<f64>| RowKey {
            bundle_id: name.into(),
            display_name: name.into(),
            value,
            ranked_tasks: 12,
            infra_errors: 0,
        };
        let q = BoardQuery::from_params(params(&[("sort", "cost-none")]));
        assert!(q.ascending, "cheapest first unless asked otherwise");
        let mut rows = vec![row("unknown", None), row("dear", Some(2.0)), row("cheap", Some(0.1))];
        q.order(&mut rows, 12);
        let names: Vec<&str> = rows.iter().map(|r| r.bundle_id.as_str()).collect();
        assert_eq!(names, ["cheap", "dear", "unknown"]);
        let q = BoardQuery::from_params(params(&[("sort", "cost-none"), ("dir", "desc")]));
        q.order(&mut rows, 12);
        let names: Vec<&str> = rows.iter().map(|r| r.bundle_id.as_str()).collect();
        assert_eq!(names, ["dear", "cheap", "unknown"]);
    }

    #[test]
    fn the_columns_read_from_repeated_parameters_and_write_back() {
        let all = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs.iter().filter(|(n, _)| *n == k).map(|(_, v)| v.to_string()).collect::<Vec<_>>()
            }
        };
        let q = BoardQuery::from_query(params(&[]), all(&[]));
        assert_eq!(q.columns, Columns::default());
        assert_eq!(q.here(), "/?sort=final-none&dir=desc", "the default says nothing");
        let picked = &[("col", "recall"), ("col", "final"), ("col", "nonsense"), ("cond", "none")];
        let q = BoardQuery::from_query(params(&[("tier", "submitter")]), all(picked));
        assert_eq!(q.columns.metrics, [Metric::Final, Metric::Recall], "in the table's order");
        assert_eq!(q.columns.hints, [Hint::None]);
        assert_eq!((q.columns.width(Metric::Final), q.columns.width(Metric::Cost)), (1, 0));
        assert_eq!(q.here(), "/?tier=submitter&col=final&col=recall&cond=none&sort=final-none&dir=desc");
        assert!(q.sorted_by(Sort::Agent).contains("col=final&col=recall&cond=none"), "every link keeps them");
        let only_conditions = BoardQuery::from_query(params(&[]), all(&[("cond", "hints")]));
        assert_eq!(only_conditions.columns.metrics, Columns::default().metrics);
        assert!(only_conditions.columns.width(Metric::Uplift) == 1);
    }

    #[test]
    fn values_that_name_nothing_are_dropped() {
        let q = BoardQuery::from_params(params(&[("tier", "gold"), ("sort", "x"), ("page", "0")]));
        assert_eq!((q.tier, q.sort, q.page), (None, Sort::DEFAULT, 1));
    }

    #[test]
    fn a_task_scope_reads_back_the_word_it_writes() {
        for scope in TaskScope::ALL {
            assert_eq!(TaskScope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(TaskScope::parse("Public"), None);
    }

    #[test]
    fn the_api_and_the_page_read_the_leaderboard_query_alike() {
        // Every parameter the API documents is read by the one parser: a value that
        // names nothing is refused strictly, naming it, and dropped leniently.
        let bad = [
            ("tier", "gold"),
            ("provenance", "x"),
            ("harness", "Not A Slug"),
            ("tasks", "some"),
            ("integrity", "lax"),
            ("reproduced", "maybe"),
        ];
        for (name, value) in bad {
            let api = LeaderboardParams { ..Default::default() };
            let api = match name {
                "tier" => LeaderboardParams { tier: Some(value.into()), ..api },
                "provenance" => LeaderboardParams { provenance: Some(value.into()), ..api },
                "harness" => LeaderboardParams { harness: Some(value.into()), ..api },
                "tasks" => LeaderboardParams { tasks: Some(value.into()), ..api },
                "integrity" => LeaderboardParams { integrity: Some(value.into()), ..api },
                _ => LeaderboardParams { reproduced: Some(value.into()), ..api },
            };
            assert_eq!(api.view().unwrap_err().parameter, name);
            let page = BoardQuery::from_params(|k| (k == name).then(|| value.to_owned()));
            assert_eq!(page, BoardQuery::from_params(|_| None), "{name} dropped on the page");
        }
        let api = LeaderboardParams {
            framework: Some("aider".into()),
            model: Some("m".into()),
            benchmark_version: Some("1.0".into()),
            tier: Some("maintainer".into()),
            provenance: Some("imported".into()),
            harness: Some("harbor".into()),
            tasks: Some("public".into()),
            integrity: Some("strict".into()),
            reproduced: Some("held".into()),
        };
        let view = api.view().unwrap();
        let names = [
            "framework",
            "model",
            "benchmark_version",
            "tier",
            "provenance",
            "harness",
            "tasks",
            "integrity",
            "reproduced",
        ];
        let page = BoardQuery::from_params(|k| {
            let v = match k {
                "framework" => "aider",
                "model" => "m",
                "benchmark_version" => "1.0",
                "tier" => "maintainer",
                "provenance" => "imported",
                "harness" => "harbor",
                "tasks" => "public",
                "integrity" => "strict",
                "reproduced" => "held",
                _ => return None,
            };
            names.contains(&k).then(|| v.to_owned())
        });
        assert_eq!(view, page, "the API's view and the page's are one");
        let filter = view.filter();
        assert_eq!(
            (
                filter.framework.as_deref(),
                filter.benchmark_version.as_deref(),
                filter.tier,
                filter.reproduced
            ),
            (Some("aider"), Some("1.0"), Some(Tier::Maintainer), true)
        );
        assert_eq!(
            LeaderboardParams { tier: Some(String::new()), ..Default::default() }.view().unwrap().tier,
            None
        );
    }

    #[test]
    fn each_chip_removes_its_filter_and_keeps_the_rest() {
        let q = BoardQuery::from_query(
            params(&[
                ("set", "abc"),
                ("framework", "aider"),
                ("tier", "submitter"),
                ("q", "claude"),
                ("integrity", "strict"),
                ("reproduced", "held"),
                ("sort", "agent"),
                ("page", "2"),
            ]),
            |name| if name == "col" { vec!["recall".to_owned()] } else { Vec::new() },
        );
        let chips = q.chips();
        let names: Vec<&str> = chips.iter().map(|c| c.name).collect();
        assert_eq!(names, ["framework", "tier", "reproduced", "integrity", "q"]);
        assert_eq!(chips[1].value, "Self-reported");
        assert_eq!(chips[4].value, "“claude”");
        for chip in &chips {
            let pairs: Vec<(String, String)> = chip
                .remove
                .trim_start_matches("/?")
                .split('&')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            let get = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
            let all = |name: &str| pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect();
            let back = BoardQuery::from_query(get, all);
            let left: Vec<&str> = back.chips().iter().map(|c| c.name).collect();
            let expected: Vec<&str> = names.iter().copied().filter(|n| *n != chip.name).collect();
            assert_eq!(left, expected, "{} removes itself only: {}", chip.name, chip.remove);
            assert_eq!((back.set.as_deref(), back.sort, back.page), (Some("abc"), Sort::Agent, 1));
            assert_eq!(back.columns, q.columns, "the columns stay");
        }
        assert!(BoardQuery::from_params(params(&[("set", "abc")])).chips().is_empty());
    }
}
