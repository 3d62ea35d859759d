//! `/submit`: how to evaluate and submit (from `docs/submitting.md`), and an upload form
//! that works without JavaScript. The server answers a refused upload with this page
//! and the verdict; an accepted one redirects to the agent's page.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use serde::{Deserialize, Serialize};

use crate::components::{loaded, set_status};
use crate::data::{load_guide, load_submit_setup};
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
