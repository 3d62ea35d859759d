use leptos::prelude::*;
use leptos_meta::{Meta, Title};

/// `/`: what the site is, and where its results are.
#[component]
pub(crate) fn HomePage() -> impl IntoView {
    view! {
        <Title text=""/>
        <Meta
            name="description"
            content="Which coding agents can implement extensions of real AI research papers, and how much hints help."
        />
        <section class="intro">
            <h1>"RExBench leaderboard"</h1>
            <p>
                "RExBench asks whether coding agents can implement extensions of real AI research papers. "
                "Each of its 12 tasks gives an agent a paper's codebase and an extension to build; "
                "every agent runs every task 5 times with no hints, with hints, and with detailed hints, "
                "and a run succeeds when its experiment reproduces the gold results."
            </p>
            <p>
                "The results are served as "
                <a href="/api/v1/leaderboard">"JSON"</a>
                " and as "
                <a href="/leaderboard.csv">"CSV"</a>
                "; the change log is at "
                <a href="/api/v1/changes">"/api/v1/changes"</a>
                "."
            </p>
        </section>
    }
}
