//! `/about`: how the numbers are made, the intervals among them.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use crate::components::loaded;

#[component]
pub(crate) fn AboutPage() -> impl IntoView {
    let method = Resource::new_blocking(|| (), |_| load_method());
    view! {
        <Title text="How the numbers are made"/>
        <Meta
            name="description"
            content="How the RExBench leaderboard computes success rates, 95% intervals by a cluster bootstrap over tasks and runs, rank ranges, tie groups and hint uplift."
        />
        <h1>"How the numbers are made"</h1>
        {loaded(method, |html| view! { <article class="guide" inner_html=html></article> })}
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "method")]
pub async fn load_method() -> Result<String, crate::error::AppError> {
    Ok(views::markdown::to_html(include_str!("../../../docs/method.md")))
}
