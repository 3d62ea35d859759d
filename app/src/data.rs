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
    /// How many of the set's agents the filters keep.
    pub matching: usize,
    /// The page shown (1-based, within range) of how many.
    pub page: usize,
    pub pages: usize,
    /// That page's rows, in the order asked for.
    pub rows: Vec<LeaderboardRow>,
    /// Intervals, rank ranges and groups of those rows, by bundle id.
    pub stats: BTreeMap<String, AgentStats>,
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
            matching: 0,
            page: 1,
            pages: 1,
            rows: vec![],
            stats: BTreeMap::new(),
        };
        return Ok(empty);
    };
    let filter = store::LeaderboardFilter {
        framework: query.framework.clone(),
        model: query.model.clone(),
        tier: query.tier,
        provenance: query.provenance,
        benchmark_version: None,
        task_set_digest: Some(chosen.digest.clone()),
    };
    let (mut rows, (frameworks, models), stats) = futures::try_join!(
        ctx.store.leaderboard(&filter),
        ctx.store.leaderboard_choices(&chosen.digest),
        ctx.store.board_stats(),
    )?;
    query.order(&mut rows);
    let matching = rows.len();
    let pages = matching.div_ceil(PER_PAGE).max(1);
    let page = query.page.min(pages);
    let rows: Vec<LeaderboardRow> = rows.into_iter().skip((page - 1) * PER_PAGE).take(PER_PAGE).collect();
    let stats = rows
        .iter()
        .filter_map(|r| Some((r.bundle_id.clone(), stats.by_bundle.get(&r.bundle_id)?.clone())))
        .collect();
    Ok(LeaderboardData { sets, set, frameworks, models, matching, page, pages, rows, stats })
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
    let board = ctx.store.board_stats().await?;
    let current = agent.newest_current().map(|(b, _)| b.to_owned());
    let stats = current.as_ref().and_then(|b| board.by_bundle.get(b).cloned());
    Ok(AgentData { agent, failures, runs, names: names(&ctx), stats })
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
    for a in &run.artifacts {
        let Some(digest) = store::Digest::from_hex(&a.digest) else { continue };
        let bytes = read_capped(&ctx.store, &digest).await?;
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
async fn read_capped(store: &store::Store, digest: &store::Digest) -> Result<Vec<u8>, AppError> {
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
        out.extend_from_slice(&chunk[..chunk.len().min(READ_CAP - out.len())]);
        if out.len() >= READ_CAP {
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
    /// Every agent's rates on the task, best without hints first.
    pub agents: Vec<TaskAgentRow>,
    /// The page of `agents` asked for (1-based, within range).
    pub page: usize,
    /// The runs of the agents on that page.
    pub runs: Vec<RunSummary>,
    pub failures: Vec<FailurePattern>,
}

/// Agents a page of a task's results shows.
pub const TASK_AGENTS_PER_PAGE: usize = 50;

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn load_task(id: String, page: usize) -> Result<TaskData, AppError> {
    let ctx = context()?;
    let task = ctx
        .catalog
        .get(&id)
        .cloned()
        .ok_or_else(|| AppError::NotFound(format!("There is no task `{id}`.")))?;
    // Independent reads, on two connections at once.
    let (mut agents, failures) =
        futures::try_join!(ctx.store.task(&id), ctx.store.failure_patterns(Some(&id)))?;
    agents.sort_by(|a, b| {
        let s = |r: &TaskAgentRow| r.by_hint.get(&Hint::None).and_then(|r| r.final_success).unwrap_or(-1.0);
        s(b).total_cmp(&s(a)).then_with(|| a.display_name.cmp(&b.display_name))
    });
    let pages = agents.len().div_ceil(TASK_AGENTS_PER_PAGE).max(1);
    let page = page.clamp(1, pages);
    let shown: Vec<String> = agents
        .iter()
        .skip((page - 1) * TASK_AGENTS_PER_PAGE)
        .take(TASK_AGENTS_PER_PAGE)
        .map(|a| a.bundle_id.clone())
        .collect();
    Ok(TaskData {
        readme_html: crate::markdown::to_html(&task.readme),
        runs: ctx.store.task_runs(&id, &shown).await?,
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
    let mut agents: Vec<(String, String)> = ctx
        .store
        .leaderboard(&store::LeaderboardFilter::default())
        .await?
        .into_iter()
        .map(|r| (r.agent_id, r.display_name))
        .collect();
    agents.sort_by(|x, y| x.1.cmp(&y.1));
    agents.dedup();
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
pub struct FailuresData {
    pub by_agent: Vec<FailureCount>,
    pub patterns: Vec<FailurePattern>,
    pub tasks: Vec<TaskRow>,
    pub names: TaskNames,
}

#[server(prefix = "/sfn", endpoint = "failures")]
pub async fn load_failures() -> Result<FailuresData, AppError> {
    let ctx = context()?;
    Ok(FailuresData {
        by_agent: ctx.store.failures_by_agent(None).await?,
        patterns: ctx.store.failure_patterns(None).await?,
        tasks: ctx.store.tasks().await?,
        names: names(&ctx),
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
