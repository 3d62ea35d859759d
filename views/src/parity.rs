//! Two submissions of one agent side by side under one hint condition (Harbor's parity
//! experiment, or any two): the API's `/api/v1/parity` and the `/parity` page.

use serde::{Deserialize, Serialize};
use store::Hint;

use crate::TaskNames;
use crate::query::{BadQuery, Params, Strictness, lenient};

/// The API's `/api/v1/parity` query, as the OpenAPI document states it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct ParityParams {
    /// Side A: a submission's bundle id (superseded ones too), or an agent id (its
    /// newest current submission).
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub a: String,
    /// Side B, named the same way.
    #[cfg_attr(feature = "openapi", param(min_length = 1))]
    pub b: String,
    /// `none` (the default), `hints` or `detailed`.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::hint_or_none))]
    pub hint: Option<String>,
}

impl ParityParams {
    pub fn view(&self) -> Result<ParityQuery, BadQuery> {
        let get = |name: &str| match name {
            "a" => Some(self.a.clone()),
            "b" => Some(self.b.clone()),
            "hint" => self.hint.clone(),
            _ => None,
        };
        ParityQuery::read(get, Strictness::Strict)
    }
}

/// The two sides a parity view compares, and under which condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityQuery {
    pub a: Option<String>,
    pub b: Option<String>,
    pub hint: Hint,
}

impl ParityQuery {
    /// From query parameters: strictly an unknown condition or a side left empty is
    /// refused (the API compares two sides); leniently the condition falls back to no
    /// hints and a page without both sides shows the pickers.
    pub fn read(get: impl Fn(&str) -> Option<String>, reading: Strictness) -> Result<ParityQuery, BadQuery> {
        let p = Params::new(&get, reading);
        let hint = p.name::<Hint>("hint")?.unwrap_or(Hint::None);
        let (a, b) = (p.text("a"), p.text("b"));
        if reading == Strictness::Strict {
            for (parameter, side) in [("a", &a), ("b", &b)] {
                if side.is_none() {
                    return Err(BadQuery {
                        parameter,
                        message: format!("query parameter `{parameter}` must name a submission or an agent"),
                    });
                }
            }
        }
        Ok(ParityQuery { a, b, hint })
    }

    /// The page's reading.
    pub fn from_page(get: impl Fn(&str) -> Option<String>) -> ParityQuery {
        lenient(ParityQuery::read(get, Strictness::Lenient))
    }
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
