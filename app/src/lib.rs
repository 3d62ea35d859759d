//! The RExBench leaderboard's pages, rendered on the server by Leptos.
//!
//! Pages work with JavaScript turned off: the server renders everything, sorting and
//! filtering are links and GET forms, and the URL holds the state. With JavaScript on,
//! a few islands ([`islands`]) hydrate and make them quicker to use; the `web` crate
//! builds them (and only them) for the browser.
//!
//! The modules form layers; each imports only from the layers beneath it:
//!
//! 1. this file: the document's shell and the routes;
//! 2. `pages`: one page per route;
//! 3. `components` (the pieces pages share), [`islands`] and `charts`, side by side:
//!    none of them imports another;
//! 4. [`data`] (the server functions and what they answer) and [`error`];
//! 5. the `views` crate (what each page shows, its query, words and readers) and the
//!    store, which every layer names directly (`views::format`, not through `crate`).

mod charts;
mod components;
pub mod data;
pub mod error;
pub mod islands;
mod pages;

use leptos::prelude::*;
use leptos_meta::{Link, Meta, MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::components::{A, Route, Router, Routes};
use leptos_router::path;
// Not re-exported: pages, components and islands name `views` themselves (the
// `LiveBoard` island's body alone says `crate::format`, as its name is a digest of it).
use views::format;

pub use pages::Verdict;
use pages::{
    AboutPage, AgentPage, ChangesPage, ComparePage, DeskPage, FailuresPage, KeyRequestPage, KeysPage,
    LeaderboardPage, NotFound, ParityPage, RunPage, SignInLinkPage, SignInPage, SubmitPage, TaskPage,
    TasksPage,
};

/// The name wasm-bindgen gives the islands' module (`rexbench.js`, `rexbench_bg.wasm`).
pub const OUTPUT_NAME: &str = "rexbench";

/// Where this build's WebAssembly is served, if it has any: `pkg/<digest>`.
fn pkg_dir() -> Option<String> {
    #[cfg(feature = "ssr")]
    return use_context::<data::PageContext>().and_then(|c| c.pkg);
    #[cfg(not(feature = "ssr"))]
    None
}

/// The scripts that load the islands: Leptos's own, so the module names are its.
pub fn hydration_scripts(pkg_dir: String) -> impl IntoView {
    let options =
        leptos::config::LeptosOptions::builder().output_name(OUTPUT_NAME).site_pkg_dir(pkg_dir).build();
    view! { <leptos::hydration::HydrationScripts options islands=true/> }
}

/// The HTML document around every page.
pub fn shell() -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                {pkg_dir().map(hydration_scripts)}
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The header's word on what waits on the desk: "3 requests · 5 findings to review".
fn desk_words(d: store::DeskCounts) -> String {
    let n = |n: i64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "Desk: {} · {}",
        n(d.requests, "request", "requests"),
        n(d.findings, "finding to review", "findings to review")
    )
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    #[cfg(feature = "ssr")]
    let stylesheet =
        use_context::<data::PageContext>().map_or_else(|| "/style/main.css".to_owned(), |c| c.stylesheet);
    #[cfg(not(feature = "ssr"))]
    let stylesheet = "/style/main.css".to_owned();
    // The change log's position the page shows, to notice newer results (with islands only).
    #[cfg(feature = "ssr")]
    let seq = use_context::<data::PageContext>().filter(|c| c.pkg.is_some()).map(|c| c.generation);
    #[cfg(not(feature = "ssr"))]
    let seq: Option<i64> = None;
    // A maintainer's session shows what waits on the desk.
    #[cfg(feature = "ssr")]
    let desk = use_context::<data::PageContext>().and_then(|c| c.desk);
    #[cfg(not(feature = "ssr"))]
    let desk: Option<store::DeskCounts> = None;
    view! {
        <Stylesheet id="style" href=stylesheet/>
        <Link rel="icon" href="/favicon.svg" type_="image/svg+xml"/>
        <Meta name="color-scheme" content="light dark"/>
        <Title formatter=|page: String| {
            // leptos_meta writes the title into the document unescaped, and a page's
            // title can come from a bundle (an agent's name).
            let page = format::escape_html(&page);
            if page.is_empty() { "RExBench leaderboard".to_owned() } else { format!("{page} · RExBench leaderboard") }
        }/>
        <Router>
            <a class="skip" href="#content">"Skip to the content"</a>
            <header class="site">
                <A href="/" attr:class="brand">"RExBench"</A>
                <nav aria-label="Site">
                    <A href="/">"Leaderboard"</A>
                    <A href="/tasks">"Tasks"</A>
                    <A href="/failures">"Failures"</A>
                    <A href="/compare">"Compare"</A>
                    <A href="/changes">"Changes"</A>
                    <A href="/submit">"Submit"</A>
                    <A href="/about">"About"</A>
                    <A href="/signin">"Sign in"</A>
                    {desk.map(|d| view! {
                        <a href="/desk" class="desk-counts">{desk_words(d)}</a>
                    })}
                </nav>
            </header>
            {seq.map(|seq| view! { <islands::NewResults seq=seq/> })}
            <main id="content">
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=LeaderboardPage/>
                    <Route path=path!("/tasks") view=TasksPage/>
                    <Route path=path!("/tasks/:id") view=TaskPage/>
                    <Route path=path!("/agents/:id") view=AgentPage/>
                    <Route path=path!("/runs/:id") view=RunPage/>
                    <Route path=path!("/compare") view=ComparePage/>
                    <Route path=path!("/parity") view=ParityPage/>
                    <Route path=path!("/failures") view=FailuresPage/>
                    <Route path=path!("/submit") view=SubmitPage/>
                    <Route path=path!("/changes") view=ChangesPage/>
                    <Route path=path!("/keys") view=KeysPage/>
                    <Route path=path!("/keys/request") view=KeyRequestPage/>
                    <Route path=path!("/desk") view=DeskPage/>
                    <Route path=path!("/about") view=AboutPage/>
                    <Route path=path!("/signin") view=SignInPage/>
                    <Route path=path!("/login/:ticket") view=SignInLinkPage/>
                </Routes>
            </main>
            <footer class="site">
                <p>
                    "RExBench: Edwards et al., "
                    <a href="https://arxiv.org/abs/2506.22598">"arXiv:2506.22598"</a>
                    ". Results arrive as signed bundles and are verified on arrival; "
                    "verified results were signed by a maintainer, self-reported ones by their submitter. "
                    <a href="/api/v1/leaderboard">"API"</a>" · "<a href="/leaderboard.csv">"CSV"</a>" · "<a href="/changes.atom">"Changes (Atom)"</a>
                </p>
            </footer>
        </Router>
    }
}
