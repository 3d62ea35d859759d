//! The tasks, and one task: its card and each agent's results on it.

use serde::{Deserialize, Serialize};
use store::{FailurePattern, Hint, RunSummary, TaskAgentRow, TaskRow};

use crate::catalog::TaskInfo;
use crate::query::{Params, Strictness, Window, lenient};

/// What a task's page reads of its URL: which page of its agents (`?page=`, from 1;
/// one past the last shows none, and says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskQuery {
    pub window: Window,
}

impl TaskQuery {
    /// The page's reading: a page that is not a number, or below 1, is the first.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> TaskQuery {
        let p = Params::new(get, Strictness::Lenient);
        TaskQuery { window: lenient(Window::pages(&p, TASK_AGENTS_PER_PAGE, None)) }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TasksData {
    pub tasks: Vec<(TaskInfo, Option<TaskRow>)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskData {
    pub task: TaskInfo,
    /// The card's README as HTML without its title (raw HTML in it shown as text), its
    /// citations folded.
    pub readme_html: String,
    /// The rates of the agents on the page asked for, best without hints first.
    pub agents: Vec<TaskAgentRow>,
    /// How many agents have results on the task.
    pub total: usize,
    /// The page of agents asked for (1-based; past the last it shows none) of how many.
    pub page: usize,
    pub pages: usize,
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
    /// Spec §4n: the task sets on which current submissions ran more than one folder of
    /// the task, with the folders and how many submissions ran each.
    #[serde(default)]
    pub folder_splits: Vec<(String, Vec<(String, i64)>)>,
}

// The API's list of tasks (`/api/v1/tasks`). (Not a doc comment: the OpenAPI document
// gives this schema no description.)
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TasksAnswer {
    pub tasks: Vec<TaskEntry>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskEntry {
    pub id: store::TaskId,
    pub name: String,
    /// One of the runnable example tasks, not a RExBench task.
    pub example: bool,
    /// The attempts per hint condition the benchmark asks on it (spec §4f).
    pub attempts: u32,
    /// Over the agents' current submissions; absent where no agent ran it.
    pub results: Option<TaskRow>,
}

// The API's answer for one task (`/api/v1/tasks/{id}`): its public facts and every
// agent's rates on it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskAnswer {
    pub id: store::TaskId,
    pub name: String,
    pub summary: Option<String>,
    /// Only the expected values the task card makes public.
    pub public_expected: Vec<ExpectedValue>,
    /// This page's agents, by agent id.
    pub agents: Vec<TaskAgentRow>,
    /// The page given (from 1), agents a page, and how many agents have results on the
    /// task in all.
    pub page: usize,
    pub per_page: usize,
    pub total: usize,
}

/// A metric's public expected value, in words (e.g. `0.88211 ± 0.002`).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExpectedValue {
    pub metric: String,
    pub value: String,
}

impl From<TasksData> for TasksAnswer {
    /// The list the tasks page shows, as the API gives it.
    fn from(list: TasksData) -> TasksAnswer {
        let tasks = list
            .tasks
            .into_iter()
            .map(|(t, results)| TaskEntry {
                id: t.id,
                name: t.name,
                example: t.example,
                attempts: t.attempts,
                results,
            })
            .collect();
        TasksAnswer { tasks }
    }
}

/// Agents a page of a task's results shows.
pub const TASK_AGENTS_PER_PAGE: usize = 50;

/// Agents named as having solved a task only with hints.
pub const HINTED_ONLY_SHOWN: usize = 30;

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use std::collections::BTreeMap;

    use store::{Store, TaskId};

    use super::*;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// Every task of the catalog (RExBench's and the examples), each with its results over
    /// current submissions where any agent ran it: the tasks page and the API's list.
    pub async fn list(store: &Store, catalog: &Catalog) -> Result<TasksData, ViewError> {
        let mut rows: BTreeMap<TaskId, TaskRow> =
            store.tasks().await?.into_iter().map(|t| (t.task.clone(), t)).collect();
        let tasks = catalog.tasks.iter().map(|t| (t.clone(), rows.remove(&t.id))).collect();
        Ok(TasksData { tasks })
    }

    /// One task as the API answers it: its public facts (the card's public expected
    /// values only) and every agent's rates on it.
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        id: &str,
        window: crate::query::Window,
    ) -> Result<TaskAnswer, ViewError> {
        let task = catalog.get(id).ok_or_else(|| ViewError::NotFound(Missing::Task(id.to_owned())))?;
        let all = store.task(id).await?;
        let agents = window.of(all.len()).rows(&all).to_vec();
        Ok(TaskAnswer {
            id: task.id.clone(),
            name: task.name.clone(),
            summary: task.summary.clone(),
            public_expected: task
                .public_expected
                .iter()
                .map(|e| ExpectedValue { metric: e.metric.clone(), value: e.value.clone() })
                .collect(),
            agents,
            page: window.page,
            per_page: window.size,
            total: all.len(),
        })
    }

    /// A task's page: its card, and its agents' rates a page at a time, best without hints
    /// first, with who solved it only with hints or every time, and its failure patterns.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        id: &str,
        page: usize,
    ) -> Result<TaskData, ViewError> {
        let task =
            catalog.get(id).cloned().ok_or_else(|| ViewError::NotFound(Missing::Task(id.to_owned())))?;
        // Every agent's place first (a narrow read), then the full rows and runs of the
        // page's agents only; independent reads go on two connections at once.
        let (mut places, failures, folders) = futures::try_join!(
            store.task_places(id),
            store.failure_patterns(Some(id)),
            store.task_folders(id)
        )?;
        // Ties go by name, then by agent: never by how the database returned the rows, or
        // a restored copy (or the next request) would page and list them otherwise.
        places.sort_by(|a, b| {
            let s = |p: &store::TaskPlace| p.final_success.unwrap_or(-1.0);
            s(b).total_cmp(&s(a))
                .then_with(|| a.display_name.cmp(&b.display_name))
                .then_with(|| a.agent_id.cmp(&b.agent_id))
        });
        let cut = Window { page, size: TASK_AGENTS_PER_PAGE, before: None }.of(places.len());
        let shown: Vec<String> = cut.rows(&places).iter().map(|p| p.bundle_id.clone()).collect();
        let (mut agents, runs) =
            futures::try_join!(store.task_rows(id, Some(&shown)), store.task_runs(id, &shown))?;
        agents.sort_by_key(|a| shown.iter().position(|b| *b == a.bundle_id));
        let hinted: Vec<&store::TaskPlace> = places.iter().filter(|p| p.hinted_only).collect();
        Ok(TaskData {
            readme_html: crate::markdown::task_readme(&task.readme),
            hinted_only: hinted
                .iter()
                .take(HINTED_ONLY_SHOWN)
                .map(|p| (p.agent_id.clone(), p.display_name.clone()))
                .collect(),
            hinted_only_count: hinted.len(),
            every_time: Hint::ALL
                .into_iter()
                .map(|h| {
                    let always: Vec<&store::TaskPlace> =
                        places.iter().filter(|p| p.every_time.contains(&h)).collect();
                    let named = always
                        .iter()
                        .take(HINTED_ONLY_SHOWN)
                        .map(|p| (p.agent_id.clone(), p.display_name.clone()))
                        .collect();
                    (h, named, always.len())
                })
                .filter(|(_, _, n)| *n > 0)
                .collect(),
            total: places.len(),
            runs,
            failures,
            folder_splits: folder_splits(folders),
            agents,
            page: cut.page,
            pages: cut.pages,
            task,
        })
    }
}

/// The task sets among `uses` on which more than one folder of the task was run.
#[cfg(feature = "db")]
fn folder_splits(uses: Vec<store::TaskFolderUse>) -> Vec<(String, Vec<(String, i64)>)> {
    let mut by_set: std::collections::BTreeMap<String, Vec<(String, i64)>> =
        std::collections::BTreeMap::new();
    for u in uses {
        by_set.entry(u.task_set_digest).or_default().push((u.folder, u.submissions));
    }
    by_set.into_iter().filter(|(_, folders)| folders.len() > 1).collect()
}
