//! Two submissions of one agent side by side under one hint condition (Harbor's parity
//! experiment, or any two): the API's `/api/v1/parity` and the `/parity` page.

use serde::{Deserialize, Serialize};
use store::Hint;

use crate::TaskNames;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityData {
    /// Every agent with current results: (id, name), for the pickers.
    pub agents: Vec<(String, String)>,
    pub names: TaskNames,
    pub hint: Hint,
    /// The two sides, once both are chosen.
    pub parity: Option<store::parity::Parity>,
}

#[cfg(feature = "db")]
pub use answers::*;

#[cfg(feature = "db")]
mod answers {
    use store::Store;

    use super::*;
    use crate::catalog::Catalog;
    use crate::{Missing, ViewError};

    /// A submission a parity view names: a bundle id (any submission, superseded ones
    /// included), or an agent id (its newest current submission).
    async fn parity_bundle(store: &store::Store, named: &str) -> Result<Option<String>, store::StoreError> {
        if let Some(s) = store.submission(named).await? {
            return Ok(Some(s.bundle_id));
        }
        Ok(store.agent(named).await?.and_then(|a| a.newest_current().map(|(b, _)| b.to_owned())))
    }

    /// Two submissions side by side under `hint`, each named by bundle or agent id; the
    /// error names the one that does not exist. Run-level rates of the published parity
    /// experiment come from the catalog, which read them from its data file.
    pub async fn parity(
        store: &store::Store,
        catalog: &Catalog,
        a: &str,
        b: &str,
        hint: Hint,
    ) -> Result<store::parity::Parity, ViewError> {
        let mut bundles = Vec::with_capacity(2);
        for (side, named) in [("a", a), ("b", b)] {
            match parity_bundle(store, named).await? {
                Some(bundle) => bundles.push(bundle),
                None => {
                    return Err(ViewError::NotFound(Missing::ParitySide { side, named: named.to_owned() }));
                }
            }
        }
        let runs = |side: &store::parity::ParitySide| catalog.parity_runs.get(&side.agent_id).cloned();
        store
            .parity(&bundles[0], &bundles[1], hint, runs)
            .await?
            .ok_or_else(|| ViewError::NotFound(Missing::ParitySide { side: "a", named: a.to_owned() }))
    }

    /// The parity page: the pickers, and the two sides once both are named.
    pub async fn page(
        store: &Store,
        catalog: &Catalog,
        a: Option<&str>,
        b: Option<&str>,
        hint: Hint,
    ) -> Result<ParityData, ViewError> {
        let agents = store.current_agents().await?;
        let parity = match (a.filter(|s| !s.is_empty()), b.filter(|s| !s.is_empty())) {
            (Some(a), Some(b)) => Some(parity(store, catalog, a, b, hint).await?),
            _ => None,
        };
        Ok(ParityData { agents, names: crate::names(catalog), hint, parity })
    }
}
