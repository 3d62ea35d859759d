//! Two agents compared: their results side by side and the paired difference.

use serde::{Deserialize, Serialize};
use store::AgentDetail;
use store::stats::Comparison;

use crate::TaskNames;
use crate::query::{BadQuery, Params, Strictness};

/// The two agents a comparison shows: `a` and `b`, or (where either is not said) the
/// first agents ticked on the leaderboard (`agent=…&agent=…`), in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompareQuery {
    pub a: Option<String>,
    pub b: Option<String>,
}

impl CompareQuery {
    /// The page's reading (nothing in it can be refused): `get` gives a parameter,
    /// `get_all` every value of `agent`.
    pub fn from_page(
        get: impl Fn(&str) -> Option<String>,
        get_all: impl Fn(&str) -> Vec<String>,
    ) -> CompareQuery {
        let p = Params::new(get, Strictness::Lenient);
        let mut ticked = get_all("agent").into_iter().filter(|t| !t.is_empty());
        let a = p.text("a").or_else(|| ticked.next());
        let b = p.text("b").or_else(|| ticked.next());
        CompareQuery { a, b }
    }
}

/// The API's `/api/v1/compare` query, as the OpenAPI document states it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct CompareParams {
    /// Agent A's id.
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub a: String,
    /// Agent B's id.
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub b: String,
}

impl CompareParams {
    /// The API's reading: both agents named (an id made of spaces names no agent: 404).
    pub fn view(&self) -> Result<CompareQuery, BadQuery> {
        for (parameter, side) in [("a", &self.a), ("b", &self.b)] {
            if side.is_empty() {
                return Err(BadQuery {
                    parameter,
                    message: format!("query parameter `{parameter}` must name an agent"),
                });
            }
        }
        Ok(CompareQuery { a: Some(self.a.clone()), b: Some(self.b.clone()) })
    }
}

/// Two agents side by side: the API's answer and what the page shows of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompareAnswer {
    /// Agent A: its submissions and the task × hint grid of each current one (none on
    /// the page until it is chosen; the API always names both).
    pub a: Option<AgentDetail>,
    pub b: Option<AgentDetail>,
    /// The tasks' names, by id.
    #[cfg_attr(feature = "openapi", schema(value_type = std::collections::BTreeMap<String, String>))]
    pub names: TaskNames,
    /// The paired comparison of their newest current results, B − A, over the tasks
    /// both ran (a cluster bootstrap over tasks); none where either has no current
    /// results.
    pub comparison: Option<Comparison>,
    /// Without hints, the tasks each does better on (by final success, over the tasks
    /// both ran); none until both are chosen.
    pub wins: Option<TaskWins>,
}

/// The tasks either agent ran, in order (the comparison table's rows).
pub fn tasks_of(a: &store::TaskGrid, b: &store::TaskGrid) -> Vec<store::TaskId> {
    a.keys().chain(b.keys()).cloned().collect::<std::collections::BTreeSet<_>>().into_iter().collect()
}

/// Tasks on which A, and B, have the higher final success without hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskWins {
    pub a: usize,
    pub b: usize,
}

/// The tasks each of `a` and `b` does better on without hints, from their newest
/// current results.
pub fn wins(a: &AgentDetail, b: &AgentDetail) -> TaskWins {
    let grid = |x: &AgentDetail| x.newest_current().map(|(_, g)| g.clone()).unwrap_or_default();
    let (ga, gb) = (grid(a), grid(b));
    let s = |g: &store::TaskGrid, t: &store::TaskId| {
        g.get(t).and_then(|h| h.get(&store::Hint::None)).and_then(|r| r.final_success)
    };
    ga.keys().fold(TaskWins { a: 0, b: 0 }, |w, t| match (s(&ga, t), s(&gb, t)) {
        (Some(x), Some(y)) if x > y => TaskWins { a: w.a + 1, ..w },
        (Some(x), Some(y)) if y > x => TaskWins { b: w.b + 1, ..w },
        _ => w,
    })
}

/// The compare page: the answer, and every agent with current results for its pickers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareData {
    /// Every agent with current results: (id, name).
    pub agents: Vec<(String, String)>,
    pub answer: CompareAnswer,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::access::Reader;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// Two agents side by side for `reader`: each one's results, and the paired
    /// comparison of their current submissions (B − A) once both are chosen.
    pub async fn answer(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        query: &CompareQuery,
    ) -> Result<CompareAnswer, ViewError> {
        let pick = async |id: Option<&str>| -> Result<Option<AgentDetail>, ViewError> {
            match id.filter(|s| !s.is_empty()) {
                None => Ok(None),
                Some(id) => store
                    .agent(id)
                    .await?
                    .map(Some)
                    .ok_or_else(|| ViewError::NotFound(Missing::Agent(id.to_owned()))),
            }
        };
        // Read side by side: on PostgreSQL each is its own connection's round trips.
        let (mut a, mut b) = futures::try_join!(pick(query.a.as_deref()), pick(query.b.as_deref()))?;
        let access = crate::access::load(store, catalog, reader).await?;
        for side in [&mut a, &mut b].into_iter().flatten() {
            access.reproduced(&mut side.reproduced);
        }
        let current =
            |x: &Option<AgentDetail>| x.as_ref().and_then(|x| x.newest_current().map(|(b, _)| b.to_owned()));
        let comparison = match (current(&a), current(&b)) {
            (Some(x), Some(y)) => Some(store.compare_bundles(&x, &y).await?),
            _ => None,
        };
        let wins = match (&a, &b) {
            (Some(a), Some(b)) => Some(wins(a, b)),
            _ => None,
        };
        Ok(CompareAnswer { a, b, names: crate::names(catalog), comparison, wins })
    }

    /// The compare page: [`answer`] and the agents to choose from.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        reader: &Reader,
        query: &CompareQuery,
    ) -> Result<CompareData, ViewError> {
        let (agents, answer) = futures::try_join!(
            async { Ok(store.current_agents().await?) },
            answer(store, catalog, reader, query)
        )?;
        Ok(CompareData { agents, answer })
    }
}
