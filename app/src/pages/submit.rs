//! `/submit`: how to evaluate and submit (from `docs/submitting.md`), and an upload form
//! that works without JavaScript. The server answers a refused upload with this page
//! and the verdict; an accepted one redirects to the agent's page.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use serde::{Deserialize, Serialize};

use crate::components::{loaded, set_status};
use crate::islands::SubmitForm;

/// Why the server refused an upload, given to the page by the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: u16,
    pub code: String,
    pub message: String,
}

#[component]
pub fn SubmitPage() -> impl IntoView {
    let guide = Resource::new_blocking(|| (), |_| load_guide());
    let setup = Resource::new_blocking(|| (), |_| load_submit_setup());
    let verdict = use_context::<Verdict>();
    if let Some(v) = &verdict {
        set_status(v.status);
    }
    view! {
        <Title text="Submit results"/>
        <Meta name="description" content="How to evaluate a coding agent on RExBench with the runner, sign the results and submit them."/>
        <h1>"Submit results"</h1>
        {verdict.map(|v| view! {
            <div class="verdict refused" role="alert">
                <h2>"✗ The bundle was not accepted"</h2>
                <p>{v.message}</p>
                <p class="muted small">"Error code: "<code>{v.code}</code>" (HTTP "{v.status}"). Nothing was stored."</p>
            </div>
        })}
        {loaded(setup, |setup| view! { <SubmitForm setup=setup/> })}
        {loaded(guide, |html| view! { <article class="guide" inner_html=html></article> })}
    }
}

// What this page reads, through its server functions (thin: their arguments → the views).

#[server(prefix = "/sfn", endpoint = "guide")]
pub async fn load_guide() -> Result<String, crate::error::AppError> {
    Ok(views::markdown::to_html(include_str!("../../../docs/submitting.md")))
}

/// What the browser's check of a bundle on `/submit` needs to judge as the server does.
#[server(prefix = "/sfn", endpoint = "submit_setup")]
pub async fn load_submit_setup() -> Result<crate::data::SubmitSetup, crate::error::AppError> {
    let ctx = crate::data::context()?;
    let keys = views::keys::list(&ctx.store).await?;
    let (trusted, revoked): (Vec<_>, Vec<_>) = keys.into_iter().partition(|k| k.revoked_at.is_none());
    Ok(crate::data::SubmitSetup {
        trusted: trusted.into_iter().map(|k| k.public_key).collect(),
        revoked: revoked.into_iter().filter_map(|k| Some((k.keyid, k.revoked_at?))).collect(),
        tasks: ctx.catalog.tasks.iter().map(|t| t.id.to_string()).collect(),
        private_checks: ctx
            .catalog
            .tasks
            .iter()
            .filter(|t| t.check_private)
            .map(|t| t.id.to_string())
            .collect(),
        claims: views::catalog::claims(&ctx.store, &ctx.catalog).await?,
        limits: ctx.limits,
        worker: ctx.pkg.map(|p| format!("/{p}/verify-worker.js")).unwrap_or_default(),
    })
}
