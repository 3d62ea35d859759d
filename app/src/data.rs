//! The server functions the pages read through, and what they return. Each is thin:
//! arguments → store → page data, with [`AppError`] for what went wrong.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use store::stats::{AgentStats, Comparison};
use store::{
    AgentDetail, Change, FailureCount, FailurePattern, Hint, KeyRecord, LeaderboardRow, RunDetail,
    RunSummary, TaskAgentRow, TaskId, TaskRow,
};

use crate::board::{BoardQuery, PER_PAGE};
use crate::catalog::{Expected, TaskInfo};
use crate::error::AppError;

/// What the server gives the pages: the store and the task cards.
#[cfg(feature = "ssr")]
#[derive(Debug, Clone)]
pub struct PageContext {
    pub store: std::sync::Arc<store::Store>,
    pub catalog: std::sync::Arc<crate::catalog::Catalog>,
    /// Where the stylesheet is served (a name with its digest in it).
    pub stylesheet: String,
    /// Where the islands' WebAssembly is served (`pkg/<digest>`); none without it.
    pub pkg: Option<String>,
    /// The change log's newest sequence number as the page is rendered.
    pub generation: i64,
    /// The size limits submitted bundles are held to.
    pub limits: bundle::Limits,
}

#[cfg(feature = "ssr")]
fn context() -> Result<PageContext, AppError> {
    use_context::<PageContext>().ok_or_else(|| {
        tracing::error!("a page was rendered without its PageContext");
        AppError::Internal
    })
}

/// Task id → name, for the tasks a page mentions.
pub type TaskNames = BTreeMap<TaskId, String>;

#[cfg(feature = "ssr")]
fn names(ctx: &PageContext) -> TaskNames {
    ctx.catalog.tasks.iter().map(|t| (t.id.clone(), t.name.clone())).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaderboardData {
    /// The task sets with current results, most agents first. Rows of different sets
    /// are never ranked together.
    pub sets: Vec<TaskSet>,
    /// The set shown: the one asked for, else the one with most agents.
    pub set: Option<TaskSet>,
    /// What the filters offer on that set.
    pub frameworks: Vec<String>,
    pub models: Vec<String>,
    pub harnesses: Vec<store::Harness>,
    /// The tasks the view counts: the set's, or its public ones (`?tasks=public`).
    pub tasks: Vec<TaskId>,
    /// How many of the matching rows are ranked (they cover those tasks without hints);
    /// the others come after them, listed apart.
    pub ranked: usize,
    /// How many of the set's agents the filters keep.
    pub matching: usize,
    /// The page shown (1-based, within range) of how many.
    pub page: usize,
    pub pages: usize,
    /// That page's rows, in the order asked for.
    pub rows: Vec<LeaderboardRow>,
    /// Intervals, rank ranges and groups of those rows, by bundle id.
    pub stats: BTreeMap<String, AgentStats>,
    /// Known issues of the paper that touch a shown number (an agent's rate over all
    /// tasks under a condition), by agent id.
    pub issues: BTreeMap<String, Vec<crate::paper::KnownIssue>>,
}

impl LeaderboardData {
    /// The 0-based position of the page's first row among the matching ones.
    pub fn first(&self) -> usize {
        (self.page - 1) * PER_PAGE
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSet {
    pub digest: String,
    pub label: String,
    pub tasks: Vec<TaskId>,
    pub agents: usize,
}

/// The leaderboard a URL asks for: narrowed by the database, ordered and cut into pages
/// here.
#[server(prefix = "/sfn", endpoint = "leaderboard")]
pub async fn load_leaderboard(query: BoardQuery) -> Result<LeaderboardData, AppError> {
    let ctx = context()?;
    let sets = task_sets(&ctx).await?;
    let set = query.set.as_ref().and_then(|d| sets.iter().find(|s| &s.digest == d)).or(sets.first()).cloned();
    let Some(chosen) = &set else {
        let empty = LeaderboardData {
            sets,
            set: None,
            frameworks: vec![],
            models: vec![],
            harnesses: vec![],
            tasks: vec![],
            ranked: 0,
            matching: 0,
            page: 1,
            pages: 1,
            rows: vec![],
            stats: BTreeMap::new(),
            issues: BTreeMap::new(),
        };
        return Ok(empty);
    };
    let tasks: Vec<TaskId> = match query.tasks {
        crate::board::TaskScope::All => chosen.tasks.clone(),
        crate::board::TaskScope::Public => {
            chosen.tasks.iter().filter(|t| ctx.catalog.get(t.as_str()).is_some_and(|t| t.public)).cloned().collect()
        }
    };
    let scope = (query.tasks == crate::board::TaskScope::Public).then_some(tasks.as_slice());
    let filter = store::LeaderboardFilter {
        framework: query.framework.clone(),
        model: query.model.clone(),
        tier: query.tier,
        provenance: query.provenance,
        harness: query.harness.clone(),
        benchmark_version: None,
        task_set_digest: Some(chosen.digest.clone()),
        integrity: query.integrity,
        tasks: scope.map(<[TaskId]>::to_vec),
    };
    // Ordered on what ordering needs, then whole rows for the page shown only.
    let (mut keys, (frameworks, models, harnesses), stats) = futures::try_join!(
        ctx.store.leaderboard_keys(&filter, query.sort.rate_key()),
        ctx.store.leaderboard_choices(&chosen.digest),
        ctx.store.board_stats(query.integrity, scope),
    )?;
    keys.retain(|k| query.name_matches(&k.display_name));
    if let crate::board::Sort::EveryTime(hint) = query.sort {
        for key in &mut keys {
            key.value = stats
                .by_bundle
                .get(&key.bundle_id)
                .and_then(|s| s.reliability.get(hint))
                .and_then(|r| r.every_time())
                .map(|i| i.estimate);
        }
    }
    query.order(&mut keys, tasks.len());
    let ranked = keys.iter().filter(|k| k.ranked_tasks as usize >= tasks.len()).count();
    let matching = keys.len();
    let pages = matching.div_ceil(PER_PAGE).max(1);
    let page = query.page.min(pages);
    let shown: Vec<String> =
        keys.into_iter().skip((page - 1) * PER_PAGE).take(PER_PAGE).map(|k| k.bundle_id).collect();
    let mut found = ctx.store.leaderboard_rows(&shown, query.integrity, scope).await?;
    let rows: Vec<LeaderboardRow> = shown
        .iter()
        .filter_map(|b| found.iter().position(|r| &r.bundle_id == b).map(|i| found.swap_remove(i)))
        .collect();
    let stats = rows
        .iter()
        .filter_map(|r| Some((r.bundle_id.clone(), stats.by_bundle.get(&r.bundle_id)?.clone())))
        .collect();
    let issues = rows
        .iter()
        .filter(|r| r.provenance == store::ProvenanceKind::Published)
        .map(|r| (r.agent_id.clone(), rate_issues(&ctx.catalog.paper, &r.agent_id)))
        .filter(|(_, issues)| !issues.is_empty())
        .collect();
    Ok(LeaderboardData {
        sets,
        set,
        frameworks,
        models,
        harnesses,
        tasks,
        ranked,
        matching,
        page,
        pages,
        rows,
        stats,
        issues,
    })
}

/// The paper's known issues about an agent's rates over all tasks, each naming its
/// condition and metric: Table 5's file recall against the per-task tables, and the
/// text's 19% against Table 5's final success.
#[cfg(feature = "ssr")]
fn rate_issues(paper: &crate::paper::Paper, agent: &str) -> Vec<crate::paper::KnownIssue> {
    use crate::paper::issue;
    let mut out: Vec<_> = paper
        .known_issues
        .iter()
        .filter(|i| {
            i.agent.as_deref() == Some(agent)
                && i.task.is_none()
                && i.condition.is_some()
                && i.metric.is_some()
        })
        .cloned()
        .collect();
    if agent == issue::TEXT_19_PERCENT_AGENT
        && let Some(text) = paper.issue(issue::TEXT_19_PERCENT)
    {
        out.push(crate::paper::KnownIssue {
            agent: Some(agent.to_owned()),
            condition: Some(Hint::None),
            metric: Some("final_success".to_owned()),
            ..text.clone()
        });
    }
    out
}

/// The task sets with current results, each named for its benchmark version, or as the
/// example tasks.
#[cfg(feature = "ssr")]
async fn task_sets(ctx: &PageContext) -> Result<Vec<TaskSet>, AppError> {
    let mut sets: Vec<TaskSet> = ctx
        .store
        .task_sets()
        .await?
        .into_iter()
        .map(|s| {
            let examples = !s.tasks.is_empty()
                && s.tasks.iter().all(|t| ctx.catalog.get(t.as_str()).is_some_and(|t| t.example));
            let label = if examples {
                "Example tasks".to_owned()
            } else {
                format!("{} {}", s.benchmark_name, s.benchmark_version)
            };
            TaskSet { digest: s.digest, label, tasks: s.tasks, agents: s.agents as usize }
        })
        .collect();
    // Two sets of the same name (the same tasks, changed cards) are told apart by digest.
    let labels: Vec<String> = sets.iter().map(|s| s.label.clone()).collect();
    for set in &mut sets {
        if labels.iter().filter(|l| **l == set.label).count() > 1 {
            set.label = format!("{} ({})", set.label, &set.digest[..8.min(set.digest.len())]);
        }
    }
    sets.sort_by(|a, b| b.agents.cmp(&a.agents).then_with(|| a.label.cmp(&b.label)));
    Ok(sets)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentData {
    pub agent: AgentDetail,
    pub failures: Vec<FailureCount>,
    /// The runs of the chosen task and hint condition (all runs if neither is chosen).
    pub runs: Vec<RunSummary>,
    pub names: TaskNames,
    /// The current submission's intervals, rank range and group.
    pub stats: Option<AgentStats>,
    /// What the paper publishes about the agent, where its results are the paper's.
    pub published: Option<PublishedFacts>,
    /// The current submissions' flagged successes, with the findings that flag them.
    pub flagged: Vec<store::FindingRecord>,
    /// The same agent measured under other agent ids: (agent id, name, harness).
    pub elsewhere: Vec<(String, String, store::Harness)>,
    /// What its current submission covers of its task set.
    pub coverage: Option<Coverage>,
}

/// What a submission covers of its task set of `of` tasks: in words where it is less
/// than RExBench's design, and whether that ranks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub words: Option<String>,
    pub ranked: bool,
    pub of: usize,
}

/// What the paper publishes about one agent beside its per-task results, and the known
/// issues that touch its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFacts {
    /// The table of its per-task results (e.g. "Table 11").
    pub table: String,
    pub cost: Option<crate::paper::CostRow>,
    pub cost_caption: String,
    /// Its column of Table 9 or 10.
    pub errors: Option<ErrorColumn>,
    pub errors_unit: String,
    /// Issues about its numbers, and about the tables shown with them.
    pub issues: Vec<crate::paper::KnownIssue>,
}

/// An agent's column of Table 9 or 10: every error type in the table's row order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorColumn {
    pub table: String,
    pub rows: Vec<ErrorCountRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorCountRow {
    pub error_type: String,
    /// The table's group of it ("Python Errors", "Bash Errors", …).
    pub group: String,
    pub count: i64,
}

#[cfg(feature = "ssr")]
fn published_facts(paper: &crate::paper::Paper, agent: &AgentDetail) -> Option<PublishedFacts> {
    use crate::paper::issue;
    let current = agent.submissions.iter().find(|s| s.superseded_by.is_none())?;
    if current.provenance != store::ProvenanceKind::Published {
        return None;
    }
    let known = paper.agent(&agent.id)?;
    let counts = &paper.error_counts;
    let errors = paper.error_counts.by_agent.get(&agent.id).and_then(|column| {
        let table = counts.table_of(&known.framework)?.to_owned();
        let rows = counts
            .row_order
            .iter()
            .map(|e| ErrorCountRow {
                error_type: e.clone(),
                group: counts.row_category.get(e).cloned().unwrap_or_default(),
                count: column.get(e).copied().unwrap_or(0),
            })
            .collect();
        Some(ErrorColumn { table, rows })
    });
    let mut shared = vec![issue::TABLE7_RUN_COUNT, issue::ERROR_COLUMN_ORDER, issue::ERROR_BELOW_FAILED];
    if agent.id == issue::TEXT_19_PERCENT_AGENT {
        shared.push(issue::TEXT_19_PERCENT);
    }
    let mut issues: Vec<crate::paper::KnownIssue> =
        shared.into_iter().filter_map(|id| paper.issue(id)).cloned().collect();
    issues
        .extend(paper.known_issues.iter().filter(|i| i.agent.as_deref() == Some(agent.id.as_str())).cloned());
    Some(PublishedFacts {
        table: known.table.clone(),
        cost: paper.table7.by_agent.get(&agent.id).cloned(),
        cost_caption: paper.table7.caption.clone(),
        errors,
        errors_unit: counts.unit.clone(),
        issues,
    })
}

#[server(prefix = "/sfn", endpoint = "agent")]
pub async fn load_agent(id: String, task: Option<String>, hint: Option<Hint>) -> Result<AgentData, AppError> {
    let ctx = context()?;
    let agent = ctx
        .store
        .agent(&id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("There is no agent `{id}`.")))?;
    let failures = ctx.store.failures_by_agent(Some(&id)).await?;
    let mut runs = Vec::new();
    for bundle_id in agent.current.keys() {
        runs.extend(ctx.store.runs_of(bundle_id, task.as_deref(), hint).await?);
    }
    let board = ctx.store.board_stats(store::Integrity::Reported, None).await?;
    let current = agent.newest_current().map(|(b, _)| b.to_owned());
    let stats = current.as_ref().and_then(|b| board.by_bundle.get(b).cloned());
    let published = published_facts(&ctx.catalog.paper, &agent);
    let mut flagged = ctx.store.agent_findings(&id).await?;
    // Of the findings, those that flag a success: the rest are on the run pages.
    let flagging: std::collections::BTreeSet<i64> = flagged
        .iter()
        .filter(|f| f.outcome == store::Outcome::Success && f.finding.flags())
        .map(|f| f.run_id)
        .collect();
    flagged.retain(|f| flagging.contains(&f.run_id) && f.finding.flags());
    let elsewhere = ctx.store.same_agent_elsewhere(&id).await?;
    let coverage = match &current {
        None => None,
        Some(bundle) => {
            let rows =
                ctx.store.leaderboard_rows(std::slice::from_ref(bundle), store::Integrity::Reported, None).await?;
            let sets = task_sets(&ctx).await?;
            rows.first().and_then(|row| {
                let of = sets.iter().find(|s| s.digest == row.task_set_digest)?.tasks.len();
                Some(Coverage { words: crate::format::coverage_words(&row.coverage, of), ranked: row.ranked(of), of })
            })
        }
    };
    Ok(AgentData { agent, failures, runs, names: names(&ctx), stats, published, flagged, elsewhere, coverage })
}

/// An artifact's text as a page shows it: whole, or its head and tail with the middle
/// cut, each line with its number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactText {
    pub role: String,
    pub digest: String,
    pub size: i64,
    /// Runs of consecutive lines: (number of the first line, the lines).
    pub parts: Vec<(usize, Vec<String>)>,
    pub total_lines: usize,
    /// Whether anything was left out (lines, or the end of a very large file).
    pub cut: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunData {
    pub run: RunDetail,
    pub task_name: String,
    /// The task's public expected values; empty where the gold results are private.
    pub expected: Vec<Expected>,
    pub texts: Vec<ArtifactText>,
    /// The agent's trajectory, where the run carries one in a form the page reads.
    pub trajectory: Option<crate::trajectory::Trajectory>,
    /// Why a trajectory the run carries is shown as plain text instead (among `texts`).
    pub trajectory_problem: Option<String>,
}

/// Lines of a log shown before and after the cut, and of a patch in all.
#[cfg(feature = "ssr")]
const LOG_HEAD: usize = 60;
#[cfg(feature = "ssr")]
const LOG_TAIL: usize = 140;
#[cfg(feature = "ssr")]
const PATCH_LINES: usize = 600;
/// Bytes of an artifact read for a page, and characters of a line shown.
#[cfg(feature = "ssr")]
const READ_CAP: usize = 2 << 20;
/// Bytes of a trajectory read to show it step by step (it is JSON, so it is read whole;
/// a larger one is shown as the head of its text).
#[cfg(feature = "ssr")]
const TRAJECTORY_CAP: usize = 32 << 20;
#[cfg(feature = "ssr")]
const LINE_CAP: usize = 400;

#[server(prefix = "/sfn", endpoint = "run")]
pub async fn load_run(id: String) -> Result<RunData, AppError> {
    let ctx = context()?;
    let not_found = || AppError::NotFound(format!("There is no run `{id}`."));
    let run_id: i64 = id.parse().map_err(|_| not_found())?;
    let run = ctx.store.run(run_id).await?.ok_or_else(not_found)?;
    let task = ctx.catalog.get(run.task.as_str());
    let mut texts = Vec::new();
    let mut trajectory = None;
    let mut trajectory_problem = None;
    for a in &run.artifacts {
        let Some(digest) = store::Digest::from_hex(&a.digest) else { continue };
        if a.role == crate::trajectory::ROLE && a.size as usize <= TRAJECTORY_CAP {
            let bytes = read_capped(&ctx.store, &digest, TRAJECTORY_CAP).await?;
            match crate::trajectory::read(&bytes, &a.digest, a.size, run.error_type.as_deref()) {
                Ok(t) => {
                    trajectory = Some(t);
                    continue;
                }
                Err(problem) => trajectory_problem = Some(problem),
            }
        } else if a.role == crate::trajectory::ROLE {
            trajectory_problem =
                Some(format!("it is {}, more than a page reads", crate::format::bytes(a.size)));
        }
        let bytes = read_capped(&ctx.store, &digest, READ_CAP).await?;
        let whole = bytes.len() as i64 == a.size;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text.lines().map(clip_line).collect();
        let total = lines.len();
        let (parts, cut) = if a.role == "patch" {
            (vec![(1, lines.into_iter().take(PATCH_LINES).collect())], total > PATCH_LINES || !whole)
        } else if total > LOG_HEAD + LOG_TAIL {
            let tail_start = total - LOG_TAIL;
            (vec![(1, lines[..LOG_HEAD].to_vec()), (tail_start + 1, lines[tail_start..].to_vec())], true)
        } else {
            (vec![(1, lines)], !whole)
        };
        texts.push(ArtifactText {
            role: a.role.clone(),
            digest: a.digest.clone(),
            size: a.size,
            parts,
            total_lines: total,
            cut,
        });
    }
    Ok(RunData {
        task_name: task.map_or_else(|| run.task.to_string(), |t| t.name.clone()),
        expected: task.map(|t| t.public_expected.clone()).unwrap_or_default(),
        run,
        texts,
        trajectory,
        trajectory_problem,
    })
}

#[cfg(feature = "ssr")]
fn clip_line(line: &str) -> String {
    if line.len() <= LINE_CAP {
        return line.to_owned();
    }
    let mut end = LINE_CAP;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

#[cfg(feature = "ssr")]
async fn read_capped(store: &store::Store, digest: &store::Digest, cap: usize) -> Result<Vec<u8>, AppError> {
    use futures::StreamExt;
    let mut stream = store.blobs().read(digest).await.map_err(|e| {
        tracing::error!(digest = %digest.to_hex(), error = %e, "cannot read a stored artifact");
        AppError::Internal
    })?;
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            tracing::error!(error = %e, "reading an artifact failed");
            AppError::Internal
        })?;
        out.extend_from_slice(&chunk[..chunk.len().min(cap - out.len())]);
        if out.len() >= cap {
            break;
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TasksData {
    pub tasks: Vec<(TaskInfo, Option<TaskRow>)>,
}

#[server(prefix = "/sfn", endpoint = "tasks")]
pub async fn load_tasks() -> Result<TasksData, AppError> {
    let ctx = context()?;
    let mut rows: BTreeMap<TaskId, TaskRow> =
        ctx.store.tasks().await?.into_iter().map(|t| (t.task.clone(), t)).collect();
    let tasks = ctx.catalog.tasks.iter().map(|t| (t.clone(), rows.remove(&t.id))).collect();
    Ok(TasksData { tasks })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskData {
    pub task: TaskInfo,
    /// The card's README as HTML (raw HTML in it shown as text).
    pub readme_html: String,
    /// The rates of the agents on the page asked for, best without hints first.
    pub agents: Vec<TaskAgentRow>,
    /// How many agents have results on the task.
    pub total: usize,
    /// The page of agents shown (1-based, within range).
    pub page: usize,
    /// The agents that solved the task only with hints (id, name), best first: the
    /// first [`HINTED_ONLY_SHOWN`], and how many there are in all.
    pub hinted_only: Vec<(String, String)>,
    pub hinted_only_count: usize,
    /// Under each condition, the agents that solved it in every attempt (id, name): the
    /// first [`HINTED_ONLY_SHOWN`], and how many there are in all.
    pub every_time: Vec<(Hint, Vec<(String, String)>, usize)>,
    /// The runs of the agents on that page.
    pub runs: Vec<RunSummary>,
    pub failures: Vec<FailurePattern>,
}

/// Agents a page of a task's results shows.
pub const TASK_AGENTS_PER_PAGE: usize = 50;

/// Agents named as having solved a task only with hints.
pub const HINTED_ONLY_SHOWN: usize = 30;

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn load_task(id: String, page: usize) -> Result<TaskData, AppError> {
    let ctx = context()?;
    let task = ctx
        .catalog
        .get(&id)
        .cloned()
        .ok_or_else(|| AppError::NotFound(format!("There is no task `{id}`.")))?;
    // Every agent's place first (a narrow read), then the full rows and runs of the
    // page's agents only; independent reads go on two connections at once.
    let (mut places, failures) =
        futures::try_join!(ctx.store.task_places(&id), ctx.store.failure_patterns(Some(&id)))?;
    // Ties go by name, then by agent: never by how the database returned the rows, or
    // a restored copy (or the next request) would page and list them otherwise.
    places.sort_by(|a, b| {
        let s = |p: &store::TaskPlace| p.final_success.unwrap_or(-1.0);
        s(b).total_cmp(&s(a))
            .then_with(|| a.display_name.cmp(&b.display_name))
            .then_with(|| a.agent_id.cmp(&b.agent_id))
    });
    let pages = places.len().div_ceil(TASK_AGENTS_PER_PAGE).max(1);
    let page = page.clamp(1, pages);
    let shown: Vec<String> = places
        .iter()
        .skip((page - 1) * TASK_AGENTS_PER_PAGE)
        .take(TASK_AGENTS_PER_PAGE)
        .map(|p| p.bundle_id.clone())
        .collect();
    let (mut agents, runs) =
        futures::try_join!(ctx.store.task_rows(&id, Some(&shown)), ctx.store.task_runs(&id, &shown))?;
    agents.sort_by_key(|a| shown.iter().position(|b| *b == a.bundle_id));
    let hinted: Vec<&store::TaskPlace> = places.iter().filter(|p| p.hinted_only).collect();
    Ok(TaskData {
        readme_html: crate::markdown::to_html(&task.readme),
        hinted_only: hinted
            .iter()
            .take(HINTED_ONLY_SHOWN)
            .map(|p| (p.agent_id.clone(), p.display_name.clone()))
            .collect(),
        hinted_only_count: hinted.len(),
        every_time: Hint::ALL
            .into_iter()
            .map(|h| {
                let always: Vec<&store::TaskPlace> = places.iter().filter(|p| p.every_time.contains(&h)).collect();
                let named =
                    always.iter().take(HINTED_ONLY_SHOWN).map(|p| (p.agent_id.clone(), p.display_name.clone())).collect();
                (h, named, always.len())
            })
            .filter(|(_, _, n)| *n > 0)
            .collect(),
        total: places.len(),
        runs,
        failures,
        agents,
        page,
        task,
    })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareData {
    /// Every agent with current results: (id, name), for the pickers.
    pub agents: Vec<(String, String)>,
    pub a: Option<AgentDetail>,
    pub b: Option<AgentDetail>,
    pub names: TaskNames,
    /// The paired comparison of their current results: B − A.
    pub comparison: Option<Comparison>,
}

#[server(prefix = "/sfn", endpoint = "compare")]
pub async fn load_compare(a: Option<String>, b: Option<String>) -> Result<CompareData, AppError> {
    let ctx = context()?;
    let agents = ctx.store.current_agents().await?;
    let pick = async |id: Option<String>| -> Result<Option<AgentDetail>, AppError> {
        match id.filter(|s| !s.is_empty()) {
            None => Ok(None),
            Some(id) => ctx
                .store
                .agent(&id)
                .await?
                .map(Some)
                .ok_or_else(|| AppError::NotFound(format!("There is no agent `{id}`."))),
        }
    };
    let (a, b) = (pick(a).await?, pick(b).await?);
    let current =
        |x: &Option<AgentDetail>| x.as_ref().and_then(|x| x.newest_current().map(|(b, _)| b.to_owned()));
    let comparison = match (current(&a), current(&b)) {
        (Some(x), Some(y)) => Some(ctx.store.compare_bundles(&x, &y).await?),
        _ => None,
    };
    Ok(CompareData { agents, a, b, names: names(&ctx), comparison })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityData {
    /// Every agent with current results: (id, name), for the pickers.
    pub agents: Vec<(String, String)>,
    pub names: TaskNames,
    pub hint: Hint,
    /// The two sides, once both are chosen.
    pub parity: Option<store::parity::Parity>,
}

/// A submission a parity view names: a bundle id (any submission, superseded ones
/// included), or an agent id (its newest current submission).
#[cfg(feature = "ssr")]
async fn parity_bundle(store: &store::Store, named: &str) -> Result<Option<String>, store::StoreError> {
    if let Some(s) = store.submission(named).await? {
        return Ok(Some(s.bundle_id));
    }
    Ok(store.agent(named).await?.and_then(|a| a.newest_current().map(|(b, _)| b.to_owned())))
}

/// Two submissions side by side under `hint`, each named by bundle or agent id; the
/// error names the one that does not exist. Run-level rates of the published parity
/// experiment come from the catalog, which read them from its data file.
#[cfg(feature = "ssr")]
pub async fn parity(
    store: &store::Store,
    catalog: &crate::catalog::Catalog,
    a: &str,
    b: &str,
    hint: Hint,
) -> Result<store::parity::Parity, ParityError> {
    let mut bundles = Vec::with_capacity(2);
    for (side, named) in [("a", a), ("b", b)] {
        match parity_bundle(store, named).await? {
            Some(bundle) => bundles.push(bundle),
            None => return Err(ParityError::Unknown { side, named: named.to_owned() }),
        }
    }
    let runs = |side: &store::parity::ParitySide| catalog.parity_runs.get(&side.agent_id).cloned();
    store
        .parity(&bundles[0], &bundles[1], hint, runs)
        .await?
        .ok_or_else(|| ParityError::Unknown { side: "a", named: a.to_owned() })
}

/// Why a parity view cannot be shown.
#[cfg(feature = "ssr")]
#[derive(Debug, thiserror::Error)]
pub enum ParityError {
    #[error("`{side}` names no submission and no agent with current results: `{named}`")]
    Unknown { side: &'static str, named: String },
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

#[server(prefix = "/sfn", endpoint = "parity")]
pub async fn load_parity(a: Option<String>, b: Option<String>, hint: Hint) -> Result<ParityData, AppError> {
    let ctx = context()?;
    let agents = ctx.store.current_agents().await?;
    let parity = match (a.filter(|s| !s.is_empty()), b.filter(|s| !s.is_empty())) {
        (Some(a), Some(b)) => match parity(&ctx.store, &ctx.catalog, &a, &b, hint).await {
            Ok(p) => Some(p),
            Err(ParityError::Unknown { side, named }) => {
                return Err(AppError::NotFound(format!(
                    "Side {} names no submission and no agent with current results: `{named}`.",
                    side.to_uppercase()
                )));
            }
            Err(ParityError::Store(e)) => return Err(e.into()),
        },
        _ => None,
    };
    Ok(ParityData { agents, names: names(&ctx), hint, parity })
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailuresData {
    pub overview: store::FailureOverview,
    pub patterns: Vec<FailurePattern>,
    pub tasks: Vec<TaskRow>,
    pub names: TaskNames,
    /// Tables 9 and 10 of the paper, as printed.
    pub published: Vec<PublishedErrorTable>,
    pub published_unit: String,
    /// The known issues of those tables.
    pub issues: Vec<crate::paper::KnownIssue>,
    /// Successes with integrity findings: by check, by agent, the newest.
    pub integrity: store::IntegrityOverview,
    /// What each integrity check looks for, by slug.
    pub checks: BTreeMap<String, String>,
}

/// One of the paper's error tables: error types (rows, with their group) × agents
/// (columns) of one framework.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedErrorTable {
    pub table: String,
    pub framework: String,
    /// (agent id, model) per column, in the paper's order.
    pub agents: Vec<(String, String)>,
    /// (error type, group, count per column).
    pub rows: Vec<(String, String, Vec<i64>)>,
}

#[cfg(feature = "ssr")]
fn published_error_tables(paper: &crate::paper::Paper) -> Vec<PublishedErrorTable> {
    let counts = &paper.error_counts;
    let mut tables: Vec<PublishedErrorTable> = counts
        .tables
        .iter()
        .map(|(framework, table)| {
            let agents: Vec<(String, String)> = paper
                .agents
                .iter()
                .filter(|a| {
                    a.framework.eq_ignore_ascii_case(framework) && counts.by_agent.contains_key(&a.id)
                })
                .map(|a| (a.id.clone(), a.model.clone()))
                .collect();
            let rows = counts
                .row_order
                .iter()
                .map(|e| {
                    let column =
                        |id: &String| counts.by_agent.get(id).and_then(|c| c.get(e)).copied().unwrap_or(0);
                    let group = counts.row_category.get(e).cloned().unwrap_or_default();
                    (e.clone(), group, agents.iter().map(|(id, _)| column(id)).collect())
                })
                .collect();
            PublishedErrorTable { table: table.clone(), framework: framework.clone(), agents, rows }
        })
        .collect();
    tables.sort_by(|a, b| a.table.cmp(&b.table));
    tables
}

#[server(prefix = "/sfn", endpoint = "failures")]
pub async fn load_failures() -> Result<FailuresData, AppError> {
    let ctx = context()?;
    use crate::paper::issue;
    let paper = &ctx.catalog.paper;
    Ok(FailuresData {
        overview: ctx.store.failure_overview(crate::pages::FAILURE_AGENTS_SHOWN as i64).await?,
        patterns: ctx.store.failure_patterns(None).await?,
        tasks: ctx.store.tasks().await?,
        names: names(&ctx),
        published: published_error_tables(paper),
        published_unit: paper.error_counts.unit.clone(),
        issues: [issue::ERROR_COLUMN_ORDER, issue::ERROR_BELOW_FAILED, issue::FIGURE6]
            .into_iter()
            .filter_map(|id| paper.issue(id).cloned())
            .collect(),
        integrity: ctx.store.integrity_overview().await?,
        checks: ctx.catalog.checks.iter().cloned().collect(),
    })
}

#[server(prefix = "/sfn", endpoint = "changes")]
pub async fn load_changes(before: Option<i64>) -> Result<Vec<Change>, AppError> {
    let ctx = context()?;
    Ok(ctx.store.changes(CHANGES_PER_PAGE, before).await?)
}

pub const CHANGES_PER_PAGE: i64 = 50;

#[server(prefix = "/sfn", endpoint = "keys")]
pub async fn load_keys() -> Result<Vec<KeyRecord>, AppError> {
    Ok(context()?.store.keys().await?)
}

#[server(prefix = "/sfn", endpoint = "method")]
pub async fn load_method() -> Result<String, AppError> {
    Ok(crate::markdown::to_html(include_str!("../../docs/method.md")))
}

#[server(prefix = "/sfn", endpoint = "guide")]
pub async fn load_guide() -> Result<String, AppError> {
    Ok(crate::markdown::to_html(include_str!("../../docs/submitting.md")))
}

/// What the browser's check of a bundle on `/submit` needs to judge as the server does.
#[server(prefix = "/sfn", endpoint = "submit_setup")]
pub async fn load_submit_setup() -> Result<crate::islands::SubmitSetup, AppError> {
    let ctx = context()?;
    let keys = ctx.store.keys().await?;
    let (trusted, revoked): (Vec<_>, Vec<_>) = keys.into_iter().partition(|k| k.revoked_at.is_none());
    Ok(crate::islands::SubmitSetup {
        trusted: trusted.into_iter().map(|k| k.public_key).collect(),
        revoked: revoked.into_iter().filter_map(|k| Some((k.keyid, k.revoked_at?))).collect(),
        tasks: ctx.catalog.tasks.iter().map(|t| t.id.to_string()).collect(),
        limits: ctx.limits,
        worker: ctx.pkg.map(|p| format!("/{p}/verify-worker.js")).unwrap_or_default(),
    })
}
