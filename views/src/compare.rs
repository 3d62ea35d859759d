//! Two agents compared: their results side by side and the paired difference.

use serde::{Deserialize, Serialize};
use store::AgentDetail;
use store::stats::Comparison;

use crate::TaskNames;
use crate::query::{Params, Reading};

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
        let p = Params::new(get, Reading::Lenient);
        let mut ticked = get_all("agent").into_iter().filter(|t| !t.is_empty());
        let a = p.text("a").or_else(|| ticked.next());
        let b = p.text("b").or_else(|| ticked.next());
        CompareQuery { a, b }
    }
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

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// Two agents side by side: each one's results, and the paired comparison of their
    /// current submissions (B − A) once both are chosen.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        a: Option<&str>,
        b: Option<&str>,
    ) -> Result<CompareData, ViewError> {
        let agents = store.current_agents().await?;
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
        let (a, b) = futures::try_join!(pick(a), pick(b))?;
        let current =
            |x: &Option<AgentDetail>| x.as_ref().and_then(|x| x.newest_current().map(|(b, _)| b.to_owned()));
        let comparison = match (current(&a), current(&b)) {
            (Some(x), Some(y)) => Some(store.compare_bundles(&x, &y).await?),
            _ => None,
        };
        Ok(CompareData { agents, a, b, names: crate::names(catalog), comparison })
    }
}
